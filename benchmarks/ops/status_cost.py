"""How long status reads hold the service lock (heartbeats wait that long), and the full cost of each.

A synthetic cluster (nodes, a two-level queue tree, apps with pending asks, some containers
running) is built once; then each read is repeated and the median printed:
  lock held   - the part done under the service lock (what a heartbeat may wait for)
  total       - the whole request, JSON or Prometheus text included
The repeated reads see the same state, so after the first their targets reuse the replay; the
last two lines time the targets alone with the replay reused and computed afresh.

Run: .venv/bin/python benchmarks/ops/status_cost.py [--groups 20 --leaves 25 --apps 10 --nodes 2000]
"""
from __future__ import annotations

import argparse
import random
import statistics
import threading
import time

from scheduler import SchedulerCore, parse_config
from scheduler import targets as targets_module
from scheduler.targets import TargetInput
from yarn_bridge.metrics import Metrics
from yarn_bridge.status import StatusServer


class TimedLock:
    """A lock that records how long each holder kept it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.held: list[float] = []
        self._since = 0.0

    def __enter__(self):
        self._lock.acquire()
        self._since = time.perf_counter()
        return self

    def __exit__(self, *exc) -> None:
        self.held.append(time.perf_counter() - self._since)
        self._lock.release()


def build(groups: int, leaves: int, apps: int, nodes: int, seed: int) -> SchedulerCore:
    rnd = random.Random(seed)
    tree = "\n".join(
        f"      g{i}:\n        weight: {rnd.choice([1, 2, 3])}\n        children:\n"
        + "\n".join(f"          l{j}: {{weight: {rnd.choice([1, 2])}}}" for j in range(leaves))
        for i in range(groups))
    core = SchedulerCore(parse_config(f"resources: [vcores, memory-mb, gpu-mem]\nqueues:\n  root:\n"
                                      f"    children:\n{tree}\n"))
    for n in range(nodes):
        core.add_node(f"n{n}", {"vcores": 32, "memory-mb": 131072, "gpu-mem": 16000 if n % 4 == 0 else 0})
    k = 0
    for i in range(groups):
        for j in range(leaves):
            for _ in range(apps):
                k += 1
                core.submit_app(f"app{k}", "u", f"root.g{i}.l{j}")
                core.update_request(f"app{k}", 1, {"vcores": rnd.randint(1, 4),
                                                   "memory-mb": rnd.randint(1, 16) * 1024,
                                                   "gpu-mem": rnd.choice([0, 0, 0, 2000])}, rnd.randint(1, 100))
    for node_id in list(core.nodes)[: nodes // 4]:
        core.on_heartbeat(node_id)
    return core


def measure(name: str, lock: TimedLock, fn, repeats: int) -> None:
    lock.held.clear()
    totals = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        totals.append(time.perf_counter() - start)
    print(f"{name:<28} lock held {statistics.median(lock.held) * 1000:8.2f} ms   "
          f"total {statistics.median(totals) * 1000:8.2f} ms")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--groups", type=int, default=20)
    p.add_argument("--leaves", type=int, default=25)
    p.add_argument("--apps", type=int, default=10, help="apps per leaf queue")
    p.add_argument("--nodes", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    core = build(args.groups, args.leaves, args.apps, args.nodes, args.seed)
    lock = TimedLock()
    metrics = Metrics(lambda: core, lock)
    server = StatusServer(lambda: core, lock, port=0, metrics=metrics)  # documents only; no socket use
    server.httpd.server_close()
    print(f"{args.groups * args.leaves} leaf queues, {len(core.apps)} apps, {len(core.nodes)} nodes, "
          f"{len(core.containers)} containers")
    measure("GET /v1/queues", lock, server.queues, args.repeats)
    measure("GET /metrics", lock, metrics.exposition, args.repeats)
    measure("GET /v1/nodes", lock, server.nodes, args.repeats)
    measure("GET /v1/apps/{id}", lock, lambda: server.app("app1"), args.repeats)
    measure("GET /v1/health", lock, server.health, args.repeats)
    for name, fresh in (("targets, replay reused", False), ("targets, replay computed", True)):
        if fresh:
            targets_module._last = None  # the replay result kept from the reads above
        start = time.perf_counter()
        TargetInput(core).compute()
        print(f"{name:<28} {(time.perf_counter() - start) * 1000:8.2f} ms")


if __name__ == "__main__":
    main()
