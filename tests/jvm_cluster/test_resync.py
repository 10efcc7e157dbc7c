"""A resync after the queue file changed under running apps: the core restarts (SIGKILL) on a file
where placement and ACLs would put YARN's apps elsewhere or nowhere, and still counts every
container exactly where YARN runs it: usage per node and per queue equal to the RM's own REST
figures, every app in its original queue."""
from __future__ import annotations

import os
import signal

from tests.jvm_cluster.test_faults import running
from tests.jvm_cluster.test_shim_cluster import CPU, MEM, spec

AM = {"memory-mb": 256, "vcores": 1}  # dshell's AM, as the tests submit it


def rm_usage_by_node(cluster) -> dict[str, tuple[int, int]]:
    return {n["id"]: (n["usedMemoryMB"], n["usedVirtualCores"]) for n in cluster.rest("nodes")["nodes"]["node"]}


def rm_usage_by_queue(cluster) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for a in cluster.apps("RUNNING"):
        mem, vcores = out.get(a["queue"], (0, 0))
        out[a["queue"]] = (mem + a["allocatedMB"], vcores + a["allocatedVCores"])
    return out


def core_matches_rm(cluster, apps: dict[str, str]):
    """The core's view equals the RM's (or None while it does not yet)."""
    status = cluster.core_status()
    if status is None:
        return None
    core = status["core"]
    if {a: core["apps"].get(a, {}).get("queue") for a in apps} != apps:
        return None
    by_node = {n: (v["allocated"]["memory-mb"], v["allocated"]["vcores"]) for n, v in core["nodes"].items()}
    by_queue = {q: (core["queues"][q]["usage"]["memory-mb"], core["queues"][q]["usage"]["vcores"])
                for q in rm_usage_by_queue(cluster)}
    if by_node != rm_usage_by_node(cluster) or by_queue != rm_usage_by_queue(cluster):
        return None
    return core


def test_a_core_restarted_on_a_changed_file_counts_every_app_where_yarn_runs_it(cluster_factory):
    cluster = cluster_factory()
    cluster.dshell("cpu", 2, spec(CPU), name="in-cpu")
    cluster.dshell("batch", 2, spec(MEM), name="in-batch")
    cluster.dshell("restricted", 1, spec(CPU), user="alice", name="alices")
    for name, containers in (("in-cpu", 3), ("in-batch", 3), ("alices", 2)):
        cluster.wait_for(lambda n=name, c=containers: running(cluster, n) == c, 180, f"{name} running")
    apps = {a["id"]: a["queue"] for a in cluster.apps("RUNNING")}
    assert sorted(apps.values()) == ["root.batch", "root.cpu", "root.restricted"]
    assert cluster.wait_for(lambda: core_matches_rm(cluster, apps), 60, "the core to match the RM before")

    # While the core is stopped (its file watcher too), the file changes so that placement and ACLs
    # would now refuse all three: cpu's submit-acl narrowed to nobody, batch removed, restricted
    # handed to bob; placement stays [specified, reject]. Then the core is killed.
    pid = cluster.serve_pid()
    os.kill(pid, signal.SIGSTOP)
    text = cluster.queues_yaml.read_text()
    text = text.replace('      cpu:\n        weight: 1\n        submit-acl: "*"',
                        '      cpu:\n        weight: 1\n        submit-acl: "nobody"')
    text = text.replace('      batch:\n        weight: 1\n        submit-acl: "*"\n', "")
    text = text.replace('submit-acl: "alice"', 'submit-acl: "bob"')
    assert "batch" not in text and '"nobody"' in text and '"bob"' in text
    cluster.queues_yaml.write_text(text)
    os.kill(pid, signal.SIGKILL)

    cluster.wait_for(lambda: cluster.serve_pid() not in (None, pid), 60, "the supervisor to restart the core")
    core = cluster.wait_for(lambda: core_matches_rm(cluster, apps), 120, "the core to match the RM after the resync")
    assert core["counters"]["apps_recovered_misplaced"] == 3, core["counters"]
    assert core["queues"]["root.batch"]["draining"], "a queue the file lacks keeps draining, as a reload keeps it"
    assert {a["id"]: a["queue"] for a in cluster.apps("RUNNING")} == apps, "YARN's apps stayed where they were"
    assert core["containers"] == sum(a["runningContainers"] for a in cluster.apps("RUNNING")) == 8
    # Placement decides for new apps only: one more app in the narrowed cpu queue is refused.
    cluster.dshell("cpu", 1, spec(CPU), name="late")
    cluster.wait_for(lambda: (cluster.app_named("late") or {}).get("state") in ("FAILED", "KILLED"), 120,
                     "the new submission refused by the narrowed ACL")
    assert core_matches_rm(cluster, apps)
