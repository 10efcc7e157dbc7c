"""Node labels on the Docker cluster, set as an operator sets them (centralized configuration,
`yarn rmadmin`): Spark executors pinned by `spark.yarn.executor.nodeLabelExpression` and its AM by
`spark.yarn.am.nodeLabelExpression` run only on the labelled node; so does a MapReduce job with
`mapreduce.job.node-label-expression`; an unlabelled app that wants more than the unlabelled nodes
hold never gets a container on the exclusive partition. Where containers ran is read from YARN's
own records (the RM REST API), sampled while each app runs."""
from __future__ import annotations

import uuid

import pytest

from tests.docker_cluster.cluster import SLEEP_JOB

AM_CONTAINER = "_000001"


@pytest.fixture
def gpu_partition(idle_cluster, requires_yarn_drf):
    """The GPU node alone in the exclusive partition `gpu`, removed after the test."""
    c = idle_cluster
    node = c.gpu_node_id()
    c.label_nodes("gpu(exclusive=true)", {node: "gpu"})
    yield node
    c.kill_all_apps()
    c.label_nodes("", {node: ""})
    c.rmadmin("-removeFromClusterNodeLabels", "gpu")


class Placements:
    """Every container seen running, app id -> {container id: node}, from the RM REST API."""

    def __init__(self, cluster) -> None:
        self.c = cluster
        self.seen: dict[str, dict[str, str]] = {}

    def sample(self) -> None:
        for app in self.c.apps("RUNNING"):
            for row in self.c.app_containers(app["id"]):
                node = row.get("nodeId") or row.get("assignedNodeId")
                self.seen.setdefault(app["id"], {})[row["containerId"]] = node

    def until_done(self, app_ids: list[str], timeout_s: float) -> None:
        def done():
            self.sample()
            apps = [self.c.rest(f"/apps/{a}")["app"] for a in app_ids]
            return all(a["state"] in ("FINISHED", "FAILED", "KILLED") for a in apps)
        self.c.wait_for(done, timeout_s, f"{app_ids} finished")
        for app_id in app_ids:
            app = self.c.rest(f"/apps/{app_id}")["app"]
            assert app["finalStatus"] == "SUCCEEDED", app


def app_id(c, pick, what: str) -> str:
    """The id of the app `pick` chooses from the RM's list, once there is one."""
    return c.wait_for(lambda: next((a["id"] for a in c.apps() if pick(a)), None), 120, what)


def test_labelled_spark_and_mapreduce_run_on_their_partition_and_unlabelled_work_never_does(idle_cluster,
                                                                                          gpu_partition):
    c, gpu_node, tag = idle_cluster, gpu_partition, uuid.uuid4().hex[:6]
    seen = Placements(c)
    earlier = {a["id"] for a in c.apps()}  # (the shared cluster keeps the apps of the tests before)
    # Unlabelled work that wants more than the two unlabelled nodes' 20 vcores: it would spill onto
    # the GPU node if the exclusive partition lent its room.
    flood = f"flood-{tag}"
    c.submit_dshell(flood, "dev", 40, {"memory-mb": 256, "vcores": 1})
    c.wait_for(lambda: (c.app_by_name(flood) or {}).get("runningContainers", 0) >= 20, 180,
               "the unlabelled app holding every unlabelled vcore")
    seen.sample()
    assert gpu_node not in seen.seen[c.app_by_name(flood)["id"]].values(), "unlabelled work on the exclusive node"
    spark_name, mr_log = f"spark-labelled-{tag}", f"mr-labelled-{tag}"
    c.spark_submit(spark_name, "ml", [6, 3000], executors=2, wait=False, conf={
        "spark.yarn.executor.nodeLabelExpression": "gpu", "spark.yarn.am.nodeLabelExpression": "gpu"})
    c.exec_detached(["yarn", SLEEP_JOB, "-Dmapreduce.job.queuename=ml",
                     "-Dmapreduce.job.node-label-expression=gpu",
                     "-m", "3", "-r", "1", "-mt", "3000", "-rt", "1000"], mr_log)
    spark = app_id(c, lambda a: a["name"] == spark_name, "the Spark app")
    # (SleepJob names every job "Sleep job": the new MapReduce app is this test's)
    mapreduce = app_id(c, lambda a: a["applicationType"] == "MAPREDUCE" and a["id"] not in earlier,
                       "the MapReduce job")
    seen.until_done([spark, mapreduce], 420)
    for app, log in ((spark, spark_name), (mapreduce, mr_log)):
        assert len(seen.seen.get(app, {})) >= 2, (app, seen.seen.get(app), c.client_log(log))
        assert set(seen.seen[app].values()) == {gpu_node}, (app, seen.seen[app])
        assert any(cid.endswith(AM_CONTAINER) for cid in seen.seen[app]), (app, seen.seen[app])
    flooded = seen.seen[c.app_by_name(flood)["id"]]
    assert len(flooded) >= 20 and gpu_node not in flooded.values(), flooded
