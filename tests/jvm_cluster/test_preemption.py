"""Preemption in a real ResourceManager (issue 15, item 4): a stock Hadoop 3.4 RM running the shim
and `yarn-drf serve`, two NodeManagers. Queue a fills the cluster with long distributed-shell
containers; b's app arrives; within the fair-share timeout, the grace and a few heartbeats per
step (b's AM first, then its tasks) b holds its share, a keeps its own, and a's AM was told
through YARN's path: the containers taken ended with exit status PREEMPTED and count in the RM's
preemption metrics. Then nothing more is taken (no thrash)."""
from __future__ import annotations

import json
import re
import time
import urllib.request

import pytest

from tests.jvm_cluster.cluster import Cluster

TIMEOUT_S, GRACE_S = 3, 3


def queues(timeout_s: int, grace_s: int) -> str:
    """Two equal leaves a and b, preemption on with these clocks."""
    return f"""\
resources: [memory-mb, vcores, gpu-mem]
preemption:
  enabled: true
  fair-share-timeout-s: {timeout_s}
  min-share-timeout-s: {timeout_s}
  threshold: 0.8
  grace-s: {grace_s}
  max-per-round: "100%"
placement:
  - rule: specified
  - rule: reject
queues:
  root:
    submit-acl: " "
    admin-acl: " "
    children:
      a: {{submit-acl: "*"}}
      b: {{submit-acl: "*"}}
"""


QUEUES = queues(TIMEOUT_S, GRACE_S)
TASK = "memory-mb=256,vcores=1"
NODES, VCORES = 2, 4  # 8 vcores: a's AM and 7 tasks fill them; b's AM and 3 tasks are its half
PREEMPTED = -102  # ContainerExitStatus.PREEMPTED


@pytest.fixture
def cluster(cluster_factory) -> Cluster:
    return cluster_factory(queues_text=QUEUES, nm_count=NODES, nm_vcores=VCORES)


def vcores(cluster: Cluster, name: str) -> int:
    app = cluster.app_named(name)
    return int(app.get("allocatedVCores") or 0) if app else 0


def exit_statuses(cluster: Cluster, app_id: str) -> dict[str, int]:
    """Container -> exit status, as the app's distributed-shell AM got them from allocate."""
    out = {}
    for log in cluster.root.glob(f"nm*/logs/{app_id}/*/AppMaster.std*"):
        for m in re.finditer(r"containerID=(container_\S+?), .*?exitStatus=(-?\d+)", log.read_text(errors="replace")):
            out[m.group(1)] = int(m.group(2))
    return out


def test_a_late_queue_on_a_full_cluster_gets_its_share_by_preemption_through_yarns_path(cluster):
    cluster.dshell("a", NODES * VCORES - 1, TASK, name="fills")
    cluster.wait_for(lambda: vcores(cluster, "fills") == NODES * VCORES, 120, "a fills the cluster")
    arrived = time.monotonic()
    cluster.dshell("b", VCORES, TASK, name="late")
    cluster.wait_for(lambda: vcores(cluster, "late") == NODES * VCORES // 2, 120, "b holds its half")
    took = time.monotonic() - arrived
    print(f"b reached its share {took:.1f} s after its client started "
          f"(timeout {TIMEOUT_S} s, grace {GRACE_S} s, two steps: its AM, then its tasks)")

    a = cluster.app_named("fills")
    taken = NODES * VCORES // 2
    assert vcores(cluster, "fills") == taken, "a keeps its half: never pushed below its target"
    assert a["numNonAMContainerPreempted"] == taken and a["numAMContainerPreempted"] == 0
    assert a["preemptedResourceVCores"] == taken
    ended = cluster.wait_for(lambda: [c for c, s in exit_statuses(cluster, a["id"]).items() if s == PREEMPTED]
                             if len(exit_statuses(cluster, a["id"])) >= taken else None, 30,
                             "a's AM sees its containers end")
    assert len(ended) == taken and len(exit_statuses(cluster, a["id"])) == taken, exit_statuses(cluster, a["id"])

    time.sleep(TIMEOUT_S + GRACE_S + 2)  # rounds go on; nothing is starved, nothing more is taken
    assert cluster.app_named("fills")["numNonAMContainerPreempted"] == taken
    assert vcores(cluster, "fills") == taken and vcores(cluster, "late") == taken
    with urllib.request.urlopen(f"http://127.0.0.1:{cluster.ports['status']}/v1/queues", timeout=5) as r:
        counters = json.loads(r.read())["preemption"]["counters"]
    print("core preemption counters:", counters)
    assert counters["killed"] == taken and counters["marked"] == taken
