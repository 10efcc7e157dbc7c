"""The 10,000-node driver's schedule calls replayed in the core alone: where a call's cost goes
when its limit leaves most of its nodes for the next calls.

    .venv/bin/python benchmarks/scale/core_calls.py

10,000 nodes of <16 vcores, 16 GiB>, 200 apps on the driver's two queues asking for containers
of <1 vcore, 1 GiB> without end; each call lists the next LISTED nodes (as the shim lists the
nodes that heartbeated since its last call) with a limit of LIMIT assignments. Prints the time a
call and an assignment takes and how many nodes are carried. "checked" runs each call with the
re-check of every carried node that calls made before 2026-11-28 (issue 30), alternated with the
current core in the same process.
"""
from __future__ import annotations

import time
from pathlib import Path

from scheduler import SchedulerCore, parse_config

QUEUES = Path(__file__).resolve().parent / "queues.yaml"
TASK = {"memory-mb": 1024, "vcores": 1}


def run(limit: int, listed: int, calls: int, checked: bool) -> tuple[float, float, int]:
    """(ms a call, µs an assignment, nodes carried after the last call)."""
    core = SchedulerCore(parse_config(QUEUES.read_text()))
    ids = [f"n{i}" for i in range(10_000)]
    for n in ids:
        core.add_node(n, {"memory-mb": 16384, "vcores": 16})
    for a in range(200):
        assert core.submit_app(f"a{a}", "u", ["root.cpu", "root.mem"][a % 2], now=0).accepted
        core.update_request(f"a{a}", 1, TASK, 10**6, now=0)
    spent, got = 0.0, 0
    for c in range(calls):
        nodes = [ids[(c * listed + i) % len(ids)] for i in range(listed)]
        if checked:
            core._carried_checked = -1  # as if a node had left: every carried node checked again
        t0 = time.perf_counter()
        got += len(core.on_nodes(nodes, now=c * 0.01, limit=limit))
        spent += time.perf_counter() - t0
    return spent / calls * 1e3, spent / max(got, 1) * 1e6, len(core._carried)


def main() -> None:
    for limit, listed, calls, checked in [(64, 466, 300, True), (64, 466, 300, False)] * 3 + [(2000, 1000, 40, False)]:
        ms, us, carried = run(limit, listed, calls, checked)
        print(f"limit {limit}, {listed} nodes listed{', carried checked' if checked else ''}: "
              f"{ms:.2f} ms a call, {us:.1f} µs an assignment, {carried} nodes carried")


if __name__ == "__main__":
    main()
