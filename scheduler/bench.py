"""`yarn-drf bench core`: the decision cost per assigned container at cluster scale.

For each size it builds 10,000 heterogeneous nodes, N apps spread over L leaf queues (two
levels under root, weights 1-3), fills the cluster, then measures steady state: a few
containers finish on a random node and that node heartbeats, as in a busy YARN cluster.
Only on_heartbeat is timed; cost per container = heartbeat time / containers it assigned.
"""
from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass

from scheduler.config import parse_config
from scheduler.core import SchedulerCore

SIZES = ((100, 10), (1_000, 100), (10_000, 1_000))
SHAPES = (
    {"vcores": 4, "memory-mb": 4096},                    # CPU-heavy
    {"vcores": 1, "memory-mb": 12288},                   # memory-heavy
    {"vcores": 2, "memory-mb": 8192, "gpu-mem": 10240},  # GPU-memory-heavy
    {"vcores": 1, "memory-mb": 2048},                    # small
)
NODE_SHAPES = (
    {"vcores": 32, "memory-mb": 65536, "gpu-mem": 0},
    {"vcores": 16, "memory-mb": 131072, "gpu-mem": 0},
    {"vcores": 32, "memory-mb": 131072, "gpu-mem": 40960},
)


@dataclass
class Result:
    apps: int
    leaves: int
    containers: int
    heartbeats: int
    per_container_us: list[float]

    def pct(self, p: float) -> float:
        data = sorted(self.per_container_us)
        return data[min(len(data) - 1, int(p / 100 * len(data)))]


def queue_yaml(leaves: int, rng: random.Random) -> str:
    groups = max(1, min(10, leaves // 10))
    lines = ["resources: [memory-mb, vcores, gpu-mem]", "queues:", "  root:", "    children:"]
    for g in range(groups):
        lines += [f"      g{g}:", f"        weight: {rng.choice((1, 2, 3))}", "        children:"]
        for leaf in range(g, leaves, groups):
            lines.append(f"          q{leaf}: {{weight: {rng.choice((1, 2, 3))}}}")
    return "\n".join(lines) + "\n"


def run_size(apps: int, leaves: int, nodes: int, heartbeats: int, seed: int) -> Result:
    rng = random.Random(seed)
    groups = max(1, min(10, leaves // 10))
    core = SchedulerCore(parse_config(queue_yaml(leaves, rng)), clock=lambda: 0.0)
    for n in range(nodes):
        core.add_node(f"node{n}", NODE_SHAPES[n % len(NODE_SHAPES)])
    for a in range(apps):
        leaf = a % leaves
        core.submit_app(f"app{a}", "bench", f"root.g{leaf % groups}.q{leaf}")
        core.update_request(f"app{a}", 1, rng.choice(SHAPES), 1_000_000)
    running: dict[str, list[str]] = {f"node{n}": [] for n in range(nodes)}
    for node_id, held in running.items():  # fill the cluster
        held.extend(a.assignment_id for a in core.on_heartbeat(node_id))
    samples: list[float] = []
    node_ids = list(running)
    timer = time.perf_counter_ns
    for _ in range(heartbeats):
        node_id = rng.choice(node_ids)
        held = running[node_id]
        for _ in range(min(len(held), rng.randint(1, 3))):
            core.container_finished(held.pop(rng.randrange(len(held))))
        t0 = timer()
        got = core.on_heartbeat(node_id)
        elapsed = timer() - t0
        if got:
            samples.append(elapsed / 1000 / len(got))
            held.extend(a.assignment_id for a in got)
    return Result(apps, leaves, len(core.containers), heartbeats, samples)


def main(nodes: int = 10_000, heartbeats: int = 20_000, seed: int = 1,
         sizes: tuple[tuple[int, int], ...] = SIZES) -> list[Result]:
    print(f"yarn-drf core benchmark: {nodes:,} nodes, {heartbeats:,} steady-state heartbeats per size, "
          f"cost per assigned container (heartbeat time / containers it assigned)")
    print(f"{'apps':>7} {'leaves':>7} {'containers':>11} {'samples':>8} {'p50 us':>8} {'p99 us':>8} {'mean us':>8}")
    results = []
    for apps, leaves in sizes:
        r = run_size(apps, leaves, nodes, heartbeats, seed)
        results.append(r)
        print(f"{apps:>7,} {leaves:>7,} {r.containers:>11,} {len(r.per_container_us):>8,} "
              f"{r.pct(50):>8.1f} {r.pct(99):>8.1f} {statistics.fmean(r.per_container_us):>8.1f}", flush=True)
    small, large = results[0], results[-1]
    print(f"ratio largest/smallest: p50 {large.pct(50) / small.pct(50):.2f}, p99 {large.pct(99) / small.pct(99):.2f}")
    return results
