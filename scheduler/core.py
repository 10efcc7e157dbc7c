"""SchedulerCore: cluster state, events, and the hierarchical-DRF decision at each node heartbeat.

Fairness state is computed when a node offers room, never by a periodic thread: every queue's
key (its H-DRF share, or how far it is below its `min`) is refreshed the moment something below
it changes, in its parent's keyed heap. A leaf's share is its weighted dominant share; a parent's
is that of its children's usage rescaled to its lowest child with demand (H-DRF, Bhattacharya et
al.: see "keys and heaps"); a leaf with `user-limits` is a parent of its users, one more level
of H-DRF. A heartbeat walks down the tree taking, at each level, the lowest-keyed child that has
something fitting this node and its limits; a child that cannot fit is set aside for the rest of
the heartbeat, which re-keys its parents (it no longer holds their level down), so a queue whose
requests do not fit never blocks the others (DRFH). Cost per assigned container: one push per
tree level and O(resources) arithmetic per level.
"""
from __future__ import annotations

import logging
import math
import time
from dataclasses import replace
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from heapq import heapify, heappop, heappush
from itertools import count
from operator import mul
from typing import Final

from scheduler.cards import GPU_MEM, Cards, card_sizes_problem
from scheduler.config import DEFAULT_MAX_AM_SHARE, ConfigError, QueueConfig, QueueSpec, created_spec
from scheduler.echo import brief
from scheduler.heap import KeyedHeap
from scheduler.locality import Offer, choose, delays_of, permits, placed
from scheduler.model import (ANY, YARN_AM_SUFFIX, App, Assignment, Container, Node, Placement, Queue, Request, Sharer,
                             User, apps_in_order)
from scheduler.multinode import get_node_choice
from scheduler.partitions import DEFAULT, Partitions, labels_of, refusal
from scheduler.placement import QueueView, Target, place
from scheduler.policies import get_policy
from scheduler.preemption import PreemptionPlan, Preemptor
from scheduler.resources import (AMOUNT_LIMIT, ResourceTypes, UnknownResourceError, Vector, dominant_resource,
                                 dominant_share, fits, fits_any, fits_asked, LinearForm, QuantisedRatio, vadd,
                                 vmin, vsub)

log = logging.getLogger("yarn_drf.core")
# How the reason of an assignment the shim gave back unapplied begins (AssignmentCommitter.DEFERRED).
DEFERRED = "deferred:"

# Final: compiled, these are constants, not a lookup in the module's globals at every use.
UNLIMITED: Final = 1 << 62
DEFAULT_RACK: Final = "/default-rack"
FINISH_STATES: Final = frozenset({"completed", "released", "preempted", "expired", "killed", "lost"})
_RESERVED: Final = object()  # a heartbeat stopped because it reserved its node
_RETRY: Final = object()  # a walk set a queue aside, which re-keyed the queues above: walk again from the root
# Directions a parent sums are quantised to 2**-48 of a share: integer sums are exact in any
# order, so keys depend on the state alone (batch() must decide as eager re-keying).
_QUANTUM: Final = float(1 << 48)
# how a queue's direction counts in its parent's sums
_NONE: Final = 0
_ACTIVE: Final = 1
_ASIDE: Final = 2
_IDLE: Final = 3
_KEY_SCALE: Final = 1e12
UNBLOCK_BUDGET: Final = 64  # queues and users (and apps) a heartbeat sets aside before its walk (see _unblock)


class SchedulerCore:
    """The decision core. Not thread-safe: the caller serialises calls."""

    def __init__(self, config: QueueConfig, resource_types: Sequence[str] | None = None,
                 policy: str = "drf", clock: Callable[[], float] = time.monotonic,
                 node_choice: str = "each-node", max_app_priority: int | None = None) -> None:
        """`node_choice`: how on_nodes picks the node the per-node decision runs on next
        (scheduler.multinode). `max_app_priority`: the cluster's highest application priority
        (YARN's yarn.cluster.max-application-priority, whose default is 0); a higher one given to
        submit_app, recover_app or update_app_priority is lowered to it. None: priorities are
        taken as given (the caller, like YARN's RM, has capped them)."""
        self.max_app_priority = max_app_priority
        self.types = ResourceTypes(resource_types or config.resource_types())
        self.policy = get_policy(policy)
        self._aggregate, self._vadd, self._vsub = self.policy.aggregate, self.types.add, self.types.sub
        self._vmove = self.types.move
        self._zero = self.types.zero
        self.node_choice = get_node_choice(node_choice)
        self._node_choice_name = node_choice
        self._rotation = 0  # on_nodes: where the next call starts in its list of nodes
        self._carried: list[Node] = []  # on_nodes: the nodes a call stopped at its limit did not finish
        self._offer: Offer | None = None  # inside on_nodes: the call's nodes (scheduler.locality)
        # The nodes given an AM container by the current offer (a call, or a heartbeat alone), and
        # the nodes that may still have room for another (_am_room_elsewhere; None: not listed yet).
        self._am_nodes: set[str] = set()
        self._am_candidates: list[Node] | None = None
        self.clock = clock
        self.nodes: dict[str, Node] = {}
        self.apps: dict[str, App] = {}
        self.containers: dict[str, Container] = {}
        self.capacity: Vector = self.types.zero
        self.counters: dict[str, int] = dict.fromkeys(
            ("heartbeats", "assignments", "ignored_events", "refused", "apps_accepted", "apps_rejected",
             "apps_recovered_misplaced", "apps_unrecoverable", "reservations_made", "reservations_satisfied",
             "reservations_dropped", "reloads"), 0)
        self._ids = count(1)
        # ask id (chosen by the caller) -> its request: lets a heartbeat change an ask's count
        # without resending its app, key, location and shape (update_counts). ANY asks, by far the
        # most, map to the request alone; rack and node asks to (request, location).
        self.asks: dict[int, Request] = {}
        self.located_asks: dict[int, tuple[Request, str]] = {}
        # inside batch(): apps (and users an app left) whose heap keys are stale, in the order
        # they were last touched
        self._rekey: dict[App | User, None] | None = None
        self._view: QueueView | None = None  # what placement sees of the tree; None: to rebuild
        # A weight's (scale, share function) at `capacity`, and the direction functions of a
        # scale: shared by the queues and users alike (placement creates them by the thousand);
        # emptied when the capacity changes.
        self._forms: dict[object, tuple[tuple[float, ...], LinearForm]] = {}
        self._ratios: dict[tuple[float, ...], QuantisedRatio] = {}
        self._forms_capacity: Vector = self.types.zero
        self._stale = False  # cluster capacity changed: shares and limits to recompute
        self._placeable: dict[Vector, bool] = {}  # shape -> fits some node's capacity
        self._placeable_bits: tuple[int, int] | None = None  # (shapes known, mask of the placeable)
        self._bits: dict[Vector, int] = {}  # request shape -> its bit in queue masks
        self._heads: dict[int, set[Queue]] = {}  # head_mask -> nested queues heading with that mask
        self.head: Queue | None = None  # the leaf first in fair order (see _reserve_for_head)
        self.head_since = 0.0
        self.config = config
        self._preemptor: Preemptor | None = None
        # node labels (scheduler.partitions): this core's partition ("" for the default one, the
        # home of the others' pools), and, in the home once the cluster has labels, the pools
        self.partition = DEFAULT
        self.partitions: Partitions | None = None
        self._aid = "a"  # assignment ids: a pool's carry its label, so ids are unique in the cluster
        self._install(config)

    # ------------------------------------------------------------------ configuration

    def _install(self, config: QueueConfig) -> None:
        config.check_resources(self.types.names)
        divided = config.resources or self.types.names
        missing = [r for r in divided if r not in self.types.index]
        if missing:
            raise ConfigError([f"resources: {r}: not a resource type of the cluster "
                               f"({', '.join(self.types.names)})" for r in missing], config.source)
        self.config = config
        self.divided = frozenset(divided)
        self._forms.clear()  # (scales depend on the divided types)
        self._ratios.clear()
        self.timeout = config.starvation_timeout_s
        self.queues: dict[str, Queue] = {}
        self._built: list[str] = []  # the queues built (or re-built in place) since take_built
        self._view = None  # (rebuilt at the next placement, once for the whole tree)
        self.root = self._build(config.root, None)

    def _build(self, spec: QueueSpec, parent: Queue | None, dynamic: bool = False) -> Queue:
        q = Queue(spec, parent, self.types.zero, dynamic=dynamic)
        q.locality_delays = delays_of(spec, None if parent is None else parent.locality_delays)
        q.labels = labels_of(spec, None if parent is None else parent.labels)
        self.queues[q.path] = q
        self._built.append(q.path)
        if self._view is not None:
            self._view.add(q.path, q.is_leaf)
        if parent is not None:
            parent.children[spec.name] = q
            parent.nested = True  # (a parent re-created draining has a leaf's spec: _keep_draining)
        self._limits(q)  # before the children's: theirs depend on their parent's scale
        for child in spec.children:
            self._build(child, q)
        return q

    def take_built(self) -> list[str]:
        """The paths of the queues built since the last call, parents first: those placement
        created, those re-created for recovered apps (a draining queue re-created at its own path
        among them), or the whole tree after a reload."""
        built, self._built = self._built, []
        return built

    def _limits(self, q: Queue) -> None:
        """Per-queue multipliers for its share and its effective max, from the current capacity."""
        spec, names, cap = q.spec, self.types.names, self.capacity
        q.scale, q.weigh = self._weighed(spec.weight)
        if spec.min:
            inv = tuple(1.0 / spec.min[n] if spec.min.get(n) else 0.0 for n in names)
            q.min_inv = inv if any(inv) else None
        else:
            q.min_inv = None
        q.app_weigh = self._weighed(1.0)[1]
        for user in (q.users or {}).values():
            self._weigh_user(user, q)
        if q.parent is not None and q.parent.parent is not None:  # (the root keeps no sums)
            # a leaf measures in resource units, a parent (or a leaf with users) in its own share units
            q.up_raw = self._ratio(q.parent.scale)
            q.up = (q.up_raw if spec.is_leaf and q.users is None
                    else self._ratio(tuple([p / s if s else 0.0 for p, s in zip(q.parent.scale, q.scale)])))
        else:
            q.up = q.up_raw = None
        if not spec.max and spec.max_fraction is None:
            q.max = None
        else:
            limit = []
            for name, total in zip(names, cap):
                value = spec.max.get(name, spec.max_fraction)
                limit.append(UNLIMITED if value is None else int(total * value) if isinstance(value, float) else value)
            q.max = tuple(limit)
        if q.is_leaf:
            self._am_limit(q)

    def _weigh_user(self, user: User, leaf: Queue) -> None:
        """A user's share function, weighted by its weight as a queue's is by its own, and its
        direction in its leaf's units, as _limits gives a leaf queue's in its parent's."""
        user.weigh = self._weighed(user.weight)[1]
        user.up = user.up_raw = self._ratio(leaf.scale)

    def _weighed(self, weight: float | dict[str, float]) -> tuple[tuple[float, ...], LinearForm]:
        """The scale (per-resource multipliers) and share function of `weight` at the current
        capacity; one pair per distinct weight, not per queue."""
        if self._forms_capacity != self.capacity:
            self._forms.clear()
            self._ratios.clear()
            self._forms_capacity = self.capacity
        key: object = tuple(sorted(weight.items())) if isinstance(weight, dict) else weight
        forms = self._forms.get(key)
        if forms is None:
            scale = self.policy.scale(self.types.names, self.divided, self.capacity, weight)
            forms = self._forms[key] = (scale, LinearForm(scale, self.policy.aggregate))
        return forms

    def _ratio(self, direction: tuple[float, ...]) -> QuantisedRatio:
        """The quantised direction function of `direction` (in its parent's units); shared alike."""
        ratio = self._ratios.get(direction)
        if ratio is None:
            ratio = self._ratios[direction] = QuantisedRatio(tuple([x * _QUANTUM for x in direction]))
        return ratio

    def _am_limit(self, leaf: Queue) -> None:
        """What max-am-share lets the leaf's AMs hold: its share (the leaf's own, else its nearest
        ancestor's, else DEFAULT_MAX_AM_SHARE) of the most the leaf may hold, per resource: the
        smallest max of the leaf and its ancestors, else the cluster's capacity. Ancestors' limits
        are computed first (_build, _refresh), so theirs are current."""
        share: float | None = None
        room = self.capacity
        q: Queue | None = leaf
        while q is not None:
            if share is None:
                share = q.spec.max_am_share
            if q.max is not None:
                room = vmin(room, q.max)
            q = q.parent
        leaf.am_share = DEFAULT_MAX_AM_SHARE if share is None else share
        leaf.am_limit = tuple(int(v * leaf.am_share) for v in room)

    def reload(self, config: QueueConfig) -> dict:
        """Installs a validated config; apps keep running, queues that vanish while holding apps drain."""
        self._check_reload(config)
        old_queues = self.queues
        self._install(config)
        draining = []
        for app in self.apps.values():
            old = app.queue
            new = self.queues.get(old.path) or self._keep_draining(old.path, old)
            if new.draining and old.path not in draining:
                draining.append(old.path)
            app.queue = new
            new.apps[app.id] = app
        self._recount()  # (it puts each app under its user again, with the new user-limits)
        self.counters["reloads"] += 1
        old_paths, new_paths = set(old_queues), set(self.queues)
        changed = [p for p in old_paths & new_paths
                   if _own(old_queues[p].spec) != _own(self.queues[p].spec) and not self.queues[p].draining]
        summary = {"added": sorted(new_paths - old_paths), "removed": sorted(old_paths - new_paths),
                   "changed": sorted(changed), "draining": sorted(draining)}
        log.info("config reloaded from %s: %s", config.source, summary)
        for pool in self.partitions.pools.values() if self.partitions is not None else ():
            pool.reload(config)
        return summary

    def _check_reload(self, config: QueueConfig) -> None:
        """Refuses a config that would turn a queue holding apps, or one of its ancestors, into a leaf or parent clash."""
        specs = config.queues()
        errors = []
        for path in sorted({app.queue.path for app in self.apps.values()}):
            spec = specs.get(path)
            if spec is not None and not spec.is_leaf:
                errors.append(f"queues.{path}: holds running apps and cannot become a parent queue")
            parts = path.split(".")
            for i in range(1, len(parts) - 1):
                anc = specs.get(".".join(parts[:i + 1]))
                if anc is not None and anc.is_leaf:
                    errors.append(f"queues.{anc.path}: cannot become a leaf while {path} below it holds apps")
        if errors:
            raise ConfigError(sorted(set(errors)), config.source)
        config.check_resources(self.types.names)

    def _keep_draining(self, path: str, old: Queue | None = None) -> Queue:
        """Re-creates a queue the config lacks but that holds apps YARN runs (a reload dropped it,
        or the core restarted with a file without it), and any missing parents: draining (its apps
        run on, no new ones come) unless it is a dynamic queue. `old`: the queue it was, whose
        weight and order it keeps."""
        parent_path = path.rsplit(".", 1)[0]
        parent = self.queues.get(parent_path) or self._keep_draining(parent_path, old and old.parent)
        spec = QueueSpec(path=path, weight=old.spec.weight, order=old.spec.order, user_limits=old.spec.user_limits,
                         node_locality_delay_s=old.spec.node_locality_delay_s,
                         rack_locality_delay_s=old.spec.rack_locality_delay_s) if old else QueueSpec(path=path)
        dynamic = old is not None and old.dynamic
        q = self._build(spec, parent, dynamic=dynamic)
        q.draining = not dynamic
        if q.draining and self._view is not None:
            self._view.remove(path)
        return q

    def _recount(self) -> None:
        """Rebuilds every derived number (usage, runnable counts, shapes, heaps) from apps and containers."""
        zero = self.types.zero
        for q in self.queues.values():
            q.usage, q.running_apps, q.am_usage = zero, 0, zero
            q.shapes.clear()
            q.waiting.clear()
            if q.users is not None:
                q.users.clear()
        self._reset_keys()  # (masks too: _add_shape sets them again)
        for app in sorted(self.apps.values(), key=lambda a: a.seq):
            owner = app.owner = self._user(app.queue, app.user)
            for q in app.queue.ancestors_and_self():
                q.usage = vadd(q.usage, app.usage)
            app.queue.am_usage = vadd(app.queue.am_usage, app.am_usage)
            if owner is not None:
                owner.apps += 1
                owner.usage = vadd(owner.usage, app.usage)
            if app.runnable:
                self._count_running(app, 1)
                for req in app.pending:
                    self._add_shape(app, req.capability)
            else:
                self._hold(app)
        self._admit_waiting(self.root)  # a reload may have raised a max-running-apps
        for app in self.apps.values():
            self._requeue(app)

    # ------------------------------------------------------------------ nodes

    def add_node(self, node_id: str, capacity: Mapping[str, int], rack: str = DEFAULT_RACK,
                 cards: Sequence[int] | None = None, label: str = DEFAULT) -> None:
        """Adds (or, for a known id, updates) a node. `cards`: the MiB of each of its GPU cards;
        then each container's gpu-mem must fit on its cards (scheduler.cards) and the node's
        gpu-mem must be their sum. Without `cards` gpu-mem is one node total. `label`: its
        partition (one of set_labels'; scheduler.partitions)."""
        parts = self.partitions
        if parts is None and label:
            self._ignore(f"add_node {node_id}", f"node label {label!r}: the cluster has no labels")
        if parts is None:
            self._add_node(node_id, capacity, rack, cards)
            return
        pool = parts.pool_of_node(node_id)
        pool._add_node(node_id, capacity, rack, cards)
        if node_id in pool.nodes:
            parts.set_node_label(node_id, label)

    def _add_node(self, node_id: str, capacity: Mapping[str, int], rack: str = DEFAULT_RACK,
                  cards: Sequence[int] | None = None) -> None:
        vec = self._vector(capacity, "add_node", node_id)
        if vec is None:
            return
        if cards is not None:
            problem = self._cards_problem(cards, vec)
            if problem:
                self._ignore(f"add_node {node_id}", problem)
                return
        node = self.nodes.get(node_id)
        if node is not None:
            node.rack = rack or DEFAULT_RACK
            if cards is not None:
                node.cards = None  # new cards: its containers move onto them below
            self._resize(node, vec)
        else:
            node = Node(node_id, rack or DEFAULT_RACK, vec)
            self.attach_node(node)
        if cards is not None or node.cards is not None:
            self._set_cards(node, cards)

    def cards_problem(self, capacity: Mapping[str, int], cards: object) -> str:
        """Why `cards` cannot be the cards of a node of `capacity` (add_node would ignore the
        node), or "": for a caller that would rather add the node without them."""
        problem = card_sizes_problem(cards)
        if problem or not isinstance(cards, (list, tuple)):
            return problem
        try:
            vec = self.types.vector(capacity)
        except (UnknownResourceError, ValueError, AttributeError, TypeError) as exc:
            return str(exc)
        return self._cards_problem(cards, vec)

    def _cards_problem(self, cards: Sequence[int], vec: Vector) -> str:
        problem = card_sizes_problem(cards)
        if problem:
            return problem
        gpu = self.types.index.get(GPU_MEM)
        if gpu is None:
            return f"cards given, but {GPU_MEM} is not a resource type ({', '.join(self.types.names)})"
        if sum(cards) != vec[gpu]:
            return f"{GPU_MEM} {vec[gpu]} is not the sum of its cards ({sum(cards)} MiB: {list(cards)})"
        return ""

    def _set_cards(self, node: Node, sizes: Sequence[int] | None) -> None:
        """Gives `node` these cards (None: none) and puts its running containers back on them:
        on their own cards while those still exist, else where they fit (scheduler.cards)."""
        cards = node.cards = None if sizes is None else Cards(sizes, self.types.index[GPU_MEM], node.capacity)
        for cid in sorted(node.containers):
            c = self.containers.get(cid)
            if c is None:
                continue  # borrowed from a non-exclusive partition: the home's (scheduler.partitions)
            if cards is None:
                c.cards = ()
                continue
            before = c.cards
            c.cards, problem = self._restore_cards(cards, node.id, before or None, c.resources, cid)
            if problem:
                log.warning("container %s: its cards %s %s (node %s's cards changed); placed by the rule",
                            cid, list(before), problem, node.id)

    def set_labels(self, labels: Mapping[str, bool]) -> None:
        """The cluster's node labels, name -> exclusive (YARN's RMNodeLabelsManager), as a whole."""
        if self.partitions is None:
            self.partitions = Partitions(self, self._pool)
        self.partitions.set_labels(dict(labels))

    def _pool(self, label: str) -> SchedulerCore:
        pool = SchedulerCore(self.config, self.types.names, self.policy.name, self.clock,
                             self._node_choice_name, self.max_app_priority)
        pool.partition, pool._aid = label, f"a{label}-"
        return pool

    def set_node_label(self, node_id: str, label: str) -> None:
        """Moves the node to partition `label` ("" for the default one), live."""
        if self.partitions is None:
            if label:
                self._ignore(f"node {node_id}", f"node label {label!r}: the cluster has no labels")
            return
        self.partitions.set_node_label(node_id, label)

    def find_node(self, node_id: str) -> Node | None:
        """The node, in whichever partition it is."""
        return self.nodes.get(node_id) if self.partitions is None else self.partitions.node(node_id)

    def attach_node(self, node: Node) -> None:
        """Counts the node in this core's capacity."""
        self.nodes[node.id] = node
        self._set_capacity(vadd(self.capacity, node.capacity))

    def detach_node(self, node: Node) -> None:
        """Takes the node out of this core's capacity; its containers stay counted."""
        self._unreserve(node)  # (a preemption hold on it ends at the next round: not this core's node)
        del self.nodes[node.id]
        self._set_capacity(vsub(self.capacity, node.capacity))

    def update_node(self, node_id: str, capacity: Mapping[str, int]) -> None:
        if self.partitions is not None and node_id not in self.nodes:
            self.partitions.pool_of_node(node_id).update_node(node_id, capacity)
            return
        node = self._node(node_id, "update_node")
        vec = self._vector(capacity, "update_node", node_id)
        if node is not None and vec is not None:
            self._resize(node, vec)

    def remove_node(self, node_id: str) -> list[str]:
        if self.partitions is not None:
            parts, self.partitions = self.partitions, None  # (the pool's removal below is this body)
            try:
                return parts.remove_node(node_id)
            finally:
                self.partitions = parts
        node = self._node(node_id, "remove_node")
        if node is None:
            return []
        lost = sorted(node.containers)
        for cid in lost:
            self.container_finished(cid, "lost")
        self._unreserve(node)
        del self.nodes[node_id]
        self._set_capacity(vsub(self.capacity, node.capacity))
        return lost

    def _resize(self, node: Node, vec: Vector) -> None:
        self._set_capacity(vadd(vsub(self.capacity, node.capacity), vec))
        node.capacity = vec
        cards = node.cards
        if cards is not None:
            kept = sum(cards.sizes) == vec[cards.index]
            if not kept:
                log.warning("node %s: %s %d is no longer the sum of its cards %s: its cards are dropped "
                            "(gpu-mem is one node total until it declares them again)",
                            node.id, GPU_MEM, vec[cards.index], list(cards.sizes))
            self._set_cards(node, cards.sizes if kept else None)  # (the cards' limit follows the capacity)
        if node.reserved is not None and not node.holds(node.reserved.capability):
            self._unreserve(node)

    def _set_capacity(self, capacity: Vector) -> None:
        self.capacity = capacity
        self._placeable.clear()
        self._placeable_bits = None
        self._stale = True  # shares are recomputed once, at the next decision, not per node added

    def _refresh(self) -> None:
        for q in self.queues.values():
            self._limits(q)
        self._reset_keys()
        for app in self.apps.values():
            self._requeue(app)
        self._stale = False

    def _reset_keys(self) -> None:
        """Empties every heap and H-DRF sum; re-queueing every app rebuilds them."""
        self._heads.clear()
        for q in self.queues.values():
            self._reset_sums(q)
            for user in (q.users or {}).values():
                self._reset_sums(user)

    def _reset_sums(self, q: Sharer) -> None:
        zero = self.types.zero
        q.heap = KeyedHeap()
        q.act = q.dirq = q.up_dirq = zero
        q.idle, q.asides = {}, []
        q.state, q.aside, q.share, q.head, q.head_mask = _NONE, False, 0.0, None, 0
        q.mask = 0
        for shape in q.shapes:
            q.mask |= self._bit(shape)

    # ------------------------------------------------------------------ apps

    def submit_app(self, app_id: str, user: str, queue: str | None = None, groups: Sequence[str] = (),
                   priority: int = 0, now: float | None = None, label: str | None = None) -> Placement:
        """Places a new app (placement rules, ACLs). `label`: its AM's node label expression, if
        it has one: refused when the queue may not use it (CapacityScheduler's check)."""
        if app_id in self.apps:
            return Placement(True, self.apps[app_id].queue.path, "already accepted")
        target = self._placement(user, queue, groups)
        if isinstance(target, str):
            return self._reject(app_id, user, queue, target)
        if label:
            problem = refusal(self._nearest_existing(target.path), label)
            if problem:
                return self._reject(app_id, user, queue, problem)
        leaf = self._create_leaf(target) if target.create else self.queues[target.path]
        return self._accept(App(app_id, user, leaf, self._capped(priority), self.types.zero, self._now(now)))

    def recover_app(self, app_id: str, user: str, queue: str, groups: Sequence[str] = (), priority: int = 0,
                    now: float | None = None) -> Placement:
        """Takes an app YARN already runs (a resync after a core restart, or an RM restart) into
        exactly the queue YARN has it in: placement and ACLs are not re-decided, because its
        containers run there. A queue the configuration no longer has is re-created draining, as
        a reload keeps it; one a placement rule with `create` could make is created dynamic, as
        placement would. An app placement would now put elsewhere, or the ACLs now refuse, is
        counted (apps_recovered_misplaced) and logged, never moved. Refused only when its queue
        cannot be a leaf of the tree (the configuration made it a parent queue)."""
        if app_id in self.apps:
            return Placement(True, self.apps[app_id].queue.path, "already accepted")
        path = queue if queue == "root" or queue.startswith("root.") else f"root.{queue}"
        leaf = self.queues.get(path) or self._recreate(path)
        if isinstance(leaf, str) or not leaf.is_leaf:
            reason = leaf if isinstance(leaf, str) else f"queue {path!r} is now a parent queue"
            self.counters["apps_unrecoverable"] += 1
            log.error("cannot recover app %s of user %s into queue %s: %s; its containers are not counted",
                      app_id, user, path, reason)
            return Placement(False, None, reason)
        target = self._placement(user, path, groups)
        if isinstance(target, str) or target.path != path:
            self.counters["apps_recovered_misplaced"] += 1
            log.warning("recovered app %s of user %s in queue %s, where YARN runs it; placement would now %s",
                        app_id, user, path, target if isinstance(target, str) else f"put it in {target.path}")
        return self._accept(App(app_id, user, leaf, self._capped(priority), self.types.zero, self._now(now)))

    def update_app_priority(self, app_id: str, priority: int) -> int | None:
        """Sets the app's priority (`yarn application -updatePriority`), capped at max_app_priority:
        a fifo leaf orders its apps by it from the next decision on. Returns the priority set;
        None for an unknown app."""
        for pool in self.partitions.mirrors(app_id) if self.partitions is not None else ():
            pool.update_app_priority(app_id, priority)
        app = self._app(app_id, "update_app_priority")
        if app is None:
            return None
        app.priority = self._capped(priority)
        self._requeue(app)
        return app.priority

    def _capped(self, priority: int) -> int:
        top = self.max_app_priority
        return priority if top is None or priority <= top else top

    def _placement(self, user: str, queue: str | None, groups: Sequence[str]) -> Target | str:
        """Where the placement rules put a submission, ACLs checked; or why it is refused."""
        view = self._view
        if view is None:
            view = self._view = QueueView({p: q.is_leaf for p, q in self.queues.items() if not q.draining})
        target = place(self.config.placement, view, queue, user, groups)
        if isinstance(target, str):
            return target
        return self._acl_refusal(target.path, user, groups) or target

    def _recreate(self, path: str) -> Queue | str:
        """The leaf `path` that YARN runs an app in and the configuration lacks: dynamic under a
        parent queue where placement creates queues, else draining (with missing parents)."""
        if not all(path.split(".")):
            return f"{path!r} is not a queue path"
        above = self._nearest_existing(path)
        if above.apps:
            return f"{above.path} above it is a leaf queue holding apps"
        parent = self.queues.get(path.rsplit(".", 1)[0])
        if parent is not None and not parent.is_leaf and self._creates_under(path):
            leaf = self._build(QueueSpec(path=path), parent, dynamic=True)
            log.info("re-created dynamic queue %s for a recovered app", path)
            return leaf
        log.warning("re-created queue %s, which the configuration lacks, draining: its apps run on", path)
        return self._keep_draining(path)

    def _creates_under(self, path: str) -> bool:
        """Whether a placement rule with `create` can make the leaf `path`."""
        parent = path.rsplit(".", 1)[0]
        for rule in self.config.placement:
            if rule.create and (rule.rule == "specified" or (rule.rule == "default" and rule.queue == path)
                                or (rule.rule in ("user", "primary-group") and rule.parent == parent)):
                return True
        return False

    def _accept(self, app: App) -> Placement:
        """Adds an accepted app to its leaf: runnable now, or held back by max-running-apps."""
        leaf = app.queue
        self.apps[app.id] = app
        self.enter_leaf(app, leaf)
        self.counters["apps_accepted"] += 1
        blocked = self._app_limit(leaf)
        owner = app.owner
        if blocked is None and (owner is None or not owner.full):
            self._make_runnable(app)
            return Placement(True, leaf.path, "")
        self._hold(app)
        if blocked is None:
            assert owner is not None  # (the user's limit held it back)
            return Placement(True, leaf.path, f"waiting: user {app.user} runs its max-running-apps "
                                              f"({owner.max_apps}) in {leaf.path}")
        return Placement(True, leaf.path, f"waiting: max-running-apps reached in {blocked}")

    def enter_leaf(self, app: App, leaf: Queue) -> None:
        """Puts the app in `leaf` (not yet runnable nor waiting), under its user when the leaf
        has user-limits; its usage counts in its user's."""
        app.queue = leaf
        leaf.apps[app.id] = app
        owner = app.owner = self._user(leaf, app.user)
        if owner is not None:
            owner.apps += 1
            owner.usage = vadd(owner.usage, app.usage)

    def _user(self, leaf: Queue, name: str) -> User | None:
        """The leaf's record of user `name` (made on its first app), or None without user-limits."""
        users = leaf.users
        if users is None:
            return None
        user = users.get(name)
        if user is None:
            limits = leaf.spec.user_limits
            assert limits is not None  # (users is None without them)
            limit = limits.of(name)
            user = users[name] = User(name, leaf, limit.weight, limit.max_running_apps, self.types.zero)
            self._weigh_user(user, leaf)
        return user

    @staticmethod
    def _hold(app: App) -> None:
        """Makes the app wait for max-running-apps, in submission order in its leaf and user."""
        for waiting in (app.queue.waiting, app.owner.waiting if app.owner is not None else None):
            if waiting is None:
                continue
            if waiting and next(reversed(waiting)).seq > app.seq:  # (a move brings an older app)
                ordered = sorted([*waiting, app], key=_seq)
                waiting.clear()
                waiting.update(dict.fromkeys(ordered))
            else:
                waiting[app] = None

    def _reject(self, app_id: str, user: str, queue: str | None, reason: str) -> Placement:
        self.counters["apps_rejected"] += 1
        log.info("rejected app %s of user %s (asked for queue %r): %s", app_id, user, queue, reason)
        return Placement(False, None, reason)

    def _acl_refusal(self, path: str, user: str, groups: Sequence[str]) -> str:
        """YARN's rule: a user may submit to a queue if its or any ancestor's submit or admin ACL allows."""
        q = self._nearest_existing(path)
        for anc in q.ancestors_and_self():
            if anc.spec.submit_acl.allows(user, groups) or anc.spec.admin_acl.allows(user, groups):
                return ""
        return (f"user {user!r} (groups: {', '.join(groups) or 'none'}) may not submit to queue {path!r}: "
                f"denied by the submit-acl and admin-acl of {path} and its parents")

    def _nearest_existing(self, path: str) -> Queue:
        while path not in self.queues:
            path = path.rsplit(".", 1)[0]
        return self.queues[path]

    def _create_leaf(self, target: Target) -> Queue:
        parent_path, name = target.path.rsplit(".", 1)
        parent = self.queues[parent_path]
        leaf = self._build(created_spec(target.path), parent, dynamic=True)
        log.debug("created queue %s (placement rule with create: true)", leaf.path)  # (the service logs each call's)
        return leaf

    def mirror_app(self, app: App) -> None:
        """Takes the home's app into this pool (scheduler.partitions): into the same queue,
        runnable, since the home decided whether it runs."""
        leaf = self.queues.get(app.queue.path) or self._recreate(app.queue.path)
        if isinstance(leaf, str) or not leaf.is_leaf:
            leaf = self._keep_draining(app.queue.path)
        mirror = self.apps[app.id] = App(app.id, app.user, leaf, app.priority, self.types.zero, app.submitted)
        mirror.blacklist = app.blacklist
        self.enter_leaf(mirror, leaf)
        self._make_runnable(mirror)

    def remove_app(self, app_id: str) -> None:
        if self.partitions is not None:
            self.partitions.forget_app(app_id)
        app = self._app(app_id, "remove_app")
        if app is None:
            return
        for cid in list(app.containers):
            self.container_finished(cid, "killed")
        self.reset_requests(app_id)
        del self.apps[app_id]
        freed = self._take_out(app)
        if freed is not None:
            self._admit_waiting(freed)

    def _admit_waiting(self, top: Queue) -> None:
        """Makes the apps waiting below `top` runnable, oldest first, as far as max-running-apps
        now allows. The apps of a leaf share their limits, so once its oldest must wait, all of
        them must: each leaf costs one look, however many apps wait in it; in a leaf with
        user-limits, the apps of one user do: one look per user with room."""
        heads: list[tuple[int, App, dict[App, None]]] = []
        for q in _queues_below(top):
            if q.users is None:
                if q.waiting:
                    first = next(iter(q.waiting))
                    heads.append((first.seq, first, q.waiting))
            else:  # each user's oldest: a user at its own limit does not hold the others back
                for user in q.users.values():
                    if user.waiting and not user.full:
                        first = next(iter(user.waiting))
                        heads.append((first.seq, first, user.waiting))
        heapify(heads)
        while heads:
            _, app, waiting = heappop(heads)
            if self._app_limit(app.queue) is not None or (app.owner is not None and app.owner.full):
                continue
            del app.queue.waiting[app]
            if app.owner is not None:
                del app.owner.waiting[app]
            self._make_runnable(app)
            if waiting:
                first = next(iter(waiting))
                heappush(heads, (first.seq, first, waiting))

    @staticmethod
    def waiting_ahead(app: App, limit: Queue | User) -> int:
        """How many apps wait for `limit`'s max-running-apps ahead of the waiting `app`."""
        if isinstance(limit, User):
            return sum(other.seq < app.seq for other in limit.waiting)
        return sum(other.seq < app.seq for q in _queues_below(limit) for other in q.waiting)

    @staticmethod
    def _count_running(app: App, change: int) -> None:
        for q in app.queue.ancestors_and_self():
            q.running_apps += change
        if app.owner is not None:
            app.owner.running_apps += change

    def _make_runnable(self, app: App) -> None:
        app.runnable = True
        self._count_running(app, 1)
        for req in app.pending:
            self._add_shape(app, req.capability)
        self._requeue(app)

    @staticmethod
    def _app_limit(leaf: Queue) -> str | None:
        for q in leaf.ancestors_and_self():
            if q.max_apps is not None and q.running_apps >= q.max_apps:
                return q.path
        return None

    def reset_requests(self, app_id: str) -> None:
        if self.partitions is not None:
            for pool in self.partitions.mirrors(app_id):
                for ask_id in pool.apps[app_id].ask_ids:
                    self.partitions.ask_pool.pop(ask_id, None)
                pool.reset_requests(app_id)
        app = self._app(app_id, "reset_requests")
        if app is None:
            return
        for req in list(app.pending):
            self._set_pending(app, req, False)
        for req in app.requests.values():
            if req.reserved_node is not None:
                self._unreserve(req.reserved_node)
            req.count = 0  # a node still held for it (preemption holds several) is let go at its heartbeat
        app.requests.clear()
        for ask_id in app.ask_ids:
            self.asks.pop(ask_id, None)
            self.located_asks.pop(ask_id, None)
        app.ask_ids.clear()

    def move_app(self, app_id: str, queue: str, user: str, groups: Sequence[str] = ()) -> Placement:
        """Moves the app to leaf `queue` (`yarn application -movetoqueue`), for `user` (in
        `groups`), or refuses with the reason. The target is checked as a submission is: it must
        be an existing leaf that is not draining and whose ACLs (its own or an ancestor's submit-
        or admin-acl) let the user in; and as FairScheduler checks a move: below the queue the
        source and target share, no queue may go over its `max` with the app's usage, nor (for an
        app that runs) over its `max-running-apps`. The app's usage, AM usage, pending requests
        and running-app count move with it at once; an app waiting for max-running-apps waits in
        the target, in submission order, unless the target lets it run."""
        app = self._app(app_id, "move_app")
        if app is None:
            return Placement(False, None, f"unknown app {app_id!r}")
        path = queue if queue == "root" or queue.startswith("root.") else f"root.{queue}"
        target = self.queues.get(path)
        refusal = self._move_refusal(app, path, target, user, groups)
        if refusal or target is None:
            log.info("refused to move app %s to %s for user %s: %s", app_id, path, user, refusal)
            return Placement(False, None, refusal)
        source = app.queue
        if target is source:
            return Placement(True, path, "already in that queue")
        runs = app.runnable
        freed = self._take_out(app)
        self.enter_leaf(app, target)
        for q in target.ancestors_and_self():
            q.usage = vadd(q.usage, app.usage)
        target.am_usage = vadd(target.am_usage, app.am_usage)
        if runs or (self._app_limit(target) is None and (app.owner is None or not app.owner.full)):
            self._make_runnable(app)
        else:
            self._hold(app)
        if freed is not None:  # after the app is in: the queues above both count it again
            self._admit_waiting(freed)
        self._requeue_queues(source)
        for pool in self.partitions.mirrors(app_id) if self.partitions is not None else ():
            pool.move_app(app_id, path, user, groups)
        log.info("moved app %s of user %s from %s to %s", app_id, app.user, source.path, path)
        return Placement(True, path, "")

    def _move_refusal(self, app: App, path: str, target: Queue | None, user: str, groups: Sequence[str]) -> str:
        if target is None:
            return f"queue {path!r} does not exist"
        if not target.is_leaf:
            return f"queue {path!r} is a parent queue; apps run in leaf queues"
        if target.draining:
            return f"queue {path!r} is draining (removed from the configuration): it takes no apps"
        refusal = self._acl_refusal(path, user, groups)
        if refusal:
            return refusal.replace("may not submit to", "may not move apps to")
        shared = set(app.queue.ancestors_and_self())
        for q in target.ancestors_and_self():
            if q in shared:
                break
            if q.max is not None and not fits(vadd(q.usage, app.usage), q.max):
                over = [f"{n} {u} used + {a} of the app > max {m}" for n, u, a, m
                        in zip(self.types.names, q.usage, app.usage, q.max) if u + a > m]
                return f"queue {q.path} would go over its max: {'; '.join(over)}"
            if app.runnable and q.max_apps is not None and q.running_apps >= q.max_apps:
                return f"queue {q.path} runs its max-running-apps ({q.running_apps} of {q.max_apps})"
        limits = target.spec.user_limits
        if app.runnable and target.users is not None and limits is not None and target is not app.queue:
            owner = target.users.get(app.user)
            running = 0 if owner is None else owner.running_apps
            most = limits.of(app.user).max_running_apps if owner is None else owner.max_apps
            if most is not None and running >= most:
                return f"user {app.user} runs its max-running-apps in {target.path} ({running} of {most})"
        return ""

    def _take_out(self, app: App) -> Queue | None:
        """Takes the app's usage, AM usage, pending shapes and running count out of its queues
        (leaving it in none). Returns the highest queue whose max-running-apps it held others
        back by: the caller admits them (_admit_waiting)."""
        leaf = app.queue
        leaf.apps.pop(app.id, None)
        for q in leaf.ancestors_and_self():
            q.usage = vsub(q.usage, app.usage)
        leaf.am_usage = vsub(leaf.am_usage, app.am_usage)
        runs = app.runnable
        if runs:  # (with its user: its shapes count in the user's too)
            for req in app.pending:
                self._drop_shape(app, req.capability)
            app.runnable = False
        owner, app.owner = app.owner, None
        if owner is None:
            leaf.heap.remove(app)
        else:
            owner.heap.remove(app)
            owner.usage = vsub(owner.usage, app.usage)
            owner.apps -= 1
            if not owner.apps and leaf.users is not None:
                del leaf.users[owner.name]
            if self._rekey is not None:  # re-keyed with the batch: ties keep the eager order
                self._rekey.pop(owner, None)
                self._rekey[owner] = None
            else:  # its leaf's share comes from its users' sums
                self._push_queue(owner)
                self._requeue_queues(leaf)
        if not runs:
            leaf.waiting.pop(app, None)
            if owner is not None:
                owner.waiting.pop(app, None)
            return None
        freed = leaf if owner is not None and owner.full and owner.waiting else None
        for q in leaf.ancestors_and_self():
            q.running_apps -= 1
            if q.max_apps is not None and q.running_apps == q.max_apps - 1:
                freed = q
        if owner is not None:
            owner.running_apps -= 1
        return freed

    def set_blacklist(self, app_id: str, places: Sequence[str]) -> None:
        """The nodes (ids) and racks the app's AM has blacklisted: nothing of it is placed there,
        and a node reserved for one of its requests there is let go."""
        app = self._app(app_id, "set_blacklist")
        if app is not None:
            self._blacklist(app, frozenset(places))

    def update_blacklist(self, app_id: str, additions: Sequence[str] = (), removals: Sequence[str] = ()) -> None:
        """YARN's blacklist request of an allocate call: node ids and racks added to and removed
        from the app's blacklist (removals after additions, as YARN applies them)."""
        app = self._app(app_id, "update_blacklist")
        if app is not None:
            self._blacklist(app, app.blacklist.union(additions).difference(removals))

    def _blacklist(self, app: App, places: frozenset[str]) -> None:
        for pool in self.partitions.mirrors(app.id) if self.partitions is not None else ():
            pool._blacklist(pool.apps[app.id], places)
        app.blacklist = places
        for req in app.requests.values():
            node = req.reserved_node
            if node is not None and (node.id in places or node.rack in places):
                self._unreserve(node)

    # ------------------------------------------------------------------ requests

    def update_request(self, app_id: str, priority: int, resources: Mapping[str, int] | Vector, count: object, *,
                       allocation_id: int = 0, location: str = ANY, relax_locality: bool = True,
                       now: float | None = None, ask_id: int | None = None, am: bool | None = None,
                       label: str | None = None) -> None:
        """Sets one of YARN's asks: `count` containers of `resources` ({name: amount}, or a
        vector in the order of self.types) at `location` (ANY, a rack or a node) for the request
        key (priority, allocation_id). With `ask_id`, later count changes of this ask can go
        through update_counts. `am=True`: the request is the app's ApplicationMaster (YARN's
        AM ask, which the RM makes for the attempt): its containers are AM containers, held to
        the queue's max-am-share; None leaves what the request was. `label`: the ask's node label
        expression (None: its queue's default-node-label-expression; scheduler.partitions)."""
        parts = self.partitions
        if parts is not None:
            app = self._app(app_id, "update_request")
            where = None if app is None else parts.ask_label(app_id, (priority, allocation_id), label, location,
                                                             app.queue)
            pool = None if where is None else parts.in_pool(where, app_id)
            if pool is None:
                return
            if ask_id is not None:
                parts.register_ask(ask_id, pool)
            if pool is not self:
                pool.update_request(app_id, priority, resources, count, allocation_id=allocation_id,
                                    location=location, relax_locality=relax_locality, now=now, ask_id=ask_id, am=am)
                return
        elif label:
            self._ignore("update_request", f"app {app_id}: node label {label!r}: the cluster has no labels")
            return
        app = self._app(app_id, "update_request")
        if app is None:
            return
        if type(count) is not int or not 0 <= count < AMOUNT_LIMIT:
            self._ignore("update_request", f"app {app_id}: count must be an integer from 0 to 2^63-1, "
                         f"got {brief(count)}")
            return
        capability = self._vector(resources, "update_request", app_id)
        if capability is None:
            return
        key = (priority, allocation_id)
        req = app.requests.get(key)
        if req is None:
            req = app.requests[key] = Request(app, key, capability, self._now(now))
        if am is not None:
            req.am = am
        if req.capability != capability:
            was_pending = req.count > 0
            if was_pending:
                self._set_pending(app, req, False)
            req.capability = capability
            if was_pending:
                self._set_pending(app, req, True)
        if location == ANY:
            if count > 0 and req.count == 0:
                req.restart(self._now(now))
            req.relax = relax_locality
            req.count = count
            self._set_pending(app, req, count > 0)
        elif location.startswith("/"):
            req.set_rack(location, count, relax_locality)
        else:
            req.set_node(location, count)
        if req.count == 0 and req.reserved_node is not None:
            self._unreserve(req.reserved_node)
        if ask_id is not None:
            self._register_ask(ask_id, req, location)

    def drop_request(self, app_id: str, key: tuple[int, int]) -> None:
        """The app's request `key` wants nothing here any more: its label moved it to another pool."""
        app = self.apps.get(app_id)
        req = None if app is None else app.requests.get(key)
        if req is None or app is None:
            return
        self._set_pending(app, req, False)
        if req.reserved_node is not None:
            self._unreserve(req.reserved_node)
        req.count = 0

    def forget_ask(self, ask_id: int) -> None:
        """The ask id now names an ask of another pool."""
        known = self.asks.pop(ask_id, None)
        if known is None and ask_id in self.located_asks:
            known = self.located_asks.pop(ask_id)[0]
        if known is not None and ask_id in known.app.ask_ids:
            known.app.ask_ids.remove(ask_id)

    def _register_ask(self, ask_id: int, req: Request, location: str) -> None:
        known = self.asks.pop(ask_id, None)
        if known is None and ask_id in self.located_asks:
            known = self.located_asks.pop(ask_id)[0]
        if known is None or known.app is not req.app:
            if known is not None:  # a caller reusing ids across apps: the newest wins
                known.app.ask_ids.remove(ask_id)
            req.app.ask_ids.append(ask_id)
        if location == ANY:
            self.asks[ask_id] = req
        else:
            self.located_asks[ask_id] = (req, location)

    def update_counts(self, changes: Iterable[tuple[object, object]], now: float | None = None) -> int:
        """New counts for asks registered by update_request(ask_id=...), as (ask id, count) pairs,
        in order; shape and locality relaxation unchanged. This is most of what a heartbeat
        carries, so each is a couple of lookups. Returns how many were ignored (unknown id, bad
        count), each logged and counted as an ignored event."""
        any_asks, located, limit = self.asks, self.located_asks, AMOUNT_LIMIT
        ignored = 0
        if self.partitions is not None and self.partitions.ask_pool:
            changes, ignored = self.partitions.route_counts(changes, now)
        for ask_id, count in changes:
            if type(ask_id) is int and type(count) is int and 0 < count < limit:
                req = any_asks.get(ask_id)
                if req is not None and req.count:  # pending before and after: nothing else changes
                    req.count = count
                    continue
            if type(count) is not int or not 0 <= count < AMOUNT_LIMIT or type(ask_id) is not int:
                ignored += 1
                self._ignore("update_counts", f"ask {brief(ask_id)}: count must be an integer from 0 to "
                             f"2^63-1 and the id an integer, got {brief(count)}")
                continue
            req = any_asks.get(ask_id)
            if req is not None:  # starts or stops waiting (the first test took those that go on)
                req.count = count
                if count:
                    req.restart(self._now(now))
                self._set_pending(req.app, req, count > 0)
                if not count and req.reserved_node is not None:
                    self._unreserve(req.reserved_node)
                continue
            ref = located.get(ask_id)
            if ref is None:
                ignored += 1
                self._ignore("update_counts", f"unknown ask id {ask_id}")
                continue
            req, location = ref
            if location.startswith("/"):
                req.set_rack(location, count)
            else:
                req.set_node(location, count)
        return ignored

    def _set_pending(self, app: App, req: Request, pending: bool) -> None:
        if pending == (req in app.pending):
            return
        if pending:
            app.pending.add(req)
        else:
            app.pending.remove(req)
        if app.runnable:
            (self._add_shape if pending else self._drop_shape)(app, req.capability)
            self._requeue(app)

    def _add_shape(self, app: App, shape: Vector) -> None:
        bit = self._bit(shape)
        for q in _sharers(app):
            q.shapes[shape] += 1
            q.mask |= bit

    def _drop_shape(self, app: App, shape: Vector) -> None:
        for q in _sharers(app):
            left = q.shapes[shape] - 1
            if left:
                q.shapes[shape] = left
            else:
                del q.shapes[shape]
                q.mask &= ~self._bits[shape]
        if not self.root.shapes:
            self.head = None  # no demand anywhere: whoever asks next starts a fresh starvation clock

    # ------------------------------------------------------------------ keys and heaps

    # Hierarchical DRF (Bhattacharya, Culler, Friedman, Ghodsi, Shenker, Stoica, SoCC 2013). A
    # leaf's share is its weighted dominant share, as in flat DRF. A parent's vector sums its
    # children's, each cut back to M, the lowest share among its children that can use the node
    # being decided ("rescaling to minimum nodes"): a child that raced ahead on a resource its
    # siblings do not use, or that holds more than its part from before they asked, does not make
    # its parent look large while a sibling is still low. A child that cannot use the node, or has
    # no demand, does not set M ("ignoring blocked nodes") and is cut back to M too. The parent's
    # share is the weighted dominant share of that vector with its own weights. With one level of
    # queues no parent's share is ever compared: flat trees are ordered exactly as flat DRF.
    #
    # The users of a leaf with user-limits are one more level (model.Sharer: a user is keyed in its
    # leaf's heap as a queue is in its parent's): a user's share is its weighted dominant share, and
    # the leaf's vector is made from its users' as a parent's from its children's, by the same code
    # (_push_queue). So a user asking for what nobody else wants does not make its leaf look large
    # while another user of the leaf is still low, and a user that cannot use the node is set aside
    # as a child queue is, which re-keys its leaf.
    #
    # Incrementally: each parent (and leaf with users) keeps `act`, the sum of its heap children's directions
    # (vector / share, quantised: integer sums are exact in any order, so keys depend on the state
    # alone and batch() decides as eager re-keying), so its vector is M * act plus its idle and
    # set-aside children: a re-key costs O(resources + idle children) per level, not O(children).
    # Which children can use the node is settled by the heartbeat (_unblock, _pick): a child that
    # cannot is set aside, which re-keys its parents.

    def _queue_key(self, q: Sharer) -> tuple[int, float]:
        if q.min_inv is not None:
            below = max(map(mul, q.usage, q.min_inv))
            if below < 1.0:
                return 0, below  # under its min: served before every queue at or over its min
        # Quantised: shares that are equal but for float rounding tie, and ties go by heap order.
        return 1, int(q.share * _KEY_SCALE)

    def _units(self, level: float, act: tuple[int, ...], blocked: list[Sharer], idle) -> list[float]:
        """A parent's vector in its own share units: M * its heap children's directions, plus each
        set-aside or idle child's vector, cut back to M (fsum: exact in any order)."""
        base = [level * a / _QUANTUM for a in act] if level < math.inf else [0.0] * len(act)
        rest = [c for c in (*blocked, *idle) if c.share]
        if not rest:
            return base
        cols = [[b] for b in base]
        for c in rest:
            part = min(c.share, level) / _QUANTUM
            for col, d in zip(cols, c.dirq):
                col.append(part * d)
        return [math.fsum(col) for col in cols]

    def _app_key(self, app: App) -> tuple[int, float]:
        """fifo: priority, then submission; drf: the app's dominant share, after its priority
        among one user's apps (in a leaf with user-limits)."""
        leaf = app.queue
        if leaf.spec.order == "fifo":
            return -app.priority, app.seq
        return (0 if app.owner is None else -app.priority), leaf.app_weigh(app.usage)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Applies a run of events (a heartbeat's deltas) re-keying each touched app and each of
        their queues once, at the end, instead of after every change: only the last keys matter
        to the next decision. Keys come out as if re-keyed eagerly, in the same order (ties
        included)."""
        if self._rekey is not None:  # nested: the outer batch re-keys
            yield
            return
        self._rekey = {}
        try:
            yield
        finally:
            touched, self._rekey = self._rekey, None
            self._settle(touched)

    def _settle(self, touched: dict[App | User, None]) -> None:
        """Eager re-keying pushes a queue into its parent's heap once per touch below it; only
        the last push counts, so each queue goes once, in the order of its last touch."""
        queues: dict[Queue, None] = {}
        for app in touched:
            if isinstance(app, User):  # one of its apps left: its usage changed, and its leaf's sums
                self._push_queue(app)
                leaf = app.parent
                assert leaf is not None  # (a user's parent is its leaf)
            else:
                leaf = app.queue
                if self.apps.get(app.id) is app:
                    self._push_app(app)
            # removed meanwhile or not, its queues' usage and shapes changed: re-key them
            q = leaf
            while q.parent is not None:
                queues.pop(q, None)  # to the end: the order of last touches is the eager order
                queues[q] = None
                q = q.parent
        for q in queues:
            self._push_queue(q)

    def _requeue(self, app: App) -> None:
        """Puts `app` and its queues in their parents' heaps with fresh keys, or takes them out."""
        if self._rekey is not None:
            self._rekey.pop(app, None)  # to the end: the order of last touches is the eager order
            self._rekey[app] = None
            return
        self._push_app(app)
        self._requeue_queues(app.queue)

    def _push_app(self, app: App) -> None:
        owner = app.owner
        heap = app.queue.heap if owner is None else owner.heap
        if app.runnable and app.pending:
            tier, value = self._app_key(app)  # (not *: compiled, a starred call goes the generic way)
            heap.push(app, tier, value)
        else:
            heap.remove(app)
        if owner is not None:
            self._push_queue(owner)

    def _requeue_queues(self, q: Sharer, keep: bool = False) -> None:
        while q.parent is not None:
            self._push_queue(q, keep)
            q = q.parent

    def _push_queue(self, q: Sharer, keep: bool = False, order: int | None = None) -> None:
        """Re-measures q (a queue, or a user of a leaf), re-keys it in its parent's heap (or takes
        it out) and moves its part of the parent's sums. This runs per tree level for every
        container: it is written for speed.

        q's share and direction come from its usage (a leaf without users, a user, or a nested
        queue set aside: nothing below it can use the node, so all counts in full) or from its
        children's (or users') sums. Equal keys go in
        the order their queues were last re-keyed by a change of usage or demand; a heartbeat
        setting a queue aside and back re-keys with `keep` (or the saved `order`), so a queue does
        not lose its place among equals for a node it could not use."""
        units: Sequence[float]
        dirq: tuple[int, ...] | None = None
        if not q.nested or q.aside:
            units = q.usage
            up = q.up_raw
            if units is q.raw_usage and q.weigh is q.raw_weigh:
                # measured from this very usage tuple by these very functions (a heartbeat setting
                # it aside and back): the same share and direction, without recomputing them
                share = q.share = q.raw_share
                dirq = q.raw_dirq
            else:
                share = q.share = q.weigh(units)
                if up is not None:
                    dirq = up(units, share) if share else self._zero
                q.raw_usage, q.raw_weigh, q.raw_share, q.raw_dirq = units, q.weigh, share, dirq
        else:
            top = q.heap.peek_entry()  # (tier, the child with the lowest key)
            up = q.up
            if top is not None and top[0] == 1 and not (q.idle or q.asides):
                lowest: Sharer = top[1]
                if type(lowest) is User and len(q.heap) == 1:
                    # a leaf whose one user is all its sums hold: the leaf's vector is that user's,
                    # its usage, exactly (not through the quantised sums), so a leaf with one user
                    # decides exactly as a leaf without users
                    units, up = q.usage, q.up_raw
                    share = q.share = q.weigh(units)
                else:
                    units = q.act  # every child counts M * its direction: the sums say it all
                    share = self._aggregate(units)
                    q.share = lowest.share * share / _QUANTUM
            elif top is None and _one_user(q):  # (as above: its one user is idle or set aside)
                units, up = q.usage, q.up_raw
                share = q.share = q.weigh(units)
            else:
                units = self._units(_level(q, top), q.act, q.asides, q.idle)
                share = q.share = self._aggregate(units)
        parent = q.parent
        assert parent is not None  # the root is never re-keyed
        heap = parent.heap
        if keep:
            order = heap.order_of(q)
        if q.shapes:
            state = _ASIDE if q.aside else _ACTIVE
        else:
            state = _IDLE if q.share else _NONE
        if up is not None:  # the root's own share is never compared: it keeps no sums
            if dirq is None:
                dirq = up(units, share) if q.share else self._zero
            q.dirq = dirq
            if state == q.state == _ACTIVE:
                old = q.up_dirq
                if dirq != old:
                    parent.act = self._vmove(parent.act, old, dirq)
            else:
                self._move_sums(q, parent, q.state, state)
            q.state, q.up_dirq = state, dirq
        if state != _ACTIVE:
            heap.remove(q)
            on_top = False
        elif q.min_inv is None:
            on_top = heap.push(q, 1, int(q.share * _KEY_SCALE), order)
        else:
            tier, value = self._queue_key(q)
            on_top = heap.push(q, tier, value, order)
        if up is not None and (on_top or q is parent.head):  # else the head is the same child
            self._track_head(parent)

    def _move_sums(self, q: Sharer, parent: Queue, old: int, new: int) -> None:
        if old == _ACTIVE:
            parent.act = self._vsub(parent.act, q.up_dirq)
        elif old == _IDLE:
            del parent.idle[q]
        if new == _ACTIVE:
            parent.act = self._vadd(parent.act, q.dirq)
        elif new == _IDLE:
            parent.idle[q] = None

    # Which parents head their heap with a child that cannot use the node: every queue's mask
    # marks the request shapes pending below it (kept with `shapes`), each parent's head_mask its
    # head child's mask,
    # and `heads` groups parents by head_mask. A node's room fits some set of shapes; a parent
    # whose head_mask misses that set heads with a child that cannot use the node, so its key is
    # not yet its key for the node: the heartbeat sets such heads aside first (_unblock).

    def _bit(self, shape: Vector) -> int:
        bit = self._bits.get(shape)
        if bit is None:
            bit = self._bits[shape] = 1 << len(self._bits)
        return bit

    def _track_head(self, q: Queue) -> None:
        if q.parent is None or not q.nested:  # the root's head is never blocked for its key
            return
        head: Sharer | None = q.heap.peek()
        q.head = head
        mask = 0 if head is None or q.aside else head.mask
        if mask != q.head_mask:
            heads = self._heads
            if q.head_mask:
                group = heads[q.head_mask]
                group.discard(q)
                if not group:
                    del heads[q.head_mask]
            if mask:
                heads.setdefault(mask, set()).add(q)
            q.head_mask = mask

    def _fitting(self, free: Vector) -> int:
        """The mask of the shapes pending anywhere that fit `free` (0: nothing pending fits)."""
        fit = 0
        bits = self._bits
        for shape in self.root.shapes:
            if fits_asked(shape, free):
                fit |= bits[shape]
        return fit

    def _unblock(self, fit: int, aside: list) -> None:
        """Sets aside, deepest first, every head child (or user of a leaf) that cannot use the node
        (and a parent whose heap that empties), until every parent heads with a child that fits the
        node (`fit`: the mask of the shapes that fit its room), or UNBLOCK_BUDGET are set aside in this
        heartbeat: past that, the walk sets aside what it meets (_pick), and a queue it does not
        look into keeps the key it has with its blocked head, which is lower than its key for this
        node but for rare mixes of resources (see "Hierarchical DRF" in docs/design.md).

        The queues above those of one depth are re-keyed once, after that depth: setting aside
        below one queue reads nothing of another queue of its depth nor of the queues above it,
        and keys depend on the state alone, so this is what re-keying after each one would leave."""
        heads = self._heads
        if not heads:
            return  # no parent (nor leaf with users) below the root, or none with demand
        if fit == self.root.mask:
            return  # every shape pending anywhere fits
        if len(aside) >= UNBLOCK_BUDGET:
            return  # (the first blocked queue would find the budget spent and change nothing)
        while True:
            # Deepest first, by path (the sequence number keeps a sort's stability), taken off a
            # heap as they come: the budget often ends the pass after a few of hundreds blocked,
            # and sorting them all cost more than the set-asides themselves.
            blocked = [(-q.depth, q.path, i, q) for i, q in
                       enumerate(q for mask in heads if not mask & fit for q in heads[mask])]
            if not blocked:
                return
            heapify(blocked)
            changed: list[Queue] = []
            depth = blocked[0][3].depth
            while blocked:
                q = heappop(blocked)[3]
                if q.depth != depth:
                    depth = q.depth
                    self._rekey_above(changed)
                    changed.clear()
                if not self._unblock_head(q, fit, aside, changed):
                    self._rekey_above(changed)
                    return
            self._rekey_above(changed)

    def _unblock_head(self, q: Queue, fit: int, aside: list, changed: list[Queue]) -> bool:
        """Sets aside q's head children that cannot use the node until one can, or q itself when
        none can; False when UNBLOCK_BUDGET ran out. Adds to `changed` the queue whose key, and
        its ancestors', this changed (q, or its parent when q went aside): nothing here reads them."""
        moved = False
        while not q.aside:
            if len(aside) >= UNBLOCK_BUDGET:
                if moved:
                    changed.append(q)
                return False
            head: Sharer | None = q.heap.peek()
            if head is None:
                parent = q.parent
                assert parent is not None  # a parent in `heads` is below the root
                self._set_aside(q, aside)
                changed.append(parent)
                return True
            if head.mask & fit:
                break
            self._set_aside(head, aside)
            moved = True
        if moved:
            changed.append(q)
        return True

    # ------------------------------------------------------------------ the decision

    def on_nodes(self, node_ids: Sequence[str], now: float | None = None, limit: int = 0,
                 held: Mapping[str, Vector] | None = None) -> list[Assignment]:
        """Decides for many nodes at once: the bridge's schedule call, which lists the nodes with
        free room that heartbeated since, in whichever partition they are. At most `limit`
        assignments when given: the nodes that call did not finish go first in the next one, as
        they waited longest. `held`: room the RM still holds on a node for containers the core has
        finished (YARN keeps a killed container's room until its NodeManager reports it gone):
        this call leaves it out, so it places only what the RM can commit; usage and shares do not
        change."""
        if self.partitions is not None:
            known = [n for n in node_ids if self.partitions.node(n) is not None]
            if len(known) < len(node_ids):
                self._ignore("on_nodes", f"{len(node_ids) - len(known)} unknown node(s)")
            return self.partitions.on_nodes(known, self._now(now), limit, held)
        return self.decide(node_ids, now, limit, held)

    def decide(self, node_ids: Sequence[str], now: float | None = None, limit: int = 0,
               held: Mapping[str, Vector] | None = None) -> list[Assignment]:
        """on_nodes for this core's own nodes: taken in the given order, after those the last call
        did not finish, rotated by one more at every call so no node is always first;
        `self.node_choice` decides how (multinode.py)."""
        nodes = [n for n in map(self.nodes.get, node_ids) if n is not None]
        if len(nodes) < len(node_ids):
            self._ignore("on_nodes", f"{len(node_ids) - len(nodes)} unknown node(s)")
        carried, self._carried = self._carried, []
        if carried:
            # (a carried node may have left the cluster, or have heartbeated again)
            again = set(carried)
            nodes = [n for n in nodes if n not in again]
            carried = [n for n in carried if self.nodes.get(n.id) is n]
        if not nodes and not carried:
            return []
        if self._stale:
            self._refresh()
        start = 0
        if nodes:  # (a call that only goes on with carried nodes is not a new turn)
            start = self._rotation % len(nodes)
            self._rotation += 1
        order = carried + nodes[start:] + nodes[:start]
        self._offer = Offer(order)
        self._am_nodes.clear()
        self._am_candidates = None
        held_on = [(self.nodes[n], v) for n, v in (held or {}).items() if n in self.nodes]
        for node, v in held_on:
            node.allocated = self._vadd(node.allocated, v)
        try:
            out, self._carried = self.node_choice(self, order, self._now(now), limit)
            return out
        finally:
            self._offer = None
            for node, v in held_on:
                node.allocated = self._vsub(node.allocated, v)

    @property
    def carrying(self) -> bool:
        """Whether the last call stopped at its limit with nodes left for the next one."""
        return bool(self._carried) or (self.partitions is not None and self.partitions.carrying)

    def defer(self, node_ids: Sequence[str]) -> None:
        """Nodes a call reached its limit before deciding for: the next call decides for them first."""
        self._carried += [n for n in map(self.nodes.get, node_ids) if n is not None]

    def decide_as_guest(self, nodes: list[Node], now: float, limit: int) -> list[Assignment]:
        """Decides for nodes of a non-exclusive partition its own asks left room on (borrowed:
        scheduler.partitions): as for this core's nodes, but never reserving one, and without
        counting their capacity in this core's."""
        if not nodes or not self.apps:
            return []
        timeout, self.timeout = self.timeout, None
        carried, self._carried = self._carried, []  # its own nodes wait for its own next call
        for node in nodes:
            self.nodes[node.id] = node
        self._placeable.clear()
        self._placeable_bits = None
        try:
            return self.decide([n.id for n in nodes], now, limit)
        finally:
            for node in nodes:
                del self.nodes[node.id]
            self._carried = carried  # (borrowed room a limit cut short is not carried: it is the pool's)
            self.timeout = timeout
            self._placeable.clear()
            self._placeable_bits = None

    def on_heartbeat(self, node_id: str, now: float | None = None, limit: int = 0) -> list[Assignment]:
        """The per-node decision: assignments for this node in fair order, until nothing more
        fits it (or `limit` assignments, when given)."""
        if self.partitions is not None and node_id not in self.nodes:
            if self.partitions.node(node_id) is None:
                self._ignore("on_heartbeat", f"unknown node {node_id!r}")
                return []
            return self.partitions.on_heartbeat(node_id, self._now(now), limit)
        node = self._node(node_id, "on_heartbeat")
        if node is None:
            return []
        self.counters["heartbeats"] += 1
        if self._offer is None:
            self._am_nodes.clear()
            self._am_candidates = None
        if self._stale:
            self._refresh()
        now = self._now(now)
        free = self.types.sub(node.capacity, node.allocated)
        if node.cards is not None:
            free = node.cards.room(free)
        out: list[Assignment] = []
        if node.reserved is not None:
            got = self._serve_reservation(node, free, now)
            if got is _RESERVED:
                return out
            if got is not None:
                out.append(got)
                if len(out) == limit:
                    return out
                free = self._room_after(node, free, got.vector)
        if self.timeout and self._reserve_for_head(node, free, now):
            return out
        aside: list = []
        root = self.root
        had_am = node.id in self._am_nodes
        try:
            fit = self._fitting(free)
            while fit:
                self._unblock(fit, aside)
                got = self._pick(root, free, fit, None, node, now, aside)
                if got is None:
                    break
                if got is not _RETRY:
                    out.append(got)
                    if len(out) == limit:
                        break
                    if got.node_id == node.id:  # (else locality placed it on another node of the call)
                        if not had_am and node.id in self._am_nodes:
                            # Its AM for this offer: the node's turn ends while another node has
                            # room for one, rather than pass over every app waiting for its AM.
                            if self._am_room_elsewhere(node, got.vector):
                                break
                            had_am = True
                        free = self._room_after(node, free, got.vector)
                        fit = self._fitting(free)
        finally:
            self._restore(aside)
        return out

    def _room_after(self, node: Node, free: Vector, granted: Vector) -> Vector:
        """The node's room for the next container once `granted` is placed: on a node with cards,
        what one container can still get on them (the card it took may not have been the roomiest)."""
        if node.cards is None:
            return self._vsub(free, granted)
        return node.cards.room(self._vsub(node.capacity, node.allocated))

    def _pick(self, q: Queue, free: Vector, fit: int, headroom: Vector | None, node: Node, now: float,
              aside: list):
        """The next assignment from below `q`: None when nothing below fits this node, _RETRY when
        children were set aside (the keys above changed: the walk starts again from the root).

        The shapes were checked by _unblock; what remains to find out here is a queue's max and an
        app's locality and blacklist."""
        heap = q.heap
        while True:
            head = heap.peek()
            if head is None:
                return None
            child: Queue = head  # (typed: compiled, its attributes are read natively, not looked up)
            room = headroom if child.max is None else _room(child, headroom)
            budget = free if room is None else vmin(free, room)
            # below the root, _unblock has checked the shapes of every head against `free`
            if (q.parent is not None or child.mask & fit) if room is None else fits_any(child.shapes, budget):
                if child.children:
                    got = self._pick(child, free, fit, room, node, now, aside)
                else:
                    got = self._pick_app(child, child.heap, budget, node, now, aside)
                if got is not None:
                    return got
            self._set_aside(child, aside)
            if q.parent is not None:
                self._requeue_queues(q, keep=True)
                return _RETRY

    def _set_aside(self, child: Sharer, aside: list) -> None:
        """Takes `child` (a queue, or a user of a leaf) out of its parent's heap for the rest of
        the heartbeat; the caller re-keys the queues above it."""
        parent = child.parent
        assert parent is not None  # the root is never set aside
        order = parent.heap.order_of(child)
        aside.append((child, order))
        child.aside = True
        parent.asides.append(child)
        if isinstance(child, Queue):  # (a user heads no heap of queues or users)
            self._track_head(child)
        self._push_queue(child, order=order)

    def _pick_app(self, leaf: Queue, heap: KeyedHeap, budget: Vector, node: Node, now: float, aside: list):
        """The next assignment from `heap` (the leaf's, or one of its users'): its head app's
        first request that fits, else the next app's; each app without one is set aside. A user
        without one is set aside as a child queue is (_pick): that re-keys its leaf, so the walk
        starts again from the root (_RETRY) unless no other user of the leaf is left."""
        while True:
            head = heap.peek()
            if head is None:
                return None
            if type(head) is User:
                user: User = head  # (typed: compiled, its attributes are read natively, not looked up)
                got = self._pick_app(leaf, user.heap, budget, node, now, aside)
                if got is not None:
                    return got
                self._set_aside(user, aside)
                if not heap:
                    return None
                self._requeue_queues(leaf, keep=True)
                return _RETRY
            app: App = head
            if not (app.blacklist and (node.id in app.blacklist or node.rack in app.blacklist)):
                for req in app.pending:
                    if fits(req.capability, budget) and (
                            node.cards is None or node.cards.holds(req.capability)) and (
                            not req.am or (_am_room(leaf, req.capability) and self._am_spread(node, req))):
                        if req.nodes or req.racks:  # (checked last: being passed over starts its clock)
                            where = choose(req, node, leaf.locality_delays, now, self._offer, self._usable)
                            if where is None:
                                continue
                        elif not req.relax:
                            continue
                        else:
                            where = node
                        got = self._assign(app, req, where, now)
                        self._requeue(app)  # still heading its heap: re-keyed in place
                        return got
            aside.append(heap.pop_with_order())

    def _am_spread(self, node: Node, req: Request) -> bool:
        """Whether the AM request `req` may go on `node` in this offer: one AM container per node
        per offer, unless no other node has room for it. As YARN's schedulers place one container
        asked for anywhere per heartbeat, AMs submitted together land on several nodes, and one
        node's loss takes fewer of them down. Only a node's turn that took an AM ends early
        (on_heartbeat): a general per-heartbeat limit would cost task throughput."""
        return node.id not in self._am_nodes or not self._am_room_elsewhere(node, req.capability)

    def _am_room_elsewhere(self, node: Node, cap: Vector) -> bool:
        """Whether a node other than `node` has free room for an AM of `cap`. Rooms only shrink
        within an offer, so a node found without room is dropped for the rest of it: the offer
        scans the cluster at most once (an AM of a smaller shape may then take a second place on
        a node; the rule errs toward placing)."""
        left = self._am_candidates
        if left is None:
            left = self._am_candidates = list(self.nodes.values())
        i = len(left) - 1
        while i >= 0:
            n = left[i]
            if n is not node:
                if fits(cap, self._vsub(n.capacity, n.allocated)):
                    return True
                left.pop(i)  # (the last, or next to `node` at the end: O(1))
            i -= 1
        return False

    def _usable(self, node: Node, req: Request) -> bool:
        """Whether a container of `req` may go on `node` now, as far as the node and the app's
        exclusions go (another node of the call, for locality: scheduler.locality.choose)."""
        cap = req.capability
        if node.reserved is not None and node.reserved is not req:
            return False
        if req.app.excludes(node):
            return False
        free = self._vsub(node.capacity, node.allocated)
        if node.cards is None:
            return fits(cap, free)
        return fits(cap, node.cards.room(free)) and node.cards.holds(cap)

    def _restore(self, aside: list) -> None:
        """Puts what a heartbeat set aside back in its heaps, in the order it was set aside, then
        re-keys the queues above them once each, deepest first: keys depend on the state alone,
        so this is what re-keying above each one in turn would leave."""
        parents: list[Queue] = []
        for item, order in aside:
            if isinstance(item, Sharer):
                parent = item.parent
                assert parent is not None  # the root is never set aside
                item.aside = False
                parent.asides.remove(item)
                self._push_queue(item, order=order)
                if isinstance(item, Queue):
                    self._track_head(item)
                parents.append(parent)
            else:
                app: App = item
                owner = app.owner
                tier, value = self._app_key(app)
                (app.queue.heap if owner is None else owner.heap).push(app, tier, value, order)
        self._rekey_above(parents)

    def _rekey_above(self, queues: list[Queue]) -> None:
        """Re-keys `queues` and the queues above them (the root aside) once each, deepest first:
        keys depend on the state alone, so this is what re-keying above each one in turn would
        leave."""
        if not queues:
            return
        above: dict[Queue, None] = {}
        for q in queues:
            while q.parent is not None and q not in above:
                above[q] = None
                q = q.parent
        for q in sorted(above, key=_deepest_first):
            self._push_queue(q, keep=True)

    def _assign(self, app: App, req: Request, node: Node, now: float) -> Assignment:
        cap = req.capability
        aid = f"{self._aid}{next(self._ids)}"
        taken = req.take(node)
        req.since = now
        if req.nodes or req.racks:
            placed(req, taken)
        cards = () if node.cards is None else self._take_cards(node.cards, cap)
        c = self.containers[aid] = Container(aid, app, node, cap, req.key, taken, False, cards, now)
        app.containers.add(aid)
        node.containers.add(aid)
        self._charge(app, node, cap, self.types.add)
        if req.am:
            c.am = True
            self._charge_am(c, self.types.add)
            self._am_nodes.add(node.id)
        if req.count == 0:
            self._set_pending(app, req, False)
            if req.reserved_node is not None:
                self._unreserve(req.reserved_node)  # nothing left to hold a node for
        self.counters["assignments"] += 1
        return Assignment(aid, app.id, node.id, app.queue.path, req.key[0], req.key[1], cap, self.types, cards)

    @staticmethod
    def _take_cards(cards: Cards, cap: Vector) -> tuple[int, ...]:
        """The cards a container of `cap` goes on (it fits: the node's free vector held the
        cards' reach), charged."""
        amount = cap[cards.index]
        if not amount:
            return ()
        chosen = cards.choose(amount)
        assert chosen is not None  # the pick checked cards.holds and the reach
        cards.charge(chosen, amount, 1)
        return chosen

    # ------------------------------------------------------------------ reservations
    #
    # HDRF's starvation timeout, measured per queue: the leaf first in fair order (the lowest key
    # at every level among queues with a request that fits some node within their max) is below
    # its fair part by the decision's own measure. When the same leaf has been first for longer
    # than reservation.starvation-timeout-s, it has starved: a node that could hold its next
    # request, but has no room for it now, is reserved for that request, and nothing else starts
    # there until the request fits. Only that leaf reserves, so a reservation never lets a queue
    # jump ahead of one with a lower share. A reservation lasts while its request still asks for
    # containers (also when some of them started elsewhere).

    def _reserve_for_head(self, node: Node, free: Vector, now: float) -> bool:
        """Tracks the first leaf in fair order; reserves `node` for it when it has starved."""
        head = self._fair_head()
        if head is not self.head:
            self.head, self.head_since = head, now
        timeout = self.timeout or 0.0
        if head is None or node.reserved is not None or now - self.head_since < timeout:
            return False
        req = self._reservable(head, node, free, now)
        if req is None:
            return False
        node.reserved, req.reserved_node = req, node
        self.counters["reservations_made"] += 1
        log.info("reserved node %s for app %s request %s %s (queue %s first in fair order for %.0f s)",
                 node.id, req.app.id, req.key, self.types.format(req.capability), head.path,
                 now - self.head_since)
        return True

    def _fair_head(self) -> Queue | None:
        """The leaf first in fair order among queues with a request that fits some node within their max."""
        placeable = self._placeable_mask()
        q, room = self.root, None
        while q.children:
            child = q.heap.peek()  # nearly always the head itself
            if child is None:
                return None
            limit = room if child.max is None else _room(child, room)
            if not self._eligible(child, limit, placeable):
                for child in q.heap.ordered():
                    limit = room if child.max is None else _room(child, room)
                    if self._eligible(child, limit, placeable):
                        break
                else:
                    return None
            q, room = child, limit
        return q

    def _eligible(self, q: Queue, limit: Vector | None, placeable: int) -> bool:
        """q has a request that fits some node's capacity within `limit`."""
        if limit is None:
            return bool(q.mask & placeable)
        return any(self._is_placeable(s) and fits(s, limit) for s in q.shapes)

    def _placeable_mask(self) -> int:
        """The shapes some node's capacity holds, as a mask (cached until the nodes or shapes change)."""
        known = self._placeable_bits
        if known is None or known[0] != len(self._bits):
            mask = 0
            for shape, bit in self._bits.items():
                if self._is_placeable(shape):
                    mask |= bit
            known = self._placeable_bits = (len(self._bits), mask)
        return known[1]

    def _reservable(self, leaf: Queue, node: Node, free: Vector, now: float) -> Request | None:
        """The request of the leaf's first app in fair order to reserve `node` for, if any."""
        for app in apps_in_order(leaf):
            asks = [r for r in app.pending if self._is_placeable(r.capability) and _within(r.capability, leaf)
                    and (not r.am or _am_room(leaf, r.capability))]
            if not asks:
                continue
            if app.blacklist and (node.id in app.blacklist or node.rack in app.blacklist):
                return None
            for req in asks:
                if not permits(req, node, leaf.locality_delays, now):
                    continue
                if fits(req.capability, free):
                    return None  # it starts here now
                if req.reserved_node is None and node.holds(req.capability):
                    return req
            return None
        return None

    def _is_placeable(self, shape: Vector) -> bool:
        """Some node's capacity holds `shape` (cached until the nodes change)."""
        known = self._placeable.get(shape)
        if known is None:
            known = self._placeable[shape] = any(n.holds(shape) for n in self.nodes.values())
        return known

    def _serve_reservation(self, node: Node, free: Vector, now: float):
        """The reserved request's container if it fits now; _RESERVED if the node stays held;
        None if the reservation was invalid and dropped (the node is offered to others)."""
        req = node.reserved
        assert req is not None  # the caller checked
        app = req.app
        if req.count == 0 or self.apps.get(app.id) is not app or not app.runnable \
                or not _within(req.capability, app.queue) or (req.am and not _am_room(app.queue, req.capability)):
            self._unreserve(node)
            return None
        if not fits(req.capability, free):
            return _RESERVED
        node.reserved, req.reserved_node = None, None
        self.counters["reservations_satisfied"] += 1
        got = self._assign(app, req, node, now)
        self._requeue(app)
        return got

    def _unreserve(self, node: Node) -> None:
        req = node.reserved
        if req is not None:
            req.reserved_node = None
            node.reserved = None
            self.counters["reservations_dropped"] += 1

    # ------------------------------------------------------------------ containers

    def container_started(self, container_id: str, app_id: str, node_id: str, resources: Mapping[str, int], *,
                          priority: int | None = None, allocation_id: int = 0,
                          assignment_id: str | None = None, cards: object = None) -> str:
        """A container runs (a confirmation of an assignment, or one the core did not decide: a
        resync or recovery). `cards`: the GPU cards it runs on, as its allocation tag names them;
        on a node with cards and without them, or with cards that cannot be its own
        (Cards.problem), it goes where the rule puts it (scheduler.cards). Returns what is wrong
        with `cards`, or "" (also on a node without cards: its gpu-mem is one node total)."""
        if container_id in self.containers:
            return ""  # repeated report
        parts = self.partitions
        if parts is not None:
            key = (priority, allocation_id) if priority is not None else None
            pool = parts.started_in(app_id, node_id, key, assignment_id)
            if pool is None:
                self._ignore("container_started", f"unknown app {app_id!r}")
                return ""
            if pool is not self or node_id not in self.nodes:
                self.partitions = None  # (the pool's, or a borrowed node's, is this body)
                try:
                    return pool._started(container_id, app_id, node_id, resources, priority, allocation_id,
                                         assignment_id, cards, parts.node(node_id))
                finally:
                    self.partitions = parts
        return self._started(container_id, app_id, node_id, resources, priority, allocation_id, assignment_id,
                             cards, None)

    def _started(self, container_id: str, app_id: str, node_id: str, resources: Mapping[str, int],
                 priority: int | None, allocation_id: int, assignment_id: str | None, cards: object,
                 node: Node | None) -> str:
        """container_started in this core; `node`: the node when it is not one of this core's."""
        if container_id in self.containers:
            return ""
        pending = self.containers.get(assignment_id) if assignment_id else None
        if pending is not None and assignment_id is not None:
            del self.containers[assignment_id]
            pending.id, pending.confirmed = container_id, True
            self.containers[container_id] = pending
            for holder in (pending.app.containers, pending.node.containers):
                holder.discard(assignment_id)
                holder.add(container_id)
            if container_id.endswith(YARN_AM_SUFFIX):
                self.mark_am(container_id)
            return ""
        app = self._app(app_id, "container_started")
        node = node or self._node(node_id, "container_started")
        vec = self._vector(resources, "container_started", container_id)
        if app is None or node is None or vec is None:
            return ""
        key = (priority, allocation_id) if priority is not None else None
        on: tuple[int, ...] = ()
        problem = ""
        if node.cards is not None:
            on, problem = self._restore_cards(node.cards, node.id, cards, vec, container_id)
        self.containers[container_id] = Container(container_id, app, node, vec, key, None, True, on,
                                                  self.clock())
        self._charge(app, node, vec, self.types.add)
        self._requeue(app)
        app.containers.add(container_id)
        node.containers.add(container_id)
        if container_id.endswith(YARN_AM_SUFFIX):
            self.mark_am(container_id)
        return problem

    def mark_am(self, container_id: str) -> None:
        """Says that the container runs its app's ApplicationMaster: it counts toward its queue's
        max-am-share, and preemption takes AMs last. Containers of a request marked `am`
        (update_request) and YARN's *_000001 (the attempt's first id) are known without it."""
        if self.partitions is not None and container_id not in self.containers:
            self.partitions.owner(container_id).mark_am(container_id)
            return
        c = self.containers.get(container_id)
        if c is not None and not c.am:
            c.am = True
            self._charge_am(c, self.types.add)

    @staticmethod
    def _charge_am(c: Container, change: Callable[[Vector, Vector], Vector]) -> None:
        """Counts the AM container `c` in (change: types.add) or out of its app's and leaf's AM usage."""
        c.app.am_usage = change(c.app.am_usage, c.resources)
        c.app.queue.am_usage = change(c.app.queue.am_usage, c.resources)

    def assignment_refused(self, assignment_id: str, reason: str) -> None:
        if self.partitions is not None and assignment_id not in self.containers:
            owner = self.partitions.owner(assignment_id)
            if owner is not self:
                owner.assignment_refused(assignment_id, reason)
                return
        c = self.containers.get(assignment_id)
        if c is None or c.confirmed:
            self._ignore("assignment_refused", f"no unconfirmed assignment {assignment_id}")
            return
        self.counters["refused"] += 1
        # The shim gives back the rest of a reply it stopped before a queue above a late AM ask
        # (docs/bridge.md): nothing went wrong, and a busy cluster has thousands of them.
        level = logging.DEBUG if reason.startswith(DEFERRED) else logging.WARNING
        log.log(level, "assignment %s (app %s on %s) refused by the RM: %s", assignment_id, c.app.id, c.node.id, reason)
        self._release(c)
        req = c.app.requests.get(c.key)
        if req is not None and c.app.id in self.apps:
            req.give_back(c.taken, c.node.rack)
            self._set_pending(c.app, req, req.count > 0)

    def container_finished(self, container_id: str, state: str = "completed") -> None:
        c = self.containers.get(container_id)
        if c is None:
            if self.partitions is not None:
                owner = self.partitions.owner(container_id)
                if owner is not self:
                    owner.container_finished(container_id, state)
            return  # already gone: finishing twice is harmless
        if state not in FINISH_STATES:
            log.warning("container %s finished in unknown state %r; treated as completed", container_id, state)
        self._release(c)

    @staticmethod
    def _restore_cards(cards: Cards, node_id: str, given: object, vec: Vector,
                       cid: str) -> tuple[tuple[int, ...], str]:
        """The cards of a container that runs already on node `node_id`, charged: the ones given
        (None: none) if it can be on them (Cards.problem), else the rule's choice, else the freest
        card (it runs: it is counted, even over that card's size); and what was wrong with `given`."""
        amount = vec[cards.index]
        if not amount:
            return (), ""
        problem = "" if given is None else cards.problem(given, amount)
        chosen: tuple[int, ...] | None
        if given is not None and not problem and isinstance(given, (list, tuple)):
            chosen = tuple(given)
        else:
            chosen = cards.choose(amount)
            if chosen is None:
                chosen = cards.fallback()
                log.warning("container %s: no card of node %s holds its %s %d MiB; counted on card %d",
                            cid, node_id, GPU_MEM, amount, chosen[0])
        cards.charge(chosen, amount, 1)
        return chosen, problem

    def _release(self, c: Container) -> None:
        del self.containers[c.id]
        if c.cards and c.node.cards is not None:
            c.node.cards.charge(c.cards, c.resources[c.node.cards.index], -1)
        c.app.containers.discard(c.id)
        c.node.containers.discard(c.id)
        self._charge(c.app, c.node, c.resources, self.types.sub)
        if c.am:
            self._charge_am(c, self.types.sub)
        self._requeue(c.app)

    @staticmethod
    def _charge(app: App, node: Node, vec: Vector, change: Callable[[Vector, Vector], Vector]) -> None:
        """Adds `vec` to (change: types.add) or takes it from (types.sub) the usage of the node,
        the app and each of its queues; the caller re-keys."""
        node.allocated = change(node.allocated, vec)
        app.usage = change(app.usage, vec)
        if app.owner is not None:
            app.owner.usage = change(app.owner.usage, vec)
        q: Queue | None = app.queue
        while q is not None:  # not ancestors_and_self(): a generator costs more on this path
            q.usage = change(q.usage, vec)
            q = q.parent

    # ------------------------------------------------------------------ headroom

    def headroom(self, app_id: str) -> dict[str, int] | None:
        """What the app could still get now (YARN's headroom, which an AM such as MapReduce's uses
        to ramp reducers down): per resource, the smallest of the cluster's free room and what the
        `max` of its queue and of each ancestor leaves, never below 0. None for an unknown app.
        O(depth x resources): for allocate responses, not for the decision."""
        app = self.apps.get(app_id)
        if app is None:
            return None
        return self.types.to_dict(self.queue_headroom(app.queue, {}))

    def queue_headroom(self, q: Queue, known: dict[Queue, Vector]) -> Vector:
        """headroom's amounts, in the types' order, for any app of queue `q`. `known` holds the
        queues' worked out before: a caller asking for many queues passes one dict, so the leaves
        under one parent (thousands, where placement creates them) each take one step from it."""
        room = known.get(q)
        if room is None:
            if self._stale:
                self._refresh()
            parent = q.parent
            room = vsub(self.capacity, self.root.usage) if parent is None else self.queue_headroom(parent, known)
            if q.max is not None:
                room = vmin(room, vsub(q.max, q.usage))
            room = known[q] = tuple([max(0, v) for v in room])
        return room

    # ------------------------------------------------------------------ preemption

    def preemption_round(self, now: float | None = None) -> PreemptionPlan:
        """One round of preemption toward the targets (scheduler.preemption): what to tell AMs,
        what to kill now. The caller runs it on a timer (every second or so), never per heartbeat."""
        if self._preemptor is None:
            self._preemptor = Preemptor(self)
        now = self._now(now)
        plan = self._preemptor.round(now)
        return plan if self.partitions is None else self.partitions.merge(plan, now)

    @property
    def preemption(self) -> Preemptor:
        """The planner's state (starved queues, outstanding marks, counters), for status pages."""
        if self._preemptor is None:
            self._preemptor = Preemptor(self)
        return self._preemptor

    # ------------------------------------------------------------------ reports

    def snapshot(self) -> dict:
        """The state as plain JSON-able data, for status pages, tests and the simulator."""
        if self._stale:
            self._refresh()
        names, cap = self.types.names, self.capacity
        queues = {}
        for path, q in self.queues.items():
            pending = self.types.zero
            for app in _apps_below(q):
                for req in app.pending:
                    pending = vadd(pending, tuple(v * req.count for v in req.capability))
            queues[path] = {
                "weight": q.spec.weight,
                "usage": self.types.to_dict(q.usage),
                "pending": self.types.to_dict(pending),
                "dominant_share": dominant_share(q.usage, cap),
                "dominant_resource": dominant_resource(q.usage, cap, names),
                "weighted_share": self.policy.aggregate(map(mul, q.usage, q.scale)) if q.scale else 0.0,
                "min": dict(q.spec.min),
                "max": self.types.to_dict(q.max) if q.max else None,
                "running_apps": q.running_apps,
                **({"am_usage": self.types.to_dict(q.am_usage), "am_limit": self.types.to_dict(q.am_limit),
                    "max_am_share": q.am_share} if q.am_limit is not None else {}),
                "waiting_apps": sum(not a.runnable for a in _apps_below(q)),
                **({"users": {u.name: self._user_status(u) for u in q.users.values()}} if q.users is not None else {}),
                "leaf": q.is_leaf,
                "draining": q.draining,
                "dynamic": q.dynamic,
            }
        return {
            "resource_types": list(names),
            "capacity": self.types.to_dict(cap),
            "queues": queues,
            "nodes": {n.id: {"rack": n.rack, "capacity": self.types.to_dict(n.capacity),
                             "allocated": self.types.to_dict(n.allocated),
                             "reserved_for": f"{n.reserved.app.id}/{n.reserved.key}" if n.reserved else None,
                             **({"cards": n.cards.to_list()} if n.cards is not None else {})}
                      for n in self.nodes.values()},
            "apps": {a.id: {"queue": a.queue.path, "user": a.user, "runnable": a.runnable, "priority": a.priority,
                            "usage": self.types.to_dict(a.usage), "containers": len(a.containers),
                            "pending": sum(r.count for r in a.pending)}
                     for a in self.apps.values()},
            "containers": len(self.containers),
            "counters": dict(self.counters),
            **({"partitions": {label: {"exclusive": parts.exclusive.get(label), **pool.snapshot()}
                               for label, pool in parts.pools.items()}}
               if (parts := self.partitions) is not None else {}),
        }

    def _user_status(self, user: User) -> dict:
        return {"weight": user.weight, "max_running_apps": user.max_apps, "usage": self.types.to_dict(user.usage),
                "weighted_share": user.weigh(user.usage),
                "running_apps": user.running_apps, "waiting_apps": len(user.waiting)}

    # ------------------------------------------------------------------ input checks

    def _now(self, now: float | None) -> float:
        return self.clock() if now is None else now

    def _vector(self, amounts: Mapping[str, int] | Vector, where: str, subject: str) -> Vector | None:
        """`amounts` checked as a vector, or None (ignored, logged as `where subject`). The two
        are joined only on an error: this runs for every container and ask."""
        try:
            if isinstance(amounts, tuple):
                return self.types.checked(amounts)
            return self.types.vector(amounts)
        except (UnknownResourceError, ValueError, AttributeError, TypeError) as exc:
            self._ignore(f"{where} {subject}", str(exc))
            return None

    def _app(self, app_id: str, where: str) -> App | None:
        app = self.apps.get(app_id)
        if app is None:
            self._ignore(where, f"unknown app {app_id!r}")
        return app

    def _node(self, node_id: str, where: str) -> Node | None:
        node = self.nodes.get(node_id)
        if node is None:
            self._ignore(where, f"unknown node {node_id!r}")
        return node

    def _ignore(self, where: str, why: str) -> None:
        self.counters["ignored_events"] += 1
        log.warning("ignored %s: %s", where, why)


def _own(spec: QueueSpec) -> QueueSpec:
    """A queue's own settings, without its children, to tell what a reload changed."""
    return replace(spec, children=())


def _level(q: Sharer, top: tuple[int, Sharer] | None) -> float:
    """M: the lowest share among q's heap children (inf when none)."""
    if top is None:
        return math.inf
    if top[0] == 1:
        return top[1].share
    return min(c.share for c in q.heap.items())  # a child below its min heads by how far below


def _one_user(q: Sharer) -> bool:
    """Whether q's idle and set-aside children are one user (a leaf's)."""
    if len(q.idle) + len(q.asides) != 1:
        return False
    member = q.asides[0] if q.asides else next(iter(q.idle))
    return type(member) is User


def _deepest_first(q: Queue) -> tuple[int, str]:
    return -q.depth, q.path


def _room(q: Queue, headroom: Vector | None) -> Vector:
    """What q's max leaves (within `headroom`, the room its ancestors' max leave)."""
    assert q.max is not None  # the caller checked
    own = vsub(q.max, q.usage)
    return own if headroom is None else vmin(headroom, own)


def _within(cap: Vector, leaf: Queue, room: Vector | None = None) -> bool:
    """True when `cap` more would keep `leaf` and its ancestors within their max."""
    if room is not None and not fits(cap, room):
        return False
    for q in leaf.ancestors_and_self():
        if q.max is not None and not fits(vadd(q.usage, cap), q.max):
            return False
    return True


def _am_room(leaf: Queue, cap: Vector) -> bool:
    """Whether one more AM of `cap` keeps the leaf's AMs within its max-am-share. A leaf running
    no AM takes one whatever its share, as CapacityScheduler does when its AM limit is below a
    single AM: else a share smaller than one AM would hold every app of the queue back forever."""
    limit = leaf.am_limit
    if limit is None or not any(leaf.am_usage):
        return True
    return fits(vadd(leaf.am_usage, cap), limit)


def _sharers(app: App) -> Iterator[Sharer]:
    """What hierarchical DRF keys above the app: its user (in a leaf with user-limits), its leaf
    and the leaf's ancestors (a user's parent is its leaf)."""
    q: Sharer | None = app.queue if app.owner is None else app.owner
    while q is not None:
        yield q
        q = q.parent


def _seq(app: App) -> int:
    return app.seq


def _apps_below(q: Queue):
    for x in _queues_below(q):
        yield from x.apps.values()


def _queues_below(q: Queue):
    yield q
    for child in q.children.values():
        yield from _queues_below(child)
