"""Vector arithmetic: the generated add/sub of ResourceTypes must agree with the generic vadd/vsub."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from scheduler.resources import ResourceTypes, vadd, vsub

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
