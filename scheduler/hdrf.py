"""Hierarchical DRF's keys and heaps: each queue's (and user's) key in its parent's heap, kept
current as usage and demand change, and the masks that tell which heads cannot use a node.

Hierarchical DRF (Bhattacharya, Culler, Friedman, Ghodsi, Shenker, Stoica, SoCC 2013). A
leaf's share is its weighted dominant share, as in flat DRF. A parent's vector sums its
children's, each cut back to M, the lowest share among its children that can use the node
being decided ("rescaling to minimum nodes"): a child that raced ahead on a resource its
siblings do not use, or that holds more than its part from before they asked, does not make
its parent look large while a sibling is still low. A child that cannot use the node, or has
no demand, does not set M ("ignoring blocked nodes") and is cut back to M too. The parent's
share is the weighted dominant share of that vector with its own weights. With one level of
queues no parent's share is ever compared: flat trees are ordered exactly as flat DRF.

The users of a leaf with user-limits are one more level (model.Sharer: a user is keyed in its
leaf's heap as a queue is in its parent's): a user's share is its weighted dominant share, and
the leaf's vector is made from its users' as a parent's from its children's, by the same code
(_push_queue). So a user asking for what nobody else wants does not make its leaf look large
while another user of the leaf is still low, and a user that cannot use the node is set aside
as a child queue is, which re-keys its leaf.

Incrementally: each parent (and leaf with users) keeps `act`, the sum of its heap children's directions
(vector / share, quantised: integer sums are exact in any order, so keys depend on the state
alone and batch() decides as eager re-keying), so its vector is M * act plus its idle and
set-aside children: a re-key costs O(resources + idle children) per level, not O(children).
Which children can use the node is settled by the heartbeat (_unblock, _pick): a child that
cannot is set aside, which re-keys its parents.
"""
from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from heapq import heapify, heappop
from operator import mul
from typing import Final

from scheduler.core_state import CoreState
from scheduler.heap import KeyedHeap
from scheduler.model import App, Queue, Request, Sharer, User
from scheduler.resources import Vector, fits_asked

# Final: compiled, these are constants, not a lookup in the module's globals at every use.
# Directions a parent sums are quantised to 2**-48 of a share: integer sums are exact in any
# order, so keys depend on the state alone (batch() must decide as eager re-keying).
QUANTUM: Final = float(1 << 48)
# how a queue's direction counts in its parent's sums
_NONE: Final = 0
_ACTIVE: Final = 1
_ASIDE: Final = 2
_IDLE: Final = 3
_KEY_SCALE: Final = 1e12
UNBLOCK_BUDGET: Final = 64  # queues and users (and apps) a heartbeat sets aside before its walk (see _unblock)


class HdrfKeys(CoreState):
    """The H-DRF keys, heaps and request-shape masks of the tree; a heartbeat's set-asides."""

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
        base = [level * a / QUANTUM for a in act] if level < math.inf else [0.0] * len(act)
        rest = [c for c in (*blocked, *idle) if c.share]
        if not rest:
            return base
        cols = [[b] for b in base]
        for c in rest:
            part = min(c.share, level) / QUANTUM
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
                    q.share = lowest.share * share / QUANTUM
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
            # Deepest first, by path, taken off a heap as they come: the budget often ends the pass
            # after a few of hundreds blocked, and sorting them all cost more than the set-asides
            # themselves. Heaped by one string each (Queue.deepest_first), not by tuples.
            blocked = [q.deepest_first for mask in heads if not mask & fit for q in heads[mask]]
            if not blocked:
                return
            heapify(blocked)
            changed: list[Queue] = []
            queues = self.queues
            depth = queues[blocked[0][1:]].depth
            while blocked:
                q = queues[heappop(blocked)[1:]]
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
            q.shapes[shape] = q.shapes.get(shape, 0) + 1
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


def _sharers(app: App) -> Iterator[Sharer]:
    """What hierarchical DRF keys above the app: its user (in a leaf with user-limits), its leaf
    and the leaf's ancestors (a user's parent is its leaf)."""
    q: Sharer | None = app.queue if app.owner is None else app.owner
    while q is not None:
        yield q
        q = q.parent
