"""DRF violations, the node-aware DRFH target and ask-to-allocation times, on hand-checked traces."""
from __future__ import annotations

import pytest

import fairness

CAP = [10, 10]


def _alloc(q: str, free: list[int], queues: dict[str, tuple[list[int], list[list[int]]]],
           t: float = 0.0, app: str = "app_1", key: str = "20/0",
           c: str = "container_1_01_000002") -> dict:
    return {"ev": "alloc", "t": t, "c": c, "app": app, "key": key, "q": q, "res": [1, 1], "free": free,
            "queues": {n: {"used": u, "pending": p} for n, (u, p) in queues.items()}}


def test_a_container_to_a_higher_share_while_a_lower_one_waits_with_a_fitting_request_is_a_violation() -> None:
    rec = _alloc("b", [3, 3], {"a": ([2, 0], [[2, 1, 4]]), "b": ([5, 0], [])})
    assert fairness.is_violation(rec, CAP, {"a": 1, "b": 1})


def test_no_violation_when_the_lower_queues_requests_do_not_fit_the_node() -> None:
    rec = _alloc("b", [3, 3], {"a": ([2, 0], [[4, 1, 4], [1, 4, 2]]), "b": ([5, 0], [])})
    assert not fairness.is_violation(rec, CAP, {"a": 1, "b": 1})


def test_no_violation_when_the_other_queue_is_equal_or_higher_or_asks_for_nothing() -> None:
    equal = _alloc("b", [3, 3], {"a": ([5, 0], [[1, 1, 1]]), "b": ([0, 5], [])})
    higher = _alloc("a", [3, 3], {"a": ([2, 0], []), "b": ([5, 0], [[1, 1, 1]])})
    idle = _alloc("b", [3, 3], {"a": ([0, 0], []), "b": ([5, 0], [])})
    assert not any(fairness.is_violation(r, CAP, {"a": 1, "b": 1}) for r in (equal, higher, idle))


def test_shares_are_weighted_before_they_are_compared() -> None:
    # a holds 0.4 (weight 1), b holds 0.6 with weight 2 (0.3): b is the lower one
    queues = {"a": ([4, 0], [[1, 1, 1]]), "b": ([0, 6], [[1, 1, 1]])}
    assert fairness.is_violation(_alloc("a", [3, 3], queues), CAP, {"a": 1, "b": 2})
    assert not fairness.is_violation(_alloc("b", [3, 3], queues), CAP, {"a": 1, "b": 2})


def test_violations_count_allocations_only() -> None:
    recs = [{"ev": "ask", "t": 0, "app": "x", "key": "k", "n": 3},
            _alloc("b", [3, 3], {"a": ([2, 0], [[2, 1, 4]]), "b": ([5, 0], [])}),
            _alloc("a", [3, 3], {"a": ([2, 0], [[2, 1, 3]]), "b": ([5, 0], [])})]
    assert fairness.violations(recs, CAP, {"a": 1, "b": 1}) == (1, 2)


def test_each_container_takes_its_apps_oldest_ask_and_a_decrease_withdraws_the_newest() -> None:
    recs = [{"ev": "ask", "t": 0.0, "app": "a1", "key": "k", "n": 2},
            {"ev": "ask", "t": 5.0, "app": "a1", "key": "k", "n": 1},
            {"ev": "ask", "t": 6.0, "app": "a2", "key": "k", "n": 1},
            _alloc("q", [1, 1], {}, t=10.0, app="a1", key="k"),
            _alloc("q", [1, 1], {}, t=12.0, app="a1", key="k"),
            {"ev": "end", "t": 12.5, "c": "container_1", "exit": -102},  # read by the preemption figures only
            {"ev": "ask", "t": 13.0, "app": "a1", "key": "k", "n": -1},
            _alloc("q", [1, 1], {}, t=20.0, app="a1", key="k"),
            _alloc("q", [1, 1], {}, t=21.0, app="a2", key="k")]
    waits, unmatched = fairness.ask_to_allocation_ms(recs)
    assert waits == [10.0, 12.0, 15.0]
    assert unmatched == 1


def test_each_wait_knows_when_its_ask_got_its_first_container_and_whether_it_is_an_am() -> None:
    recs = [{"ev": "ask", "t": 0.0, "app": "a1", "key": "am", "n": 1},
            _alloc("q", [1, 1], {}, t=1.0, app="a1", key="am", c="container_1_01_000001"),
            {"ev": "ask", "t": 2.0, "app": "a1", "key": "k", "n": 2},
            {"ev": "ask", "t": 3.0, "app": "a1", "key": "k", "n": 1},
            _alloc("q", [1, 1], {}, t=5.0, app="a1", key="k"),
            _alloc("q", [1, 1], {}, t=9.0, app="a1", key="k"),
            _alloc("q", [1, 1], {}, t=11.0, app="a1", key="k")]
    waits, unmatched = fairness.waits(recs)
    assert [(w.asked, w.first, w.allocated, w.am) for w in waits] == [
        (0.0, 1.0, 1.0, True), (2.0, 5.0, 5.0, False), (2.0, 5.0, 9.0, False),
        (3.0, 11.0, 11.0, False)]
    assert unmatched == 0
    assert fairness.start_to_allocation_ms(recs) == [1.0, 5.0, 9.0, 11.0]  # all from the AM ask at 0


def test_drfh_target_places_whole_containers_on_the_real_nodes() -> None:
    # two nodes <4, 4>: a's <2, 1> and b's <1, 2> alternate; after two each no node has room
    # for either (both nodes are left <1, 1>), though the pooled cluster still has <2, 2>
    t = fairness.drfh_targets([[4, 4], [4, 4]], {"a": {(2, 1): 10}, "b": {(1, 2): 10}},
                              [8, 8], {"a": 1, "b": 1})
    assert t == {"a": [4, 2], "b": [2, 4]}


def test_drfh_target_follows_the_weights_in_whole_containers() -> None:
    # 8 unit slots, a weight 2: a, b, a, a, b, a, a, b (ties to the first name)
    t = fairness.drfh_targets([[8, 8]], {"a": {(1, 1): 8}, "b": {(1, 1): 8}}, [8, 8],
                              {"a": 2, "b": 1})
    assert t == {"a": [5, 5], "b": [3, 3]}


def test_a_queue_whose_requests_fit_no_node_gets_nothing_and_leaves_the_room_to_others() -> None:
    t = fairness.drfh_targets([[4, 4]], {"a": {(5, 1): 3}, "b": {(1, 1): 2}}, [4, 4],
                              {"a": 1, "b": 1})
    assert t == {"a": [0, 0], "b": [2, 2]}


def test_shortfall_is_the_share_a_queue_lacks_of_its_target_and_never_negative() -> None:
    # one node <4, 4>; b runs two <2, 2> containers (all of it), a asks for two: each's target is one
    sample = {"queues": {
        "a": {"used": {"m": 0, "v": 0}, "running_shapes": [], "pending_shapes": [[2, 2, 2]]},
        "b": {"used": {"m": 4, "v": 4}, "running_shapes": [[2, 2, 2]], "pending_shapes": []}}}
    s, fill = fairness.shortfalls([sample], [[4, 4]], [4, 4], ["m", "v"], {"a": 1, "b": 1})
    assert s == {"a": pytest.approx(0.5), "b": 0.0}
    assert fill == 1.0  # two running, two in the target


def test_a_queues_running_containers_are_placed_in_its_target_before_what_it_asks_for() -> None:
    # one node <4, 4>: a's running AM <1, 1> goes in first; its ask <4, 1> then fits nowhere
    sample = {"queues": {"a": {"used": {"m": 1, "v": 1}, "running_shapes": [[1, 1, 1]],
                               "pending_shapes": [[4, 1, 1]]}}}
    s, fill = fairness.shortfalls([sample], [[4, 4]], [4, 4], ["m", "v"], {"a": 1})
    assert s == {"a": 0.0}
    assert fill == 1.0
