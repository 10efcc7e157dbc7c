"""The fairness, utilisation and throughput figures, on hand-made SLS output."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import report

CAP = {"memory-mb": 1000, "vcores": 100, "gpu-mem": 400}


def _q(used: dict, pending: int) -> dict:
    return {"used": {r: used.get(r, 0) for r in CAP}, "pending": {r: pending for r in CAP}}


def _write(tmp_path: Path, samples: list[dict], jobs: list[tuple[str, str, int, int]]) -> Path:
    bench = {"scheduler": "x", "cluster": CAP, "samples": samples, "finished": True, "wall_ms": 9000,
             "timers": {"NODE_UPDATE": {"count": 10, "p50_us": 5.0, "p99_us": 9.0},
                        "allocate": {"count": 4, "p50_us": 1.0, "p99_us": 2.0}},
             "app_queues": {app: q for app, q, _, _ in jobs}}
    (tmp_path / "bench.json").write_text(json.dumps(bench))
    lines = ["JobID,real_start_time,real_end_time,simulate_start_time,simulate_end_time"]
    lines += [f"{app},0,0,{s},{e}" for app, _, s, e in jobs]
    (tmp_path / "jobruntime.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "probe.jsonl").write_text("")
    return tmp_path


def test_weighted_dominant_share_divides_the_largest_share_by_the_weight() -> None:
    ds = report.dominant_shares({"a": _q({"memory-mb": 500, "vcores": 10}, 0),
                                 "g": _q({"gpu-mem": 200, "vcores": 20}, 0)}, CAP, {"a": 1, "g": 2})
    assert ds == {"a": 0.5, "g": 0.25}


def test_jain_index_is_one_when_equal_and_one_over_n_when_one_holds_all() -> None:
    assert report.jain([0.3, 0.3, 0.3]) == pytest.approx(1.0)
    assert report.jain([0.9, 0.0, 0.0]) == pytest.approx(1 / 3)


def test_figures_use_only_saturated_samples_and_backlogged_queues(tmp_path: Path) -> None:
    samples = [
        # idle start: nobody backlogged, not counted
        {"t_ms": 0, "containers_allocated": 0, "queues": {"a": _q({}, 0)}},
        # a (weight 1) at 0.5, b (weight 1) at 0.2, both backlogged: gap 0.3
        {"t_ms": 1000, "containers_allocated": 10, "queues": {
            "a": _q({"memory-mb": 500}, 1), "b": _q({"vcores": 20}, 1)}},
        # b satisfied (no pending): only a is backlogged, no gap sample
        {"t_ms": 3000, "containers_allocated": 50, "queues": {
            "a": _q({"memory-mb": 800}, 1), "b": _q({"vcores": 10}, 0)}},
    ]
    r = report.analyse(_write(tmp_path, samples, [("app_1", "a", 0, 4000), ("app_2", "b", 1000, 3000)]),
                       {"a": 1.0, "b": 1.0}, [[1000, 100, 400]])
    assert r["gap_mean"] == pytest.approx(0.3)
    assert r["gap_max"] == pytest.approx(0.3)
    assert r["jain_mean"] == pytest.approx(0.7 ** 2 / (2 * (0.25 + 0.04)))
    assert r["containers_per_s"] == pytest.approx(40 / 2.0)
    assert r["utilisation"]["memory-mb"] == pytest.approx((0.5 + 0.8) / 2)
    assert r["utilisation"]["vcores"] == pytest.approx((0.2 + 0.1) / 2)
    assert r["jct"]["a"]["mean_s"] == 4.0 and r["jct"]["b"]["mean_s"] == 2.0
    assert r["jobs"] == 2


def test_table_reports_yarn_drf_as_ratios_of_the_others(tmp_path: Path) -> None:
    base = {"node_update": {"p50_us": 10.0, "p99_us": 20.0, "count": 5}, "allocate": {"p50_us": 1.0, "p99_us": 2.0},
            "containers_per_s": 100.0, "utilisation": {r: 0.5 for r in report.RESOURCES},
            "gap_mean": 0.1, "gap_max": 0.2, "jain_mean": 0.9, "jct": {"a": {"mean_s": 10.0, "p95_s": 12.0}},
            "jobs": 3, "containers_allocated": 30, "saturated_s": 5.0, "wall_s": 9.0,
            "ask_to_alloc_ms": {"p50": 5.0, "p99": 50.0}, "violations_per_1000": 4.0,
            "shortfall": {"a": 0.1}, "fill_vs_target": 0.9, "probe_ms": 3.0}
    drf = json.loads(json.dumps(base))
    drf["node_update"]["p50_us"] = 30.0
    text = report.table({"fair": base, "capacity": base, "yarn-drf": drf}, "t")
    row = next(line for line in text.splitlines() if line.startswith("| NODE_UPDATE p50"))
    assert row.split("|")[-3:-1] == [" 3.00x ", " 3.00x "]


def test_yarn_drf_variants_are_columns_after_the_three_schedulers(tmp_path: Path) -> None:
    base = {"node_update": {}, "allocate": {}, "containers_per_s": 100.0,
            "utilisation": {r: 0.5 for r in report.RESOURCES}, "gap_mean": 0.1, "gap_max": 0.2,
            "jain_mean": 0.9, "jct": {}, "jobs": 3, "containers_allocated": 30, "saturated_s": 5.0,
            "wall_s": 9.0, "ask_to_alloc_ms": {"p50": 5.0, "p99": 50.0}, "violations_per_1000": 4.0,
            "shortfall": {}, "fill_vs_target": 0.9, "probe_ms": 3.0}
    variant = dict(base, containers_per_s=50.0)
    text = report.table({"yarn-drf:x": variant, "capacity": base, "yarn-drf": base}, "t")
    assert "| figure | capacity | yarn-drf | yarn-drf:x | yarn-drf / capacity |" in text
    row = next(line for line in text.splitlines() if line.startswith("| containers/s"))
    assert row.split("|")[2:5] == [" 100.0 ", " 100.0 ", " 50.0 "]


def test_violations_and_ask_times_come_from_the_probe_records(tmp_path: Path) -> None:
    samples = [{"t_ms": 0, "containers_allocated": 0, "queues": {"a": _q({}, 1)}},
               {"t_ms": 1000, "containers_allocated": 2, "queues": {"a": _q({}, 1)}}]
    run = _write(tmp_path, samples, [("app_1", "a", 0, 4000)])
    alloc = {"ev": "alloc", "c": "container_1_01_000002", "app": "app_1", "key": "20/0", "res": [100, 10, 0], "free": [500, 50, 400]}
    records = [
        {"ev": "ask", "t": -20.0, "app": "app_1", "key": "0/0", "n": 1},  # its AM, never given here
        {"ev": "ask", "t": 0.0, "app": "app_1", "key": "20/0", "n": 2},
        # b (0.1) waits with a fitting request while a (0.5) gets a container: a violation
        dict(alloc, t=40.0, q="a", queues={"a": {"used": [500, 0, 0], "pending": []},
                                            "b": {"used": [100, 0, 0], "pending": [[100, 10, 0, 3]]}}),
        # a is now the lower one: none
        dict(alloc, t=100.0, q="a", queues={"a": {"used": [0, 0, 0], "pending": []},
                                             "b": {"used": [500, 0, 0], "pending": [[100, 10, 0, 3]]}}),
    ]
    (run / "probe.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    r = report.analyse(run, {"a": 1.0, "b": 1.0}, [[1000, 100, 400]])
    assert (r["drf_violations"], r["probe_containers"]) == (1, 2)
    assert r["violations_per_1000"] == 500.0
    assert (r["ask_to_alloc_ms"]["p50"], r["ask_to_alloc_ms"]["p99"]) == (40.0, 100.0)
    assert (r["start_to_alloc_ms"]["p50"], r["start_to_alloc_ms"]["p99"]) == (60.0, 120.0)
