"""Figures and the comparison table from the output of SLS runs (bench.json + jobruntime.csv).

Formulas (per sample s, taken every ~0.5 s from the scheduler's own application attempts):
  capacity c_r           the cluster's total of resource r (memory-mb, vcores, gpu-mem)
  used u_{q,r}           what queue q's running containers hold of r
  backlogged             queue q still asks for containers (pending ANY asks > 0)
  saturated              at least one queue is backlogged
  weighted dominant share  d_q = max_r (u_{q,r} / c_r) / w_q   (w_q: the queue's YAML weight)
  share gap              max_q d_q - min_q d_q over the backlogged queues (>= 2 of them)
  Jain's index           (sum_q d_q)^2 / (n * sum_q d_q^2) over the backlogged queues (1 = equal)
  utilisation of r       sum_q u_{q,r} / c_r
Reported over the saturated samples: mean and max of the gap, mean Jain's index, mean utilisation;
containers per second = containers allocated between the first and last saturated sample / time.
Job completion time = SLS's simulated end - start of each job (jobruntime.csv), by queue.
Scheduler times come from SLS's own timers (SLSSchedulerCommons): one NODE_UPDATE event, one
allocate call. The gap above compares each queue with the others as if the cluster were one pool,
so it charges a scheduler for packing (a perfect DRFH allocation of this trace scores about 0.125
on it); DRF violations, shortfall below the node-aware DRFH target and ask-to-allocation times
come from the allocation probe's records (fairness.py).
"""
from __future__ import annotations

import csv
import json
import statistics
from collections.abc import Sequence
from pathlib import Path

import fairness

RESOURCES = ("memory-mb", "vcores", "gpu-mem")


def _pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    k = min(len(values) - 1, max(0, round(p / 100 * (len(values) - 1))))
    return values[k]


def dominant_shares(queues: dict, capacity: dict, weights: dict[str, float]) -> dict[str, float]:
    out = {}
    for q, v in queues.items():
        shares = [v["used"].get(r, 0) / capacity[r] for r in RESOURCES if capacity.get(r)]
        out[q] = max(shares, default=0.0) / weights.get(q, 1.0)
    return out


def jain(xs: list[float]) -> float:
    sq = sum(x * x for x in xs)
    return 1.0 if sq == 0 else sum(xs) ** 2 / (len(xs) * sq)


def backlogged(queues: dict) -> list[str]:
    return [q for q, v in queues.items() if any(v["pending"].get(r, 0) > 0 for r in v["pending"])]


def analyse(run_dir: Path, weights: dict[str, float], nodes: Sequence[Sequence[int]]) -> dict:
    """The figures of one scheduler's run; run_dir is SLS's -output directory, nodes every
    node's capacity vector (in the order of bench.json's cluster resources)."""
    bench = json.loads((run_dir / "bench.json").read_text())
    cap = bench["cluster"]
    samples = bench["samples"]
    sat = [s for s in samples if backlogged(s["queues"])]
    gaps, jains = [], []
    util = {r: [] for r in RESOURCES}
    for s in sat:
        for r in RESOURCES:
            if cap.get(r):
                util[r].append(sum(v["used"].get(r, 0) for v in s["queues"].values()) / cap[r])
        active = backlogged(s["queues"])
        if len(active) >= 2:
            ds = dominant_shares({q: s["queues"][q] for q in active}, cap, weights)
            gaps.append(max(ds.values()) - min(ds.values()))
            jains.append(jain(list(ds.values())))
    rate = float("nan")
    if len(sat) >= 2 and sat[-1]["t_ms"] > sat[0]["t_ms"]:
        rate = ((sat[-1]["containers_allocated"] - sat[0]["containers_allocated"])
                / ((sat[-1]["t_ms"] - sat[0]["t_ms"]) / 1000))
    jct: dict[str, list[float]] = {}
    with open(run_dir / "jobruntime.csv", newline="") as f:
        for row in csv.DictReader(f):
            q = bench["app_queues"].get(row["JobID"])
            if q is not None:
                jct.setdefault(q, []).append(
                    (int(row["simulate_end_time"]) - int(row["simulate_start_time"])) / 1000)
    timers = bench["timers"]
    types = list(cap)
    cap_v = [cap[r] for r in types]
    records = fairness.read_records(run_dir / "probe.jsonl")
    bad, allocs = fairness.violations(records, cap_v, weights)
    waits, unmatched = fairness.ask_to_allocation_ms(records)
    from_start = fairness.start_to_allocation_ms(records)
    shortfall, fill = fairness.shortfalls(sat, nodes, cap_v, types, weights)
    return {
        "scheduler": bench["scheduler"],
        "finished": bench["finished"],
        "wall_s": bench["wall_ms"] / 1000,
        "jobs": sum(len(v) for v in jct.values()),
        "containers_allocated": samples[-1]["containers_allocated"] if samples else 0,
        "saturated_s": (sat[-1]["t_ms"] - sat[0]["t_ms"]) / 1000 if len(sat) >= 2 else 0.0,
        "containers_per_s": rate,
        "utilisation": {r: statistics.fmean(v) if v else float("nan") for r, v in util.items()},
        "gap_mean": statistics.fmean(gaps) if gaps else float("nan"),
        "gap_max": max(gaps, default=float("nan")),
        "jain_mean": statistics.fmean(jains) if jains else float("nan"),
        "jct": {q: {"mean_s": statistics.fmean(v), "p95_s": _pct(v, 95), "n": len(v)}
                for q, v in sorted(jct.items())},
        "drf_violations": bad,
        "probe_containers": allocs,
        "violations_per_1000": 1000 * bad / allocs if allocs else float("nan"),
        "shortfall": shortfall,
        "fill_vs_target": fill,
        "ask_to_alloc_ms": {"p50": _pct(waits, 50), "p99": _pct(waits, 99), "n": len(waits),
                            "unmatched": unmatched},
        "start_to_alloc_ms": {"p50": _pct(from_start, 50), "p99": _pct(from_start, 99)},
        "probe_ms": bench.get("probe", {}).get("probe_ms", float("nan")),
        "scheduling_loop": bench.get("scheduling_loop", {}),
        "node_update": timers.get("NODE_UPDATE", {}),
        "allocate": timers.get("allocate", {}),
    }


COLUMNS = ("fair", "capacity", "yarn-drf")


def _loop(r: dict, part: str, figure: str) -> float:
    """A figure of yarn-drf's scheduling thread (NaN for the others, which have none)."""
    return float(r.get("scheduling_loop", {}).get(part, {}).get(figure, float("nan")))


def _fmt(v: float, digits: int = 2) -> str:
    if v != v:  # NaN
        return "n/a"
    return f"{v:.{digits}f}"


def _ratio(a: float, b: float) -> str:
    if a != a or b != b or b == 0:
        return "n/a"
    return f"{a / b:.2f}x"


def table(results: dict[str, dict], title: str) -> str:
    """One markdown table: a row per figure, a column per scheduler, yarn-drf's ratios last."""
    # the three schedulers first, then yarn-drf's variants (run.py --variant) in their order
    have = [c for c in COLUMNS if c in results] + [c for c in results if c not in COLUMNS]

    def row(name: str, get, digits: int = 2) -> str:
        vals = [get(results[c]) for c in have]
        cells = [_fmt(v, digits) for v in vals]
        ratios = []
        if "yarn-drf" in results:
            d = get(results["yarn-drf"])
            ratios = [_ratio(d, get(results[c])) for c in ("fair", "capacity") if c in results]
        return "| " + " | ".join([name, *cells, *ratios]) + " |"

    ratio_heads = [f"yarn-drf / {c}" for c in ("fair", "capacity") if c in results and "yarn-drf" in results]
    lines = [f"**{title}**", "",
             "| figure | " + " | ".join(have + ratio_heads) + " |",
             "|---|" + "---|" * (len(have) + len(ratio_heads))]
    lines.append(row("NODE_UPDATE p50 (µs)", lambda r: r["node_update"].get("p50_us", float("nan")), 1))
    lines.append(row("NODE_UPDATE p99 (µs)", lambda r: r["node_update"].get("p99_us", float("nan")), 1))
    lines.append(row("allocate p50 (µs)", lambda r: r["allocate"].get("p50_us", float("nan")), 1))
    lines.append(row("allocate p99 (µs)", lambda r: r["allocate"].get("p99_us", float("nan")), 1))
    lines.append(row("containers/s at saturation", lambda r: r["containers_per_s"], 1))
    for res in RESOURCES:
        lines.append(row(f"utilisation {res} (mean, saturated)", lambda r, res=res: r["utilisation"][res]))
    lines.append(row("ask to allocation p50 (ms)", lambda r: r["ask_to_alloc_ms"]["p50"], 1))
    lines.append(row("ask to allocation p99 (ms)", lambda r: r["ask_to_alloc_ms"]["p99"], 1))
    # (absent from results.json files written before it)
    lines.append(row("app start to allocation p50 (ms)",
                     lambda r: r.get("start_to_alloc_ms", {}).get("p50", float("nan")), 1))
    lines.append(row("app start to allocation p99 (ms)",
                     lambda r: r.get("start_to_alloc_ms", {}).get("p99", float("nan")), 1))
    lines.append(row("DRF violations per 1,000 containers", lambda r: r["violations_per_1000"], 1))
    shortfall_queues = sorted({q for c in have for q in results[c]["shortfall"]})
    for q in shortfall_queues:
        lines.append(row(f"shortfall below node-aware DRFH target, {q} (mean)",
                         lambda r, q=q: r["shortfall"].get(q, float("nan")), 3))
    lines.append(row("containers running / in the node-aware DRFH target (mean)",
                     lambda r: r["fill_vs_target"], 3))
    lines.append(row("gap to pooled target (charges packing), mean", lambda r: r["gap_mean"], 3))
    lines.append(row("gap to pooled target (charges packing), max", lambda r: r["gap_max"], 3))
    lines.append(row("Jain's index of weighted dominant shares", lambda r: r["jain_mean"], 3))
    queues = sorted({q for c in have for q in results[c]["jct"]})
    for q in queues:
        lines.append(row(f"job completion {q}, mean (s)",
                         lambda r, q=q: r["jct"].get(q, {}).get("mean_s", float("nan")), 1))
        lines.append(row(f"job completion {q}, p95 (s)",
                         lambda r, q=q: r["jct"].get(q, {}).get("p95_s", float("nan")), 1))
    lines.append(row("jobs finished", lambda r: float(r["jobs"]), 0))
    lines.append(row("containers allocated", lambda r: float(r["containers_allocated"]), 0))
    lines.append(row("NODE_UPDATE events timed", lambda r: float(r["node_update"].get("count", 0)), 0))
    lines.append(row("saturated period (s)", lambda r: r["saturated_s"], 0))
    lines.append(row("run wall time (s)", lambda r: r["wall_s"], 0))
    lines.append(row("SLS attempts (a crashed SLS JVM is rerun)", lambda r: float(r.get("attempts", 1)), 0))
    lines.append(row("probe time on the allocating threads (ms, whole run)", lambda r: r["probe_ms"], 0))
    for part in ("collect", "call", "commit"):
        lines.append(row(f"yarn-drf scheduling thread: {part} p50 (µs)",
                         lambda r, part=part: _loop(r, part, "p50_us"), 1))
        lines.append(row(f"yarn-drf scheduling thread: {part} total (s)",
                         lambda r, part=part: _loop(r, part, "total_ms") / 1000, 1))
    lines.append(row("yarn-drf scheduling thread: calls", lambda r: r.get("scheduling_loop", {}).get("calls", float("nan")), 0))
    lines.append(row("yarn-drf scheduling thread: nodes per call p50",
                     lambda r: r.get("scheduling_loop", {}).get("nodes_per_call_p50", float("nan")), 0))
    return "\n".join(lines) + "\n"
