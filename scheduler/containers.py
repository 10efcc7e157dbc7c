"""Nodes (capacity, racks, GPU cards, labels) and the containers on them: a container started
by the decision (_assign), reported by YARN, refused, or finished, charged to its app, user, queues
and node."""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from scheduler.asks import Asks
from scheduler.cards import GPU_MEM, Cards, card_sizes_problem
from scheduler.locality import placed
from scheduler.model import YARN_AM_SUFFIX, App, Assignment, Container, Node, Queue, Request
from scheduler.partitions import DEFAULT
from scheduler.resources import UnknownResourceError, Vector, vadd, vsub

log = logging.getLogger("yarn_drf.core")
# How the reason of an assignment the shim gave back unapplied begins (AssignmentCommitter.DEFERRED).
DEFERRED = "deferred:"

DEFAULT_RACK: Final = "/default-rack"
FINISH_STATES: Final = frozenset({"completed", "released", "preempted", "expired", "killed", "lost"})


class NodesAndContainers(Asks):
    """Nodes and the containers on them."""

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
        self.unreserve(node)  # (a preemption hold on it ends at the next round: not this core's node)
        del self.nodes[node.id]
        self._carried.remove(node)
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
        self.unreserve(node)
        del self.nodes[node_id]
        self._carried.remove(node)
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
            self.unreserve(node)

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
        # The shim gives back a reply's assignments to queues above a late AM ask
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
                self.unreserve(req.reserved_node)  # nothing left to hold a node for
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
