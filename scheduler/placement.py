"""Placement rules: which leaf queue a submitted app goes to, in the configured order.

Rules: `specified` (the queue the app asked for), `user` (parent.<user>), `primary-group`
(parent.<first group>), `default` (a fixed queue), `reject`. Each rule either names a leaf
(existing, or to be created when the rule says `create: true` and the parent is a parent
queue) or passes to the next rule; the reasons of the rules that passed explain a rejection.
A rule never creates a queue the configuration could not name itself.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from scheduler.echo import brief
from scheduler.config import QUEUE_NAME, QUEUE_PATH, PlacementRule


_QUEUE_NAME, _QUEUE_PATH = re.compile(QUEUE_NAME), re.compile(QUEUE_PATH)


class Target(NamedTuple):  # (a tuple: one is made for every submission)
    path: str
    create: bool


class QueueView:
    """What placement needs to know of the queue tree: path -> is it a leaf? The core keeps it up
    to date queue by queue (add, remove) rather than rebuilding it for every queue placement
    creates: a rebuild costs a look at every queue, so creating N queues cost O(N^2)."""

    def __init__(self, leaves_and_parents: Mapping[str, bool]) -> None:
        self.kinds: dict[str, bool] = {}  # path -> True for a leaf
        self.by_leaf_name: dict[str, list[str]] = {}
        for path, leaf in leaves_and_parents.items():
            self._set(path, leaf)

    def add(self, path: str, leaf: bool) -> None:
        """A queue joins the tree; its parent, if placement sees it, is a parent queue from now on."""
        parent = path.rpartition(".")[0]
        if self.kinds.get(parent):
            self._set(parent, False)
        self._set(path, leaf)

    def remove(self, path: str) -> None:
        """Placement no longer sees the queue (it is draining)."""
        self._set(path, None)

    def _set(self, path: str, leaf: bool | None) -> None:
        name = path.rpartition(".")[2]
        if self.kinds.pop(path, False):
            same = self.by_leaf_name[name]
            same.remove(path)
            if not same:
                del self.by_leaf_name[name]
        if leaf is None:
            return
        self.kinds[path] = leaf
        if leaf:
            self.by_leaf_name.setdefault(name, []).append(path)

    def resolve(self, name: str) -> str:
        """An app may name a queue by full path, by path without 'root.', or by a unique leaf name."""
        if name in self.kinds or name == "root" or name.startswith("root."):
            return name
        if f"root.{name}" in self.kinds:
            return f"root.{name}"
        matches = self.by_leaf_name.get(name, [])
        return matches[0] if len(matches) == 1 else f"root.{name}"


def queue_name_for(identity: str) -> str | None:
    """A user or group name as one queue-path element, or None if it cannot be one.

    Dots become `_dot_` (FairScheduler's convention); what remains must be a valid queue name.
    FairScheduler also trims spaces and accepts any other character; here " alice" or "../x"
    is no queue name, so it cannot land in alice's queue or create a malformed path.
    """
    name = identity.replace(".", "_dot_")
    return name if _QUEUE_NAME.match(name) else None


def place(rules: Sequence[PlacementRule], view: QueueView, requested: str | None, user: str,
          groups: Sequence[str]) -> Target | str:
    """The target leaf, or the reason no rule placed the app."""
    reasons: list[str] = []
    for rule in rules:
        if rule.rule == "reject":
            reasons.append("the reject rule was reached")
            break
        if rule.rule == "specified":
            if not requested:
                reasons.append("specified: the app named no queue")
                continue
            path = view.resolve(requested)
        elif rule.rule in ("user", "primary-group"):
            if rule.rule == "primary-group" and not groups:
                reasons.append(f"primary-group: user {brief(user)} has no groups")
                continue
            identity = user if rule.rule == "user" else groups[0]
            name = queue_name_for(identity)
            if name is None:
                kind = "user" if rule.rule == "user" else "group"
                reasons.append(f"{rule.rule}: {kind} name {brief(identity)} cannot be a queue name (only letters, "
                               "digits, '_', '-' and '.' may form one)")
                continue
            path = f"{rule.parent}.{name}"
        else:  # default
            path = rule.queue or "root.default"
        outcome = _check(rule, view, path)
        if isinstance(outcome, Target):
            return outcome
        reasons.append(f"{rule.rule}: {outcome}")
    if not reasons:
        reasons.append("no placement rules are configured")
    return "no placement rule placed the app (" + "; ".join(reasons) + ")"


def _check(rule: PlacementRule, view: QueueView, path: str) -> Target | str:
    kind = view.kinds.get(path)
    if kind is True:
        return Target(path, False)
    if kind is False:
        return f"queue {brief(path)} is a parent queue; apps go to leaf queues"
    if not rule.create:
        return f"queue {brief(path)} does not exist"
    if not _QUEUE_PATH.match(path):
        return f"cannot create {brief(path)}: not a queue path (root, then names of letters, digits, '_' and '-')"
    parent = path.rsplit(".", 1)[0]
    if view.kinds.get(parent) is not False:
        return f"cannot create {brief(path)}: its parent {brief(parent)} is not a parent queue"
    return Target(path, True)
