"""Runs the DRF-paper and HDRF-paper scenarios of conf/scenarios and prints Markdown tables.

    .venv/bin/python benchmarks/sim/paper_scenarios.py [--seed N]

Same code path as `yarn-drf simulate` (scheduler.sim.runner), ten simulated minutes each.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from scheduler.sim.runner import SimulationRequest, simulate

SCENARIOS = Path(__file__).resolve().parents[2] / "conf" / "scenarios"
MINUTES_10 = 600.0


def _run(name: str, policy: str, seed: int, slots: int | None = None) -> dict:
    d = SCENARIOS / name
    request = SimulationRequest.from_files(str(d / "queues.yaml"), str(d / "cluster.yaml"),
                                           str(d / "workload.jsonl"), policy=policy, until=MINUTES_10,
                                           seed=seed, slots_per_node=slots)
    result, _ = simulate(request)
    return result


def _group(queue: str) -> str:
    return re.sub(r"\d+$", "", queue.rsplit(".", 1)[-1])


def drf_vs_slots(seed: int) -> None:
    print("#### DRF vs slot-based fair sharing (conf/scenarios/drf-vs-slots, 10 simulated minutes)\n")
    print("| policy | small jobs done | large jobs done | small mean response s | large mean response s "
          "| CPU util | mem util |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    runs = [("drf", None)] + [("slots", s) for s in (3, 4, 5, 6)]
    for policy, slots in runs:
        r = _run("drf-vs-slots", policy, seed, slots)
        done: dict[str, list[float]] = {"small": [], "large": []}
        for app in r["apps"]:
            if app["finish"] is not None:
                done[_group(app["queue"])].append(app["finish"] - app["submit"])
        label = policy if slots is None else f"slots ({slots}/node)"
        mean = {g: (sum(v) / len(v) if v else float("nan")) for g, v in done.items()}
        print(f"| {label} | {len(done['small'])} | {len(done['large'])} | {mean['small']:.1f} | "
              f"{mean['large']:.1f} | {r['utilization']['vcores']:.1%} | {r['utilization']['memory-mb']:.1%} |")
    print()


def hdrf(seed: int) -> None:
    print("#### HDRF setup: CPU and GPU tasks (conf/scenarios/hdrf-gpu, 10 simulated minutes)\n")
    print("| policy | small fw CPU | small fw GPU | large fw CPU | large fw GPU | CPU tasks | GPU tasks "
          "| total | GPU-mem util |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for policy in ("fifo", "drf-no-gpu", "drf"):
        r = _run("hdrf-gpu", policy, seed)
        counts: dict[tuple[str, str], int] = {}
        for app in r["apps"]:
            if app["finish"] is not None:
                framework, kind = app["id"].split("-")[:2]
                counts[framework, kind] = counts.get((framework, kind), 0) + 1
        cpu = counts.get(("small", "cpu"), 0) + counts.get(("large", "cpu"), 0)
        gpu = counts.get(("small", "gpu"), 0) + counts.get(("large", "gpu"), 0)
        print(f"| {policy} | {counts.get(('small', 'cpu'), 0)} | {counts.get(('small', 'gpu'), 0)} | "
              f"{counts.get(('large', 'cpu'), 0)} | {counts.get(('large', 'gpu'), 0)} | {cpu} | {gpu} | "
              f"{cpu + gpu} | {r['utilization']['gpu-mem']:.1%} |")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="heartbeat phase seed (default 0)")
    args = parser.parse_args(argv)
    drf_vs_slots(args.seed)
    hdrf(args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
