"""The locality benchmark's data-local ceiling (tests/docker_cluster/locality.py) against a brute
force over every placement of the maps: no Docker needed."""
from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.docker_cluster.locality import data_local_ceiling

HOSTS = ("a", "b", "c")


def brute_force(blocks: list[tuple[str, ...]], slots: dict[str, int], am_host: str) -> int:
    """Every way of running each map on one of its block's hosts or elsewhere (None): the most
    data-local maps that fit the hosts' vcores, one held by the AM."""
    free = {h: n - (h == am_host) for h, n in slots.items()}
    best = 0
    for choice in itertools.product(*[(None, *hosts) for hosts in blocks]):
        used = {h: sum(c == h for c in choice) for h in free}
        if all(used[h] <= max(free[h], 0) for h in free):
            best = max(best, sum(c is not None for c in choice))
    return best


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(HOSTS), min_size=1, max_size=2, unique=True).map(tuple),
                max_size=6),
       st.fixed_dictionaries({h: st.integers(0, 4) for h in HOSTS}),
       st.sampled_from(HOSTS))
def test_ceiling_is_the_best_placement(blocks, slots, am_host):
    assert data_local_ceiling(blocks, slots, am_host) == brute_force(blocks, slots, am_host)


def test_the_am_costs_a_data_local_map_only_where_blocks_outnumber_vcores():
    blocks = [("cpu",)] * 5 + [("mem",)] * 5 + [("gpu",)] * 8
    slots = {"cpu": 16, "mem": 4, "gpu": 8}
    assert data_local_ceiling(blocks, slots, "cpu") == 5 + 4 + 8
    assert data_local_ceiling(blocks, slots, "mem") == 5 + 3 + 8
    assert data_local_ceiling(blocks, slots, "gpu") == 5 + 4 + 7
