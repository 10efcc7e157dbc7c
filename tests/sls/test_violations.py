"""The breakdown of DRF violations by what yarn-drf's core could know when it decided
(benchmarks/sls/violations.py), on hand-made probe records."""
from __future__ import annotations

import violations

CAP = [10, 10]
WEIGHTS = {"a": 1.0, "b": 1.0}
AM = [1, 1]
TASK = [2, 1]


def _alloc(t: float, q: str, app: str, c: str, res: list[int], used: dict[str, list[int]],
           pending: dict[str, list[list[int]]], key: str = "20/0", node: str = "n1") -> dict:
    return {"ev": "alloc", "t": t, "c": c, "app": app, "key": key, "q": q, "node": node, "res": res,
            "free": [8, 8], "queues": {n: {"used": used.get(n, [0, 0]), "pending": pending.get(n, [])}
                                       for n in ("a", "b")}}


def _ask(t: float, app: str, res: list[int], n: int = 1, key: str = "20/0") -> dict:
    return {"ev": "ask", "t": t, "app": app, "key": key, "n": n, "res": res}


def _run(a_asks_at: float, max_am_share: float | None = None) -> dict:
    """b (share 0.5) gets a task at t=20 in a call collected at t=10 while a (share 0.1) waits for
    the AM of its second app, asked at `a_asks_at`."""
    records = [
        _ask(0, "app_a1", AM, key="0/0"),
        _alloc(1, "a", "app_a1", "container_a1_01_000001", AM, {}, {"a": [[1, 1, 1]]}, key="0/0"),
        _ask(1, "app_b1", AM, key="0/0"),
        _alloc(2, "b", "app_b1", "container_b1_01_000001", AM, {"a": [1, 1]}, {"b": [[1, 1, 1]]}, key="0/0"),
        _ask(2, "app_b1", [4, 4], key="10/0"),
        _alloc(2.5, "b", "app_b1", "container_b1_01_000002", [4, 4], {"a": [1, 1], "b": [1, 1]},
               {"b": [[4, 4, 1]]}, key="10/0"),
        {"ev": "call", "collected": 0, "t": 3, "assignments": 3, "applied": 3},
        _ask(4, "app_b1", TASK, n=4),
        _ask(a_asks_at, "app_a2", AM, key="0/0"),
        _alloc(20, "b", "app_b1", "container_b1_01_000003", TASK, {"a": [1, 1], "b": [5, 5]},
               {"a": [[1, 1, 1]], "b": [[2, 1, 4]]}),
        _alloc(21, "a", "app_a2", "container_a2_01_000001", AM, {"a": [1, 1], "b": [7, 6]},
               {"a": [[1, 1, 1]], "b": [[2, 1, 3]]}, key="0/0"),
        {"ev": "call", "collected": 10, "t": 22, "assignments": 2, "applied": 2},
    ]
    return violations.analyse(records, CAP, WEIGHTS, max_am_share)


def test_an_am_asked_after_the_calls_collection_is_counted_apart_from_the_cores_own_choices() -> None:
    late = _run(a_asks_at=15)
    assert late["violations"] == 1 and late["containers"] == 5
    assert late["am_only"] == 1
    assert late["categories"]["ask after collection"] == 1
    assert late["categories"]["in the core's view"] == 0


def test_an_am_the_core_saw_at_collection_and_passed_over_is_the_cores_own_choice() -> None:
    seen = _run(a_asks_at=5)
    assert seen["violations"] == 1
    assert seen["categories"]["in the core's view"] == 1
    assert seen["categories"]["ask after collection"] == 0
    assert seen["by_call_size"] == {"1-2": {"violations": 1, "containers": 2},
                                    "3-9": {"violations": 0, "containers": 3}}


def test_a_violation_for_an_am_that_the_am_share_limit_held_is_counted_as_held() -> None:
    # a runs one AM <1, 1> of the cluster's <10, 10>: a limit of 0.1 holds its second AM, 0.2 not
    assert _run(a_asks_at=15, max_am_share=0.1)["am_held"] == 1
    assert _run(a_asks_at=15, max_am_share=0.2)["am_held"] == 0
    assert _run(a_asks_at=15)["am_held"] is None
