"""The cost of spreading AM containers (one per node per offer, unless no other node has room).

Two schedule calls through `SchedulerCore.on_nodes`, each timed alone (wall clock, this process):
- spread: N empty nodes offered at once while 2N apps wait for their AM;
- scan: 10,000 nodes, all full but the one offered, while 100 apps wait for their AM: the search
  for another node with room scans the whole cluster once in the offer.
Printed with the assignments each made, against the shim's schedule-call timeout
(`yarn-drf.bridge.timeout-ms`, 250 ms). Benchmarks print, tests never assert times.

Run: .venv/bin/python benchmarks/core/am_spread.py [--nodes 1000] [--cluster 10000]
     (YARN_DRF_PURE=1 for the pure-Python decision path)
"""
from __future__ import annotations

import argparse
import time

from scheduler import SchedulerCore, parse_config

QUEUES = "queues:\n  root:\n    children:\n      a: {max-am-share: 1.0}\n"
NODE = {"memory-mb": 16384, "vcores": 16}
AM = {"memory-mb": 1024, "vcores": 1}


def _core(nodes: int) -> SchedulerCore:
    core = SchedulerCore(parse_config(QUEUES))
    for i in range(nodes):
        core.add_node(f"n{i}", NODE)
    return core


def _ask_ams(core: SchedulerCore, n: int) -> None:
    for i in range(n):
        core.submit_app(f"am{i}", "u", "root.a")
        core.update_request(f"am{i}", 0, AM, 1, am=True)


def _timed(core: SchedulerCore, nodes: list[str]) -> tuple[int, float]:
    start = time.perf_counter()
    got = core.on_nodes(nodes)
    return len(got), time.perf_counter() - start


def spread(nodes: int) -> tuple[int, float]:
    core = _core(nodes)
    _ask_ams(core, 2 * nodes)
    return _timed(core, [f"n{i}" for i in range(nodes)])


def scan(cluster: int) -> tuple[int, float]:
    core = _core(cluster)
    core.submit_app("fill", "u", "root.a")
    core.update_request("fill", 1, NODE, cluster - 1)
    core.on_nodes([f"n{i}" for i in range(cluster - 1)])
    _ask_ams(core, 100)
    return _timed(core, [f"n{cluster - 1}"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--cluster", type=int, default=10000)
    args = ap.parse_args()
    n, s = spread(args.nodes)
    print(f"spread: {args.nodes} empty nodes, {2 * args.nodes} AMs waiting: {n} placed in {s * 1000:.1f} ms")
    n, s = scan(args.cluster)
    print(f"scan: {args.cluster} nodes, one with room, 100 AMs waiting: {n} placed in {s * 1000:.1f} ms")


if __name__ == "__main__":
    main()
