"""Hierarchical DRF as an oracle for the real cluster: every queue's (and every user's) H-DRF share
recomputed from scratch from YARN's running containers and the queue YAML, read here with PyYAML
alone, not with the scheduler's code.

The rule is docs/design.md's "Hierarchical DRF: a parent's share": a leaf's share is its weighted dominant
share; a parent's vector is the sum of its children's vectors, each cut back to M, the lowest share
among its children that still ask for more (a child above M counts as `vector * M / share`), and its
share is that vector's weighted dominant share. A leaf with `user-limits` is the parent of its users
(a user's share: the dominant share of its apps' usage in the leaf over its user weight).

Checked decision by decision: each sibling's last container is the last decision that gave its
subtree anything, taken on that container's node when the node's free room was what it is now plus
every container started there since, less every container that ended since but held room then
(`gone`: where containers end while the apps compete, as the maps of a MapReduce job running through
a failover do; a watcher saw each running, and saw it gone, within a window). `unfair_choices`
names each sibling that got that container although a sibling that could use the node had a lower
share for it (for a node, as the rule decides: only children with a request that fits set M). A
decision taken inside the window in which a container it depends on ended cannot be judged and is
not.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.drf import RESOURCES

Vector = dict[str, float]
EPS = 1e-9


@dataclass
class Node:
    """A queue, or a user of a leaf with user-limits (path `LEAF/USER`)."""

    path: str
    weight: Vector
    children: list["Node"] = field(default_factory=list)
    user_weights: dict[str, float] | None = None  # a leaf with user-limits: named users' weights
    default_user_weight: float = 1.0

    def walk(self) -> Iterator["Node"]:
        yield self
        for c in self.children:
            yield from c.walk()


def user_key(leaf: str, user: str) -> str:
    return f"{leaf}/{user}"


def _weights(value) -> Vector:
    if isinstance(value, Mapping):
        return {r: float(value.get(r, 1)) for r in RESOURCES}
    return dict.fromkeys(RESOURCES, float(1 if value is None else value))


def load_tree(path: Path, dynamic: Mapping[str, list[str]]) -> Node:
    """The queue tree of the YAML file, plus `dynamic` leaves ({parent path: [names]}: the queues
    placement created, weight 1 as every created queue)."""
    def build(p: str, spec: dict) -> Node:
        spec = spec or {}
        node = Node(p, _weights(spec.get("weight")))
        limits = spec.get("user-limits")
        if limits is not None:
            node.default_user_weight = float((limits or {}).get("weight", 1))
            node.user_weights = {u: float(s.get("weight", node.default_user_weight))
                                 for u, s in ((limits or {}).get("users") or {}).items()}
        node.children = [build(f"{p}.{name}", child) for name, child in (spec.get("children") or {}).items()]
        node.children += [Node(f"{p}.{name}", _weights(1)) for name in dynamic.get(p, [])]
        return node

    return build("root", yaml.safe_load(path.read_text())["queues"]["root"])


def add_users(tree: Node, users: Mapping[str, list[str]]) -> None:
    """Makes each leaf with user-limits the parent of its users ({leaf path: [user names]})."""
    for node in tree.walk():
        if node.user_weights is not None:
            node.children = [Node(user_key(node.path, u),
                                  dict.fromkeys(RESOURCES, node.user_weights.get(u, node.default_user_weight)))
                             for u in users.get(node.path, [])]


def weighted_share(v: Vector, weight: Vector, capacity: Mapping[str, int]) -> float:
    return max((v.get(r, 0) / (capacity[r] * weight[r]) for r in RESOURCES if capacity.get(r)), default=0.0)


class HDRF:
    """Shares of every node of `tree` for a usage of its bottom nodes (leaves without users, users)."""

    def __init__(self, tree: Node, capacity: Mapping[str, int]) -> None:
        self.tree, self.capacity = tree, capacity

    def shares(self, usage: Mapping[str, Vector], asking: Mapping[str, Vector],
               room: Mapping[str, float] | None = None) -> dict[str, float]:
        """{path: share}. `asking`: {bottom node: the shape of its next container}, for those that
        still ask; with `room`, the shares for a node of that free room: only children with a
        request that fits it set M."""
        out: dict[str, float] = {}
        self._eval(self.tree, usage, asking, room, out)
        return out

    def _eval(self, node: Node, usage, asking, room, out) -> tuple[Vector, float, bool]:
        if not node.children:
            v = dict(usage.get(node.path, {}))
            share = weighted_share(v, node.weight, self.capacity)
            out[node.path] = share
            shape = asking.get(node.path)
            return v, share, shape is not None and (room is None or fits(shape, room))
        kids = [self._eval(c, usage, asking, room, out) for c in node.children]
        low = min((s for _, s, sets_m in kids if sets_m), default=math.inf)
        vector: Vector = dict.fromkeys(RESOURCES, 0.0)
        for v, s, _ in kids:
            cut = low / s if s > low else 1.0
            for r in RESOURCES:
                vector[r] += v.get(r, 0) * cut
        share = weighted_share(vector, node.weight, self.capacity)
        out[node.path] = share
        return vector, share, any(sets_m for _, _, sets_m in kids)


@dataclass(frozen=True)
class Placed:
    """A running container as the oracle needs it."""

    node: str
    resources: Mapping[str, int]
    started: int  # ms, when the RM allocated it
    ended: int | None = None  # ms, by when it had surely ended; None while it runs
    seen: int = 0  # ms, when it was last seen running (of one that ended)

    def held_at(self, t: int) -> bool:
        """Whether it held its room when a container was placed at `t` (ms)."""
        return self.started < t and (self.ended is None or t < self.ended)

    def unsure_at(self, t: int) -> bool:
        """Whether it may or may not have ended by `t`: t falls in the window its end is known in."""
        return self.ended is not None and self.started <= t and self.seen <= t < self.ended


def bottoms(node: Node) -> list[Node]:
    return [n for n in node.walk() if not n.children]


def fits(shape: Mapping[str, float], room: Mapping[str, float]) -> bool:
    return all(shape.get(r, 0) <= room.get(r, 0) for r in RESOURCES)


def unfair_choices(oracle: HDRF, usage: Mapping[str, Vector], asking: Mapping[str, Vector],
                   tasks: Mapping[str, list[Placed]], placed: list[Placed], free: Mapping[str, Mapping[str, int]],
                   gone: Mapping[str, list[Placed]] | None = None) -> list[str]:
    """For every parent (and leaf with users) and every child of it that still asks, its last task
    container (`tasks`: {bottom node: its task containers}): on that node, with the room it had
    then (`free` now plus it and every container of `placed` started there after it, less those of
    `gone`, {bottom node: containers that ended since}, that held room then), every sibling that
    still asks and had a request fitting that room had a share at least the child's before that
    container. Each exception, described; none means every last decision was H-DRF's."""
    gone = gone or {}
    out = []
    for parent in oracle.tree.walk():
        live = [c for c in parent.children if any(b.path in asking for b in bottoms(c))]
        for hi in live:
            mine = [(b.path, p) for b in bottoms(hi) for p in tasks.get(b.path, [])]
            if not mine or len(live) < 2:
                continue
            last = max(p.started for _, p in mine)
            # Containers of one heartbeat share a millisecond: any of them may have been the last.
            excuses = [_why_not(oracle, usage, asking, placed, free, gone, parent, hi, b, p)
                       for b, p in mine if p.started == last]
            if all(excuses):
                out.append(excuses[0])
    return out


def starved_unlawfully(oracle: HDRF, asking: Mapping[str, Vector], tasks: Mapping[str, list[Placed]],
                       held: Mapping[str, list[Placed]], free: Mapping[str, Mapping[str, int]],
                       gone: Mapping[str, list[Placed]] | None = None) -> list[str]:
    """For every child (of a parent, or user of a leaf) that still asks and got no task container
    at all (`tasks`), every task container a sibling got: on that node, with the room it had then,
    the starved child's request did not fit, or its share was at least the sibling's just before
    that container (the shares from `held`, {bottom node: every container it holds}, and `gone`,
    {bottom node: containers that ended since}, counting those that held room then). Each
    exception, described; none means the starvation was H-DRF's."""
    gone = gone or {}
    placed = [p for ps in held.values() for p in ps]
    ever = {b: list(held.get(b, [])) + list(gone.get(b, [])) for b in set(held) | set(gone)}
    out = []
    for parent in oracle.tree.walk():
        live = [c for c in parent.children if any(b.path in asking for b in bottoms(c))]
        for lo in (c for c in live if not any(tasks.get(b.path) for b in bottoms(c))):
            wants = [asking[b.path] for b in bottoms(lo) if b.path in asking]
            for hi in (c for c in live if c is not lo):
                for c in (p for b in bottoms(hi) for p in tasks.get(b.path, [])):
                    if _unsure(gone, c):
                        continue
                    room = _room_then(free, placed, c, gone)
                    if not any(fits(shape, room) for shape in wants):
                        continue
                    before = {b: {r: sum(p.resources.get(r, 0) for p in ps if p.held_at(c.started))
                                  for r in RESOURCES} for b, ps in ever.items()}
                    shares = oracle.shares(before, asking, room)
                    if shares[lo.path] < shares[hi.path] - EPS:
                        out.append(f"{hi.path} got a container on {c.node} (room then {room}) at share "
                                   f"{shares[hi.path]:.4f}, while {lo.path}, which got none, could use that "
                                   f"node at share {shares[lo.path]:.4f}")
    return out


def _room_then(free: Mapping[str, Mapping[str, int]], placed: list[Placed], c: Placed,
               gone: Mapping[str, list[Placed]]) -> Vector:
    """The free room of c's node when c was placed: now plus c and every container started there
    after it, less every container that ended since and held room there then. The containers of
    one heartbeat may share c's millisecond and have come before it: they are not counted (and one
    that ended is), so this is the least room c can have been placed in (a sibling is judged able
    to use the node only if it surely was)."""
    ended = [p for ps in gone.values() for p in ps if p.node == c.node and p.started <= c.started < p.ended]
    return {r: free.get(c.node, {}).get(r, 0) + c.resources.get(r, 0)
            + sum(p.resources.get(r, 0) for p in placed if p.node == c.node and p.started > c.started)
            - sum(p.resources.get(r, 0) for p in ended)
            for r in RESOURCES}


def _unsure(gone: Mapping[str, list[Placed]], c: Placed) -> bool:
    """Whether a container that ended may or may not have held its room when c was placed."""
    return any(p.unsure_at(c.started) for ps in gone.values() for p in ps)


def _why_not(oracle: HDRF, usage, asking, placed: list[Placed], free, gone: Mapping[str, list[Placed]],
             parent: Node, hi: Node, bottom: str, c: Placed) -> str:
    """Why giving `c` to `hi` was not H-DRF's choice, or "" if it was (or cannot be told)."""
    if _unsure(gone, c):
        return ""
    room = _room_then(free, placed, c, gone)
    before = {k: dict(v) for k, v in usage.items()}
    before[bottom] = {r: before.get(bottom, {}).get(r, 0) - c.resources.get(r, 0) for r in RESOURCES}
    for b, ps in gone.items():
        then = [p for p in ps if p.held_at(c.started)]
        before[b] = {r: before.get(b, {}).get(r, 0) + sum(p.resources.get(r, 0) for p in then) for r in RESOURCES}
    shares = oracle.shares(before, asking, room)
    for lo in parent.children:
        could = [b.path for b in bottoms(lo) if b.path in asking and fits(asking[b.path], room)]
        if lo is not hi and could and shares[lo.path] < shares[hi.path] - EPS:
            return (f"{hi.path} got its last container on {c.node} (room then {room}) at share "
                    f"{shares[hi.path]:.4f}, while {lo.path} could use that node at share {shares[lo.path]:.4f}")
    return ""
