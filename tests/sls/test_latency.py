"""Where ask-to-allocation time goes (benchmarks/sls/latency.py), on hand-made probe records."""
from __future__ import annotations

import latency


def _ask(t: float, app: str, key: str, n: int) -> dict:
    return {"ev": "ask", "t": t, "app": app, "key": key, "n": n, "res": [1, 1]}


def _alloc(t: float, app: str, key: str, c: str, q: str = "q") -> dict:
    return {"ev": "alloc", "t": t, "c": c, "app": app, "key": key, "q": q, "node": "n1",
            "res": [1, 1], "free": [8, 8], "queues": {}}


def _call(collected: float, t: float, assignments: int, applied: int) -> dict:
    return {"ev": "call", "collected": collected, "t": t, "assignments": assignments, "applied": applied}


def test_a_tasks_wait_splits_into_the_wait_for_its_asks_first_container_and_the_wait_behind_it() -> None:
    # one AM (served at once), then three tasks asked at 10: given at 12, 30 and 40
    records = [_ask(0, "app_1", "am", 1), _alloc(1, "app_1", "am", "container_1_01_000001"),
               _ask(10, "app_1", "t", 3), _alloc(12, "app_1", "t", "container_1_01_000002"),
               _alloc(30, "app_1", "t", "container_1_01_000003"),
               _alloc(40, "app_1", "t", "container_1_01_000004")]
    a = latency.analyse(records)
    assert (a["am"]["n"], a["am"]["p50"]) == (1, 1)
    assert (a["task"]["n"], a["task"]["p50"], a["task"]["p90"]) == (3, 20, 30)
    assert a["to_first_of_ask"]["p90"] == 2      # the AM 1, every task 2
    assert a["behind_own_ask"]["p50"] == 18      # 0, 0, 18, 28: the tasks behind their ask's first
    assert a["calls"] is None                    # Fair and Capacity make no calls


def test_call_figures_count_what_commits_gave_back_and_when_the_core_could_first_see_an_ask() -> None:
    records = [_ask(0, "app_1", "t", 3),
               _call(2, 4, assignments=3, applied=1), _alloc(3.5, "app_1", "t", "container_1_01_000002"),
               _call(5, 6, assignments=0, applied=0),
               _call(7, 9, assignments=2, applied=2), _alloc(8, "app_1", "t", "container_1_01_000003"),
               _alloc(8.5, "app_1", "t", "container_1_01_000004")]
    c = latency.analyse(sorted(records, key=lambda r: r["t"]))["calls"]
    assert (c["calls"], c["without_assignments"], c["assignments"], c["given_back"]) == (3, 1, 5, 2)
    assert c["calls_giving_back"] == 1
    assert c["give_back_cost"]["p50"] == 5       # its commit at 4, the next that applied at 9
    assert c["ask_to_next_collection"]["p50"] == 2
    assert c["collection_to_first"]["p50"] == 1.5
