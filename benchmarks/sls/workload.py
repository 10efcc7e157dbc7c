"""The benchmark's cluster and jobs, written in SLS's own input formats.

Nodes: one rack per 40 nodes, every node the same shape (memory, vcores, gpu-mem).
Jobs: three classes, one queue each, arriving over the first part of the run:
  cpu  - tasks heavy on vcores, no GPU memory
  mem  - tasks heavy on memory
  gpu  - tasks heavy on GPU memory
Each class is sized so its queue alone would keep about `load` of the whole cluster busy for
`duration_s`: the cluster is oversubscribed, so fairness and throughput are measured at saturation.
Values are written as strings: SLS reads the trace into Map<String, String>.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

from confgen import NodeShape

NODE = NodeShape(memory_mb=16384, vcores=16, gpu_mem=16384)


@dataclass(frozen=True)
class JobClass:
    queue: str
    memory_mb: int
    vcores: int
    gpu_mem: int


CLASSES = (
    JobClass("cpu", memory_mb=1024, vcores=4, gpu_mem=0),
    JobClass("mem", memory_mb=6144, vcores=1, gpu_mem=0),
    JobClass("gpu", memory_mb=2048, vcores=1, gpu_mem=6144),
)


def _dominant_fraction(c: JobClass, node: NodeShape) -> float:
    shares = [c.memory_mb / node.memory_mb, c.vcores / node.vcores]
    if node.gpu_mem:
        shares.append(c.gpu_mem / node.gpu_mem)
    return max(shares)


def nodes_json(n_nodes: int, node: NodeShape = NODE, per_rack: int = 40) -> str:
    racks: dict[int, list[dict]] = {}
    for i in range(n_nodes):
        racks.setdefault(i // per_rack, []).append({
            "node": f"node{i}", "memory-mb": node.memory_mb, "vcores": node.vcores,
            "gpu-mem": node.gpu_mem})
    return "\n".join(json.dumps({"rack": f"rack{r}", "nodes": ns}) for r, ns in sorted(racks.items()))


def node_vectors(nodes: Path, types: tuple[str, ...] = ("memory-mb", "vcores", "gpu-mem")) -> list[list[int]]:
    """Every node's capacity, read back from a nodes file, in the order of `types`."""
    out = []
    for line in nodes.read_text().splitlines():
        if line.strip():
            out += [[int(n.get(r, 0)) for r in types] for n in json.loads(line)["nodes"]]
    return out


def jobs(n_nodes: int, duration_s: float, arrival_s: float, tasks_per_job: int,
         task_s: tuple[float, float], load: float, seed: int,
         node: NodeShape = NODE, first_job_s: float = 5.0) -> list[dict]:
    """SLS job records, sorted by start time. The first job comes `first_job_s` after the start,
    once every simulated node has heartbeated, so no scheduler decides on a half-known cluster."""
    rng = random.Random(seed)
    mean_task_s = sum(task_s) / 2
    out = []
    for c in CLASSES:
        # node-seconds this queue should bring, over node-seconds one task uses
        tasks = int(load * n_nodes * duration_s / (_dominant_fraction(c, node) * mean_task_s))
        n_jobs = max(1, round(tasks / tasks_per_job))
        for j in range(n_jobs):
            start_ms = int((first_job_s + rng.uniform(0, arrival_s)) * 1000)
            out.append(_job(c, f"{c.queue}_{j}", start_ms, duration_s,
                            [int(rng.uniform(*task_s) * 1000) for _ in range(tasks_per_job)]))
    out.sort(key=lambda j: (int(j["job.start.ms"]), j["job.id"]))
    return out


def _job(c: JobClass, job_id: str, start_ms: int, duration_s: float, task_ms: list[int]) -> dict:
    """One SLS job record of class c: one map task per entry of task_ms (its run time)."""
    return {
        "am.type": "mapreduce",
        "job.start.ms": str(start_ms),
        "job.end.ms": str(start_ms + int(duration_s * 1000)),
        "job.queue.name": c.queue,
        "job.id": job_id,
        "job.user": f"user_{c.queue}",
        "job.tasks": [{
            "count": "1",
            "container.duration.ms": str(ms),
            "container.priority": "20",
            "container.type": "map",
            "container.memory-mb": str(c.memory_mb),
            "container.vcores": str(c.vcores),
            "container.gpu-mem": str(c.gpu_mem),
        } for ms in task_ms],
    }


# The late-queue scenario (preemption.py): both queues run the same task shape, so a queue's fair
# share of the two equal-weight queues is half the cluster by every measure.
LATE_TASK = JobClass("", memory_mb=2048, vcores=2, gpu_mem=0)


def late_queue_jobs(n_nodes: int, early: str, late: str, late_start_s: float, early_task_s: float,
                    late_task_s: float, early_jobs: int = 4, node: NodeShape = NODE,
                    first_job_s: float = 5.0) -> list[dict]:
    """The early queue's jobs ask for more than the whole cluster in tasks that outlast the run's
    interesting part; the late queue's one job arrives at late_start_s asking for more than half
    the cluster, so it can reach its fair share only by preemption."""
    slots = n_nodes * int(1 / _dominant_fraction(LATE_TASK, node))
    per_early_job = -(-slots * 5 // 4 // early_jobs)
    early_class = JobClass(early, LATE_TASK.memory_mb, LATE_TASK.vcores, LATE_TASK.gpu_mem)
    late_class = JobClass(late, LATE_TASK.memory_mb, LATE_TASK.vcores, LATE_TASK.gpu_mem)
    out = [_job(early_class, f"{early}_{j}", int(first_job_s * 1000), early_task_s,
                [int(early_task_s * 1000)] * per_early_job) for j in range(early_jobs)]
    out.append(_job(late_class, f"{late}_0", int(late_start_s * 1000), late_task_s,
                    [int(late_task_s * 1000)] * (slots * 5 // 8)))
    return out


def write_files(dir_: Path, n_nodes: int, jobs_: list[dict]) -> tuple[Path, Path]:
    """Writes nodes.json and trace.json; returns their paths."""
    dir_.mkdir(parents=True, exist_ok=True)
    nodes = dir_ / "nodes.json"
    trace = dir_ / "trace.json"
    nodes.write_text(nodes_json(n_nodes) + "\n")
    trace.write_text("\n".join(json.dumps(j) for j in jobs_) + "\n")
    return nodes, trace


def write(dir_: Path, n_nodes: int, duration_s: float, arrival_s: float, tasks_per_job: int,
          task_s: tuple[float, float], load: float, seed: int,
          first_job_s: float = 5.0) -> tuple[Path, Path]:
    """Writes the mixed workload's nodes.json and trace.json; returns their paths."""
    return write_files(dir_, n_nodes, jobs(n_nodes, duration_s, arrival_s, tasks_per_job, task_s,
                                           load, seed, first_job_s=first_job_s))


def job_queues(trace: Path) -> dict[str, str]:
    """job id -> queue, read back from a trace file."""
    out = {}
    for line in trace.read_text().splitlines():
        if line.strip():
            j = json.loads(line)
            out[j["job.id"]] = j["job.queue.name"]
    return out
