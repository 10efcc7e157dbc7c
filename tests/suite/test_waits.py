"""The one wait helper (tests/waits.py), on a simulated clock: a stalled wait fails within its budget,
progress keeps one alive past it up to its limit, and the failure explains itself."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.waits import Stalled, wait_for, wait_steady


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def on(clock: Clock) -> dict:
    return {"clock": clock, "sleep": clock.sleep}


def test_a_wait_outlasts_its_budget_while_progress_is_made():
    clock = Clock()
    value = wait_for(lambda: clock.now >= 500 and "done", "the slow thing", progress=lambda: int(clock.now // 50),
                     budget_s=100, limit_s=1000, poll_s=1, **on(clock))
    assert value == "done" and clock.now >= 500  # five times the budget, always moving


def test_a_stalled_wait_fails_within_its_budget_and_says_what_why_what_it_saw_and_the_state():
    clock = Clock()
    with pytest.raises(Stalled) as failed:
        wait_for(lambda: 0, "the hung thing", progress=lambda: "same", budget_s=100, limit_s=1000,
                 poll_s=1, describe=lambda: "RM log:\nERROR disk full", **on(clock))
    assert 100 < clock.now <= 102
    lines = str(failed.value).splitlines()
    assert lines[0] == "gave up waiting for the hung thing: nothing moved for 101 s"
    assert "last seen: 0" in lines and "last progress: 'same'" in lines
    assert lines[-2:] == ["RM log:", "ERROR disk full"]


def test_a_wait_that_keeps_moving_without_arriving_ends_at_its_limit_four_budgets_by_default():
    clock = Clock()
    with pytest.raises(Stalled, match="still moving, but not there after 40[0-9] s"):
        wait_for(lambda: False, "churn", progress=lambda: clock.now, budget_s=100, poll_s=1, **on(clock))
    assert 400 < clock.now <= 402


def test_without_progress_the_budget_is_the_whole_wait():
    clock = Clock()
    with pytest.raises(Stalled, match=r"^gave up waiting for the port: not there after 3[01] s \(its budget\)"):
        wait_for(lambda: None, "the port", budget_s=30, **on(clock))
    assert 30 < clock.now <= 31


def test_an_ignored_error_counts_as_not_yet_and_the_last_one_is_reported():
    clock = Clock()
    answers = iter([RuntimeError("status server restarting"), False, "up"])

    def answer():
        got = next(answers)
        if isinstance(got, Exception):
            raise got
        return got

    assert wait_for(answer, "the reload", budget_s=60, ignore=(RuntimeError,), **on(clock)) == "up"
    with pytest.raises(Stalled) as failed:
        wait_for(lambda: 1 / 0, "the impossible", budget_s=5, ignore=(ZeroDivisionError,), **on(clock))
    assert "last seen: raised ZeroDivisionError('division by zero')" in str(failed.value)
    with pytest.raises(KeyError):  # not ignored: at once
        wait_for(lambda: {}["x"], "a typo", budget_s=60, ignore=(RuntimeError,), **on(clock))


def test_an_error_in_progress_is_progress_when_ignored_and_its_change_counts():
    clock = Clock()
    readings = iter([ConnectionError("down")] * 3 + list(range(1000)))

    def moving():
        got = next(readings)
        if isinstance(got, Exception):
            raise got
        return got

    assert wait_for(lambda: clock.now >= 50, "the restart", progress=moving, budget_s=20, poll_s=1,
                    ignore=(ConnectionError,), **on(clock))


def test_a_dead_daemon_ends_the_wait_at_once_with_what_was_awaited():
    clock = Clock()

    def alive():
        if clock.now >= 3:
            raise AssertionError("resourcemanager container is exited")

    with pytest.raises(AssertionError) as failed:
        wait_for(lambda: False, "3 NodeManagers", progress=lambda: clock.now, budget_s=100, poll_s=1,
                 alive=alive, **on(clock))
    assert clock.now == 3
    assert failed.value.__notes__ == ["(while waiting for 3 NodeManagers)"]


def test_a_describe_hook_that_fails_does_not_hide_the_reason():
    clock = Clock()
    with pytest.raises(Stalled) as failed:
        wait_for(lambda: False, "the RM", budget_s=5, describe=lambda: {}["gone"], **on(clock))
    message = str(failed.value)
    assert message.startswith("gave up waiting for the RM") and "its state could not be read: KeyError('gone')" in message


def test_a_steady_wait_returns_a_value_once_it_held_for_the_quiet_time_even_an_empty_one():
    clock = Clock()
    allocations = [{"a": 1}, {"a": 2}, {}, {}, {}, {}, {}, {}, {}, {}]
    got = wait_steady(lambda: allocations[min(int(clock.now), 9)], "the allocation to settle", quiet_s=5,
                      budget_s=30, poll_s=1, **on(clock))
    assert got == {} and 7 <= clock.now <= 8


def test_a_steady_wait_fails_when_the_value_settles_where_it_is_not_accepted():
    clock = Clock()
    with pytest.raises(Stalled, match="nothing moved for 3[01] s") as failed:
        wait_steady(lambda: 2, "more than three containers", quiet_s=4, budget_s=30, accept=lambda n: n > 3,
                    poll_s=1, **on(clock))
    assert "last seen: None" in str(failed.value) and "last progress: (2, None)" in str(failed.value)


def test_a_steady_wait_counts_the_outer_progress_too():
    clock = Clock()
    assert wait_steady(lambda: 2 if clock.now < 60 else 4, "more than three containers", quiet_s=4, budget_s=30,
                       accept=lambda n: n > 3, progress=lambda: int(clock.now // 10), poll_s=1, **on(clock)) == 4
    assert 64 <= clock.now <= 65


@settings(max_examples=300, deadline=None)
@given(gaps=st.lists(st.integers(1, 40), max_size=12), arrives=st.integers(1, 300), budget=st.integers(1, 30),
       limit=st.integers(1, 300))
def test_a_wait_passes_exactly_when_no_gap_in_progress_before_the_arrival_exceeds_the_budget_nor_the_arrival_the_limit(
        gaps, arrives, budget, limit):
    """Progress changes at the given gaps, the condition holds from `arrives`, one poll a second:
    the oracle says when a wait must end in time, from the gaps alone."""
    changes = [sum(gaps[:i + 1]) for i in range(len(gaps))]
    clock = Clock()
    starts = [0, *(c for c in changes if c < arrives)]
    ends = [*starts[1:], arrives]
    # Polled at whole seconds: the last poll before the change (or the arrival) is one second before it.
    passes = all(end - 1 - start <= budget for start, end in zip(starts, ends)) and arrives - 1 <= limit
    try:
        wait_for(lambda: clock.now >= arrives, "it", progress=lambda: sum(c <= clock.now for c in changes),
                 budget_s=budget, limit_s=limit, poll_s=1, **on(clock))
    except Stalled:
        assert not passes
        since = max(c for c in [0, *changes] if c <= clock.now)
        assert clock.now - since == budget + 1 or clock.now == limit + 1, "it gives up as soon as it may"
    else:
        assert passes and clock.now == arrives


def test_a_docker_clusters_wait_follows_its_activity_checks_its_daemons_and_explains_a_failure():
    from tests.docker_cluster.cluster import Cluster
    clock, cluster = Clock(), object.__new__(Cluster)  # no Docker: the hooks stand in for the daemons
    cluster.activity = lambda: min(clock.now // 30, 5)  # moves for 150 s, then not
    cluster.assert_alive = lambda: None
    cluster.explain = lambda: "apps: sleeper RUNNING 3"
    with pytest.raises(Stalled) as failed:
        cluster.wait_for(lambda: False, 60, "the sleeper's containers", **on(clock))
    assert 210 < clock.now <= 212, "moving for 150 s, then its 60 s budget"
    assert str(failed.value).endswith("apps: sleeper RUNNING 3")


def test_a_jvm_clusters_wait_follows_its_logs_and_ends_when_its_rm_dies(tmp_path):
    from tests.jvm_cluster.cluster import Cluster, Daemon
    clock, cluster = Clock(), object.__new__(Cluster)  # no JVM: a log that grows, an RM that is a process
    cluster.root, cluster.rm = tmp_path, None
    log = tmp_path / "rm.log"

    def grows() -> bool:
        with log.open("a") as f:
            f.write("line\n" if clock.now < 200 else "")
        return clock.now >= 100  # past its 30 s budget, within its limit

    assert cluster.wait_for(grows, 30, "the RM's work", **on(clock)) and clock.now >= 100
    cluster.rm = Daemon("rm", type("Exited", (), {"poll": lambda self: 1})(), log)
    with pytest.raises(AssertionError, match="ResourceManager died") as failed:
        cluster.wait_for(lambda: False, 30, "the RM's work", **on(clock))
    assert failed.value.__notes__ == ["(while waiting for the RM's work)"]
