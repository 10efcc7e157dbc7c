"""Preemption across a ResourceManager restart and an HA failover, in real ResourceManagers
(issue 27, item 4): stock Hadoop 3.4 RMs running the shim and `yarn-drf serve`, a NodeManager,
distributed-shell apps. Queue a holds 7 of 8 vcores, b's AM takes the last one and asks for
tasks: b starves after the fair-share timeout and three of a's tasks are marked. Then the RM
restarts (work-preserving, FileSystemRMStateStore) or the active RM is killed and the standby
takes over (ZooKeeper, ZKRMStateStore). The new RM's core goes on from the state the old one
saved: b still starves (its clock is not restarted), the pending marks are killed at the deadline
the old core gave (not a fresh grace), each once, nothing else is killed, and b reaches its
target."""
from __future__ import annotations

import json
import re
import time
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest

from tests.jvm_cluster.cluster import Cluster
from tests.jvm_cluster.ha import HACluster
from tests.jvm_cluster.test_preemption import PREEMPTED, TASK, queues, vcores

TIMEOUT_S, GRACE_S = 3, 20
VCORES = 8  # one NodeManager: a's AM and 6 tasks, then b's AM; b's target is half: 3 of a's tasks


class RestartingCluster(Cluster):
    """One RM whose NodeManager and AMs look for it again every second while it restarts (not
    every 30 s, YARN's default)."""

    def common_props(self) -> dict[str, object]:
        return {**super().common_props(), "yarn.resourcemanager.connect.retry-interval.ms": 1000}


@pytest.fixture
def cluster_of(cluster_factory):
    def make(kind: type[Cluster]) -> Cluster:
        return cluster_factory(queues_text=queues(TIMEOUT_S, GRACE_S), nm_count=1, nm_vcores=VCORES, kind=kind)
    return make


def saved_state(cluster: Cluster) -> dict | None:
    """The preemption state the RM saved for the next one (PreemptionStore)."""
    if isinstance(cluster, HACluster):
        return cluster.saved_state()
    path = cluster.root / "rmstore" / "yarn-drf" / "preemption-state.json"
    return json.loads(path.read_text()) if path.exists() else None


def preempted_lines(cluster: Cluster, app_id: str) -> list[str]:
    """The containers the app's distributed-shell AM saw end with exit status PREEMPTED, one entry
    per time it was told (a container killed twice would be here twice)."""
    out = []
    for log in cluster.root.glob(f"nm*/logs/{app_id}/*/AppMaster.std*"):
        for m in re.finditer(r"containerID=(container_\S+?), .*?exitStatus=(-?\d+)", log.read_text(errors="replace")):
            if int(m.group(2)) == PREEMPTED:
                out.append(m.group(1))
    return out


def kill_times_ms(log: Path) -> dict[str, float]:
    """When the RM's log says it killed each container (ms since 1970, this host's clock)."""
    out = {}
    line = r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3}) INFO Preemptions: yarn-drf: killed container (\S+)"
    for m in re.finditer(line, log.read_text(errors="replace"), re.M):
        out[m.group(3)] = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").timestamp() * 1000 + int(m.group(2))
    return out


def preemption_counters(cluster: Cluster) -> dict:
    port = cluster.ports["status"]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/queues", timeout=5) as r:
        return json.loads(r.read())["preemption"]["counters"]


def starve_b(cluster: Cluster) -> tuple[str, str, dict[str, int]]:
    """a holds 7 of the 8 vcores; b's AM takes the last and asks for 4 tasks. Returns a's and b's
    app ids and the marks the core saved: container -> deadline (ms since 1970)."""
    cluster.dshell("a", 6, TASK, name="fills")
    cluster.wait_for(lambda: vcores(cluster, "fills") == VCORES - 1, 180, "a holds 7 vcores")
    cluster.dshell("b", 4, TASK, name="late")
    late = cluster.wait_for(lambda: cluster.app_named("late"), 120, "b submitted")["id"]
    cluster.wait_for(lambda: preemption_counters(cluster)["marked"] == 3, 180, "three of a's tasks marked")
    state = cluster.wait_for(lambda: (s := saved_state(cluster)) and len(s["marks"]) == 3 and s, 60,
                             "the state saved", interval=1.0)
    assert {m["app"] for m in state["marks"]} == {late}, "marked for b's request"
    assert [leaf["queue"] for leaf in state["leaves"]] == ["root.b"] and state["leaves"][0]["starved"]
    return cluster.app_named("fills")["id"], late, {m["container"]: m["deadline_ms"] for m in state["marks"]}


def check_went_on(cluster: Cluster, fills: str, marks: dict[str, int], new_rm_log: Path, serve_log: Path) -> None:
    """After the restart or failover: the marks, not new ones, are killed, once, at their deadline;
    b starves on from before; b reaches its target."""
    ended = cluster.wait_for(lambda: (p := preempted_lines(cluster, fills)) and len(p) >= len(marks) and p, 240,
                             "the marked tasks end as preempted")
    cluster.wait_for(lambda: vcores(cluster, "late") == VCORES // 2, 180, "b reaches its target")
    time.sleep(3)  # rounds go on: nothing more is taken
    ended = preempted_lines(cluster, fills)
    assert sorted(ended) == sorted(marks), "exactly the marked tasks, each once"
    assert vcores(cluster, "fills") == VCORES // 2 and vcores(cluster, "late") == VCORES // 2
    counters = preemption_counters(cluster)
    print("new core's preemption counters:", counters)
    assert counters["marked"] == 0, "the new core marked nothing of its own: the old marks went on"
    assert counters["restored"] == len(marks) and counters["killed"] == len(marks)
    killed_at = kill_times_ms(new_rm_log)
    assert set(killed_at) == set(marks), "the new RM killed them"
    for cid, deadline in marks.items():
        assert killed_at[cid] >= deadline - 5, f"{cid} killed {deadline - killed_at[cid]:.0f} ms before its deadline"
    told_again = re.findall(r"preempting container (\S+) .*: killed in (\d+) ms", new_rm_log.read_text())
    assert all(int(ms) < GRACE_S * 1000 for _, ms in told_again), f"told again with the grace left: {told_again}"
    clock = re.search(r"preemption: root\.b goes on starving \(fair-share\) from before: below its target for "
                      r"([\d.]+) s", serve_log.read_text())
    assert clock, "the new core took b's starvation clock back"
    print(f"{len(told_again)} mark(s) told again by the new RM; b's clock taken back at {clock.group(1)} s")


def test_an_rm_restart_goes_on_with_the_pending_marks_and_the_starved_queues_clock(cluster_of):
    cluster = cluster_of(RestartingCluster)
    fills, late, marks = starve_b(cluster)
    old_log_end = cluster.rm.log.stat().st_size
    serve_end = (cluster.root / "serve.log").stat().st_size
    cluster.rm.stop()
    cluster.start_rm()
    cluster.wait_rm()
    new_rm_log = cluster.root / "rm-after.log"
    cluster.wait_for(lambda: len(preempted_lines(cluster, fills)) >= len(marks), 240, "the marks carried out")
    new_rm_log.write_bytes(cluster.rm.log.read_bytes()[old_log_end:])
    serve_log = cluster.root / "serve-after.log"
    serve_log.write_bytes((cluster.root / "serve.log").read_bytes()[serve_end:])
    check_went_on(cluster, fills, marks, new_rm_log, serve_log)


def test_a_failover_to_the_standby_goes_on_with_the_pending_marks_and_the_starved_queues_clock(cluster_of):
    cluster = cluster_of(HACluster)
    fills, late, marks = starve_b(cluster)
    active = cluster.kill_active()
    assert active == "rm2"
    cluster.wait_for(lambda: len(preempted_lines(cluster, fills)) >= len(marks), 240, "the marks carried out")
    check_went_on(cluster, fills, marks, cluster.rms[active].log, cluster.root / f"serve-{active}.log")
