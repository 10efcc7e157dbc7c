"""The decision: which container a node that offers room starts next, for one node
(on_heartbeat) or many (on_nodes, with the node choice of scheduler.multinode).

A heartbeat serves the node's reservation first, then walks down the tree taking, at each level,
the lowest-keyed child that has something fitting this node and its limits (scheduler.hdrf keeps
the keys); a child that cannot fit is set aside for the rest of the heartbeat. The container
itself is started by NodesAndContainers._assign (scheduler.containers).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from scheduler.admission import Admission
from scheduler.heap import KeyedHeap
from scheduler.locality import Offer, choose
from scheduler.model import App, Assignment, Node, Queue, Request, User
from scheduler.multinode import NodeQueue
from scheduler.queue_limits import am_room, max_room, within_max
from scheduler.resources import Vector, fits, fits_any, vmin

# Final: compiled, these are constants, not a lookup in the module's globals at every use.
_RESERVED: Final = object()  # a heartbeat stopped because it reserved its node
_RETRY: Final = object()  # a walk set a queue aside, which re-keyed the queues above: walk again from the root


class Decision(Admission):
    """The per-node decision and the calls that run it for many nodes."""

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
        queue = self._carried
        nodes = [n for n in nodes if n not in queue]  # (a carried node that heartbeated again keeps its place)
        if not nodes and not queue:
            return []
        if self._stale:
            self._refresh()
        if nodes:  # (a call that only goes on with carried nodes is not a new turn)
            start = self._rotation % len(nodes)
            self._rotation += 1
            for node in nodes[start:] + nodes[:start]:
                queue.add(node)
        self._offer = Offer(queue)
        self._am_nodes.clear()
        self._am_candidates = None
        held_on = [(self.nodes[n], v) for n, v in (held or {}).items() if n in self.nodes]
        for node, v in held_on:
            node.allocated = self._vadd(node.allocated, v)
        try:
            return self.node_choice(self, queue, self._now(now), limit)
        finally:
            self._offer = None
            for node, v in held_on:
                node.allocated = self._vsub(node.allocated, v)

    @property
    def carrying(self) -> bool:
        """Whether the last call stopped at its limit with nodes left for the next one."""
        return self.carried > 0

    @property
    def carried(self) -> int:
        """The nodes the last calls left for the next ones, which decide for them first: the shim
        lists fewer new nodes while they wait (a node listed again keeps its place)."""
        return len(self._carried) + (self.partitions.carried if self.partitions is not None else 0)

    def defer(self, node_ids: Sequence[str]) -> None:
        """Nodes a call reached its limit before deciding for: the next call decides for them first."""
        for node in map(self.nodes.get, node_ids):
            if node is not None:
                self._carried.add(node)

    def decide_as_guest(self, nodes: list[Node], now: float, limit: int) -> list[Assignment]:
        """Decides for nodes of a non-exclusive partition its own asks left room on (borrowed:
        scheduler.partitions): as for this core's nodes, but never reserving one, and without
        counting their capacity in this core's."""
        if not nodes or not self.apps:
            return []
        timeout, self.timeout = self.timeout, None
        carried, self._carried = self._carried, NodeQueue()  # its own nodes wait for its own next call
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
            room = headroom if child.max is None else max_room(child, headroom)
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
                            not req.am or (am_room(leaf, req.capability) and self._am_spread(node, req))):
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

    def _serve_reservation(self, node: Node, free: Vector, now: float):
        """The reserved request's container if it fits now; _RESERVED if the node stays held;
        None if the reservation was invalid and dropped (the node is offered to others)."""
        req = node.reserved
        assert req is not None  # the caller checked
        app = req.app
        if req.count == 0 or self.apps.get(app.id) is not app or not app.runnable \
                or not within_max(req.capability, app.queue) or (req.am and not am_room(app.queue, req.capability)):
            self.unreserve(node)
            return None
        if not fits(req.capability, free):
            return _RESERVED
        node.reserved, req.reserved_node = None, None
        self.hold_changes.add(node)
        self.counters["reservations_satisfied"] += 1
        got = self._assign(app, req, node, now)
        self._requeue(app)
        return got
