"""Node labels as partitions (YARN's node labels): each partition is a DRF pool of its own.

A node has at most one partition label; "" is the default partition. The default partition is
decided by the SchedulerCore that holds this object (the *home*); each labelled partition by a
SchedulerCore of its own over the same queue file (a *pool*). So in a partition a queue's
dominant share is its usage there over that partition's capacity, and targets, H-DRF, user
limits, reservations and preemption work in each pool as they do in the home. An app is placed
in the home (placement rules, ACLs, max-running-apps); a pool holds a runnable mirror of it
(same id, user and queue) from its first ask or container there.

Which pool an ask is in: its label expression (YARN takes a request key's expression from its
ANY ask, and so does this), or, without one, its queue's `default-node-label-expression`. An ask
with a label its queue may not use (`accessible-node-labels`) or the cluster does not have is
ignored and counted (YARN refuses such an ask in `allocate()`, and such an AM at submission,
before it gets here). A container is counted in the pool of the ask it serves, whatever its
node's label becomes later.

Where a pool's containers go: only on its partition's nodes, with one exception, YARN's
non-exclusive partitions: once a non-exclusive partition's own asks have been served at one of
its nodes, asks of the default partition may use the node's idle room (*borrowed*; counted in the
home pool, whose capacity stays its own nodes'). When the partition's own asks then wait, each
preemption round kills borrowed containers on the partition's nodes, newest first, until the
waiting ask fits a node (CapacityScheduler also preempts these first).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from scheduler.config import ALL_LABELS
from scheduler.model import Container, Node, Request
from scheduler.preemption import Victim
from scheduler.resources import Vector, fits, vadd

if TYPE_CHECKING:
    from scheduler.config import QueueSpec
    from scheduler.core import SchedulerCore
    from scheduler.model import Assignment, Queue
    from scheduler.preemption import PreemptionPlan
    from scheduler.resources import ResourceTypes

log = logging.getLogger("yarn_drf.partitions")

DEFAULT = ""
Labels = tuple[frozenset[str], str]  # (accessible-node-labels, default-node-label-expression)


def labels_of(spec: QueueSpec, parent: Labels | None) -> Labels:
    """A queue's labels: its own, else its parent's; root's: every label, default partition."""
    if parent is not None and spec.accessible_labels is None and spec.default_label is None:
        return parent  # (its parent's pair itself: placement creates leaves by the thousand)
    accessible, default = parent if parent is not None else (frozenset({ALL_LABELS}), DEFAULT)
    if spec.accessible_labels is not None:
        accessible = spec.accessible_labels
    if spec.default_label is not None:
        default = spec.default_label
    return accessible, default


def may_use(queue: Queue, label: str) -> bool:
    """Whether the queue's apps may ask for the partition (everyone may use the default one)."""
    return not label or ALL_LABELS in queue.labels[0] or label in queue.labels[0]


def refusal(queue: Queue, label: str) -> str:
    """Why the queue's apps may not ask for `label`, or ""."""
    if may_use(queue, label):
        return ""
    shown = ", ".join(sorted(queue.labels[0])) or "none"
    return f"queue {queue.path} may not use node label {label!r} (its accessible-node-labels: {shown})"


class Partitions:
    """The labelled pools of a home core, and which pool each node, ask and container is in."""

    def __init__(self, home: SchedulerCore, make_pool: Callable[[str], SchedulerCore]) -> None:
        self.home = home
        self._make_pool = make_pool
        self.exclusive: dict[str, bool] = {}  # the cluster's labels (YARN's RMNodeLabelsManager)
        self.pools: dict[str, SchedulerCore] = {}  # kept while a label goes: its containers still run
        self.node_label: dict[str, str] = {}  # labelled nodes only
        self.ask_pool: dict[int, SchedulerCore] = {}  # ask ids registered in a pool
        self.key_label: dict[tuple[str, tuple[int, int]], str] = {}  # (app, request key) -> label, if not ""

    # ------------------------------------------------------------------ labels and nodes

    def set_labels(self, labels: dict[str, bool]) -> None:
        """The cluster's labels, name -> exclusive. A node whose label goes is unlabelled (YARN
        removes a label from its nodes before it removes the label)."""
        for node_id, label in list(self.node_label.items()):
            if label not in labels:
                self.set_node_label(node_id, DEFAULT)
        for label in labels:
            if label not in self.pools:
                self.pools[label] = self._make_pool(label)
        self.exclusive = dict(labels)

    def pool(self, label: str) -> SchedulerCore:
        return self.pools[label] if label else self.home

    def pool_of_node(self, node_id: str) -> SchedulerCore:
        return self.pool(self.node_label.get(node_id, DEFAULT))

    def known_label(self, label: str, where: str) -> str | None:
        """The label if the cluster has it ("" always), else None, logged and counted."""
        if not label or label in self.exclusive:
            return label
        self.home._ignore(where, f"node label {label!r} is not one of the cluster's "
                                 f"({', '.join(sorted(self.exclusive)) or 'none'})")
        return None

    def set_node_label(self, node_id: str, label: str) -> None:
        """Moves a node to the partition `label`: its capacity counts there from now on; its
        containers stay counted where their asks are."""
        old = self.pool_of_node(node_id)
        node = old.nodes.get(node_id)
        if node is None or self.known_label(label, f"node {node_id}") is None:
            return
        new = self.pool(label)
        if new is old:
            return
        old.detach_node(node)
        if label:
            self.node_label[node_id] = label
        else:
            self.node_label.pop(node_id, None)
        node.partition = label
        new.attach_node(node)

    def node(self, node_id: str) -> Node | None:
        """The node, in whichever pool it is."""
        return self.pool_of_node(node_id).nodes.get(node_id)

    def remove_node(self, node_id: str) -> list[str]:
        """Every container on the node is lost, in the pool that counts it; then the node goes."""
        pool = self.pool_of_node(node_id)
        node = pool.nodes.get(node_id)
        if node is None:
            return pool.remove_node(node_id)  # (logs the unknown node)
        lost = sorted(node.containers)
        for cid in lost:
            self.owner(cid).container_finished(cid, "lost")
        self.node_label.pop(node_id, None)
        pool.remove_node(node_id)
        return lost

    # ------------------------------------------------------------------ apps and asks

    def mirrors(self, app_id: str) -> list[SchedulerCore]:
        """The pools holding a mirror of the app."""
        return [p for p in self.pools.values() if app_id in p.apps]

    def ask_label(self, app_id: str, key: tuple[int, int], label: str | None, location: str,
                  queue: Queue) -> str | None:
        """The partition an ask goes to, or None when it must be ignored (logged and counted).
        A rack or node ask follows its key's ANY ask, as in YARN."""
        if location != "*":
            return self.key_label.get((app_id, key), DEFAULT)
        if label is None:
            label = queue.labels[1]
        if self.known_label(label, f"ask of app {app_id}") is None:
            return None
        problem = refusal(queue, label)
        if problem:
            self.home._ignore(f"ask of app {app_id}", problem)
            return None
        old = self.key_label.get((app_id, key), DEFAULT)
        if old != label:
            self.pool(old).drop_request(app_id, key)
            if label:
                self.key_label[(app_id, key)] = label
            else:
                del self.key_label[(app_id, key)]
        return label

    def in_pool(self, label: str, app_id: str) -> SchedulerCore | None:
        """The pool of `label`, with a mirror of the home's app in it (None: no such app)."""
        pool = self.pool(label)
        if pool is self.home or app_id in pool.apps:
            return pool
        app = self.home.apps.get(app_id)
        if app is None:
            return None
        pool.mirror_app(app)
        return pool

    def register_ask(self, ask_id: int, pool: SchedulerCore) -> None:
        """The ask is now in `pool`: out of any other pool's table of ask ids."""
        before = self.ask_pool.get(ask_id, self.home)
        if before is not pool:
            before.forget_ask(ask_id)
        if pool is self.home:
            self.ask_pool.pop(ask_id, None)
        else:
            self.ask_pool[ask_id] = pool

    def route_counts(self, changes: Iterable[tuple[object, object]], now: float | None) -> tuple[list, int]:
        """update_counts' pairs: those of pools' asks applied there; the home's returned, in order,
        with how many the pools ignored."""
        home, routed = [], {}
        for pair in changes:
            pool = self.ask_pool.get(pair[0]) if type(pair[0]) is int else None
            if pool is None:
                home.append(pair)
            else:
                routed.setdefault(pool, []).append(pair)
        return home, sum(pool.update_counts(pairs, now) for pool, pairs in routed.items())

    def forget_app(self, app_id: str) -> None:
        for pool in self.mirrors(app_id):
            for ask_id in pool.apps[app_id].ask_ids:
                self.ask_pool.pop(ask_id, None)
            pool.remove_app(app_id)
        for key in [k for k in self.key_label if k[0] == app_id]:
            del self.key_label[key]

    # ------------------------------------------------------------------ containers

    def owner(self, container_id: str) -> SchedulerCore:
        """The pool that counts the container (or the assignment), the home if none does."""
        for pool in self.pools.values():
            if container_id in pool.containers:
                return pool
        return self.home

    def started_in(self, app_id: str, node_id: str, key: tuple[int, int] | None,
                   assignment_id: str | None) -> SchedulerCore | None:
        """The pool a started container is counted in: the one that assigned it; else its ask's
        (by its request key, while the app has that request); else its node's. (So a container a
        non-exclusive partition lent, recovered by a resync after its ask was served, counts in
        that partition until it ends: YARN's container rows do not say which ask it served.)"""
        if assignment_id:
            for pool in (self.home, *self.pools.values()):
                if assignment_id in pool.containers:
                    return pool
        if key is not None:
            label = self.key_label.get((app_id, key))
            if label is not None:
                return self.in_pool(label, app_id)
            app = self.home.apps.get(app_id)
            if app is not None and key in app.requests:
                return self.home
        return self.in_pool(self.node_label.get(node_id, DEFAULT), app_id)

    # ------------------------------------------------------------------ deciding

    def on_nodes(self, nodes: Sequence[str], now: float, limit: int,
                 held: Mapping[str, Vector] | None = None) -> list[Assignment]:
        """The home decides for its own nodes; each pool for its nodes, then the home for the
        room a non-exclusive partition's own asks left (borrowed). A pool with nodes an earlier
        call did not finish decides for them even when none of its nodes is listed; the nodes of
        the pools a call's limit did not reach wait for the next call."""
        # (the home first: with nothing carried and no node listed, its turn costs nothing)
        by_pool: dict[str, list[str]] = {DEFAULT: []}
        by_pool.update((label, []) for label, pool in self.pools.items() if pool.carrying)
        for node_id in nodes:
            by_pool.setdefault(self.node_label.get(node_id, DEFAULT), []).append(node_id)
        out: list[Assignment] = []
        for label, ids in by_pool.items():
            left = limit - len(out) if limit else 0
            if limit and left <= 0:
                (self.pools[label] if label else self.home).defer(ids)
                continue
            if not label:
                out += self.home.decide(ids, now, left, held)
                continue
            pool = self.pools[label]
            out += pool.on_nodes(ids, now, left, held)
            if not self.exclusive.get(label, True) and (not limit or len(out) < limit):
                guests = [pool.nodes[n] for n in ids if n in pool.nodes and pool.nodes[n].reserved is None]
                out += self.home.decide_as_guest(guests, now, limit - len(out) if limit else 0)
        return out

    def on_heartbeat(self, node_id: str, now: float, limit: int) -> list[Assignment]:
        """One node of a pool's decision: the pool's own asks, then (non-exclusive) the home's
        for the room they left. Nothing is carried: a heartbeat's decision ends at its limit."""
        label = self.node_label.get(node_id, DEFAULT)
        pool = self.pools[label]
        out = pool.on_heartbeat(node_id, now, limit)
        node = pool.nodes.get(node_id)
        if (node is not None and node.reserved is None and not self.exclusive.get(label, True)
                and (not limit or len(out) < limit)):
            out += self.home.decide_as_guest([node], now, limit - len(out) if limit else 0)
        return out

    @property
    def carried(self) -> int:
        """The nodes of the partitions' pools that the last calls did not finish."""
        return sum(pool.carried for pool in self.pools.values())

    def borrowed_kills(self, now: float) -> list[Victim]:
        """Borrowed containers to kill so that a waiting ask of a non-exclusive partition fits:
        for each pool's waiting request that fits no node's free room, the node where the fewest
        borrowed containers (newest first) make room for it."""
        kills: list[Victim] = []
        for label, pool in self.pools.items():
            if self.exclusive.get(label, True) or not pool.root.shapes:
                continue
            taken: set[str] = set()
            for req in _waiting(pool):
                chosen = self._room_for(pool, req, taken)
                if chosen:
                    taken.update(c.id for c in chosen)
                    kills += [_victim(c, req, now, pool.types) for c in chosen]
        return kills

    def _room_for(self, pool: SchedulerCore, req: Request, taken: set[str]) -> list[Container]:
        home, cap, sub = self.home, req.capability, pool.types.sub
        best: list[Container] | None = None
        for node in pool.nodes.values():
            free = sub(node.capacity, node.allocated)
            if fits(cap, free):
                return []  # it waits for its turn, not for room
            borrowed = sorted((home.containers[c] for c in node.containers if c in home.containers and c not in taken),
                              key=lambda c: -c.started)
            chosen = []
            for c in borrowed:
                chosen.append(c)
                free = vadd(free, c.resources)
                if fits(cap, free):
                    if best is None or len(chosen) < len(best):
                        best = chosen
                    break
        return best or []

    def merge(self, plan: PreemptionPlan, now: float) -> PreemptionPlan:
        """The home's preemption round with the pools' rounds and the borrowed containers' kills."""
        mark, kill, planned = list(plan.mark), list(plan.kill), list(plan.planned)
        for pool in self.pools.values():
            if pool.apps:
                got = pool.preemption_round(now)
                mark += got.mark
                kill += got.kill
                planned += got.planned
        kill += self.borrowed_kills(now)
        return replace(plan, mark=tuple(mark), kill=tuple(kill), planned=tuple(planned))


def _waiting(pool: SchedulerCore):
    """A pool's pending requests of runnable apps."""
    for app in pool.apps.values():
        if app.runnable:
            yield from app.pending


def _victim(c: Container, req: Request, now: float, types: ResourceTypes) -> Victim:
    """A borrowed container killed for `req` (reason "non-exclusive": no grace, it was lent)."""
    return Victim(c.id, c.app.id, c.node.id, c.app.queue.path, req.app.queue.path, "non-exclusive",
                  types.to_dict(c.resources), c.am, c.started, now, now)
