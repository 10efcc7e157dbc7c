"""Node labels in a real ResourceManager: YARN's RMNodeLabelsManager in centralized configuration,
set by `yarn rmadmin` while the cluster runs; where containers ran is read from YARN's own
records (the RM's REST API), and what the CLIs show from the CLIs."""
from __future__ import annotations

import pytest

from tests.jvm_cluster.cluster import Cluster

QUEUES = """resources: [memory-mb, vcores, gpu-mem]
placement:
  - rule: specified
  - rule: reject
queues:
  root:
    accessible-node-labels: []
    children:
      gpu:
        accessible-node-labels: [gpu]
      plain: {}
"""


@pytest.fixture
def cluster(cluster_factory, tmp_path) -> Cluster:
    return cluster_factory(queues_text=QUEUES, rm_extra={
        "yarn.node-labels.enabled": "true",
        "yarn.node-labels.configuration-type": "centralized",
        "yarn.node-labels.fs-store.root-dir": f"file://{tmp_path / 'node-labels'}",
    })


def nm(cluster: Cluster, i: int) -> str:
    """NodeManager i's node id as YARN has it (host:port; the host as the NodeManager resolved it)."""
    port = str(cluster.ports[f"nm{i}"])
    return next(n["id"] for n in cluster.rest("nodes")["nodes"]["node"] if n["id"].rsplit(":", 1)[1] == port)


def rmadmin(cluster: Cluster, *args: str) -> None:
    done = cluster.yarn("rmadmin", *args)
    assert done.returncode == 0, done.stdout + done.stderr


def running_app(cluster: Cluster, name: str, containers: int) -> str:
    """The id of app `name` once YARN runs its AM and `containers` more."""
    def ready():
        app = cluster.app_named(name)
        return app["id"] if app and app.get("runningContainers", 0) >= containers + 1 else None
    return cluster.wait_for(ready, 180, f"{name} running {containers} containers")


def nodes_of(cluster: Cluster, app_id: str) -> list[str]:
    """The node of each live container of the app (its AM's first), as YARN's RM reports them."""
    attempt = cluster.rest(f"apps/{app_id}/appattempts")["appAttempts"]["appAttempt"][-1]
    rows = cluster.rest(f"apps/{app_id}/appattempts/{attempt['appAttemptId']}/containers").get("container") or []
    return [r["assignedNodeId"] for r in rows]


def node_labels(cluster: Cluster) -> dict[str, list[str]]:
    return {n["id"]: n.get("nodeLabels") or [] for n in cluster.rest("nodes")["nodes"]["node"]}


def test_labels_set_live_by_rmadmin_keep_apps_on_their_partitions_and_refuse_what_a_queue_may_not_use(cluster):
    """One cluster (each costs a minute to start): labels set, then apps placed, then an AM
    refused, then the labels moved under running apps."""
    rmadmin(cluster, "-addToClusterNodeLabels", "gpu(exclusive=true),x(exclusive=false)")
    rmadmin(cluster, "-replaceLabelsOnNode", f"{nm(cluster, 1)}=gpu")
    cluster.wait_for(lambda: node_labels(cluster)[nm(cluster, 1)] == ["gpu"], 60, "nm1 labelled gpu")
    listed = cluster.cli("org.apache.hadoop.yarn.client.cli.ClusterCLI", "--list-node-labels")
    assert "<gpu:exclusivity=true>" in listed.stdout and "<x:exclusivity=false>" in listed.stdout, listed.stdout
    status = cluster.cli("org.apache.hadoop.yarn.client.cli.NodeCLI", "-status", nm(cluster, 1))
    assert "Node-Labels : gpu" in status.stdout, status.stdout
    queue = cluster.yarn("queue", "-status", "gpu")
    assert "Accessible Node Labels : gpu" in queue.stdout, queue.stdout

    # An AM pinned to gpu and its containers on the gpu node; unlabelled work never there.
    cluster.dshell("root.gpu", 3, "memory-mb=512,vcores=1", name="pinned", label="gpu")
    cluster.dshell("root.plain", 3, "memory-mb=512,vcores=1", name="free")
    pinned, free = running_app(cluster, "pinned", 3), running_app(cluster, "free", 3)
    assert set(nodes_of(cluster, pinned)) == {nm(cluster, 1)}  # its AM too: the app's expression
    assert set(nodes_of(cluster, free)) == {nm(cluster, 0)}  # the exclusive partition lends nothing

    # A queue that may not use gpu: YARN refuses the app at submission, by the queue's labels.
    client = cluster.dshell("root.plain", 1, "memory-mb=512,vcores=1", name="refused", label="gpu")
    assert client.wait(timeout=180) != 0
    log = (cluster.root / "client-refused.log").read_text(errors="replace")
    assert "doesn't have permission to access all labels" in log, log[-3000:]

    # The labels swap under the running apps: new work follows the nodes' new partitions.
    rmadmin(cluster, "-replaceLabelsOnNode", f"{nm(cluster, 0)}=gpu {nm(cluster, 1)}=")
    cluster.wait_for(lambda: node_labels(cluster) == {nm(cluster, 0): ["gpu"], nm(cluster, 1): []}, 60,
                     "the labels swapped")
    cluster.dshell("root.gpu", 2, "memory-mb=512,vcores=1", name="moved", label="gpu")
    cluster.dshell("root.plain", 2, "memory-mb=512,vcores=1", name="unlabelled")
    moved, unlabelled = running_app(cluster, "moved", 2), running_app(cluster, "unlabelled", 2)
    assert set(nodes_of(cluster, moved)) == {nm(cluster, 0)}
    assert set(nodes_of(cluster, unlabelled)) == {nm(cluster, 1)}
