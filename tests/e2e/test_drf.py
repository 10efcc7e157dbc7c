"""Weighted DRF on the real cluster: three queues (prod weighs 2, dev and ml 1) each run an app of
long-running containers of a different shape (CPU-heavy, memory-heavy, GPU-memory-heavy) against
the same free resources. Measured from the RM REST API: weighted dominant shares equal within one
container (unless the lower queue's next container fits on no node), no node over-allocated, and
the Python core's per-queue usage equal to YARN's."""
from __future__ import annotations

import time
import uuid

from tests.e2e.cluster import GPU, SHAPES, resource_map
from tests.e2e.drf import RESOURCES, dominant_share, fits_somewhere, queue_usage
from tests.e2e.waits import wait_for

WEIGHTS = {"root.prod": 2.0, "root.dev": 1.0, "root.ml": 1.0}
WORK = {  # queue -> (container shape, count): each queue wants far more than its share
    "root.prod": ({"memory-mb": 1024, "vcores": 2}, 30),          # CPU-heavy
    "root.dev": ({"memory-mb": 4096, "vcores": 1}, 30),           # memory-heavy
    "root.ml": ({"memory-mb": 2048, "vcores": 1, GPU: 2048}, 30),  # GPU-memory-heavy
}
AM = {"memory-mb": 256, "vcores": 1}
LIMIT_FACTOR = 4  # a wait_until that keeps seeing progress gives up after this many times its budget


def wait_until(predicate, timeout_s: float, what: str, cluster=None):
    """Polls `predicate` until it returns something true. With a cluster, `timeout_s` is how long
    the cluster may go without any change (its apps' states, containers and progress: a loaded
    machine gets as long as the cluster keeps moving), up to LIMIT_FACTOR times it in all; a daemon
    that exits fails at once. Without one it is the whole budget."""
    if cluster is None:
        return wait_for(predicate, what, progress=lambda: None, stall_s=timeout_s, limit_s=timeout_s)

    def alive_and(predicate=predicate):
        cluster.assert_alive()
        return predicate()

    def state() -> str:
        apps = "; ".join(f"{a['name']} {a['state']} {a['runningContainers']} {a['diagnostics'][:300]}"
                         for a in cluster.apps())
        return f"apps: {apps}\nRM log:\n{cluster.logs(cluster.rm, tail=40)}"

    return wait_for(alive_and, what, progress=cluster.activity, stall_s=timeout_s,
                    limit_s=LIMIT_FACTOR * timeout_s, describe=state)


def wait_stable(cluster, quiet_s: float = 6, timeout_s: float = 120) -> dict:
    """Running containers once no allocation happened for quiet_s seconds."""
    last, since = None, time.monotonic()
    deadline = time.monotonic() + timeout_s
    while True:
        now = cluster.running_containers()
        if last is None or set(now) != set(last):
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return now
        if time.monotonic() > deadline:
            raise AssertionError("container set never settled")
        time.sleep(1)


def test_weighted_drf_across_three_queues(idle_cluster, requires_yarn_drf):
    c = idle_cluster
    tag = uuid.uuid4().hex[:6]
    capacity = hold_all_but_am_vcores(c, len(WORK), tag)
    for queue, (shape, count) in WORK.items():
        c.submit_dshell(f"{queue.split('.')[-1]}-{tag}", queue.split(".")[-1], count, shape)
    release_when_all_pending(c, WORK, tag)
    assert_weighted_drf(c, wait_stable(c), WORK, WEIGHTS, capacity)


def hold_all_but_am_vcores(c, apps: int, tag: str) -> dict[str, int]:
    """Starts a blocker that holds every vcore but one per AM of `apps` apps, so their asks are all
    pending when it goes: they then compete for the same resources at once. The cluster capacity."""
    capacity = {r: sum(resource_map(n["availableResource"]).get(r, 0) for n in c.running_nodes())
                for r in RESOURCES}
    blocker_n = capacity["vcores"] - 1 - apps
    c.submit_dshell(f"blocker-{tag}", "dev", blocker_n, {"memory-mb": 128, "vcores": 1})
    wait_until(lambda: len(c.running_containers()) == blocker_n + 1, 120, "the blocker's containers", c)
    return capacity


def release_when_all_pending(c, work: dict, tag: str) -> None:
    """Kills the blocker once every queue of `work` has asks pending in the scheduler core."""
    def all_pending():
        core_queues = c.core_status()["queues"]
        return all(core_queues[q]["pending"]["vcores"] > 0 for q in work)

    wait_until(all_pending, 120, "every queue's asks to reach the scheduler", c)
    c.kill_app(c.app_by_name(f"blocker-{tag}")["id"])


def assert_weighted_drf(c, running: dict, work: dict, weights: dict[str, float],
                        capacity: dict[str, int]) -> None:
    """Weighted dominant shares of the queues of `work` ({queue: (container shape, count)}) are
    equal within one container, unless the lower queue's next container fits on no node; no node
    holds more than its capacity; the core's per-queue usage is YARN's."""
    # 1. Per-queue usage and weighted dominant shares from YARN's containers.
    usage = queue_usage({k: v for k, v in running.items() if v["queue"] in work})
    weighted = {q: dominant_share(usage[q], capacity) / weights[q] for q in work}
    one = {q: dominant_share(work[q][0], capacity) / weights[q] for q in work}
    workers = {q: sum(1 for v in running.values() if v["queue"] == q) - 1 for q in work}
    free = {n["id"]: resource_map(n["availableResource"]) for n in c.running_nodes()}
    report = f"weighted shares {weighted}, workers {workers}, free {free}"
    assert all(n > 0 for n in workers.values()), report
    for low in work:
        for high in work:
            gap = weighted[high] - weighted[low]
            if gap > one[high] + 1e-9:
                # Only allowed when the lower queue cannot place its next container anywhere.
                assert not fits_somewhere(work[low][0], free), f"{low} below {high} by {gap:.3f}: {report}"

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
        assert all(v >= 0 for v in resource_map(n["availableResource"]).values()), n

    # 3. The Python core counts exactly what YARN runs, queue by queue.
    core = c.core_status()
    for q in work:
        assert core["queues"][q]["usage"] == usage[q], (q, core["queues"][q]["usage"], usage[q])
    assert sum(a["containers"] for a in core["apps"].values()) == len(running)
