"""What a preemption round costs (scheduler/preemption.py), against a heartbeat of the same core.

    .venv/bin/python benchmarks/core/preemption_round.py [--nodes 100,1000]

Per size: N nodes of <16 cores, 64 GB>, queue a holding every core with one-core tasks (16 per
node) and asking for more, queue b (equal weight) asking for N x 8 tasks. Measured: the round
that finds b starved and marks its first victims (10 % of the cluster), the rounds after it (b is
still below its target: each marks the next 10 %, on top of the outstanding marks), and, as the
baseline, the mean heartbeat of a full node on the same core (`on_heartbeat`: nothing fits, the
common case on a full cluster). Rounds run on a timer (once a second or so) under the service
lock; heartbeats run per node per second.
"""
from __future__ import annotations

import argparse
import time

from scheduler import SchedulerCore, parse_config

QUEUES = """
preemption: {enabled: true, fair-share-timeout-s: 1, grace-s: 15, max-per-round: "10%"}
reservation: {starvation-timeout-s: null}
queues: {root: {children: {a: {}, b: {}}}}
"""
TASK = {"vcores": 1, "memory-mb": 2048}


def build(nodes: int) -> SchedulerCore:
    clock = [0.0]
    core = SchedulerCore(parse_config(QUEUES), ["vcores", "memory-mb"], clock=lambda: clock[0])
    for i in range(nodes):
        core.add_node(f"n{i}", {"vcores": 16, "memory-mb": 65536})
    core.submit_app("A", "alice", "root.a", now=0.0)
    core.update_request("A", 1, TASK, nodes * 32, now=0.0)
    for node_id in list(core.nodes):
        core.on_heartbeat(node_id, now=0.0)
    core.submit_app("B", "bob", "root.b", now=1.0)
    core.update_request("B", 1, TASK, nodes * 8, now=1.0)
    return core


def timed(fn, repeat: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", default="100,1000")
    args = parser.parse_args()
    print("| nodes | containers | heartbeat (full node) ms | first round ms (marked) | next round ms "
          "| first round / heartbeat |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in (int(x) for x in args.nodes.split(",")):
        core = build(n)
        core.preemption_round(1.0)  # b is measured: its clock starts
        ids = list(core.nodes)
        beat = timed(lambda: [core.on_heartbeat(i, now=2.0) for i in ids]) / len(ids)
        marked: list = []
        first = timed(lambda: marked.append(core.preemption_round(2.5)))
        after = timed(lambda: core.preemption_round(3.0), repeat=3)
        print(f"| {n:,} | {len(core.containers):,} | {beat * 1e3:.3f} | {first * 1e3:.1f} ({len(marked[0].mark)}) "
              f"| {after * 1e3:.1f} | {first / beat:,.0f}x |")


if __name__ == "__main__":
    main()
