"""Reservations: a node held for the request of the queue first in fair order once it has starved.

HDRF's starvation timeout, measured per queue: the leaf first in fair order (the lowest key
at every level among queues with a request that fits some node within their max) is below
its fair part by the decision's own measure. When the same leaf has been first for longer
than reservation.starvation-timeout-s, it has starved: a node that could hold its next
request, but has no room for it now, is reserved for that request, and nothing else starts
there until the request fits. Only that leaf reserves, so a reservation never lets a queue
jump ahead of one with a lower share. A reservation lasts while its request still asks for
containers (also when some of them started elsewhere).
"""
from __future__ import annotations

import logging

from scheduler.hdrf import HdrfKeys
from scheduler.locality import permits
from scheduler.model import Node, Queue, Request, apps_in_order
from scheduler.queue_limits import am_room, max_room, within_max
from scheduler.resources import Vector, fits

log = logging.getLogger("yarn_drf.core")


class Reservations(HdrfKeys):
    """Which leaf is first in fair order, and the nodes held for its request."""

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
        self.hold_changes.add(node)
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
            limit = room if child.max is None else max_room(child, room)
            if not self._eligible(child, limit, placeable):
                for child in q.heap.ordered():
                    limit = room if child.max is None else max_room(child, room)
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
        return any(self.is_placeable(s) and fits(s, limit) for s in q.shapes)

    def _placeable_mask(self) -> int:
        """The shapes some node's capacity holds, as a mask (cached until the nodes or shapes change)."""
        known = self._placeable_bits
        if known is None or known[0] != len(self._bits):
            mask = 0
            for shape, bit in self._bits.items():
                if self.is_placeable(shape):
                    mask |= bit
            known = self._placeable_bits = (len(self._bits), mask)
        return known[1]

    def _reservable(self, leaf: Queue, node: Node, free: Vector, now: float) -> Request | None:
        """The request of the leaf's first app in fair order to reserve `node` for, if any."""
        for app in apps_in_order(leaf):
            asks = [r for r in app.pending if self.is_placeable(r.capability) and within_max(r.capability, leaf)
                    and (not r.am or am_room(leaf, r.capability))]
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

    def is_placeable(self, shape: Vector) -> bool:
        """Some node's capacity holds `shape` (cached until the nodes change)."""
        known = self._placeable.get(shape)
        if known is None:
            known = self._placeable[shape] = any(n.holds(shape) for n in self.nodes.values())
        return known

    def unreserve(self, node: Node) -> None:
        req = node.reserved
        if req is not None:
            req.reserved_node = None
            node.reserved = None
            self.hold_changes.add(node)
            self.counters["reservations_dropped"] += 1
