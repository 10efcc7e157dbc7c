"""The 10,000-node driver's schedule calls replayed in the core alone: where a call's cost goes
when its limit leaves most of its nodes for the next calls.

    .venv/bin/python benchmarks/scale/core_calls.py

10,000 nodes of <16 vcores, 16 GiB>, 200 apps on the driver's two queues asking for containers
of <1 vcore, 1 GiB> without end; each call lists the next LISTED nodes (as the shim lists the
nodes that heartbeated since its last call) with a limit of LIMIT assignments, or, "topped up",
only as many as make up BOUND with the nodes the core carries (as the shim lists since issue 30:
NodeOffers). Prints the time a call and an assignment takes, the nodes listed a call and how
many are carried, the two ways alternated in one process.
"""
from __future__ import annotations

import time
from pathlib import Path

from scheduler import SchedulerCore, parse_config

QUEUES = Path(__file__).resolve().parent / "queues.yaml"
TASK = {"memory-mb": 1024, "vcores": 1}


def run(limit: int, listed: int, calls: int, top_up: bool) -> tuple[float, float, float, int]:
    """(ms a call, µs an assignment, nodes listed a call, nodes carried after the last call)."""
    core = SchedulerCore(parse_config(QUEUES.read_text()))
    ids = [f"n{i}" for i in range(10_000)]
    for n in ids:
        core.add_node(n, {"memory-mb": 16384, "vcores": 16})
    for a in range(200):
        assert core.submit_app(f"a{a}", "u", ["root.cpu", "root.mem"][a % 2], now=0).accepted
        core.update_request(f"a{a}", 1, TASK, 10**6, now=0)
    spent, got, sent = 0.0, 0, 0
    for c in range(calls):
        count = max(0, listed - core.carried) if top_up else listed
        nodes = [ids[(sent + i) % len(ids)] for i in range(count)]
        sent += count
        t0 = time.perf_counter()
        got += len(core.on_nodes(nodes, now=c * 0.01, limit=limit))
        spent += time.perf_counter() - t0
    return spent / calls * 1e3, spent / max(got, 1) * 1e6, sent / calls, core.carried


def main() -> None:
    for limit, listed, calls, top_up in [(64, 466, 300, False), (64, 1000, 300, True)] * 3 + [(2000, 1000, 40, False)]:
        ms, us, per_call, carried = run(limit, listed, calls, top_up)
        way = f"topped up to {listed}" if top_up else f"{listed} listed"
        print(f"limit {limit}, {way}: {ms:.2f} ms a call, {us:.1f} µs an assignment, "
              f"{per_call:.0f} nodes listed a call, {carried} nodes carried")


if __name__ == "__main__":
    main()
