"""Replays a SWIM trace on conf/scenarios/swim-fb2010 (400 nodes of <16 cores, 32 GB>).

    .venv/bin/python benchmarks/sim/swim_fb2010.py ../shared/data/swim/FB-2010_samples_24_times_1hr_0.tsv \
        [--policies drf,slots,fair-memory] [--slots-per-node 16] [--limit N]

Converts the trace with `yarn-drf workload swim` rules, runs each policy through the same code
path as `yarn-drf simulate`, and prints (1) job completion time by job size per policy and
(2) the speed of each run: wall time, events per second, scheduler decision p50/p99.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from scheduler.sim.runner import SimulationRequest, simulate
from scheduler.sim.stats import summary
from scheduler.sim.swim import convert_swim

SCENARIO = Path(__file__).resolve().parents[2] / "conf" / "scenarios" / "swim-fb2010"
QUEUES = ["root.q0", "root.q1", "root.q2", "root.q3"]
BINS = [(1, 10), (11, 50), (51, 100), (101, 500), (501, 1000), (1001, None)]


def _bin(tasks: int) -> str:
    for lo, hi in BINS:
        if hi is None or tasks <= hi:
            return f"{lo}-{hi}" if hi else f">{lo - 1}"
    raise AssertionError(tasks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", help="a SWIM .tsv file")
    parser.add_argument("--policies", default="drf,slots,fair-memory")
    parser.add_argument("--slots-per-node", type=int, default=16)
    parser.add_argument("--limit", type=int, help="only the first N jobs")
    parser.add_argument("--queue-by", choices=("user", "class"), default="user",
                        help="how jobs map to the four queues (see `yarn-drf workload swim`)")
    parser.add_argument("--json-dir", help="also keep each run's JSON result here")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        workload = Path(tmp) / "trace.jsonl"
        n = convert_swim(args.trace, workload, queues=QUEUES, limit=args.limit, queue_by=args.queue_by)
        sizes = {}
        for line in workload.read_text().splitlines():
            job = json.loads(line)
            sizes[job["id"]] = sum(s["tasks"] for s in job["stages"])
        results = {}
        for policy in args.policies.split(","):
            request = SimulationRequest.from_files(str(SCENARIO / "queues.yaml"), str(SCENARIO / "cluster.yaml"),
                                                   str(workload), policy=policy,
                                                   slots_per_node=args.slots_per_node)
            results[policy], _ = simulate(request, progress=True)
            if args.json_dir:
                Path(args.json_dir, f"swim-{args.queue_by}-{policy}.json").write_text(
                    json.dumps(results[policy]))

    print(f"### {Path(args.trace).name}: {n} jobs on 400 nodes of <16 cores, 32 GB>, "
          f"queues by {args.queue_by}\n")
    print("Job completion time (finish - submit, s) by job size (map + reduce tasks): mean / p50 / p95\n")
    header = "| job size | jobs | " + " | ".join(results) + " |"
    print(header)
    print("|---|---:|" + "---:|" * len(results))
    labels = [_bin(lo) for lo, _ in BINS]
    for label in labels:
        row, count = [], 0
        for policy, r in results.items():
            times = [a["finish"] - a["submit"] for a in r["apps"]
                     if a["finish"] is not None and _bin(sizes[a["id"]]) == label]
            count = max(count, len(times))
            s = summary(times)
            row.append("-" if s is None else f"{s['mean']:.0f} / {s['p50']:.0f} / {s['p95']:.0f}")
        print(f"| {label} | {count} | " + " | ".join(row) + " |")
    print()
    print("Job completion time by queue (mean / p50 / p95 s):\n")
    print("| queue | jobs | " + " | ".join(results) + " |")
    print("|---|---:|" + "---:|" * len(results))
    for queue in QUEUES:
        stats = [r["queues"].get(queue, {}) for r in results.values()]
        jobs = max((s.get("completed_apps", 0) for s in stats), default=0)
        cells = ["-" if not s.get("app_completion_s") else
                 "{mean:.0f} / {p50:.0f} / {p95:.0f}".format(**s["app_completion_s"]) for s in stats]
        print(f"| {queue} | {jobs} | " + " | ".join(cells) + " |")
    print()
    print("| policy | end (sim s) | CPU util | mem util | wall s | events | events/s | decisions "
          "| decision p50 us | decision p99 us |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for policy, r in results.items():
        s, d = r["sim"], r["scheduler"]
        print(f"| {policy} | {r['end_time']:.0f} | {r['utilization']['vcores']:.1%} | "
              f"{r['utilization']['memory-mb']:.1%} | {s['wall_s']:.1f} | {s['events']} | {s['events_per_s']:.0f} | "
              f"{d['decisions']} | {d['decision_us']['p50']} | {d['decision_us']['p99']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
