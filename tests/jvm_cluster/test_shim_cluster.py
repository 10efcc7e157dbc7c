"""A stock Hadoop 3.4.1 ResourceManager running the yarn-drf shim with two NodeManagers and the
real `yarn-drf serve`: distributed-shell apps in queues of different shapes share the cluster by
weighted DRF; ACLs, queue info and -refreshQueues work through the core."""
from __future__ import annotations

import json
import urllib.request
from html.parser import HTMLParser

import pytest

from tests.drf import progressive_filling
from tests.jvm_cluster.conftest import started_cluster
from tests.waits import wait_steady

CPU = {"memory-mb": 256, "vcores": 2}
MEM = {"memory-mb": 2048, "vcores": 1}
GPU = {"memory-mb": 512, "vcores": 1, "gpu-mem": 2048}
AM = {"memory-mb": 256, "vcores": 1}
WEIGHTS = {"root.cpu": 1, "root.mem": 2, "root.gpu": 1}


def spec(shape: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in shape.items())


@pytest.fixture(scope="module")
def cluster():
    with started_cluster() as c:
        yield c


def test_queue_status_and_mapred_queue_list_come_from_the_queue_tree(cluster):
    status = cluster.yarn("queue", "-status", "mem")
    assert status.returncode == 0, status.stderr
    assert "Queue Name : mem" in status.stdout
    assert "State : RUNNING" in status.stdout
    listed = cluster.cli("org.apache.hadoop.mapred.JobQueueClient", "-list")
    assert listed.returncode == 0, listed.stderr
    for q in ("cpu", "mem", "gpu", "batch", "restricted"):
        assert f"Queue Name : {q}" in listed.stdout, listed.stdout
    missing = cluster.yarn("queue", "-status", "nosuch")
    assert "nosuch" in missing.stdout + missing.stderr
    assert "Queue Name : nosuch" not in missing.stdout


class QueueRows(HTMLParser):
    """The rows of the RM scheduler page's queue table: [[cell text, ...], ...] by queue path."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, list[str]] = {}
        self.links: list[str] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if tag == "tr" and a.get("class") == "queue":
            self._row = self.rows.setdefault(a["title"], [])
        elif tag == "td" and self._row is not None:
            self._cell = []
        elif tag == "a" and a.get("id") == "yarn-drf-dashboard":
            self.links.append(a["href"])

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr":
            self._row = None


def test_the_rms_scheduler_page_shows_the_queue_tree_and_links_the_dashboard(cluster):
    with urllib.request.urlopen(f"http://127.0.0.1:{cluster.ports['rm_web']}/cluster/scheduler", timeout=10) as r:
        assert r.status == 200
        page = QueueRows()
        page.feed(r.read().decode())
    with urllib.request.urlopen(f"http://127.0.0.1:{cluster.ports['status']}/v1/queues", timeout=10) as r:
        core = json.loads(r.read())["queues"]
    assert sorted(page.rows) == sorted(q["name"] for q in core)  # the shim lists children by name
    assert list(page.rows)[0] == "root"
    for q in core:  # queue, weight, dominant share, used, pending, running apps, pending apps, state
        name, weight, *_, state = page.rows[q["name"]]
        assert (name, weight, state) == (q["name"], f"{q['weight']:g}" if q["parent"] else "", "RUNNING")
    dashboard = f"http://127.0.0.1:{cluster.ports['status']}/ui/"
    assert page.links == [dashboard]
    with urllib.request.urlopen(dashboard, timeout=10) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/html")


# What YARN UI2's yarn-queue/fair-queue serializer reads of each queue (Hadoop 3.4's UI2 source).
UI2_FAIR_QUEUE_FIELDS = {"queueName", "maxApps", "minResources", "maxResources", "usedResources",
                         "demandResources", "steadyFairResources", "fairResources", "clusterResources",
                         "pendingContainers", "allocatedContainers", "reservedContainers",
                         "schedulingPolicy", "preemptable"}


def test_the_rest_scheduler_endpoint_lists_the_cores_queue_tree_fair_shaped(cluster):
    info = cluster.rest("scheduler")["scheduler"]["schedulerInfo"]
    assert info["type"].split("Scheduler")[0] == "fair"  # UI2 picks its queue model by this word
    queues, stack = {}, [info["rootQueue"]]
    while stack:
        q = stack.pop()
        queues[q["queueName"]] = q
        stack.extend(q.get("childQueues", {}).get("queue", []))
    with urllib.request.urlopen(f"http://127.0.0.1:{cluster.ports['status']}/v1/queues", timeout=10) as r:
        core = {q["name"]: q for q in json.loads(r.read())["queues"]}
    assert set(queues) == set(core)
    for name, q in queues.items():
        assert UI2_FAIR_QUEUE_FIELDS <= set(q), f"{name} lacks {UI2_FAIR_QUEUE_FIELDS - set(q)}"
        if core[name]["leaf"]:
            assert {"numPendingApps", "numActiveApps"} <= set(q)
        if core[name]["parent"]:
            assert q["drfWeight"] == core[name]["weight"]
    leaves = [q for name, q in queues.items() if core[name]["leaf"]]
    assert sum(q["usedResources"]["memory"] for q in leaves) == queues["root"]["usedResources"]["memory"]


def test_app_for_a_queue_its_user_may_not_use_is_rejected_with_the_reason(cluster):
    client = cluster.dshell("restricted", 1, spec(CPU), user="bob", name="bob-restricted", command="true")
    app = cluster.wait_for(lambda: cluster.app_named("bob-restricted"), 120, "bob's app known to the RM")
    app = cluster.wait_for(lambda: (a := cluster.app(app["id"]))["state"] == "FAILED" and a, 60, "rejection")
    assert "may not submit to queue 'root.restricted'" in app["diagnostics"]
    assert app["runningContainers"] in (0, -1)
    shown = cluster.yarn("application", "-status", app["id"])
    assert "may not submit to queue 'root.restricted'" in shown.stdout, shown.stdout
    client.wait(60)
    assert client.returncode != 0


def test_refresh_queues_reloads_the_yaml_and_refuses_a_bad_file_keeping_the_old_one(cluster):
    original = cluster.queues_yaml.read_text()
    try:
        cluster.queues_yaml.write_text(original.replace("      batch:", "      extra:\n        weight: 3\n      batch:"))
        ok = cluster.yarn("rmadmin", "-refreshQueues")
        assert ok.returncode == 0, ok.stderr
        extra = cluster.yarn("queue", "-status", "extra")
        assert "Queue Name : extra" in extra.stdout, extra.stdout + extra.stderr

        cluster.queues_yaml.write_text(original.replace("weight: 2", "weight: -2"))
        bad = cluster.yarn("rmadmin", "-refreshQueues")
        assert bad.returncode != 0
        assert "queue configuration refused" in bad.stderr
        assert "queues.root.children.mem.weight" in bad.stderr, bad.stderr
        still = cluster.yarn("queue", "-status", "extra")
        assert "Queue Name : extra" in still.stdout, "the old configuration must stay in force"
        assert cluster.rm.alive()
    finally:
        cluster.queues_yaml.write_text(original)
        cluster.yarn("rmadmin", "-refreshQueues")


def test_queues_of_different_shapes_share_the_cluster_by_weighted_drf(cluster):
    # A blocker app fills the cluster but for three AM slots, so the three shaped apps all have
    # their asks pending when it is killed and the core divides the freed resources among them.
    cluster.dshell("batch", 6, spec(CPU), name="blocker")
    blocker = cluster.wait_for(
        lambda: (a := cluster.app_named("blocker")) and a.get("runningContainers", 0) == 7 and a,
        180, "blocker app running 7 containers")
    for queue, shape in (("cpu", CPU), ("mem", MEM), ("gpu", GPU)):
        cluster.dshell(queue, 12, spec(shape), name=f"drf-{queue}")
    names = [f"drf-{q}" for q in ("cpu", "mem", "gpu")]
    cluster.wait_for(lambda: all((cluster.app_named(n) or {}).get("state") == "RUNNING" for n in names),
                     180, "three shaped apps running their AMs")
    ids = [cluster.app_named(n)["id"] for n in names]
    cluster.wait_for(lambda: all(cluster.core_status()["core"]["apps"][i]["pending"] > 0 for i in ids), 60,
                     "the three apps' asks in the core (the AMs' first allocate calls)")
    kill = cluster.yarn("application", "-kill", blocker["id"])
    assert kill.returncode == 0, kill.stderr

    running = wait_steady(lambda: {n: cluster.app_named(n).get("runningContainers", 0) for n in names},
                          "allocation to settle", quiet_s=4, budget_s=120, accept=lambda counts: sum(counts.values()) > 3,
                          poll_s=1, **cluster.watching())
    total = {"memory-mb": 2 * cluster.nm_memory, "vcores": 2 * cluster.nm_vcores, "gpu-mem": 2 * cluster.nm_gpu_mem}
    queues = {f"root.{q}": {"weight": WEIGHTS[f"root.{q}"], "used": AM, "task": shape, "pending": 12}
              for q, shape in (("cpu", CPU), ("mem", MEM), ("gpu", GPU))}
    expected = progressive_filling(total, queues)
    print(f"\nrunning containers per app (incl. AM): {running}; progressive filling (tasks): {expected}")
    for q in ("cpu", "mem", "gpu"):
        tasks = running[f"drf-{q}"] - 1  # minus the AM container
        assert abs(tasks - expected[f"root.{q}"]) <= 1, (q, running, expected)
    # The core counts what YARN runs: same containers per queue.
    core = cluster.core_status()["core"]
    for q in ("cpu", "mem", "gpu"):
        app = cluster.app_named(f"drf-{q}")
        assert core["apps"][app["id"]]["containers"] == app["runningContainers"]
        assert core["apps"][app["id"]]["queue"] == f"root.{q}"
