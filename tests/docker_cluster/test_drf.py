"""Hierarchical DRF on the real cluster, with the Docker default queue tree (conf/docker-queues.yaml):
prod (weight 2), research (dev, whose users alice (weight 2) and bob share it; ml, per-resource
weights) and users (root.users.<user>, created for an app that names no queue: carol's Spark job).
Five apps of long-running containers of different shapes compete for the same free resources. Measured from the
RM REST API and checked against an H-DRF oracle written in the tests (tests/docker_cluster/hdrf.py): at every
level of the tree, users included, siblings that still ask are within one container of each other
unless the lower one could not use the nodes the higher one got its containers on; no node is
over-allocated; the Python core's per-queue and per-user usage equal YARN's."""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from tests.docker_cluster.cluster import GPU, SHAPES, resource_map
from tests.docker_cluster.hdrf import HDRF, Placed, add_users, load_tree, starved_unlawfully, unfair_choices, user_key
from tests.waits import wait_steady
from tests.drf import RESOURCES, queue_usage

QUEUES = Path(__file__).resolve().parents[2] / "conf" / "docker-queues.yaml"
USERS_PARENT = "root.users"  # where the placement rule `user` creates a queue per user
DEV = "root.research.dev"    # the leaf with user-limits


@dataclass(frozen=True, eq=False)  # a job is itself: keyed by identity
class Job:
    """One app of a test: its name (before the run's tag), the queue it names at submission (None:
    none, so placement decides), its user (None: the client's own, hadoop), its task containers;
    a distributed shell, or with `spark` the SleepShuffle job, one task per executor of `shape`
    (the distributed-shell client needs its queue to exist: it asks the RM for its info first)."""

    name: str
    queue: str | None
    user: str | None
    shape: dict[str, int]
    count: int
    spark: bool = False

    def submit(self, c, tag: str) -> None:
        name = f"{self.name}-{tag}"
        if not self.spark:
            c.submit_dshell(name, self.queue, self.count, self.shape, user=self.user)
            return
        overhead = 384  # MiB Spark adds to an executor's memory (its minimum)
        conf = {"spark.executor.memory": f"{self.shape['memory-mb'] - overhead}m",
                "spark.executor.cores": str(self.shape["vcores"]), "spark.yarn.submit.waitAppCompletion": "false"}
        if self.shape.get(GPU):
            conf["spark.yarn.executor.resource.gpu-mem.amount"] = f"{self.shape[GPU]}Mi"
        # Each task holds its executor for the test's length.
        c.spark_submit(name, self.queue, [self.count, 600_000], executors=self.count, wait=False, user=self.user,
                       conf=conf)


JOBS = (  # each wants far more than its share
    Job("prod", "prod", None, {"memory-mb": 512, "vcores": 2}, 30),                  # CPU-heavy
    Job("dev-alice", "dev", "alice", {"memory-mb": 4096, "vcores": 1}, 30),          # memory-heavy, weight 2 in dev
    Job("dev-bob", "dev", "bob", {"memory-mb": 4096, "vcores": 1}, 30),              # memory-heavy
    Job("ml", "ml", None, {"memory-mb": 2048, "vcores": 1, GPU: 2048}, 30),           # GPU-memory-heavy
    Job("carol", None, "carol", {"memory-mb": 2048, "vcores": 1}, 30, spark=True),   # Spark, no queue named
)
def wait_stable(cluster, quiet_s: float = 6, timeout_s: float = 120) -> dict:
    """Running containers once no allocation happened for quiet_s seconds."""
    return wait_steady(cluster.running_containers, "the container set to settle", quiet_s=quiet_s, budget_s=timeout_s,
                       poll_s=1, **cluster.watching())


def test_hierarchical_drf_across_the_tree_its_users_and_a_created_queue(idle_cluster, requires_yarn_drf):
    c = idle_cluster
    tag = uuid.uuid4().hex[:6]
    capacity = hold_every_vcore(c, len(JOBS), tag)
    for job in JOBS:
        job.submit(c, tag)
    names = [f"{job.name}-{tag}" for job in JOBS]
    start_the_ams(c, names, tag)
    release_when_all_pending(c, names, tag)
    running = wait_stable(c)
    apps = {job: c.app_by_name(f"{job.name}-{tag}") for job in JOBS}

    carol = apps[JOBS[-1]]
    assert carol["queue"] == f"{USERS_PARENT}.carol" and carol["user"] == "carol", carol
    assert_created_queue_shown(c, f"{USERS_PARENT}.carol")
    assert_hdrf(c, running, apps, capacity)


def assert_created_queue_shown(c, path: str) -> None:
    """The queue placement created, as `yarn queue -status` and the core's status API show it."""
    code, out = c.exec(["yarn", "queue", "-status", path])
    assert code == 0 and f"Queue Path : {path}" in out and "State : RUNNING" in out, out[-2000:]
    queue = next(q for q in c.rest_status("/v1/queues")["queues"] if q["name"] == path)
    assert queue["dynamic"] and queue["leaf"] and queue["parent"] == path.rsplit(".", 1)[0], queue
    assert queue["usage"]["vcores"] > 0, queue


def hold_every_vcore(c, apps: int, tag: str) -> dict[str, int]:
    """Two blockers hold every vcore of the cluster: `room-<tag>` one per AM of `apps` apps, and
    `blocker-<tag>` the rest, so the apps are submitted to a full cluster and their AM asks all
    wait. The cluster capacity."""
    capacity = {r: sum(resource_map(n["availableResource"]).get(r, 0) for n in c.running_nodes())
                for r in RESOURCES}
    c.submit_dshell(f"room-{tag}", "dev", apps - 1, {"memory-mb": 128, "vcores": 1})  # and its AM
    c.wait_for(lambda: len(c.running_containers()) == apps, 120, "the AMs' room held")
    rest = capacity["vcores"] - apps - 1
    c.submit_dshell(f"blocker-{tag}", "dev", rest, {"memory-mb": 128, "vcores": 1})
    c.wait_for(lambda: len(c.running_containers()) == capacity["vcores"], 120, "the blocker's containers")
    return capacity


def start_the_ams(c, names: list[str], tag: str) -> None:
    """Frees one vcore per AM once every app of `names` asks for its AM: they all ask when the room
    comes, so no app's task takes the room of an AM still on its way (a task of an app whose AM
    started first took carol's when the room was free before her app was placed)."""
    def all_asking():
        ids = [(c.app_by_name(name) or {}).get("id") for name in names]
        core_apps = c.core_status()["apps"]
        return all(i in core_apps and core_apps[i]["pending"] > 0 for i in ids)

    c.wait_for(all_asking, 300, "every app's AM ask to reach the scheduler")
    c.kill_app(c.app_by_name(f"room-{tag}")["id"])


def release_when_all_pending(c, names: list[str], tag: str) -> None:
    """Kills the blocker once every app of `names` runs its AM and has task asks pending in the
    scheduler core (an app whose AM waits has its AM's ask pending: a Spark AM starting late would
    find the cluster full)."""
    def all_pending():
        ids = [(c.app_by_name(name) or {}).get("id") for name in names]
        core_apps = c.core_status()["apps"]
        return all(i in core_apps and core_apps[i]["containers"] >= 1 and core_apps[i]["pending"] > 0
                   for i in ids)

    c.wait_for(all_pending, 300, "every app's asks to reach the scheduler")
    c.kill_app(c.app_by_name(f"blocker-{tag}")["id"])


def assert_hdrf(c, running: dict, apps: dict[Job, dict], capacity: dict[str, int],
                ended: dict | None = None) -> None:
    """The running containers are divided as hierarchical DRF divides them, at every level of the
    tree and among the users of a leaf with user-limits (tests/docker_cluster/hdrf.py): each job's last
    container (`apps`: job -> its app as the RM REST API lists it; every running container counts
    in the usage, a job's or not) went to it while it had the lowest share of the siblings that
    could use that node; no node holds more than its capacity; the core's per-queue and per-user
    usage is YARN's. `ended`: containers that ended while the apps competed, as
    tests/docker_cluster/history.py records them (each as `running` has it, with "seen" and
    "ended" ms): they count in the shares and the room of the decisions taken while they ran."""
    leaves = {v["queue"] for v in running.values()}
    created = {leaf.rsplit(".", 1)[1] for leaf in leaves if leaf.startswith(USERS_PARENT + ".")}
    tree = load_tree(QUEUES, {USERS_PARENT: sorted(created)})
    add_users(tree, {DEV: sorted({v["user"] for v in running.values() if v["queue"] == DEV})})
    with_users = {n.path for n in tree.walk() if n.user_weights is not None}

    def bottom(queue: str, user: str) -> str:
        return user_key(queue, user) if queue in with_users else queue

    # 1. The oracle's inputs from YARN's records: usage per bottom node (a leaf, or a user of a
    # leaf with users), the jobs' task containers and the shapes of the jobs that still ask.
    job_of = {app["id"]: job for job, app in apps.items()}
    usage: dict[str, dict[str, int]] = {}
    tasks: dict[str, list[Placed]] = {}
    held: dict[str, list[Placed]] = {}
    workers = {job: 0 for job in apps}
    for cid, v in running.items():
        b = bottom(v["queue"], v["user"])
        acc = usage.setdefault(b, dict.fromkeys(RESOURCES, 0))
        for r in RESOURCES:
            acc[r] += v["resources"].get(r, 0)
        held.setdefault(b, []).append(Placed(v["node"], v["resources"], v["started"]))
        job = job_of.get(v["app"])
        if job is not None and not v["am"]:  # its AM started before the others competed
            workers[job] += 1
            tasks.setdefault(b, []).append(held[b][-1])
    placed = [p for ps in held.values() for p in ps]
    gone: dict[str, list[Placed]] = {}
    for v in (ended or {}).values():
        gone.setdefault(bottom(v["queue"], v["user"]), []).append(
            Placed(v["node"], v["resources"], v["started"], ended=v["ended"], seen=v["seen"]))
    asking = {bottom(app["queue"], app["user"]): job.shape for job, app in apps.items() if workers[job] < job.count}
    free = {n["id"]: resource_map(n["availableResource"]) for n in c.running_nodes()}
    oracle = HDRF(tree, capacity)
    report = (f"H-DRF shares {({k: round(v, 4) for k, v in oracle.shares(usage, asking).items()})}, "
              f"task containers {({j.name: n for j, n in workers.items()})}, free {free}, "
              f"ended while they competed {sum(map(len, gone.values()))}")
    print(f"\n{report}")
    # Each sibling's last decision was H-DRF's; a queue or user that got no task at all may lawfully
    # starve (the AMs' places decide which nodes' room is left: e.g. AMs on the GPU node leave ml
    # only the vcores lower-share queues take first), but only if every container its siblings got
    # went where its request did not fit or while its share was not the lower.
    assert sum(workers.values()) > 0, report
    unfair = unfair_choices(oracle, usage, asking, tasks, placed, free, gone)
    unfair += starved_unlawfully(oracle, asking, tasks, held, free, gone)
    assert not unfair, "\n".join(unfair) + "\n" + report

    # 2. No node holds more than its capacity.
    by_node: dict[str, dict[str, int]] = {}
    for v in running.values():
        acc = by_node.setdefault(v["node"], dict.fromkeys(RESOURCES, 0))
        for r in RESOURCES:
            acc[r] += v["resources"].get(r, 0)
    shapes = {tuple(sorted(s.capacity().items())) for s in SHAPES}
    for n in c.running_nodes():
        total = {r: resource_map(n["usedResource"]).get(r, 0) + resource_map(n["availableResource"]).get(r, 0)
                 for r in RESOURCES}
        assert tuple(sorted(total.items())) in shapes, total
        used = by_node.get(n["id"], dict.fromkeys(RESOURCES, 0))
        assert all(used[r] <= total[r] for r in RESOURCES), (n["id"], used, total)

    # 3. The Python core counts exactly what YARN runs: every queue (parents are their leaves'
    # sums), and every user of the leaf with user-limits.
    core = c.core_status()
    yarn_usage = queue_usage(running)
    for node in tree.walk():
        if "/" in node.path:
            continue
        below = [q for q in yarn_usage if q == node.path or q.startswith(node.path + ".")]
        expect = {r: sum(yarn_usage[q][r] for q in below) for r in RESOURCES}
        assert core["queues"][node.path]["usage"] == expect, (node.path, core["queues"][node.path], expect)
    for user_node in next(n for n in tree.walk() if n.path == DEV).children:
        user = user_node.path.split("/")[1]
        assert core["queues"][DEV]["users"][user]["usage"] == usage[user_node.path], user
    assert sum(a["containers"] for a in core["apps"].values()) == len(running)
