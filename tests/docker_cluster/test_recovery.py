"""Failures of the deployed scheduler: the Python core killed with SIGKILL inside the RM container,
and a restart of the whole RM container with work-preserving recovery."""
from __future__ import annotations

import time
import uuid

import requests

from tests.drf import queue_usage


def _app_running(cluster, name: str, containers: int):
    app = cluster.app_by_name(name)
    if not app or app["state"] != "RUNNING":
        return None
    running = [c for c in cluster.app_containers(app["id"]) if c.get("containerState") == "RUNNING"]
    return app if len(running) == containers else None


def _nm_running_containers(cluster) -> set[str]:
    """Containers the NodeManagers themselves run (their REST API), independent of the RM."""
    ids: set[str] = set()
    for name, nm in cluster.nms.items():
        port = nm.env["NM_WEB_PORT"]
        data = requests.get(f"http://127.0.0.1:{port}/ws/v1/node/containers",
                            headers={"Accept": "application/json"}, timeout=10).json()
        items = (data.get("containers") or {}).get("container") or []
        if isinstance(items, dict):  # Jersey's JSON gives a lone element as an object
            items = [items]
        ids |= {c["id"] for c in items if c.get("state") == "RUNNING"}
    return ids


def test_kill_9_of_the_python_scheduler(idle_cluster, requires_yarn_drf):
    c = idle_cluster
    tag = uuid.uuid4().hex[:6]
    c.submit_dshell(f"before-{tag}", "dev", 4, {"memory-mb": 512, "vcores": 1})
    app = c.wait_for(lambda: _app_running(c, f"before-{tag}", 5), 120, "the first app's 4 containers")
    before = {x["containerId"] for x in c.app_containers(app["id"])}
    c.wait_for(lambda: before <= _nm_running_containers(c), 60, "the NodeManagers to run the containers")
    old = c.serve_pids()
    assert len(old) == 1, old

    code, out = c.exec(["kill", "-9", str(old[0])])
    assert code == 0, out
    # The RM stays up and answers while the scheduler is gone.
    assert c.rest("/info")["clusterInfo"]["state"] == "STARTED"

    # The shim restarts the scheduler, resynchronises it, and allocation resumes for new work.
    new = c.wait_for(lambda: [p for p in c.serve_pids() if p not in old], 60, "a new yarn-drf serve")
    assert len(new) == 1, new
    c.submit_dshell(f"after-{tag}", "ml", 2, {"memory-mb": 512, "vcores": 1, "gpu-mem": 1024})
    c.wait_for(lambda: _app_running(c, f"after-{tag}", 3), 120, "the new app's containers after the restart")
    # Running containers kept running throughout: same ids, still running.
    still = {x["containerId"] for x in c.app_containers(app["id"]) if x.get("containerState") == "RUNNING"}
    assert still == before
    assert before <= _nm_running_containers(c)
    # The restarted core counts exactly what YARN runs.
    running = c.running_containers()
    core = c.core_status()
    for queue, usage in queue_usage(running).items():
        assert core["queues"][queue]["usage"] == usage, (queue, core["queues"][queue]["usage"], usage)
    assert sum(a["containers"] for a in core["apps"].values()) == len(running)


def test_rm_container_restart_preserves_running_containers(idle_cluster, scheduler_name):
    c = idle_cluster
    tag = uuid.uuid4().hex[:6]
    c.submit_dshell(f"survivor-{tag}", "dev", 3, {"memory-mb": 512, "vcores": 1})
    app = c.wait_for(lambda: _app_running(c, f"survivor-{tag}", 4), 120, "the app's 3 containers")
    before = {x["containerId"] for x in c.app_containers(app["id"])}
    c.wait_for(lambda: before <= _nm_running_containers(c), 60, "the NodeManagers to run the containers")

    c.rm.get_wrapped_container().restart(timeout=20)
    c.wait_for_nodes(len(c.nms), 180)

    def recovered():
        try:
            a = c.rest(f"/apps/{app['id']}")["app"]
        except requests.RequestException:
            return None
        return a if a["state"] == "RUNNING" and a["runningContainers"] == len(before) else None

    a = c.wait_for(recovered, 180, "the app recovered with its containers")
    # The same containers, never restarted: the NodeManagers still run them.
    assert before <= _nm_running_containers(c)
    after = {x["containerId"] for x in c.app_containers(app["id"]) if x.get("containerState") == "RUNNING"}
    assert after == before
    # And they count in the queue's usage again: 3 x 512 MB + the AM's 256 MB.
    assert a["allocatedMB"] == 3 * 512 + 256 and a["allocatedVCores"] == 4, a
    if scheduler_name == "yarn-drf":
        # By the app's containers, not by queue name: YARN's state store keeps the queue as the app
        # named it ("dev"), and the core must count it in root.research.dev all the same.
        usage = queue_usage({k: {**v, "queue": "app"} for k, v in c.running_containers().items()
                             if v["app"] == app["id"]})["app"]

        def core_matches():
            try:
                core = c.core_status()
            except requests.RequestException:  # the new RM's scheduler is still starting
                return None
            return core if core["queues"]["root.research.dev"]["usage"] == usage else None

        core = c.wait_for(core_matches, 60, "the core's usage to match YARN's after the restart")
        assert core["queues"]["root.research.dev"]["usage"]["vcores"] == 4
