"""Fairness of the schedule call's node choices (scheduler/multinode.py) against node-by-node
heartbeats, on the SLS benchmark's queues and task shapes.

    .venv/bin/python benchmarks/core/node_choice_fairness.py [--nodes 200] [--steps 300] [--seeds 1,2,3]

Queues cpu (weight 1, tasks <4 vcores, 1 GB>), mem (weight 1, <1 vcore, 6 GB>) and gpu (weight 2,
<1 vcore, 2 GB, 6 GB gpu-mem>), each with more work than the cluster holds; N nodes of <16 vcores,
16 GB, 16 GB gpu-mem>. Each step ends a random 5 % of the running containers, then decides: the
baseline heartbeats every node once in a random order (`on_heartbeat`, what the RM did before
decisions left the heartbeat), the others make one `on_nodes` call over all nodes with that node
choice. Printed per choice, over the steps after the first 20 (the cluster is full by then):
the mean gap between the largest and the smallest weighted dominant share (every queue is
backlogged throughout), each queue's mean weighted dominant share, and containers placed per step.
"""
from __future__ import annotations

import argparse
import random

from scheduler import SchedulerCore, parse_config
from scheduler.multinode import NODE_CHOICES

QUEUES = """
reservation: {starvation-timeout-s: null}
queues: {root: {children: {cpu: {weight: 1}, mem: {weight: 1}, gpu: {weight: 2}}}}
"""
TYPES = ("vcores", "memory-mb", "gpu-mem")
NODE = (16, 16384, 16384)
TASKS = {"cpu": (4, 1024, 0), "mem": (1, 6144, 0), "gpu": (1, 2048, 6144)}
WEIGHTS = {"cpu": 1, "mem": 1, "gpu": 2}
WARM_UP = 20


def run(choice: str, nodes: int, steps: int, seed: int) -> tuple[float, dict[str, float], float]:
    """(mean gap, mean weighted dominant share per queue, containers per step) of one run."""
    rnd = random.Random(seed)
    core = SchedulerCore(parse_config(QUEUES), list(TYPES),
                         node_choice="each-node" if choice == "heartbeats" else choice)
    for i in range(nodes):
        core.add_node(f"n{i}", dict(zip(TYPES, NODE)))
    for queue, shape in TASKS.items():
        core.submit_app(queue, "u", f"root.{queue}")
        core.update_request(queue, 1, dict(zip(TYPES, shape)), 10 ** 6)
    node_ids = list(core.nodes)
    capacity = tuple(c * nodes for c in NODE)
    running: list[str] = []
    gaps, placed = [], 0
    shares = {q: 0.0 for q in TASKS}
    for t in range(steps):
        rnd.shuffle(running)
        ended, running = running[:len(running) // 20], running[len(running) // 20:]
        for cid in ended:
            core.container_finished(cid)
        if choice == "heartbeats":
            rnd.shuffle(node_ids)
            got = [a for node_id in node_ids for a in core.on_heartbeat(node_id, now=t)]
        else:
            got = core.on_nodes(node_ids, now=t)
        running += [a.assignment_id for a in got]
        if t < WARM_UP:
            continue
        placed += len(got)
        d = {q: max(u / c for u, c in zip(core.queues[f"root.{q}"].usage, capacity)) / WEIGHTS[q] for q in TASKS}
        gaps.append(max(d.values()) - min(d.values()))
        for q in TASKS:
            shares[q] += d[q]
    n = steps - WARM_UP
    return sum(gaps) / n, {q: s / n for q, s in shares.items()}, placed / n


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=200)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--seeds", default="1,2,3")
    args = p.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    print(f"{args.nodes} nodes, {args.steps} steps, seeds {seeds}; weighted dominant shares after step {WARM_UP}")
    print(f"{'decision':<12} {'gap mean':>9} {'vs heartbeats':>14} {'cpu':>6} {'mem':>6} {'gpu':>6} {'placed/step':>12}")
    base = None
    for choice in ("heartbeats", *NODE_CHOICES):
        runs = [run(choice, args.nodes, args.steps, seed) for seed in seeds]
        gap = sum(r[0] for r in runs) / len(runs)
        share = {q: sum(r[1][q] for r in runs) / len(runs) for q in TASKS}
        per_step = sum(r[2] for r in runs) / len(runs)
        base = base or gap
        print(f"{choice:<12} {gap:>9.3f} {gap / base:>13.2f}x {share['cpu']:>6.3f} {share['mem']:>6.3f} "
              f"{share['gpu']:>6.3f} {per_step:>12.1f}")


if __name__ == "__main__":
    main()
