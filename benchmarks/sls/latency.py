"""Where a run's ask-to-allocation time goes, from the allocation probe's records alone.

    .venv/bin/python benchmarks/sls/latency.py build/sls/1000/yarn-drf/sls [more run dirs]

Each container's wait (fairness.waits: from the ask increase it took, first in first out per app
and request key, to its allocation) is split at the first container that same increase got:

- to the first of its ask: from the ask until the scheduler began serving it (an AM's whole
  wait; for a job's 40 task asks, the wait of the first task);
- behind its own ask: from that first container to this one, while the app's earlier containers
  of the same ask went first and the scheduler served other apps (the order among the apps of a
  queue decides it: first in first out serves one app's asks back to back, a fair order among
  apps interleaves every running app's).

For yarn-drf (whose probe records its calls) the first part is split again at the first call
collected after the ask (the soonest its core could see it), and the assignments a commit gave
back unapplied (deferred behind a late AM ask, or refused) are counted with what each such call
cost: the time from its commit to the next commit that applied anything.
"""
from __future__ import annotations

import argparse
import bisect
import json
from collections.abc import Sequence
from pathlib import Path

import fairness


def _pct(values: Sequence[float], p: float) -> float:
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * p / 100))]


def _spread(values: Sequence[float]) -> dict:
    return {"n": len(values), "p50": _pct(values, 50), "p90": _pct(values, 90)}


def analyse(records: Sequence[dict]) -> dict:
    """The breakdown of one run (module doc); the call figures are None for runs without calls."""
    matched, _ = fairness.waits(records)
    tasks = [w for w in matched if not w.am]
    out = {
        "all": _spread([w.allocated - w.asked for w in matched]),
        "from_app_start": _spread([w.allocated - w.submitted for w in matched]),
        "am": _spread([w.allocated - w.asked for w in matched if w.am]),
        "task": _spread([w.allocated - w.asked for w in tasks]),
        "to_first_of_ask": _spread([w.first - w.asked for w in matched]),
        "behind_own_ask": _spread([w.allocated - w.first for w in matched]),
        "task_by_queue": {q: _spread([w.allocated - w.asked for w in tasks if w.queue == q])
                          for q in sorted({w.queue for w in tasks})},
        "calls": None,
    }
    calls = [r for r in records if r["ev"] == "call"]
    if calls:
        out["calls"] = _calls(calls, [w for w in matched if w.allocated == w.first])
    return out


def _calls(calls: Sequence[dict], firsts: Sequence[fairness.Wait]) -> dict:
    collected = sorted(c["collected"] for c in calls)
    to_collection, collection_to_first = [], []
    for w in firsts:
        i = bisect.bisect_left(collected, w.asked)
        if i < len(collected) and collected[i] <= w.first:
            to_collection.append(collected[i] - w.asked)
            collection_to_first.append(w.first - collected[i])
    cut_cost = []
    for i, c in enumerate(calls):
        if c["applied"] < c["assignments"]:
            nxt = next((d for d in calls[i + 1:] if d["applied"] > 0), None)
            if nxt is not None:
                cut_cost.append(nxt["t"] - c["t"])
    return {
        "calls": len(calls),
        "without_assignments": sum(1 for c in calls if c["assignments"] == 0),
        "assignments": sum(c["assignments"] for c in calls),
        "given_back": sum(c["assignments"] - c["applied"] for c in calls),
        "calls_giving_back": len(cut_cost),
        "give_back_cost": _spread(cut_cost),
        "ask_to_next_collection": _spread(to_collection),
        "collection_to_first": _spread(collection_to_first),
    }


def report(name: str, a: dict) -> str:
    def line(label: str, s: dict) -> str:
        return f"  {label}: p50 {s['p50']:.1f} ms, p90 {s['p90']:.1f} ms (n {s['n']})"

    lines = [f"{name}: ask to allocation p50 {a['all']['p50']:.1f} ms, p90 {a['all']['p90']:.1f} ms "
             f"({a['all']['n']} containers)",
             line("from its app's first ask (AM waits included)", a["from_app_start"]),
             line("AM containers", a["am"]), line("task containers", a["task"]),
             line("to the first container of its ask", a["to_first_of_ask"]),
             line("behind its own ask", a["behind_own_ask"])]
    lines += [line(f"tasks of queue {q}", s) for q, s in a["task_by_queue"].items()]
    c = a["calls"]
    if c:
        lines += [f"  calls {c['calls']} ({c['without_assignments']} without assignments); "
                  f"assignments {c['assignments']}, given back unapplied {c['given_back']} "
                  f"in {c['calls_giving_back']} calls",
                  line("a call that gave some back, to the next commit that applied", c["give_back_cost"]),
                  line("an ask to the next call's collection", c["ask_to_next_collection"]),
                  line("that collection to the ask's first container", c["collection_to_first"])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="SLS output directories (with probe.jsonl)")
    ap.add_argument("--json", action="store_true", help="print the breakdowns as JSON")
    args = ap.parse_args(argv)
    out = {str(run): analyse(fairness.read_records(run / "probe.jsonl")) for run in args.runs}
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print("\n".join(report(name, a) for name, a in out.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
