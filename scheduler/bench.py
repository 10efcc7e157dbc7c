"""`yarn-drf bench core`: the decision cost per assigned container at cluster scale.

For each size it builds 10,000 heterogeneous nodes and N apps spread over the leaves of a
three-level queue tree (root -> teams -> groups -> leaves, weights 1-3 at every level, so every
decision goes through hierarchical DRF), fills the cluster, then measures steady state: a few
containers finish on a random node and that node heartbeats, as in a busy YARN cluster. Only
on_heartbeat is timed; cost per container = heartbeat time / containers it assigned.
"""
from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass

from scheduler.config import parse_config
from scheduler.core import SchedulerCore

# (apps, (teams, groups per team, leaves per group))
SIZES = ((100, (2, 2, 3)), (1_000, (4, 5, 5)), (10_000, (10, 10, 10)))
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
    tree: tuple[int, int, int]
    containers: int
    heartbeats: int
    per_container_us: list[float]

    def pct(self, p: float) -> float:
        data = sorted(self.per_container_us)
        return data[min(len(data) - 1, int(p / 100 * len(data)))]


def queue_yaml(tree: tuple[int, int, int], rng: random.Random) -> tuple[str, list[str]]:
    """The queue file of a three-level tree, and its leaves' paths."""
    teams, groups, leaves = tree
    lines = ["resources: [memory-mb, vcores, gpu-mem]", "queues:", "  root:", "    children:"]
    paths = []
    for t in range(teams):
        lines += [f"      t{t}:", f"        weight: {rng.choice((1, 2, 3))}", "        children:"]
        for g in range(groups):
            lines += [f"          g{g}:", f"            weight: {rng.choice((1, 2, 3))}", "            children:"]
            for leaf in range(leaves):
                lines.append(f"              q{leaf}: {{weight: {rng.choice((1, 2, 3))}}}")
                paths.append(f"root.t{t}.g{g}.q{leaf}")
    return "\n".join(lines) + "\n", paths


def run_size(apps: int, tree: tuple[int, int, int], nodes: int, heartbeats: int, seed: int) -> Result:
    rng = random.Random(seed)
    text, leaves = queue_yaml(tree, rng)
    core = SchedulerCore(parse_config(text), clock=lambda: 0.0)
    for n in range(nodes):
        core.add_node(f"node{n}", NODE_SHAPES[n % len(NODE_SHAPES)])
    for a in range(apps):
        core.submit_app(f"app{a}", "bench", leaves[a % len(leaves)])
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
    return Result(apps, tree, len(core.containers), heartbeats, samples)


def main(nodes: int = 10_000, heartbeats: int = 20_000, seed: int = 1,
         sizes: tuple[tuple[int, tuple[int, int, int]], ...] = SIZES) -> list[Result]:
    print(f"yarn-drf core benchmark: {nodes:,} nodes, {heartbeats:,} steady-state heartbeats per size, "
          f"three-level queue trees (teams x groups x leaves), cost per assigned container (heartbeat time "
          f"/ containers it assigned)")
    print(f"{'apps':>7} {'tree':>10} {'leaves':>7} {'containers':>11} {'samples':>8} {'p50 us':>8} {'p99 us':>8} "
          f"{'mean us':>8}")
    results = []
    for apps, tree in sizes:
        r = run_size(apps, tree, nodes, heartbeats, seed)
        results.append(r)
        shape = "x".join(map(str, tree))
        print(f"{apps:>7,} {shape:>10} {tree[0] * tree[1] * tree[2]:>7,} {r.containers:>11,} "
              f"{len(r.per_container_us):>8,} {r.pct(50):>8.1f} {r.pct(99):>8.1f} "
              f"{statistics.fmean(r.per_container_us):>8.1f}", flush=True)
    small, large = results[0], results[-1]
    print(f"ratio largest/smallest: p50 {large.pct(50) / small.pct(50):.2f}, p99 {large.pct(99) / small.pct(99):.2f}")
    return results
