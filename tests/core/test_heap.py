"""The keyed heap hands out items in key order, whatever mix of pushes, re-keys and removals led there."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.heap import KeyedHeap

ITEMS = st.integers(0, 7)
OPS = st.lists(st.one_of(
    st.tuples(st.just("push"), ITEMS, st.integers(-1, 1), st.integers(0, 3), st.booleans()),
    st.tuples(st.just("remove"), ITEMS),
    st.tuples(st.just("pop")),
    st.tuples(st.just("peek")),
), max_size=200)


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_items_come_out_by_tier_value_then_order_of_their_last_push_or_kept_place(ops):
    heap = KeyedHeap()
    keys: dict[int, tuple[int, float, int, int]] = {}  # the oracle: item -> (tier, value, order, push number)
    pushes = 0
    for op in ops:
        if op[0] == "push":
            _, item, tier, value, keep = op
            kept = keys[item][2] if keep and item in keys else None
            assert heap.order_of(item) == (None if item not in keys else keys[item][2])
            heap.push(item, tier, value, heap.order_of(item) if keep else None)
            keys[item] = (tier, value, pushes if kept is None else kept, pushes)
            pushes += 1
        elif op[0] == "remove":
            heap.remove(op[1])
            keys.pop(op[1], None)
        else:
            lowest = min(keys, key=keys.__getitem__) if keys else None
            if op[0] == "pop":
                assert heap.pop() == lowest
                keys.pop(lowest, None)
            else:
                assert heap.peek() == lowest
        assert len(heap) == len(keys)
    assert list(heap.ordered()) == sorted(keys, key=keys.__getitem__)
