"""/metrics: names and values of the counters, histograms and per-queue gauges."""
from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from yarn_bridge.metrics import Metrics


def scrape(ops) -> dict[tuple[str, tuple], float]:
    text = ops.get("/metrics")
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_event_counters_and_histograms(ops):
    with ops.lock:
        ops.core.submit_app("a", "alice", "root.prod.etl")
        ops.core.update_request("a", 1, {"vcores": 1, "memory-mb": 1024}, 3)
    assert len(ops.settle()) == 3
    ops.metrics.resync()
    ops.metrics.schedule(0.002, 0, nodes=40, heartbeats=7, refused=1, round_trip_seconds=0.0007)
    m = scrape(ops)
    # settle: a round of n1 (3 assigned) and n2, a round of two empty calls; plus the one above.
    assert m[("yarn_drf_schedule_calls_total", ())] == 5
    assert m[("yarn_drf_heartbeats_total", ())] == 4 + 7
    assert m[("yarn_drf_schedule_nodes_count", ())] == 5
    assert m[("yarn_drf_schedule_nodes_sum", ())] == 4 + 40
    assert m[("yarn_drf_schedule_nodes_bucket", (("le", "20.0"),))] == 4
    assert m[("yarn_drf_assignments_total", ())] == 3
    assert m[("yarn_drf_refused_assignments_total", ())] == 1
    assert m[("yarn_drf_resyncs_total", ())] == 1
    assert m[("yarn_drf_decision_seconds_count", ())] == 5
    assert m[("yarn_drf_decision_seconds_sum", ())] == pytest.approx(0.006)
    assert m[("yarn_drf_decision_seconds_bucket", (("le", "0.001"),))] == 4
    assert m[("yarn_drf_bridge_round_trip_seconds_count", ())] == 1
    assert m[("yarn_drf_bridge_round_trip_seconds_bucket", (("le", "0.001"),))] == 1
    assert m[("yarn_drf_bridge_round_trip_seconds_bucket", (("le", "0.0005"),))] == 0
    assert m[("yarn_drf_config_reloads_total", (("result", "ok"),))] == 0
    assert m[("yarn_drf_config_reloads_total", (("result", "failed"),))] == 0


def test_queue_gauges_follow_the_core(ops):
    with ops.lock:
        ops.core.submit_app("a", "alice", "root.prod.etl")
        ops.core.update_request("a", 1, {"vcores": 2, "memory-mb": 1024, "gpu-mem": 1000}, 3)
        ops.core.submit_app("w1", "bob", "root.adhoc")
        ops.core.submit_app("w2", "bob", "root.adhoc")
    ops.settle()
    m = scrape(ops)
    q = lambda name, queue, **labels: m[(name, tuple(sorted({"queue": queue, **labels}.items())))]  # noqa: E731
    assert q("yarn_drf_queue_usage", "root.prod.etl", resource="gpu-mem") == 3000
    assert q("yarn_drf_queue_usage", "root.prod", resource="vcores") == 6
    assert q("yarn_drf_queue_pending", "root.prod.etl", resource="vcores") == 0
    assert q("yarn_drf_queue_dominant_share", "root.prod.etl") == pytest.approx(3000 / 8000)
    assert q("yarn_drf_queue_weighted_share", "root.prod") == pytest.approx(3000 / 8000 / 2)
    assert q("yarn_drf_queue_target_share", "root.prod.etl") == pytest.approx(3000 / 8000)
    assert q("yarn_drf_queue_target_share", "root.batch") == 0
    assert q("yarn_drf_queue_running_apps", "root.adhoc") == 1
    assert q("yarn_drf_queue_waiting_apps", "root.adhoc") == 1
    assert q("yarn_drf_queue_draining", "root.batch") == 0
    assert q("yarn_drf_queue_reservations", "root") == 0
    assert m[("yarn_drf_cluster_capacity", (("resource", "gpu-mem"),))] == 8000
    assert m[("yarn_drf_cluster_allocated", (("resource", "vcores"),))] == 6
    assert m[("yarn_drf_nodes", ())] == 2 and m[("yarn_drf_apps", ())] == 3


def test_reload_counters(ops):
    ops.reloader.reload()
    ops.queues_file.write_text("queues: {root: {weight: 2}}\n")
    ops.reloader.reload()
    m = scrape(ops)
    assert m[("yarn_drf_config_reloads_total", (("result", "ok"),))] == 1
    assert m[("yarn_drf_config_reloads_total", (("result", "failed"),))] == 1


def test_counters_survive_a_core_swap_and_gauges_follow_the_new_core(ops):
    from scheduler import SchedulerCore, load_config
    box = {"core": ops.core}
    metrics = Metrics(lambda: box["core"], ops.lock)
    metrics.schedule(0.001, 2)
    box["core"] = SchedulerCore(load_config(ops.queues_file))  # a resync rebuilds the core
    text = metrics.exposition().decode()
    assert "yarn_drf_assignments_total 2.0" in text
    assert "yarn_drf_nodes 0.0" in text


def test_call_age(ops):
    clock = {"t": 50.0}
    metrics = Metrics(clock=lambda: clock["t"])
    assert metrics.call_age() is None
    metrics.schedule(0.001, 0)
    clock["t"] = 57.5
    assert metrics.call_age() == 7.5
