"""`yarn-drf simulate` and `yarn-drf workload {swim,synthetic}`."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from scheduler.sim.policies import POLICIES, PolicyError
from scheduler.sim.formats import SimInputError


def register(subparsers: Any) -> None:
    sim = subparsers.add_parser(
        "simulate", help="replay a workload on a simulated cluster with the real scheduler core",
        description="Replays a workload (JSON lines) on a simulated cluster (YAML) with the "
                    "production scheduler core on a simulated clock, and reports per-queue shares, "
                    "completion times and utilization.")
    sim.add_argument("--queues", required=True, metavar="Q.yaml", help="queue configuration")
    sim.add_argument("--cluster", required=True, metavar="C.yaml", help="cluster file")
    sim.add_argument("--workload", required=True, metavar="W.jsonl", help="workload, one app a line")
    sim.add_argument("--policy", default="drf", metavar="P",
                     help=f"one of {', '.join(POLICIES)} (default drf)")
    sim.add_argument("--slots-per-node", type=int, metavar="N",
                     help="slots per node for --policy slots")
    sim.add_argument("--until", type=float, metavar="SECONDS",
                     help="stop the clock here and report the state then (default: run to the end)")
    sim.add_argument("--heartbeat-ms", type=float, default=1000.0, metavar="MS",
                     help="node heartbeat interval in simulated ms (default 1000)")
    sim.add_argument("--json", metavar="OUT.json", help="write the full result as JSON ('-' for stdout)")
    sim.add_argument("--plot", metavar="OUT.png", help="plot shares per queue and utilization over time")
    sim.add_argument("--seed", type=int, default=0, help="seed for the nodes' heartbeat phases")
    sim.add_argument("--quiet", action="store_true", help="no summary table and no progress bar")
    sim.set_defaults(func=run_simulate)

    wl = subparsers.add_parser("workload", help="make simulator workloads (SWIM and Alibaba GPU traces, synthetic)")
    wsub = wl.add_subparsers(dest="workload_command", metavar="KIND", required=True)
    swim = wsub.add_parser("swim", help="convert a SWIM Facebook trace (.tsv) to a workload",
                           description="Converts a SWIM trace; see docs/simulator.md for the rules.")
    swim.add_argument("file", metavar="FILE.tsv")
    swim.add_argument("--out", required=True, metavar="W.jsonl")
    swim.add_argument("--queues", default="root.q0,root.q1,root.q2,root.q3", metavar="Q1,Q2,...",
                      help="queues to spread users over (default root.q0..root.q3)")
    swim.add_argument("--users", type=int, default=16, help="number of synthetic users (default 16)")
    swim.add_argument("--queue-by", choices=("user", "class"), default="user",
                      help="user: users spread round-robin over the queues (default); class: "
                           "filter/transform/expand jobs go to the 1st/2nd/3rd queue")
    swim.add_argument("--limit", type=int, help="convert only the first N jobs")
    swim.add_argument("--am", action=argparse.BooleanOptionalAction, default=True,
                      help="give each job an ApplicationMaster container (default yes)")
    swim.set_defaults(func=run_swim)

    ali = wsub.add_parser("alibaba-gpu", help="convert the Alibaba GPU trace (cluster-trace-gpu-v2023) "
                                             "to a cluster file and a workload",
                          description="Converts the trace's node list and pod list; see docs/simulator.md for the rules.")
    ali.add_argument("nodes", metavar="NODES.csv", help="node list, e.g. openb_node_list_all_node.csv")
    ali.add_argument("pods", metavar="PODS.csv", help="pod list, e.g. openb_pod_list_default.csv")
    ali.add_argument("--cluster-out", required=True, metavar="C.yaml")
    ali.add_argument("--out", required=True, metavar="W.jsonl")
    ali.add_argument("--queues-out", metavar="Q.yaml", help="also write a queue file: one leaf per QoS class")
    ali.add_argument("--card-mib", type=int, default=16384, help="memory of every GPU card (default 16384)")
    ali.add_argument("--cards", action=argparse.BooleanOptionalAction, default=True,
                     help="give nodes their cards (gpus:); --no-cards: one gpu-mem total per node")
    ali.add_argument("--time-scale", type=float, default=1.0,
                     help="divide submit times by this (compress arrivals; default 1)")
    ali.set_defaults(func=run_alibaba)

    syn = wsub.add_parser("synthetic", help="generate mixed CPU-, memory- and GPU-memory-heavy apps",
                          description="Generates a seeded synthetic workload; see docs/simulator.md.")
    syn.add_argument("--out", required=True, metavar="W.jsonl")
    syn.add_argument("--apps", type=int, default=100)
    syn.add_argument("--queues", default="root.a,root.b", metavar="Q1,Q2,...")
    syn.add_argument("--mix", default="cpu=1,memory=1,gpu=1", metavar="cpu=W,memory=W,gpu=W",
                     help="relative frequency of each app kind (default equal)")
    syn.add_argument("--arrival-s", type=float, default=10.0, help="mean gap between submits (s)")
    syn.add_argument("--seed", type=int, default=0)
    syn.set_defaults(func=run_synthetic)


def _fail(errors: list[str]) -> int:
    for line in errors:
        print(f"error: {line}", file=sys.stderr)
    return 2


def run_simulate(args: argparse.Namespace) -> int:
    from scheduler.sim.runner import SimulationRequest, simulate

    try:
        request = SimulationRequest.from_files(
            args.queues, args.cluster, args.workload, policy=args.policy,
            slots_per_node=args.slots_per_node, heartbeat_s=args.heartbeat_ms / 1000.0,
            until=args.until, seed=args.seed)
        result, sim = simulate(request, progress=not args.quiet, timeline=bool(args.plot))
    except (SimInputError, PolicyError) as exc:
        return _fail(getattr(exc, "errors", None) or [str(exc)])
    except Exception as exc:  # ConfigError from the core's loader, with its own field paths
        errors = getattr(exc, "errors", None)
        if errors is None:
            raise
        source = getattr(exc, "source", args.queues)
        return _fail([f"{source}: {e}" for e in errors])
    if args.json == "-":
        json.dump(result, sys.stdout, indent=1)
        print()
    elif args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    if args.plot:
        from scheduler.sim.plot import plot_timeline

        plot_timeline(sim, args.plot)
    if not args.quiet and args.json != "-":
        print(summary_table(result))
    return 0


def summary_table(result: dict[str, Any]) -> str:
    """The result as a table; every column as wide as its widest cell, two spaces apart."""
    lines = [f"policy {result['policy']}, end {result['end_time']:.1f} s"
             + (" (STALLED: asks that can never be served)" if result["stalled"] else "")]
    header = ["queue", "running", "dom.share", "target", "pooled", "w.share", "tasks done", "apps done",
              "mean s", "p95 s", "wait p50 s", "wait p99 s"]
    rows = [header]
    for q, s in result["queues"].items():
        c = s["app_completion_s"] or {}
        w = s.get("queueing_delay_s") or {}
        rows.append([q, str(s["running"]), f"{s['dominant_share']:.3f}",
                     *("-" if s[k] is None else f"{s[k]:.3f}" for k in ("target_share", "pooled_target_share")),
                     f"{s['weighted_share']:.3f}", str(s["completed_tasks"]), str(s["completed_apps"]),
                     *(f"{d.get(k, float('nan')):.1f}" for d, k in ((c, "mean"), (c, "p95"), (w, "p50"), (w, "p99")))])
    widths = [max(len(row[j]) for row in rows) for j in range(len(header))]
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) for cell, width in zip(row[1:], widths[1:])]
        lines.append("  ".join(cells).rstrip())
    util = ", ".join(f"{k} {v:.1%}" for k, v in result["utilization"].items())
    lines.append(f"utilization: {util}")
    d = result["scheduler"]
    lines.append(f"scheduler: {d['decisions']} decisions, p50 {d['decision_us']['p50']} us, "
                 f"p99 {d['decision_us']['p99']} us; {result['sim']['events']} events in "
                 f"{result['sim']['wall_s']} s")
    return "\n".join(lines)


def run_swim(args: argparse.Namespace) -> int:
    from scheduler.sim.swim import convert_swim

    queues = [q.strip() for q in args.queues.split(",") if q.strip()]
    try:
        n = convert_swim(args.file, args.out, queues=queues, users=args.users, limit=args.limit,
                         with_am=args.am, queue_by=args.queue_by)
    except SimInputError as exc:
        return _fail(exc.errors)
    print(f"wrote {n} apps to {args.out}")
    return 0


def run_alibaba(args: argparse.Namespace) -> int:
    from scheduler.sim.alibaba import convert

    try:
        done = convert(args.nodes, args.pods, cluster_out=args.cluster_out, workload_out=args.out,
                       queues_out=args.queues_out, card_mib=args.card_mib, cards=args.cards,
                       time_scale=args.time_scale)
    except SimInputError as exc:
        return _fail(exc.errors)
    print(f"wrote {done.nodes} nodes ({done.gpu_nodes} with GPUs) to {args.cluster_out} and {done.pods} pods "
          f"to {args.out} in queues {', '.join(done.queues)}; left out {done.left_out} pods the trace never ran")
    return 0


def run_synthetic(args: argparse.Namespace) -> int:
    from scheduler.sim.synthetic import generate, parse_mix

    queues = [q.strip() for q in args.queues.split(",") if q.strip()]
    try:
        mix = parse_mix(args.mix)
        n = generate(args.out, apps=args.apps, queues=queues, mix=mix, arrival_s=args.arrival_s,
                     seed=args.seed)
    except SimInputError as exc:
        return _fail(exc.errors)
    print(f"wrote {n} apps to {args.out}")
    return 0
