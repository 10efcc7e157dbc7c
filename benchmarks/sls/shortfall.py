"""When a run's queues fell short of the node-aware DRFH target, and whether the scheduler or the
demand left the room idle, from bench.json's samples and the allocation probe's records.

    .venv/bin/python benchmarks/sls/shortfall.py build/sls/5000/yarn-drf/sls --nodes build/sls/5000/nodes.json

Per saturated sample (evenly spaced, --samples): the cluster's utilisation, the containers
running against those of the target (fairness.sample_targets), and per queue the target's and the
held dominant share, the AMs it runs and the containers it asks for. A queue short of its target
while it asks for containers that fit (the target placed them) waits on the scheduler; one whose
target is what it holds does not. For yarn-drf, per --bucket-s of the run: the assignments its
calls made, those commits applied (the rest were given back, e.g. behind an AM asked for while the
call was out) and the containers allocated and ended: where the loop's work went.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import confgen
import fairness
import report
import violations
import workload

HERE = Path(__file__).resolve().parent


class Bucket(NamedTuple):
    """The scheduling loop's calls that ended in one stretch of the run, and the containers."""
    start_s: float
    calls: int
    assignments: int
    applied: int
    allocated: int
    ended: int


def call_buckets(records: Iterable[dict], bucket_s: float) -> list[Bucket]:
    """Calls (by when their commit ended), allocations and ends, per bucket_s of the run."""
    counts: dict[int, list[int]] = {}
    for r in records:
        b = counts.setdefault(int(r["t"] / 1000 // bucket_s), [0] * 5)
        if r["ev"] == "call":
            b[0] += 1
            b[1] += r["assignments"]
            b[2] += r["applied"]
        elif r["ev"] == "alloc":
            b[3] += 1
        elif r["ev"] == "end":
            b[4] += 1
    return [Bucket(k * bucket_s, *counts[k]) for k in sorted(counts)]


def timeline(samples: Sequence[dict], nodes: Sequence[Sequence[int]], capacity: Mapping[str, float],
             weights: Mapping[str, float], am_shapes: set[tuple], max_samples: int) -> list[str]:
    """One line per sample (module doc)."""
    types = list(capacity)
    cap = [capacity[r] for r in types]
    picked = fairness.evenly_spaced([s for s in samples if report.backlogged(s["queues"])],
                                    max_samples)
    lines = []
    for s, p in zip(picked, fairness.sample_targets(picked, nodes, cap, types, weights)):
        util = "/".join(f"{sum(v['used'].get(r, 0) for v in s['queues'].values()) / capacity[r]:.2f}"
                        for r in types)
        parts = [f"t={p.t_ms / 1000:6.1f} s  utilisation {util}  running {p.running} of {p.placed}"]
        for q, v in sorted(s["queues"].items()):
            ams = sum(n for *shape, n in v.get("running_shapes", []) if tuple(shape) in am_shapes)
            asked = sum(n for *_, n in v.get("pending_shapes", []))
            parts.append(f"{q} {p.held[q]:.3f} of {p.target[q]:.3f} ({ams} AMs, {asked} asked)")
        lines.append("  ".join(parts))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path, help="an SLS output directory (bench.json, probe.jsonl)")
    ap.add_argument("--nodes", type=Path, required=True, help="the run's nodes.json")
    ap.add_argument("--queues", type=Path, default=HERE / "queues.yaml")
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--bucket-s", type=float, default=3.0)
    args = ap.parse_args(argv)
    bench = json.loads((args.run / "bench.json").read_text())
    records = fairness.read_records(args.run / "probe.jsonl")
    print("\n".join(timeline(bench["samples"], workload.node_vectors(args.nodes), bench["cluster"],
                             confgen.weights(args.queues), violations.am_only_shapes(records),
                             args.samples)))
    for b in call_buckets(records, args.bucket_s):
        calls = (f"calls {b.calls}, assignments {b.assignments}, applied {b.applied}  "
                 if b.calls else "")
        print(f"{b.start_s:6.0f} s  {calls}allocated {b.allocated}, ended {b.ended}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
