"""/v1/queues, /v1/nodes, /v1/demand, /v1/health, /v1/apps and error handling of the status server."""
from __future__ import annotations

import pytest
import requests

from scheduler.targets import ReplayInput
from yarn_bridge.status import StatusServer


def run_two_queues(ops):
    with ops.lock:
        for app, queue in (("a-etl", "root.prod.etl"), ("a-batch", "root.batch")):
            ops.core.submit_app(app, "alice", queue)
            ops.core.update_request(app, 1, {"vcores": 1, "memory-mb": 2048}, 20)
    return ops.settle()


def test_queues_tree_with_usage_share_and_target(ops):
    run_two_queues(ops)
    doc = ops.get("/v1/queues")
    assert doc["capacity"] == {"memory-mb": 32768, "vcores": 16, "gpu-mem": 8000}
    names = [q["name"] for q in doc["queues"]]
    assert names == ["root", "root.prod", "root.prod.etl", "root.prod.ml", "root.adhoc", "root.batch"]
    by = {q["name"]: q for q in doc["queues"]}
    assert by["root.prod"]["children"] == ["root.prod.etl", "root.prod.ml"]
    assert by["root.prod.etl"]["parent"] == "root.prod"
    # batch is capped at 4 vcores (4 containers); etl takes the rest: 12 vcores, 24576 MB.
    batch, etl = by["root.batch"], by["root.prod.etl"]
    assert batch["usage"] == {"memory-mb": 8192, "vcores": 4, "gpu-mem": 0}
    assert batch["max"]["vcores"] == 4
    assert etl["usage"] == {"memory-mb": 24576, "vcores": 12, "gpu-mem": 0}
    assert etl["dominant_share"] == pytest.approx(0.75) and etl["dominant_resource"] == "memory-mb"
    assert by["root.prod"]["weight"] == 2.0
    # Targets: batch's demand is capped by its max (4 vcores = 0.25); prod gets the rest.
    assert batch["target_share"] == pytest.approx(0.25)
    assert etl["target_share"] == pytest.approx(0.75)
    assert by["root.prod.ml"]["target_share"] == 0
    assert etl["demand"] == {"memory-mb": 40960, "vcores": 20, "gpu-mem": 0}
    assert etl["pending"] == {"memory-mb": 16384, "vcores": 8, "gpu-mem": 0}
    assert etl["running_apps"] == 1 and by["root"]["running_apps"] == 2
    assert by["root.adhoc"]["max_running_apps"] == 1
    assert all(q["state"] == "active" and q["reservations"] == 0 for q in doc["queues"])


def test_nodes(ops):
    run_two_queues(ops)
    nodes = ops.get("/v1/nodes")["nodes"]
    assert [n["id"] for n in nodes] == ["n1", "n2"]
    n2 = nodes[1]
    assert n2["rack"] == "/r2"
    assert n2["capacity"] == {"memory-mb": 16384, "vcores": 8, "gpu-mem": 8000}
    assert n2["allocated"]["memory-mb"] == 16384
    assert n2["free"] == {"memory-mb": 0, "vcores": 0, "gpu-mem": 8000}
    assert n2["containers"] == 8 and n2["reservation"] is None


def test_demand_lists_what_the_reachable_target_replays_and_rebuilds_it(ops):
    run_two_queues(ops)
    doc = ops.get("/v1/demand")
    assert doc["resource_types"] == ["memory-mb", "vcores", "gpu-mem"]
    assert [n[0] for n in doc["nodes"]] == ["n1", "n2"] and doc["nodes"][1][2] == [16384, 8, 8000]
    assert len(doc["running"]) == 16 and {r[0] for r in doc["running"]} == {"a-etl", "a-batch"}
    asks = {a[0]: a[4] for a in doc["apps"]}
    assert asks["a-etl"] == [[1, [2048, 1, 0], 8]]  # its 20 asked, 12 running
    with ops.lock:
        own = ReplayInput(ops.core)
    rebuilt = ReplayInput.of(tuple(doc["resource_types"]), own.config, doc["nodes"], doc["running"], doc["apps"])
    assert rebuilt.key == own.key


def test_health_reports_calls_and_config_version(ops):
    health = ops.get("/v1/health")
    assert health["bridge_connected"] is False and health["last_call_age_s"] is None
    assert health["status"] == "bridge-disconnected"
    assert health["config"]["version"] == 1
    assert health["config"]["path"] == str(ops.queues_file)
    assert len(health["config"]["sha256"]) == 16
    ops.heartbeat("n1")
    health = ops.get("/v1/health")
    assert health["bridge_connected"] is True and health["status"] == "ok"
    assert 0 <= health["last_call_age_s"] < 10
    assert health["nodes"] == 2 and health["core_counters"]["heartbeats"] == 1


def test_health_info_from_the_service_wins(ops):
    server = StatusServer(lambda: ops.core, ops.lock, health=lambda: {"bridge_connected": True, "mode": "x"},
                          port=0, metrics=ops.metrics).start()
    try:
        health = requests.get(server.url + "/v1/health", timeout=10).json()
    finally:
        server.stop()
    assert health["bridge_connected"] is True and health["mode"] == "x" and health["status"] == "ok"
    assert health["config"] is None


def test_apps_list_and_root_index(ops):
    run_two_queues(ops)
    apps = ops.get("/v1/apps")["apps"]
    assert [(a["id"], a["queue"], a["containers"]) for a in apps] == [
        ("a-batch", "root.batch", 4), ("a-etl", "root.prod.etl", 12)]
    index = ops.get("/")
    assert "/v1/queues" in index["endpoints"] and index["core"]["containers"] == 16


def test_unknown_paths_and_methods(ops):
    assert "no such endpoint" in ops.get("/v2/queues", status=404)["error"]
    r = requests.post(ops.url + "/v1/queues", timeout=10)
    assert r.status_code == 404


def test_binds_loopback_by_default(ops):
    server = StatusServer(lambda: ops.core, ops.lock, port=0)
    try:
        assert server.httpd.server_address[0] == "127.0.0.1"
    finally:
        server.httpd.server_close()


def test_a_failing_read_answers_500_and_the_server_lives_on(ops):
    calls = {"n": 0}

    def get_core():
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("core swapped mid-read")
        return ops.core

    server = StatusServer(get_core, ops.lock, port=0).start()
    try:
        r = requests.get(server.url + "/v1/queues", timeout=10)
        assert r.status_code == 500 and "core swapped mid-read" in r.json()["error"]
        assert requests.get(server.url + "/v1/queues", timeout=10).status_code == 200
    finally:
        server.stop()


def test_queue_figures_agree_with_the_cores_snapshot(ops):
    run_two_queues(ops)
    with ops.lock:
        for app in ("w1", "w2", "w3"):
            ops.core.submit_app(app, "carol", "root.adhoc")
            ops.core.update_request(app, 2, {"vcores": 1, "gpu-mem": 500}, 3)
        ops.core.add_node("n3", {"memory-mb": 4096, "vcores": 4, "gpu-mem": 1000})  # shares not yet refreshed
        snap = ops.core.snapshot()["queues"]
    for q in ops.get("/v1/queues")["queues"]:
        s = snap[q["name"]]
        assert q["usage"] == s["usage"] and q["pending"] == s["pending"], q["name"]
        assert (q["running_apps"], q["waiting_apps"]) == (s["running_apps"], s["waiting_apps"]), q["name"]
        assert q["dominant_share"] == pytest.approx(s["dominant_share"], abs=1e-6)
        assert q["weighted_share"] == pytest.approx(s["weighted_share"], abs=1e-6)
        assert q["dominant_resource"] == s["dominant_resource"]
        assert q["max"] == s["max"] and q["min"] == s["min"] and q["weight"] == s["weight"]
