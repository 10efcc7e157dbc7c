"""A min-heap of items with changeable keys, by lazy deletion.

Updating a key pushes a fresh entry and tombstones the old one, so every operation is
O(log n) and nothing is ever re-sorted; tombstones are swept when they outnumber live entries.
Equal keys come out in the order of their `order` numbers: a fresh one on every push, unless the
caller hands back an item's earlier number (`order_of`) to keep its place among equals.
"""
from __future__ import annotations

from heapq import heapify, heappop, heappush, heapreplace
from itertools import count
from typing import Any, Final

_SWEEP_MIN: Final = 64


class _Entry:
    """One heap entry: its key compared field by field (compiled, with typed fields: no
    element-wise comparison of generic objects), and its item, None once the entry is dead."""

    __slots__ = ("tier", "value", "order", "unique", "item")

    def __init__(self, tier: int, value: float, order: int, unique: int, item: Any) -> None:
        self.tier = tier
        self.value = value
        self.order = order
        self.unique = unique
        self.item = item

    def __lt__(self, other: _Entry) -> bool:
        if self.tier != other.tier:
            return self.tier < other.tier
        if self.value != other.value:
            return self.value < other.value
        if self.order != other.order:
            return self.order < other.order
        return self.unique < other.unique


class LazyHeap:
    __slots__ = ("_heap", "_entries", "_order", "_dead")

    def __init__(self) -> None:
        self._heap: list[_Entry] = []
        self._entries: dict[Any, _Entry] = {}
        self._order = count()
        self._dead = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __bool__(self) -> bool:
        return bool(self._entries)

    def __contains__(self, item: Any) -> bool:
        return item in self._entries

    def push(self, item: Any, tier: int, value: float, order: int | None = None) -> bool:
        """Adds `item` or moves it to key (tier, value); equal keys come out in push order, or
        by `order` when given (an order_of number: the item keeps its place among equals).
        Returns whether `item` now has the smallest key."""
        unique = next(self._order)
        heap = self._heap
        old = self._entries.get(item)
        if old is not None:
            if heap[0] is old:  # re-keying the head, as after serving it: in place, one sift
                old.tier, old.value, old.unique = tier, value, unique
                old.order = unique if order is None else order
                heapreplace(heap, old)
                return heap[0] is old
            old.item = None
            self._dead += 1
        entry = self._entries[item] = _Entry(tier, value, unique if order is None else order, unique, item)
        heappush(heap, entry)
        if self._dead > _SWEEP_MIN and self._dead > len(self._entries):
            self._sweep()
        return heap[0] is entry

    def order_of(self, item: Any) -> int | None:
        entry = self._entries.get(item)
        return None if entry is None else entry.order

    def remove(self, item: Any) -> None:
        entry = self._entries.pop(item, None)
        if entry is not None:
            entry.item = None
            self._dead += 1

    def pop(self) -> Any:
        """Removes and returns the item with the smallest key, or None when empty."""
        entry = self._pop_entry()
        return None if entry is None else entry.item

    def pop_with_order(self) -> tuple[Any, int]:
        """pop(), with the item's order number (to put it back in its place: push(..., order))."""
        entry = self._pop_entry()
        if entry is None:
            raise IndexError("pop from an empty heap")
        return entry.item, entry.order

    def _pop_entry(self) -> _Entry | None:
        heap = self._heap
        while heap:
            entry = heappop(heap)
            item = entry.item
            if item is not None:
                del self._entries[item]
                return entry
            self._dead -= 1
        return None

    def peek(self) -> Any:
        """The item with the smallest key, left in place, or None when empty."""
        heap = self._heap
        while heap and heap[0].item is None:
            heappop(heap)
            self._dead -= 1
        return heap[0].item if heap else None

    def peek_entry(self) -> tuple[int, Any] | None:
        """(tier, item) of the smallest key, or None when empty."""
        heap = self._heap
        while heap and heap[0].item is None:
            heappop(heap)
            self._dead -= 1
        return (heap[0].tier, heap[0].item) if heap else None

    def ordered(self):
        """The items in key order, lazily, without changing the heap: O(k log k) for the first k."""
        heap = self._heap
        if not heap:
            return
        frontier = [(heap[0], 0)]
        size = len(heap)
        while frontier:
            entry, i = heappop(frontier)
            if entry.item is not None:
                yield entry.item
            for j in (2 * i + 1, 2 * i + 2):
                if j < size:
                    heappush(frontier, (heap[j], j))

    def items(self) -> list:
        return list(self._entries)

    def _sweep(self) -> None:
        self._heap = [e for e in self._heap if e.item is not None]
        heapify(self._heap)
        self._dead = 0
