"""Application priority: orders a fifo leaf's apps, changes with update_app_priority, capped at the cluster's max."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.helpers import make_core, settle

FIFO = "queues:\n  root:\n    children:\n      f: {order: fifo}\n"
ONE = {"vcores": 1, "memory-mb": 1024}


def _node(slots: int) -> dict:
    return {"n0": {"vcores": slots, "memory-mb": 1024 * slots}}


def _started(core) -> set[str]:
    return {a for a, app in core.apps.items() if app.containers}


def _started_of(core, priorities) -> set[str]:
    """Submits one single-container app per (id, priority), in order, and runs the node."""
    for app, prio in priorities:
        assert core.submit_app(app, "u", "root.f", priority=prio).accepted
        core.update_request(app, 1, ONE, 1)
    settle(core)
    return _started(core)


def test_a_fifo_leaf_starts_the_highest_priority_app_first():
    assert _started_of(make_core(FIFO, _node(1)), (("low", 1), ("high", 3), ("mid", 2))) == {"high"}


def test_update_app_priority_reorders_at_the_next_decision():
    core = make_core(FIFO, _node(1))
    for app in ("first", "second"):
        assert core.submit_app(app, "u", "root.f").accepted
        core.update_request(app, 1, ONE, 1)
    core.snapshot()  # (shares computed: the apps sit in their heap with their keys)
    assert core.update_app_priority("second", 4) == 4
    settle(core)
    assert _started(core) == {"second"}
    assert core.snapshot()["apps"]["second"]["priority"] == 4


def test_priorities_above_the_cluster_max_are_lowered_to_it():
    core = make_core(FIFO, _node(1), max_app_priority=2)
    assert core.submit_app("a", "u", "root.f", priority=9).accepted
    assert core.apps["a"].priority == 2
    assert core.submit_app("b", "u", "root.f", priority=1).accepted
    assert core.update_app_priority("b", 7) == 2  # ties with a: a was first
    for app in ("a", "b"):
        core.update_request(app, 1, ONE, 1)
    settle(core)
    assert _started(core) == {"a"}


def test_with_yarns_default_max_of_zero_priority_changes_nothing():
    assert _started_of(make_core(FIFO, _node(1), max_app_priority=0), (("old", 0), ("urgent", 5))) == {"old"}


def test_updating_an_unknown_app_is_ignored_and_counted():
    core = make_core(FIFO, _node(1))
    assert core.update_app_priority("nope", 3) is None
    assert core.counters["ignored_events"] == 1


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prios=st.lists(st.integers(-3, 8), min_size=1, max_size=12),
       updates=st.lists(st.tuples(st.integers(0, 11), st.integers(-3, 8)), max_size=8),
       cap=st.none() | st.integers(0, 5), slots=st.integers(1, 12))
def test_a_fifo_leaf_starts_apps_by_capped_priority_then_submission(prios, updates, cap, slots):
    core = make_core(FIFO, _node(slots), max_app_priority=cap)
    wanted = {}
    for i, p in enumerate(prios):
        core.submit_app(f"app{i:02d}", "u", "root.f", priority=p)
        core.update_request(f"app{i:02d}", 1, ONE, 1)
        wanted[f"app{i:02d}"] = p
    core.snapshot()
    for i, p in updates:
        if i < len(prios):
            core.update_app_priority(f"app{i:02d}", p)
            wanted[f"app{i:02d}"] = p
    settle(core)
    capped = {a: p if cap is None else min(p, cap) for a, p in wanted.items()}
    oracle = sorted(capped, key=lambda a: (-capped[a], a))  # ids sort in submission order
    assert _started(core) == set(oracle[:slots])
