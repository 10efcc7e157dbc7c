"""Operations against a real ResourceManager with the shim, two NodeManagers and `yarn-drf serve`:
status, why, metrics and reload (through `yarn rmadmin -refreshQueues`) see what YARN runs."""
from __future__ import annotations

import sys

import pytest
import requests

from tests.jvm_cluster.cluster import Cluster
from tests.jvm_cluster.conftest import started_cluster
from tests.ops.test_ops_cli import run


class OpsCluster(Cluster):
    def rm_props(self) -> dict[str, object]:
        props = super().rm_props()
        # The queue-file watcher off: `yarn rmadmin -refreshQueues` is the only reload trigger the test sees.
        props["yarn-drf.serve.command"] = (f"{sys.executable} -m yarn_bridge.cli serve "
                                           f"--status-port {self.ports['status']} --queues-watch-s 0")
        return props

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.ports['status']}"


@pytest.fixture(scope="module")
def cluster():
    with started_cluster(kind=OpsCluster) as c:
        yield c


def test_status_why_and_metrics_for_a_running_app(cluster):
    # 10 containers of <2048 MB, 1 vcore> on two 8192 MB nodes, plus a 256 MB AM: 7 fit (3 next to
    # the AM, 4 on the other node), 3 stay pending for memory: 1792 MB is the most free anywhere.
    cluster.dshell("mem", 10, "memory-mb=2048,vcores=1", name="ops-mem")
    app = cluster.wait_for(lambda: (a := cluster.app_named("ops-mem")) and a.get("runningContainers", 0) == 8 and a,
                           180, "ops-mem running its AM and 7 containers")
    doc = cluster.wait_for(lambda: (d := requests.get(f"{cluster.url}/v1/apps/{app['id']}", timeout=5).json())
                           and d.get("requests") and any(r["pending"] == 3 for r in d["requests"]) and d,
                           60, "the three asks that do not fit reach the core")
    req = next(r for r in doc["requests"] if r["pending"] == 3)
    room = next(r for r in req["reasons"] if r["code"] == "no-node-room")
    assert room["resources"] == ["memory-mb"] and room["largest_free"]["memory-mb"] == 1792

    queues = {q["name"]: q for q in requests.get(f"{cluster.url}/v1/queues", timeout=5).json()["queues"]}
    assert queues["root.mem"]["usage"]["memory-mb"] == app["allocatedMB"] == 7 * 2048 + 256
    assert queues["root.mem"]["running_apps"] == 1
    assert queues["root.mem"]["target_share"] == pytest.approx(queues["root.mem"]["dominant_share"], abs=0.15)

    code, text = run(["why", app["id"], "--url", cluster.url])
    assert code == 0 and "memory-mb needs 2048, the largest free on any node is 1792" in text
    code, text = run(["status", "--url", cluster.url])
    assert code == 0 and "bridge connected" in text and "mem" in text

    metrics = requests.get(f"{cluster.url}/metrics", timeout=5).text
    counts = {line.split()[0]: float(line.split()[1]) for line in metrics.splitlines()
              if line and not line.startswith("#")}
    assert counts["yarn_drf_heartbeats_total"] > 0
    assert counts["yarn_drf_assignments_total"] >= 8
    assert counts['yarn_drf_queue_usage{queue="root.mem",resource="memory-mb"}'] == 7 * 2048 + 256
    health = requests.get(f"{cluster.url}/v1/health", timeout=5).json()
    assert health["bridge_connected"] is True and health["nodes"] == 2
    kill = cluster.yarn("application", "-kill", app["id"])
    assert kill.returncode == 0, kill.stderr


def test_refresh_queues_is_the_same_validated_reload(cluster):
    original = cluster.queues_yaml.read_text()
    version = requests.get(f"{cluster.url}/v1/health", timeout=5).json()["config"]["version"]
    try:
        cluster.queues_yaml.write_text(original.replace("      mem:\n        weight: 2",
                                                        "      mem:\n        weight: 5"))
        ok = cluster.yarn("rmadmin", "-refreshQueues")
        assert ok.returncode == 0, ok.stderr
        config = requests.get(f"{cluster.url}/v1/health", timeout=5).json()["config"]
        assert config["version"] == version + 1
        assert config["last_reload"]["trigger"] == "refreshQueues"
        assert "~ root.mem: weight 2 -> 5" in config["last_reload"]["diff"]
        cluster.queues_yaml.write_text(original.replace("weight: 2", "weight: -2"))
        bad = cluster.yarn("rmadmin", "-refreshQueues")
        assert bad.returncode != 0
        config = requests.get(f"{cluster.url}/v1/health", timeout=5).json()["config"]
        assert config["version"] == version + 1 and config["last_reload"]["accepted"] is False
        mem = next(q for q in requests.get(f"{cluster.url}/v1/queues", timeout=5).json()["queues"]
                   if q["name"] == "root.mem")
        assert mem["weight"] == 5.0
    finally:
        cluster.queues_yaml.write_text(original)
        cluster.yarn("rmadmin", "-refreshQueues")
