"""Faults the shim must survive: the Python service killed (SIGKILL) or hung (SIGSTOP) while apps
run, and a work-preserving ResourceManager restart. Each runs its own real cluster."""
from __future__ import annotations

import os
import re
import signal
import time

from tests.jvm_cluster.test_shim_cluster import CPU, spec

WIDE = {"memory-mb": 256, "vcores": 3}


def running(cluster, name: str) -> int:
    return (cluster.app_named(name) or {}).get("runningContainers", 0)


def assert_core_matches_yarn(cluster) -> None:
    """The core's apps and containers are exactly YARN's: none lost, duplicated or double-counted."""
    def same():
        yarn = {a["id"]: a for a in cluster.apps("RUNNING")}
        status = cluster.core_status()
        core = status["core"] if status else None
        if core is None or set(core["apps"]) != set(yarn):
            return False
        if any(core["apps"][i]["containers"] != a["runningContainers"] for i, a in yarn.items()):
            return False
        if core["containers"] != sum(a["runningContainers"] for a in yarn.values()):
            return False
        for queue in {a["queue"] for a in yarn.values()}:
            vcores = sum(a["allocatedVCores"] for a in yarn.values() if a["queue"] == queue)
            if core["queues"][queue]["usage"]["vcores"] != vcores:
                return False
        return core
    cluster.wait_for(same, 60, "the core's state to equal YARN's")


def wait_asking(cluster, name: str) -> None:
    """Until the core holds asks of the app `name`: its AM's first allocate call has reached it."""
    app_id = cluster.app_named(name)["id"]
    cluster.wait_for(lambda: cluster.core_status()["core"]["apps"][app_id]["pending"] > 0, 60,
                     f"{name}'s asks in the core")


def fill_and_wait_pending(cluster):
    """App 'filler' holds 13 of 16 vcores; app 'waiter' runs its AM and has 4 asks that cannot fit."""
    cluster.dshell("batch", 6, spec(CPU), name="filler")
    cluster.wait_for(lambda: running(cluster, "filler") == 7, 180, "filler running 7 containers")
    cluster.dshell("cpu", 4, spec(WIDE), name="waiter")
    cluster.wait_for(lambda: (cluster.app_named("waiter") or {}).get("state") == "RUNNING", 180, "waiter AM")
    wait_asking(cluster, "waiter")
    assert running(cluster, "waiter") == 1
    return cluster.app_named("filler"), cluster.app_named("waiter")


def test_python_hung_then_killed_rm_keeps_running_allocates_nothing_then_resyncs(cluster_factory):
    cluster = cluster_factory()

    # Phase 1: the service hangs (SIGSTOP). Calls time out; nothing is allocated; it is waited for.
    filler, waiter = fill_and_wait_pending(cluster)
    pid = cluster.serve_pid()
    assert pid
    os.kill(pid, signal.SIGSTOP)
    try:
        assert cluster.yarn("application", "-kill", filler["id"]).returncode == 0
        cluster.wait_for(lambda: cluster.app(filler["id"])["state"] == "KILLED", 60, "filler killed")
        for _ in range(4):
            time.sleep(1)
            assert cluster.rm.alive()
            assert running(cluster, "waiter") == 1, "room for the waiter, but no answer: nothing allocated"
    finally:
        os.kill(pid, signal.SIGCONT)
    cluster.wait_for(lambda: running(cluster, "waiter") == 5, 120, "allocation after the hang")
    assert cluster.serve_pid() == pid, "a hung service is waited for, not restarted"
    assert_core_matches_yarn(cluster)
    log = cluster.rm.log.read_text()
    assert "timed out" in log
    assert max(int(m) for m in re.findall(r"timeouts=(\d+)", log)) >= 1

    # Phase 2: the service is killed (SIGKILL) and its restarts fail (queue file broken) for a while.
    cluster.dshell("gpu", 3, spec(WIDE), name="waiter2")
    cluster.wait_for(lambda: (cluster.app_named("waiter2") or {}).get("state") == "RUNNING", 180, "waiter2 AM")
    wait_asking(cluster, "waiter2")
    assert running(cluster, "waiter2") == 1, "16 vcores: waiter 13 + waiter2's AM 1; its 3-vcore asks wait"
    good = cluster.queues_yaml.read_text()
    cluster.queues_yaml.write_text("queues: [not, a, tree]\n")
    os.kill(pid, signal.SIGKILL)
    try:
        assert cluster.yarn("application", "-kill", waiter["id"]).returncode == 0
        cluster.wait_for(lambda: cluster.app(waiter["id"])["state"] == "KILLED", 60, "waiter killed")
        # Submitted during the outage: it waits to be placed, it is not rejected.
        cluster.dshell("mem", 1, spec(CPU), name="during-outage")
        cluster.wait_for(lambda: cluster.app_named("during-outage"), 120, "the RM to know the new app")
        for _ in range(6):
            time.sleep(1)
            assert cluster.rm.alive()
            assert running(cluster, "waiter2") == 1, "no core: nothing may be allocated"
            assert cluster.app_named("waiter2")["state"] == "RUNNING", "running containers are untouched"
            assert cluster.app_named("during-outage")["state"] == "SUBMITTED"
        assert [n["state"] for n in cluster.rest("nodes")["nodes"]["node"]] == ["RUNNING", "RUNNING"]
        assert cluster.serve_pid() != pid
    finally:
        cluster.queues_yaml.write_text(good)
    # The supervisor restarts the service; the shim sends a snapshot; allocation resumes.
    cluster.wait_for(lambda: running(cluster, "waiter2") == 4, 120, "waiter2's containers after the restart")
    cluster.wait_for(lambda: running(cluster, "during-outage") == 2, 180, "the app submitted during the outage")
    assert_core_matches_yarn(cluster)
    log = cluster.rm.log.read_text()
    assert "core service exited with code 2" in log, "the failing restarts were supervised"
    assert re.search(r"started core service \(start #[3-9]", log)
    assert len(re.findall("core resynchronised", log)) >= 3
    assert "unavailable" in log


def test_a_service_hung_past_restart_after_ms_is_killed_and_restarted(cluster_factory):
    cluster = cluster_factory(rm_extra={"yarn-drf.serve.restart-after-ms": 4000})
    cluster.dshell("cpu", 2, spec(CPU), name="before-hang")
    cluster.wait_for(lambda: running(cluster, "before-hang") == 3, 180, "before-hang running 3 containers")
    pid = cluster.serve_pid()
    os.kill(pid, signal.SIGSTOP)
    # An idle cluster makes no calls: the next change, this submission, meets the hung service.
    cluster.dshell("mem", 1, spec(CPU), name="after-hang")
    try:
        new = cluster.wait_for(lambda: (p := cluster.serve_pid()) not in (None, pid) and p, 60,
                               "a new service after the hung one was killed")
    finally:
        if os.path.exists(f"/proc/{pid}"):
            os.kill(pid, signal.SIGKILL)
    assert not os.path.exists(f"/proc/{pid}") or "State:\tZ" in open(f"/proc/{pid}/status").read()
    log = cluster.rm.log.read_text()
    assert re.search(r"is alive but not answering \(no answer for \d+ ms \(\d+ calls in a row failed\)\); "
                     r"killing it to restart it", log), "the supervisor says why it killed the child"
    assert "restarting the core service, killed because it was alive but not answering" in log
    cluster.wait_for(lambda: running(cluster, "after-hang") == 2, 180, "the app submitted meanwhile runs on the new one")
    assert running(cluster, "before-hang") == 3, "running containers are untouched"
    assert cluster.serve_pid() == new
    assert_core_matches_yarn(cluster)


def test_rm_restart_recovers_running_containers_into_the_core(cluster_factory):
    cluster = cluster_factory()
    cluster.dshell("cpu", 3, spec(CPU), name="survivor")
    cluster.wait_for(lambda: running(cluster, "survivor") == 4, 180, "survivor running 4 containers")
    app_id = cluster.app_named("survivor")["id"]
    old_pid = cluster.serve_pid()
    cluster.rm.stop()
    assert cluster.serve_pid() is None or cluster.serve_pid() != old_pid
    cluster.start_rm()
    cluster.wait_rm()
    cluster.wait_for(lambda: cluster.app(app_id)["state"] == "RUNNING"
                     and cluster.app(app_id)["runningContainers"] == 4, 180, "app recovered with 4 containers")
    core = cluster.wait_for(lambda: (s := cluster.core_status()) and app_id in s["core"]["apps"] and s["core"],
                            60, "core knows the recovered app")
    assert_core_matches_yarn(cluster)
    # Recovered containers count in the queue's usage: AM <256, 1> + 3 x <256, 2>.
    usage = cluster.core_status()["core"]["queues"]["root.cpu"]["usage"]
    assert usage["vcores"] == 7 and usage["memory-mb"] == 1024, usage
    assert core["counters"]["heartbeats"] >= 0
    # The cluster keeps scheduling after the restart.
    cluster.dshell("mem", 1, spec(CPU), name="after-restart")
    cluster.wait_for(lambda: running(cluster, "after-restart") == 2, 180, "a new app runs after the restart")
    assert cluster.app(app_id)["state"] == "RUNNING"
