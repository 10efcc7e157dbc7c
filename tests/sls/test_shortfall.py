"""The shortfall timeline's pieces (benchmarks/sls/shortfall.py) on hand-made records."""
from __future__ import annotations

import shortfall


def test_calls_allocations_and_ends_fall_in_the_bucket_of_their_time() -> None:
    records = [
        {"ev": "call", "collected": 100, "t": 900, "assignments": 10, "applied": 4},
        {"ev": "alloc", "t": 950, "c": "c1"},
        {"ev": "ask", "t": 960, "app": "a", "key": "0/0", "n": 1},
        {"ev": "call", "collected": 2900, "t": 3100, "assignments": 6, "applied": 6},
        {"ev": "end", "t": 3200, "c": "c1"},
        {"ev": "alloc", "t": 7000, "c": "c2"},
    ]
    assert shortfall.call_buckets(records, 3.0) == [
        shortfall.Bucket(0.0, 1, 10, 4, 1, 0),
        shortfall.Bucket(3.0, 1, 6, 6, 0, 1),
        shortfall.Bucket(6.0, 0, 0, 0, 1, 0),
    ]


def test_the_timeline_shows_each_queues_held_share_against_its_target_and_its_ams() -> None:
    # one node <4, 4>: a runs an AM <1, 1> and asks for a <2, 2>; b asks for two <2, 2>. The
    # target: a's AM, then b's first <2, 2>; neither's next fits the <1, 1> left
    sample = {"t_ms": 2000, "queues": {
        "a": {"used": {"m": 1, "v": 1}, "pending": {"m": 2}, "running_shapes": [[1, 1, 1]],
              "pending_shapes": [[2, 2, 1]]},
        "b": {"used": {"m": 0, "v": 0}, "pending": {"m": 4}, "running_shapes": [],
              "pending_shapes": [[2, 2, 2]]}}}
    [line] = shortfall.timeline([sample], [[4, 4]], {"m": 4, "v": 4}, {"a": 1, "b": 1}, {(1, 1)}, 10)
    assert "running 1 of 2" in line
    assert "a 0.250 of 0.250 (1 AMs, 1 asked)" in line
    assert "b 0.000 of 0.500 (0 AMs, 2 asked)" in line
