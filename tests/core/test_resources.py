"""Vector arithmetic: the add, sub and move of ResourceTypes must agree with the generic vadd/vsub; fit tests."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from scheduler.resources import ResourceTypes, fits_asked, vadd, vsub

NAMES = ("memory-mb", "vcores", "gpu-mem", "fpga", "disk")


@given(st.integers(1, len(NAMES)).flatmap(
    lambda n: st.tuples(st.just(n), *(st.lists(st.integers(-10**12, 10**12), min_size=n, max_size=n)
                                      for _ in range(2)))))
def test_generated_add_and_sub_match_the_generic_ones(case):
    n, a, b = case
    types = ResourceTypes(NAMES[:n])
    a, b = tuple(a), tuple(b)
    assert types.add(a, b) == vadd(a, b) and type(types.add(a, b)) is tuple
    assert types.sub(a, b) == vsub(a, b) and len(types.sub(a, b)) == n


@given(st.integers(1, len(NAMES)).flatmap(
    lambda n: st.tuples(*(st.lists(st.integers(-10**12, 10**12), min_size=n, max_size=n) for _ in range(3)))))
def test_the_move_of_a_direction_is_the_old_sum_less_it_plus_the_new(case):
    a, b, c = map(tuple, case)
    types = ResourceTypes(NAMES[:len(a)])
    assert types.move(a, b, c) == vadd(vsub(a, b), c) and type(types.move(a, b, c)) is tuple


@given(st.integers(1, len(NAMES)).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 50), min_size=n, max_size=n),
                        st.lists(st.integers(-50, 50), min_size=n, max_size=n))))
def test_a_shape_fits_a_room_by_the_amounts_it_asks_for_alone(case):
    shape, room = map(tuple, case)
    assert fits_asked(shape, room) == all(room[j] >= v for j, v in enumerate(shape) if v)
