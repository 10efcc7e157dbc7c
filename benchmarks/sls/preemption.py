"""The late-queue SLS scenario: preemption on for FairScheduler, CapacityScheduler and yarn-drf.

    .venv/bin/python benchmarks/sls/preemption.py --schedulers yarn-drf     # one at a time, then
    .venv/bin/python benchmarks/sls/preemption.py --reuse                   # the table of all three

The early queue's long tasks fill the cluster; the late queue's job arrives at --late-start-s
asking for more than its share. Each scheduler preempts as `preemption-queues.yaml` says (confgen
translates it for Fair and Capacity). Figures, from the allocation probe's records (probe.jsonl):
time from the late queue's first ask until it holds its fair share (within one container),
containers preempted (ended with exit status PREEMPTED), and the work they lost (container-seconds
each ran before its kill), counting with a preempted AM the containers of its app that ended
ABORTED after it (YARN ends an attempt's containers with its AM). SLS's simulated AMs ignore the PreemptionMessage: in all three runs
the room is freed by the RM-side kill after the grace time.
Output: <out>/<scheduler>/{conf,sls,run.log}, <out>/results.json, <out>/table.md.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import confgen
import fairness
import run
import workload

HERE = Path(__file__).resolve().parent
PREEMPTED = -102  # YARN's ContainerExitStatus.PREEMPTED
ABORTED = -100  # YARN's ContainerExitStatus.ABORTED: how a killed AM's other containers end
AM_SUFFIX = "_000001"  # an attempt's first container is its AM


@dataclass(frozen=True)
class LateQueueFigures:
    first_ask_s: float | None      # the late queue's first ask, seconds after the run started
    time_to_share_s: float | None  # from that ask until it held its share; None: never in the run
    peak_share: float              # the most of the cluster (dominant share) it held
    preempted: int                 # containers ended with exit status PREEMPTED, any queue
    aborted_with_am: int           # containers ended ABORTED after their app's AM was preempted
    work_lost_s: float             # all of their run times before the end, container-seconds


def late_queue_figures(records: Iterable[dict], app_queues: Mapping[str, str], queue: str,
                       capacity: Sequence[float], share: float, tolerance: float) -> LateQueueFigures:
    """Replays the probe's records in time order. The queue holds its share once its dominant
    share of the cluster (containers allocated minus ended) is at least share - tolerance."""
    first_ask = reached = None
    held = [0.0] * len(capacity)
    started: dict[str, float] = {}
    app_of: dict[str, str] = {}
    am_preempted: set[str] = set()  # apps whose AM was preempted
    mine: dict[str, Sequence[float]] = {}
    peak = 0.0
    preempted = aborted = 0
    lost_ms = 0.0
    for rec in sorted(records, key=lambda r: r["t"]):
        ev = rec["ev"]
        if ev == "ask" and first_ask is None and rec["n"] > 0 and app_queues.get(rec["app"]) == queue:
            first_ask = rec["t"]
        elif ev == "alloc":
            started[rec["c"]] = rec["t"]
            app_of[rec["c"]] = rec.get("app", "")
            if rec["q"] == queue:
                mine[rec["c"]] = rec["res"]
                held = [h + r for h, r in zip(held, rec["res"])]
                d = fairness.dominant(held, capacity)
                peak = max(peak, d)
                if reached is None and first_ask is not None and d >= share - tolerance:
                    reached = rec["t"]
        elif ev == "end":
            c = rec["c"]
            if rec["exit"] == PREEMPTED and c in started:
                preempted += 1
                lost_ms += rec["t"] - started[c]
                if c.endswith(AM_SUFFIX):
                    am_preempted.add(app_of[c])
            elif rec["exit"] == ABORTED and c in started and app_of[c] in am_preempted:
                aborted += 1
                lost_ms += rec["t"] - started[c]
            res = mine.pop(rec["c"], None)
            if res is not None:
                held = [h - r for h, r in zip(held, res)]
    return LateQueueFigures(
        first_ask_s=None if first_ask is None else first_ask / 1000,
        time_to_share_s=None if reached is None or first_ask is None else (reached - first_ask) / 1000,
        peak_share=peak, preempted=preempted, aborted_with_am=aborted, work_lost_s=lost_ms / 1000)


def analyse(sls_out: Path, queue: str, share: float, threshold: float,
            task: Sequence[float]) -> dict:
    """The figures of one run; the tolerance is one container of shape `task`. Also the time to
    threshold x share: FairScheduler preempts a starved queue up to there only."""
    bench = json.loads((sls_out / "bench.json").read_text())
    capacity = [float(v) for v in bench["cluster"].values()]
    records = fairness.read_records(sls_out / "probe.jsonl")
    tolerance = fairness.dominant(task, capacity)
    figures = late_queue_figures(records, bench["app_queues"], queue, capacity, share, tolerance)
    to_threshold = late_queue_figures(records, bench["app_queues"], queue, capacity,
                                      threshold * share, tolerance)
    return {**asdict(figures), "time_to_threshold_s": to_threshold.time_to_share_s,
            "share": share, "wall_s": bench["wall_ms"] / 1000}


def _fmt(v: float | None, digits: int = 1) -> str:
    return "never" if v is None else f"{v:,.{digits}f}"


def table(results: Mapping[str, dict], title: str) -> str:
    names = list(results)
    rows = [("late queue's first ask (s after start)", "first_ask_s", 1),
            ("first ask to fair share, within one container (s)", "time_to_share_s", 1),
            ("first ask to threshold x fair share, within one container (s)",
             "time_to_threshold_s", 1),
            ("late queue's peak dominant share (fair share in the title)", "peak_share", 3),
            ("containers preempted", "preempted", 0),
            ("containers ended with their preempted AM (ABORTED)", "aborted_with_am", 0),
            ("work lost: run time of both (container-s)", "work_lost_s", 0),
            ("run length (s)", "wall_s", 0)]
    lines = [f"### {title}", "", "| figure | " + " | ".join(names) + " |",
             "|---|" + "---:|" * len(names)]
    lines += [f"| {label} | " + " | ".join(_fmt(results[n][key], d) for n in names) + " |"
              for label, key, d in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--queues", type=Path, default=HERE / "preemption-queues.yaml",
                    help="two leaf queues: the first fills the cluster, the second arrives late")
    ap.add_argument("--out", type=Path, default=run.REPO / "build" / "sls-preemption")
    ap.add_argument("--late-start-s", type=float, default=45)
    ap.add_argument("--early-task-s", type=float, default=400,
                    help="the early queue's task length (outlasts the run)")
    ap.add_argument("--late-task-s", type=float, default=60)
    ap.add_argument("--early-jobs", type=int, default=4,
                    help="the early queue's jobs (AMs); an odd number leaves a node with room "
                         "for the late queue's AM (these shapes) however the AMs are placed")
    run.add_run_args(ap, timeout_s=150)
    args = ap.parse_args(argv)
    schedulers = run.checked_run_args(ap, args)
    weights = confgen.weights(args.queues)
    if len(weights) != 2:
        ap.error(f"--queues: {args.queues} must have exactly two leaf queues, has {len(weights)}")
    early, late = weights
    share = weights[late] / sum(weights.values())
    threshold = confgen.load_config(args.queues).preemption.threshold
    nodes, trace = workload.write_files(args.out, args.nodes, workload.late_queue_jobs(
        args.nodes, early, late, args.late_start_s, args.early_task_s, args.late_task_s,
        early_jobs=args.early_jobs))
    task = [workload.LATE_TASK.memory_mb, workload.LATE_TASK.vcores, workload.LATE_TASK.gpu_mem]
    results = {}
    for s in schedulers:
        sls_out, _ = run.run_or_reuse(s, args.out / s, args, nodes, trace)
        results[s] = analyse(sls_out, late, share, threshold, task)
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    text = table(results, f"{args.nodes} simulated nodes: queue {late!r} arrives at "
                          f"{args.late_start_s:g} s on a cluster {early!r} ({args.early_jobs} jobs) "
                          f"fills; fair share {share:g}")
    (args.out / "table.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
