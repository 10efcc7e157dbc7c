"""An app's controls in a stock Hadoop 3.4.1 ResourceManager running the yarn-drf shim, with real
NodeManagers and the real `yarn-drf serve`: an AM beyond its queue's max-am-share waits and
`yarn application -status` says why; an AM is told its queue's remaining max as headroom in its
allocate responses; an AM's blacklist keeps its containers off the node it names, and `yarn-drf
why` names that node when it is the only one with room. The AM of those three is YARN's own
AMRMClient in an unmanaged AM (AllocateProbe, from the shim's test classes).
`yarn application -updatePriority` is capped at the cluster's max and reaches the core;
`yarn application -changeQueue` moves an app with its usage, or says why not."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.jvm_cluster.cluster import SHIM_DIR, Cluster
from tests.jvm_cluster.conftest import started_cluster

QUEUES = """
resources: [memory-mb, vcores, gpu-mem]
placement:
  - rule: specified
  - rule: reject
queues:
  root:
    submit-acl: " "
    admin-acl: " "
    children:
      capped:
        max: {memory-mb: 2048, vcores: 8}
        max-am-share: 0.125       # AMs may hold 256 MiB: one dshell AM
        submit-acl: "*"
      tight:
        max: {memory-mb: 2048, vcores: 8}
        submit-acl: "*"
      open:
        submit-acl: "*"
      roomy:
        max: {memory-mb: 8192, vcores: 8}
        submit-acl: "*"
"""
LINE = re.compile(r"allocate granted=(\d+) memory=(\d+) vcores=(\d+) nodes=(\S*)")


@pytest.fixture(scope="module")
def cluster():
    # Both NodeManagers run on 127.0.0.1: with the port in the node name, an AM can blacklist one.
    extra = {"yarn.scheduler.include-port-in-node-name": "true", "yarn.cluster.max-application-priority": 5}
    with started_cluster(QUEUES, rm_extra=extra) as c:
        yield c


def probe(cluster: Cluster, queue: str, containers: int, memory: int, blacklist: str | None = None) -> list[tuple]:
    """Runs AllocateProbe; each allocate response it printed as (granted, memory, vcores, nodes)."""
    args = [queue, str(containers), str(memory), *([blacklist] if blacklist else [])]
    done = cluster.cli("org.yarndrf.shim.it.AllocateProbe", *args,
                       classpath=(str(SHIM_DIR / "target" / "test-classes"),), timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rows = [(int(g), int(m), int(v), [n for n in nodes.split(",") if n])
            for g, m, v, nodes in LINE.findall(done.stdout)]
    assert rows and rows[-1][0] == containers, done.stdout[-3000:]
    return rows


def app_id(cluster: Cluster, name: str) -> str:
    return cluster.wait_for(lambda: (cluster.app_named(name) or {}).get("id"), 60, f"app {name} submitted")


def test_an_am_beyond_its_queues_max_am_share_waits_and_yarn_application_status_says_why(cluster):
    cluster.dshell("capped", 1, "memory-mb=256,vcores=1", name="am-first")
    first = app_id(cluster, "am-first")
    cluster.wait_for(lambda: cluster.app(first)["state"] == "RUNNING", 120, "the first AM running")
    cluster.dshell("capped", 1, "memory-mb=256,vcores=1", name="am-second")
    second = app_id(cluster, "am-second")
    cluster.wait_for(lambda: "max-am-share" in cluster.app(second).get("diagnostics", ""), 60,
                     "the second app's AM share diagnostic")
    status = cluster.yarn("application", "-status", second)
    assert status.returncode == 0, status.stderr
    assert "AM share of root.capped reached: 256 of 256 MiB" in status.stdout, status.stdout
    assert "max-am-share 0.125" in status.stdout
    assert cluster.app(second)["state"] == "ACCEPTED"
    # The first app ends: the second AM starts, and its diagnostic no longer names the share.
    assert cluster.yarn("application", "-kill", first).returncode == 0
    cluster.wait_for(lambda: cluster.app(second)["state"] == "RUNNING", 120, "the second AM running")
    assert "max-am-share" not in cluster.app(second).get("diagnostics", "")
    cluster.yarn("application", "-kill", second)


def test_an_am_is_told_its_queues_remaining_max_as_headroom(cluster):
    rows = probe(cluster, "tight", 3, 512)
    _, memory, vcores, _ = rows[-1]
    # The cluster has 16 GiB and 16 vcores, nearly all free: only the queue's max says 512 and 5.
    assert (memory, vcores) == (2048 - 3 * 512, 8 - 3), rows[-3:]


def test_an_ams_blacklisted_node_gets_none_of_its_containers(cluster):
    # YARN's node names with the port: host:port as each NodeManager registered.
    first, second = sorted(n["id"] for n in cluster.rest("nodes")["nodes"]["node"])
    for avoided, other in ((first, second), (second, first)):
        nodes = probe(cluster, "open", 6, 1024, blacklist=avoided)[-1][3]
        assert len(nodes) == 6 and set(nodes) == {other}, (avoided, nodes)


def test_why_names_the_blacklisted_node_when_it_is_the_only_one_with_room(cluster):
    avoided, other = sorted(n["id"] for n in cluster.rest("nodes")["nodes"]["node"])
    # 9 containers of 1 GiB and 1 vcore: `other` (8 GiB, 8 vcores) holds 8, the ninth waits while
    # only the blacklisted node has room. The probe keeps asking for about 60 s.
    prober = subprocess.Popen([*cluster.cli_command("org.yarndrf.shim.it.AllocateProbe",
                                                    (str(SHIM_DIR / "target" / "test-classes"),)),
                               "open", "9", "1024", avoided],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=cluster.cli_env(),
                              start_new_session=True)
    cluster.clients.append(prober)
    app = cluster.wait_for(lambda: next((a["id"] for a in cluster.apps("RUNNING")
                                         if a["name"] == "allocate-probe"), None), 60, "the probe's app")
    try:
        def blacklist_reasons() -> list[dict] | None:
            doc = cluster.status_json(f"v1/apps/{app}")
            found = [reason for r in doc["requests"] if r["pending"] > 0 for reason in r["reasons"]
                     if reason["code"] == "blacklist"]
            return found if doc["containers"] == 8 and found else None
        reasons = cluster.wait_for(blacklist_reasons, 60, "a blacklist reason for the ninth container")
        assert [r["nodes"] for r in reasons] == [[avoided]], reasons
        assert f"the app's AM blacklisted nodes that have room: {avoided}" == reasons[0]["message"], reasons
        why = subprocess.run([str(Path(sys.executable).with_name("yarn-drf")), "why", app, "--url",
                              f"http://127.0.0.1:{cluster.ports['status']}"],
                             capture_output=True, text=True, timeout=30, env={**os.environ, "COLUMNS": "400"})
        assert why.returncode == 0, why.stdout + why.stderr
        assert f"the app's AM blacklisted nodes that have room: {avoided}" in why.stdout, why.stdout
    finally:
        prober.kill()
        prober.wait()
        cluster.yarn("application", "-kill", app)


def test_update_priority_is_capped_at_the_clusters_max_and_reaches_the_core(cluster):
    cluster.dshell("open", 1, "memory-mb=256,vcores=1", name="prio")
    app = app_id(cluster, "prio")
    cluster.wait_for(lambda: cluster.app(app)["state"] == "RUNNING", 120, "the app running")
    updated = cluster.yarn("application", "-appId", app, "-updatePriority", "9")
    assert updated.returncode == 0, updated.stdout + updated.stderr
    assert "to cluster max priority" in updated.stdout, updated.stdout
    assert cluster.app(app)["priority"] == 5
    cluster.wait_for(lambda: cluster.core_status()["core"]["apps"][app]["priority"] == 5, 30,
                     "the core's priority of the app")
    cluster.yarn("application", "-kill", app)


def test_change_queue_moves_an_app_with_its_usage_or_says_why_not(cluster):
    cluster.dshell("open", 4, "memory-mb=1024,vcores=1", name="mover")
    app = app_id(cluster, "mover")
    cluster.wait_for(lambda: cluster.app(app).get("runningContainers") == 5, 120, "the AM and 4 containers running")
    refused = cluster.yarn("application", "-appId", app, "-changeQueue", "tight")
    assert "root.tight would go over its max: memory-mb 0 used + 4352 of the app > max 2048" in \
        refused.stdout + refused.stderr, refused.stdout + refused.stderr
    assert cluster.app(app)["queue"] == "root.open"
    moved = cluster.yarn("application", "-appId", app, "-changeQueue", "roomy")
    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert cluster.app(app)["queue"] == "root.roomy"
    queues = cluster.core_status()["core"]["queues"]
    assert queues["root.roomy"]["usage"]["memory-mb"] == 4 * 1024 + 256
    assert queues["root.open"]["usage"]["memory-mb"] == 0
    cluster.yarn("application", "-kill", app)
