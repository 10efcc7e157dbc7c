"""A ResourceManager failover under a churning mixed workload, measured from outside the scheduler:
what `make demo-ha` (docker/demo_ha.py) shows and the failover benchmark
(benchmarks/failover/run.py) times, for any scheduler on the HA cluster (tests/docker_cluster/ha_cluster.py).

Three queues run distributed-shell apps of short containers (10-29 s), dev a map-only MapReduce job
too, so allocation never stops while an RM is active. Each shell container leaves a mark on the
shared volume when it starts and another when it ends normally: a container the failover lost
started and neither ended nor still runs on its NodeManager. The times to the takeover and to the
first new allocation come from the new RM's own log ("Transitioned to active state", its first
container going NEW -> ALLOCATED; Docker's timestamps, so the host's clock, like the kill's); "back
at target" is the first sample after the kill where every queue's dominant share is at least its
mean over the samples before the kill (taken once the workload fills the cluster) less one of its
containers.
"""
from __future__ import annotations

import re
import statistics
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import requests

from tests.docker_cluster.cluster import SLEEP_JOB, resource_map
from tests.docker_cluster.ha_cluster import HaCluster
from tests.drf import RESOURCES, dominant_share, fits_somewhere, queue_usage

# queue -> (container shape, containers): far more than the cluster holds for the whole run.
WORKLOAD = {
    "root.prod": ({"memory-mb": 512, "vcores": 1}, 400),                   # CPU-heavy, weight 2
    "root.research.dev": ({"memory-mb": 3072, "vcores": 1}, 200),                   # memory-heavy
    "root.research.ml": ({"memory-mb": 1024, "vcores": 1, "gpu-mem": 1024}, 200),   # GPU-memory-heavy
}
MR_MAPS, MR_MAP_MS = 60, 15_000
ALLOCATED = re.compile(r"Container Transitioned from NEW to ALLOCATED")
ACTIVE = re.compile(r"Transitioned to active state")


@dataclass
class Sample:
    t: float                          # seconds since the kill (negative before it)
    active: str | None                # the RM answering as active
    shares: dict[str, float]          # queue -> dominant share of the cluster
    containers: dict[str, int]        # queue -> running containers


@dataclass
class Outcome:
    active_s: float | None = None          # kill -> the standby logs "Transitioned to active state"
    first_allocation_s: float | None = None  # kill -> the new RM's first new container
    back_at_target_s: float | None = None  # kill -> every queue back within one container
    before: dict[str, float] = field(default_factory=dict)  # queue -> mean share before the kill
    started: int = 0
    ended: int = 0
    running: int = 0
    lost: list[str] = field(default_factory=list)


class Failover:
    """One run: submit, sample, kill the active RM, sample until the shares are back, account."""

    def __init__(self, cluster: HaCluster, tag: str) -> None:
        self.c = cluster
        self.tag = tag
        self.marks = f"/shared/failover-{tag}"
        self.capacity: dict[str, int] = {}
        self.samples: list[Sample] = []
        self.killed_wall: float | None = None
        self.killed_at: float | None = None
        self.old: str | None = None

    # ---- workload ----------------------------------------------------------------------
    def submit(self) -> None:
        nodes = self.c.running_nodes()
        self.capacity = {r: sum(resource_map(n["availableResource"]).get(r, 0) for n in nodes) for r in RESOURCES}
        code, out = self.c.exec(["mkdir", "-p", self.marks])
        assert code == 0, out
        self.c.exec_detached(["yarn", SLEEP_JOB, "-Dmapreduce.job.queuename=dev", "-m", str(MR_MAPS), "-r", "0",
                              "-mt", str(MR_MAP_MS)], f"mr-{self.tag}")
        for queue, (shape, count) in WORKLOAD.items():
            leaf = queue.split(".")[-1]
            command = (f"touch {self.marks}/s.$CONTAINER_ID; sleep $((10 + RANDOM % 20)); "
                       f"touch {self.marks}/e.$CONTAINER_ID")
            self.c.submit_dshell(f"{leaf}-{self.tag}", leaf, count, shape, command=command)

    # ---- measuring ---------------------------------------------------------------------
    def sample(self) -> Sample | None:
        """The queues' shares now, from the active RM (None while no RM answers)."""
        try:
            running = self.c.running_containers()
        except requests.RequestException:
            return None
        usage = queue_usage(running)
        empty = dict.fromkeys(RESOURCES, 0)
        now = time.monotonic()
        s = Sample(t=now - self.killed_at if self.killed_at else 0.0, active=self.c.active_id,
                   shares={q: dominant_share(usage.get(q, empty), self.capacity) for q in WORKLOAD},
                   containers={q: sum(1 for v in running.values() if v["queue"] == q) for q in WORKLOAD})
        self.samples.append(s)
        return s

    def one(self, queue: str) -> float:
        """The dominant share of one of the queue's containers."""
        return dominant_share(WORKLOAD[queue][0], self.capacity)

    def kill(self) -> None:
        """kill -9 of the active RM's JVM."""
        self.old = self.c.find_active()
        assert self.old, f"no active RM to kill: {self.c.states()}"
        self.killed_wall = time.time()
        self.killed_at = self.c.kill_rm(self.old)

    def before_kill(self) -> dict[str, float]:
        """Each queue's mean share over the samples before the kill (its own steady level)."""
        pre = [s for s in self.samples if s.t < 0 or self.killed_at is None]
        return {q: statistics.fmean(s.shares[q] for s in pre) for q in WORKLOAD}

    def back_at_target(self, sample: Sample, before: dict[str, float]) -> bool:
        return sample.active not in (None, self.old) and all(
            sample.shares[q] >= before[q] - self.one(q) for q in WORKLOAD)

    def saturated(self) -> bool:
        """Every queue runs containers and no node has room for another of any queue's."""
        s = self.sample()
        if s is None or any(n < 2 for n in s.containers.values()):
            return False
        free = {n["id"]: resource_map(n["availableResource"]) for n in self.c.running_nodes()}
        return not any(fits_somewhere(shape, free) for shape, _ in WORKLOAD.values())

    def since_kill_s(self, rm_id: str, pattern: re.Pattern) -> float | None:
        """Seconds from the kill to the RM's first log line after it that matches (Docker's
        timestamps: the host's clock, like the kill's)."""
        raw = self.c.rms[rm_id].get_wrapped_container().logs(timestamps=True, since=int(self.killed_wall))
        for line in raw.decode(errors="replace").splitlines():
            if pattern.search(line):
                stamp = datetime.fromisoformat(line.split(" ", 1)[0][:26].rstrip("Z") + "+00:00")
                if stamp.timestamp() >= self.killed_wall:
                    return stamp.timestamp() - self.killed_wall
        return None

    def account(self) -> tuple[int, int, int, list[str]]:
        """(started, ended, running, lost): containers of the shell apps that started, ended
        normally, run now on a NodeManager, and that did none of the last two."""
        started = self._marks("s.")  # first: a container started after this read is in no set
        running = self.c.nm_running()
        ended = self._marks("e.")
        lost = sorted(started - ended - running)
        running -= ended  # ended normally, its NodeManager not yet done with it
        return len(started), len(ended & started), len(running & started), [self._why(k) for k in lost]

    def _why(self, container: str) -> str:
        """A lost container with what its NodeManager says of it (state, exit code, diagnostics)."""
        for nm in self.c.nms.values():
            r = requests.get(f"http://127.0.0.1:{nm.env['NM_WEB_PORT']}/ws/v1/node/containers/{container}",
                             headers={"Accept": "application/json"}, timeout=10)
            if r.status_code == 200:
                x = r.json().get("container") or {}
                return f"{container} ({x.get('state')}, exit {x.get('exitCode')}: {x.get('diagnostics', '')[:200]})"
        return f"{container} (no NodeManager knows it)"

    def _marks(self, prefix: str) -> set[str]:
        code, out = self.c.exec(["bash", "-c", f"cd {self.marks} && ls"])
        assert code == 0, out
        return {name[len(prefix):] for name in out.split() if name.startswith(prefix)}


def run(cluster: HaCluster, tag: str, *, settle_s: float = 15, before_s: float = 45, limit_s: float = 180,
        on_sample=None) -> tuple[Failover, Outcome]:
    """The whole scenario; on_sample(failover, sample) is called after every sample (the demo's
    live table). The level before the kill is taken over before_s once the cluster is full and
    settle_s more have passed."""
    f = Failover(cluster, tag)
    f.submit()
    out = Outcome()

    def tick(until: float) -> None:
        while time.monotonic() < until:
            s = f.sample()
            if on_sample is not None and s is not None:
                on_sample(f, s)
            time.sleep(1)

    def filled() -> bool:
        if on_sample is not None and f.samples:
            on_sample(f, f.samples[-1])
        return f.saturated()

    cluster.wait_for(filled, 300, "the workload to fill the cluster", describe=lambda: repr(f.samples[-1:]))
    tick(time.monotonic() + settle_s)
    f.samples.clear()
    tick(time.monotonic() + before_s)
    out.before = f.before_kill()
    f.kill()
    deadline = f.killed_at + limit_s
    while time.monotonic() < deadline and out.back_at_target_s is None:
        new = cluster.find_active()
        s = f.sample() if new not in (None, f.old) else None
        if s is not None:
            if on_sample is not None:
                on_sample(f, s)
            if f.back_at_target(s, out.before):
                out.back_at_target_s = s.t
        time.sleep(0.5)
    if cluster.active_id not in (None, f.old):
        out.active_s = f.since_kill_s(cluster.active_id, ACTIVE)
        out.first_allocation_s = f.since_kill_s(cluster.active_id, ALLOCATED)
    out.started, out.ended, out.running, out.lost = f.account()
    return f, out


def summary(f: Failover, out: Outcome) -> dict[str, Any]:
    return {"active_s": out.active_s, "first_allocation_s": out.first_allocation_s,
            "back_at_target_s": out.back_at_target_s, "started": out.started, "ended": out.ended,
            "running": out.running, "lost": len(out.lost), "lost_containers": out.lost,
            "before": out.before, "samples": [(round(x.t, 1), x.active, x.containers, x.shares) for x in f.samples]}
