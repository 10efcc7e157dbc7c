"""The ops parts attached to the real CoreService, driven by bridge messages as the Java shim sends them."""
from __future__ import annotations

import json
import logging

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from tests.ops.conftest import QUEUES, STATUS_TOKEN
from yarn_bridge import protocol
from yarn_bridge.metrics import Metrics
from yarn_bridge.ops_wiring import attach_ops
from yarn_bridge.service import CoreService

RES = ["memory-mb", "vcores", "gpu-mem"]


def call(service, **msg) -> dict:
    reply = json.loads(service.handle(json.dumps({"v": protocol.VERSION, "epoch": 1, **msg})))
    assert reply["ok"], reply
    return reply


def snapshot(service, asks: int = 6) -> dict:
    return call(service, type="snapshot", resources=RES,
                nodes=[{"node": "n1", "capacity": {"memory-mb": 8192, "vcores": 8, "gpu-mem": 0}, "rack": "/r1"},
                       {"node": "n2", "capacity": {"memory-mb": 8192, "vcores": 8, "gpu-mem": 8000}, "rack": "/r2"}],
                apps=[{"app": "app_etl", "user": "alice", "queue": "root.prod.etl"},
                      {"app": "app_batch", "user": "bob", "queue": "root.batch"}],
                containers=[],
                # [id, count, app, priority, allocation id, location, relax, memory-mb, vcores, gpu-mem]
                asks=[[1, asks, "app_etl", 1, 0, "*", True, 1024, 1, 0],
                      [2, asks, "app_batch", 1, 0, "*", True, 1024, 1, 0]])


def scrape(url: str) -> dict:
    text = requests.get(url + "/metrics", timeout=10).text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples}


@pytest.fixture
def served(tmp_path):
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    service = CoreService(path, metrics=Metrics())
    ops = attach_ops(service, port=0, watch_interval=None, token=STATUS_TOKEN)
    try:
        yield service, ops, path
    finally:
        ops.stop()


def test_status_and_metrics_follow_the_bridge(served):
    service, ops, _ = served
    url = ops.server.url
    snapshot(service)
    queues = {q["name"]: q for q in requests.get(url + "/v1/queues", timeout=10).json()["queues"]}
    assert queues["root.prod.etl"]["pending"]["vcores"] == 6 and queues["root.batch"]["running_apps"] == 1
    got = call(service, type="schedule", seq=1, nodes=[["n1", 8192, 8, 0]], heartbeats=3)["assignments"]
    assert len(got) == 8  # n1's 8 vcores: batch up to its max of 4, etl the rest
    refused = got[0]["assignment_id"]
    more = call(service, type="schedule", seq=2, nodes=[["n2", 8192, 8, 8000]], heartbeats=2, deltas=[
        {"op": "assignment_refused", "assignment_id": refused, "reason": "test"}], rtt_ms=1.5)["assignments"]
    m = scrape(url)
    assert m[("yarn_drf_resyncs_total", ())] == 1
    assert m[("yarn_drf_schedule_calls_total", ())] == 2
    assert m[("yarn_drf_heartbeats_total", ())] == 5
    assert m[("yarn_drf_assignments_total", ())] == len(got) + len(more)
    assert m[("yarn_drf_refused_assignments_total", ())] == 1
    assert m[("yarn_drf_decision_seconds_count", ())] == 2
    assert m[("yarn_drf_bridge_round_trip_seconds_count", ())] == 1
    assert m[("yarn_drf_bridge_round_trip_seconds_sum", ())] == pytest.approx(0.0015)
    usage = m[("yarn_drf_queue_usage", (("queue", "root.batch"), ("resource", "vcores")))]
    assert usage == service.core.snapshot()["queues"]["root.batch"]["usage"]["vcores"]
    health = requests.get(url + "/v1/health", timeout=10).json()
    assert health["bridge_connected"] is True and health["service_counters"]["schedule"] == 2
    why = requests.get(url + "/v1/apps/app_batch", timeout=10).json()
    assert why["queue"] == "root.batch" and why["requests"][0]["reasons"]


def test_refresh_queues_goes_through_the_validated_reload(served, caplog):
    service, ops, path = served
    snapshot(service)
    path.write_text(QUEUES.replace("weight: 2", "weight: 3"))
    with caplog.at_level(logging.INFO, logger="yarn_bridge.reload"):
        reply = call(service, type="reload")
    assert reply["accepted"] is True and reply["changes"]["changed"] == ["root.prod"]
    assert any(q["name"] == "root.prod" and q["weight"] == 3.0 for q in reply["queues"])
    assert "trigger: refreshQueues" in caplog.text and "~ root.prod: weight 2 -> 3" in caplog.text
    assert service.reloader.version == 2
    # the service keeps the new config: a resync rebuilds the core with it
    snapshot(service)
    prod = next(q for q in requests.get(ops.server.url + "/v1/queues", timeout=10).json()["queues"]
                if q["name"] == "root.prod")
    assert prod["weight"] == 3.0
    path.write_text("queues: {root: {children: {a: {weight: 0}}}}\n")
    reply = call(service, type="reload")
    assert reply["accepted"] is False and "must be > 0" in reply["errors"][0]
    m = scrape(ops.server.url)
    assert m[("yarn_drf_config_reloads_total", (("result", "ok"),))] == 1
    assert m[("yarn_drf_config_reloads_total", (("result", "failed"),))] == 1
    assert requests.get(ops.server.url + "/v1/health", timeout=10).json()["config"]["version"] == 2


def test_bad_requests_still_get_the_services_own_answer(served):
    service, _, _ = served
    reply = json.loads(service.handle("not json"))
    assert reply["ok"] is False and "not JSON" in reply["error"]
    snapshot(service)
    reply = json.loads(service.handle(json.dumps({"v": protocol.VERSION, "type": "reload", "epoch": 1, "path": 7})))
    assert reply["ok"] is False and "path" in reply["error"] and "7" in reply["error"], reply


def test_refresh_queues_naming_another_file_is_refused_without_reading_it(served, tmp_path):
    """A reload message's path once made serve read any file (its errors echoed parts of it back)."""
    service, ops, path = served
    snapshot(service)
    other = tmp_path / "elsewhere.yaml"
    other.write_text("TOPSECRET_FIELD: 1\n" + QUEUES.replace("weight: 2", "weight: 9"))
    for asked in (str(other), "/nonexistent/queues.yaml", str(tmp_path / ".." / tmp_path.name / "elsewhere.yaml")):
        reply = call(service, type="reload", path=asked)
        assert reply["accepted"] is False, asked
        assert reply["errors"] == [
            f"{asked} is not the queue file this service runs ({path}): `yarn-drf serve` reads only the file it "
            "was started with. To use another file, restart it with --queues naming that file (in child mode: "
            "set yarn-drf.queues.file and restart the ResourceManager)"]
    assert "TOPSECRET" not in json.dumps(reply)
    assert service.reloader.version == 1 and service.reloader.last is None, "nothing was loaded"
    link = tmp_path / "link.yaml"
    link.symlink_to(path)
    path.write_text(QUEUES.replace("weight: 2", "weight: 3"))
    assert call(service, type="reload", path=str(link))["accepted"] is True, "the same file by another name"
    assert service.reloader.path == path


def test_a_reload_outside_the_rm_reaches_java_with_the_next_call(served):
    """POST /v1/reload (or the file watcher, or `yarn-drf reload`): the RM learns the new queue
    tree from the next schedule reply, once."""
    service, ops, path = served
    snapshot(service)
    assert "queues" not in call(service, type="schedule", seq=1, nodes=[["n1", 8192, 8, 0]])
    path.write_text(QUEUES.replace("weight: 2", "weight: 5"))
    assert requests.post(ops.server.url + "/v1/reload", headers={"Authorization": f"Bearer {STATUS_TOKEN}"},
                         timeout=10).json()["accepted"] is True
    pushed = call(service, type="schedule", seq=2, nodes=[["n1", 8192, 8, 0]])
    assert any(q["name"] == "root.prod" and q["weight"] == 5.0 for q in pushed["queues"])
    assert "queues" not in call(service, type="schedule", seq=3, nodes=[])


def test_a_placement_into_a_queue_it_creates_brings_the_new_tree_to_java(served):
    service, _, path = served
    path.write_text(QUEUES.replace("queues:", "placement: [{rule: user, parent: root.prod, create: true}]\nqueues:", 1))
    service.reloader.reload()
    snapshot(service)
    reply = call(service, type="schedule", seq=1, nodes=[],
                 submissions=[{"app": "app_new", "user": "zoe", "queue": None, "groups": []}])
    assert reply["placements"] == [{"app": "app_new", "accepted": True, "queue": "root.prod.zoe", "reason": ""}]
    assert reply["queues_created"] == {"root.prod": ["zoe"]} and "queues" not in reply and "queues_built" not in reply
    quiet = call(service, type="schedule", seq=2, nodes=[])
    assert "queues" not in quiet and "queues_built" not in quiet and "queues_created" not in quiet


def test_the_service_that_runs_is_the_one_built_no_wrapper_replaces_its_entry_point(served):
    service, _, _ = served
    assert service.handle.__func__ is CoreService.handle
