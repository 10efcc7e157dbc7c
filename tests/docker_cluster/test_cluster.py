"""The mini-cluster as deployed: NodeManagers of three shapes register with their resources
(gpu-mem included), distributed-shell and MapReduce apps run to success, queue ACLs reject."""
from __future__ import annotations

import re
import uuid

from tests.docker_cluster.cluster import GPU, SHAPES, SLEEP_JOB, resource_map


def test_nodemanagers_register_with_their_resources(cluster):
    nodes = cluster.running_nodes()
    assert len(nodes) == len(SHAPES)
    # Three distinct YARN nodes on one host: distinct host:port ids.
    assert len({n["id"] for n in nodes}) == len(SHAPES)
    capacities = sorted(
        tuple(sorted((resource_map(n["availableResource"]) | {}).items())) for n in nodes
        if n["numContainers"] == 0
    )
    expected = sorted(tuple(sorted(s.capacity().items())) for s in SHAPES)
    assert capacities == expected
    # The RM knows gpu-mem as a resource type with MiB units.
    gpu_nodes = [n for n in nodes if resource_map(n["availableResource"]).get(GPU)]
    assert len(gpu_nodes) == 1 and resource_map(gpu_nodes[0]["availableResource"])[GPU] == 20480


def test_distributed_shell_app_with_gpu_memory_succeeds(idle_cluster):
    name = f"dshell-{uuid.uuid4().hex[:6]}"
    code, out = idle_cluster.submit_dshell(
        name, "dev", 3, {"memory-mb": 512, "vcores": 1, GPU: 4096}, command="sleep 2", wait=True)
    assert code == 0, out[-3000:]
    app = idle_cluster.app_by_name(name)
    assert app["state"] == "FINISHED" and app["finalStatus"] == "SUCCEEDED", app
    assert app["queue"] in ("dev", "root.research.dev")


def test_mapreduce_sleep_job_succeeds(idle_cluster):
    code, out = idle_cluster.exec([
        "yarn", SLEEP_JOB, "-Dmapreduce.job.queuename=dev",
        "-m", "2", "-r", "1", "-mt", "500", "-rt", "500"])
    assert code == 0, out[-3000:]
    assert "completed successfully" in out
    submitted = re.findall(r"Submitted application (application_\d+_\d+)", out)
    assert len(submitted) == 1, out[-3000:]
    app = idle_cluster.rest(f"/apps/{submitted[0]}")["app"]
    assert app["applicationType"] == "MAPREDUCE" and app["queue"] in ("dev", "root.research.dev"), app
    assert app["state"] == "FINISHED" and app["finalStatus"] == "SUCCEEDED", app


def test_submission_to_a_queue_the_user_may_not_use_is_rejected(idle_cluster):
    name = f"denied-{uuid.uuid4().hex[:6]}"
    code, out = idle_cluster.submit_dshell(
        name, "prod", 1, {"memory-mb": 256, "vcores": 1}, command="true", user="mallory", wait=True)
    assert code != 0
    # The ACL reason reaches the client: who, where, and that it is a permission refusal.
    lines = [l for l in out.splitlines() if "mallory" in l and "prod" in l]
    assert lines, out[-3000:]
    assert any("permission" in l.lower() or "acl" in l.lower() for l in lines), lines
    app = idle_cluster.app_by_name(name)
    # Nothing of it runs: either never accepted, or failed at once.
    assert app is None or app["state"] in ("FAILED", "KILLED"), app
    # The same user may use an open queue.
    code, out = idle_cluster.submit_dshell(
        name + "-ok", "dev", 1, {"memory-mb": 256, "vcores": 1}, command="true", user="mallory", wait=True)
    assert code == 0, out[-3000:]
