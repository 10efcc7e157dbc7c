"""The late-queue figures (time to fair share, containers preempted, work lost) on a hand-checked
record set: capacity [10, 10], the late queue's share 0.5, one container [1, 1] (0.1) of slack."""
from __future__ import annotations

import preemption

CAP = [10.0, 10.0]
APPS = {"app_early": "early", "app_late": "late"}


def _alloc(t: float, c: str, q: str, res: list[int], app: str = "") -> dict:
    return {"ev": "alloc", "t": t, "c": c, "q": q, "res": res, "app": app}


def _end(t: float, c: str, exit_: int) -> dict:
    return {"ev": "end", "t": t, "c": c, "exit": exit_}


def _ask(t: float, app: str, n: int) -> dict:
    return {"ev": "ask", "t": t, "app": app, "key": "20/0", "n": n}


RECORDS = [
    # early fills the cluster with three containers
    _alloc(0, "e1", "early", [4, 2]), _alloc(100, "e2", "early", [3, 3]),
    _alloc(200, "e3", "early", [3, 1]),
    _ask(1000, "app_late", 4),
    # e2 is preempted after 4.9 s; e3 completes normally (not work lost)
    _end(5000, "e2", preemption.PREEMPTED), _end(5500, "e3", 0),
    _alloc(6000, "l1", "late", [2, 1]),   # 0.2
    _alloc(6500, "l2", "late", [2, 3]),   # [4, 4]: 0.4 = 0.5 - 0.1 -> reached
    _end(8000, "e1", preemption.PREEMPTED),
    _alloc(9000, "l3", "late", [2, 2]),   # peak [6, 6]: 0.6
]


def test_time_to_share_runs_from_the_first_ask_to_the_allocation_that_brings_it_within_one_container() -> None:
    f = preemption.late_queue_figures(RECORDS, APPS, "late", CAP, share=0.5, tolerance=0.1)
    assert f.first_ask_s == 1.0
    assert f.time_to_share_s == 5.5
    assert abs(f.peak_share - 0.6) < 1e-9


def test_only_containers_ended_preempted_count_and_they_lose_the_time_they_ran() -> None:
    f = preemption.late_queue_figures(RECORDS, APPS, "late", CAP, share=0.5, tolerance=0.1)
    assert f.preempted == 2
    assert f.work_lost_s == (5000 - 100 + 8000 - 0) / 1000


def test_a_late_queue_whose_containers_end_before_it_reaches_its_share_never_reaches_it() -> None:
    records = [_ask(0, "app_late", 3), _alloc(10, "l1", "late", [3, 3]), _end(20, "l1", 0),
               _alloc(30, "l2", "late", [3, 3]), _alloc(40, "x", "early", [9, 9])]
    f = preemption.late_queue_figures(records, APPS, "late", CAP, share=0.5, tolerance=0.1)
    assert f.time_to_share_s is None
    assert f.preempted == 0 and f.work_lost_s == 0
    assert abs(f.peak_share - 0.3) < 1e-9


def test_records_are_replayed_in_time_order_whatever_order_the_file_holds() -> None:
    f = preemption.late_queue_figures(list(reversed(RECORDS)), APPS, "late", CAP, share=0.5,
                                      tolerance=0.1)
    assert f.time_to_share_s == 5.5 and f.preempted == 2


def test_the_containers_a_preempted_am_takes_with_it_are_work_lost_too() -> None:
    """app_early's AM is preempted at 5 s; its task ends ABORTED with it, another app's task
    ABORTED for another reason does not count, nor does a task the AM's app completed before."""
    am, task, done = "container_1_0001_01_000001", "container_1_0001_01_000002", "container_1_0001_01_000003"
    records = [_alloc(0, am, "early", [1, 1], "app_early"), _alloc(1000, task, "early", [2, 2], "app_early"),
               _alloc(1000, done, "early", [2, 2], "app_early"), _alloc(2000, "other", "early", [1, 1], "app_x"),
               _end(3000, done, 0), _end(5000, am, preemption.PREEMPTED), _end(5100, task, preemption.ABORTED),
               _end(6000, "other", preemption.ABORTED)]
    f = preemption.late_queue_figures(records, APPS, "late", CAP, share=0.5, tolerance=0.1)
    assert (f.preempted, f.aborted_with_am) == (1, 1)
    assert f.work_lost_s == (5000 - 0 + 5100 - 1000) / 1000
