"""A min-heap of items with changeable keys, indexed: each entry knows its place in the array.

Re-keying an item moves its one entry up or down from where it is, so every operation is
O(log n), nothing is allocated after an item's first push and nothing is ever re-sorted. The
sift loops are this module's own (not heapq's) so that, compiled, each comparison is a native
call. Equal keys come out in the order of their `order` numbers: a fresh one on every push,
unless the caller hands back an item's earlier number (`order_of`) to keep its place among
equals.
"""
from __future__ import annotations

from heapq import heappop, heappush
from typing import Any


class _Entry:
    """One item's key, compared field by field (compiled, with typed fields: no element-wise
    comparison of generic objects), and its place in the heap's array."""

    __slots__ = ("tier", "value", "order", "unique", "item", "pos")

    def __init__(self, tier: int, value: float, order: int, unique: int, item: Any, pos: int) -> None:
        self.tier = tier
        self.value = value
        self.order = order
        self.unique = unique
        self.item = item
        self.pos = pos

    def __lt__(self, other: _Entry) -> bool:
        if self.tier != other.tier:
            return self.tier < other.tier
        if self.value != other.value:
            return self.value < other.value
        if self.order != other.order:
            return self.order < other.order
        return self.unique < other.unique


class KeyedHeap:
    __slots__ = ("_heap", "_entries", "_pushes")

    def __init__(self) -> None:
        self._heap: list[_Entry] = []
        self._entries: dict[Any, _Entry] = {}
        self._pushes = 0

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)

    def __contains__(self, item: Any) -> bool:
        return item in self._entries

    def push(self, item: Any, tier: int, value: float, order: int | None = None) -> bool:
        """Adds `item` or moves it to key (tier, value); equal keys come out in push order, or
        by `order` when given (an order_of number: the item keeps its place among equals).
        Returns whether `item` now has the smallest key."""
        unique = self._pushes
        self._pushes = unique + 1
        heap = self._heap
        entry = self._entries.get(item)
        if entry is None:
            entry = _Entry(tier, value, unique if order is None else order, unique, item, len(heap))
            self._entries[item] = entry
            heap.append(entry)
            self._sift_up(entry, entry.pos)
        else:
            entry.tier, entry.value, entry.unique = tier, value, unique
            entry.order = unique if order is None else order
            self._resift(entry, entry.pos)
        return heap[0] is entry

    def order_of(self, item: Any) -> int | None:
        entry = self._entries.get(item)
        return None if entry is None else entry.order

    def remove(self, item: Any) -> None:
        entry = self._entries.pop(item, None)
        if entry is not None:
            self._take_out(entry)

    def pop(self) -> Any:
        """Removes and returns the item with the smallest key, or None when empty."""
        if not self._heap:
            return None
        entry = self._heap[0]
        del self._entries[entry.item]
        self._take_out(entry)
        return entry.item

    def pop_with_order(self) -> tuple[Any, int]:
        """pop(), with the item's order number (to put it back in its place: push(..., order))."""
        if not self._heap:
            raise IndexError("pop from an empty heap")
        order = self._heap[0].order
        return self.pop(), order

    def peek(self) -> Any:
        """The item with the smallest key, left in place, or None when empty."""
        return self._heap[0].item if self._heap else None

    def peek_entry(self) -> tuple[int, Any] | None:
        """(tier, item) of the smallest key, or None when empty."""
        if not self._heap:
            return None
        head = self._heap[0]
        return head.tier, head.item

    def ordered(self):
        """The items in key order, lazily, without changing the heap: O(k log k) for the first k."""
        heap = self._heap
        if not heap:
            return
        frontier = [(heap[0], 0)]
        size = len(heap)
        while frontier:
            entry, i = heappop(frontier)
            yield entry.item
            for j in (2 * i + 1, 2 * i + 2):
                if j < size:
                    heappush(frontier, (heap[j], j))

    def items(self) -> list:
        return list(self._entries)

    def _take_out(self, entry: _Entry) -> None:
        heap = self._heap
        last = heap.pop()
        if last is not entry:
            self._resift(last, entry.pos)

    def _resift(self, entry: _Entry, i: int) -> None:
        """Places `entry`, whose key changed or which fills slot i, where its key belongs."""
        if i > 0 and entry < self._heap[(i - 1) >> 1]:
            self._sift_up(entry, i)
        else:
            self._sift_down(entry, i)

    def _sift_up(self, entry: _Entry, i: int) -> None:
        heap = self._heap
        while i > 0:
            p = (i - 1) >> 1
            parent = heap[p]
            if not entry < parent:
                break
            heap[i] = parent
            parent.pos = i
            i = p
        heap[i] = entry
        entry.pos = i

    def _sift_down(self, entry: _Entry, i: int) -> None:
        heap = self._heap
        size = len(heap)
        while True:
            c = 2 * i + 1
            if c >= size:
                break
            child = heap[c]
            if c + 1 < size and heap[c + 1] < child:
                c += 1
                child = heap[c]
            if not child < entry:
                break
            heap[i] = child
            child.pos = i
            i = c
        heap[i] = entry
        entry.pos = i
