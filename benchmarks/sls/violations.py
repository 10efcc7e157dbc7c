"""Where a run's DRF violations come from: each violation (fairness.is_violation) set beside what
yarn-drf's core could know when it decided, from the allocation probe's records alone.

    .venv/bin/python benchmarks/sls/violations.py build/sls/1000/yarn-drf/sls [more run dirs]

A yarn-drf call decides with the asks, usage and free room of its collection (the probe's "call"
record: `collected`) and is committed a call's time later; the probe judges each container at its
commit. Each violation goes to the first category that explains it:

- ask after collection: no lower-share queue that had a fitting ask at the commit had one the core
  could see: at the collection it asked for none of those shapes, or no more than it was given
  earlier in the same call;
- AM held by the spread rule: every such queue waited only for an AM, and the container's node had
  taken an AM earlier in the same call (the core places one AM per node per call while another node
  has room for one, SchedulerCore._am_spread);
- ended since collection: with every queue's usage as the core saw it (that of the collection plus
  the call's earlier containers) no such queue is below the container's;
- room grew since collection: none of their shapes fitted the node's room as the core saw it (the
  free room at the commit less what containers that ended on the node since the collection freed);
- in the core's view: the core saw a lower-share queue with an ask that fitted, and gave the room
  to a higher one.

Calls are read only for yarn-drf (the others have none): their runs get the total and the
AM-only count. "AM only" (every lower-share queue with a fitting ask waited only for an AM) is
counted across the categories too, and with --max-am-share, of those, "held by the AM-share limit":
every such queue already ran AMs and one more would take them past that share of the cluster in
some resource (yarn-drf's rule, scheduler/queue_limits.am_room, for leaves that may hold the whole
cluster): yarn-drf's own limit held those AMs back, which the violation rule still counts. An AM is the first container of an attempt (id ..._000001); its
request key marks the app's AM asks.
"""
from __future__ import annotations

import argparse
import bisect
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import confgen
import fairness

HERE = Path(__file__).resolve().parent
CATEGORIES = ("ask after collection", "AM held by the spread rule", "ended since collection",
              "room grew since collection", "in the core's view")
SIZES = ((1, 2), (3, 9), (10, 50), (51, 200), (201, None))


def size_bucket(n: int) -> str:
    for lo, hi in SIZES:
        if hi is None or n <= hi:
            if n >= lo:
                return f"{lo}-{hi}" if hi is not None else f">{lo - 1}"
    return "0"


def _add(into: list[float], v: Sequence[float], sign: int) -> None:
    for i, x in enumerate(v):
        into[i] += sign * x


class Ledger:
    """Every queue's usage and asks by (shape, is AM), replayed from the records in time order."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self.used: dict[str, list[float]] = defaultdict(lambda: [0.0] * dims)
        self.asked: dict[str, Counter] = defaultdict(Counter)
        self.outstanding: Counter = Counter()  # (app, key) -> count

    def ask(self, q: str, app: str, key: str, shape: tuple, am: bool, n: int) -> None:
        before = self.outstanding[(app, key)]
        after = max(0, before + n)
        self.outstanding[(app, key)] = after
        self.asked[q][(shape, am)] += after - before

    def allocated(self, q: str, app: str, key: str, shape: tuple, am: bool) -> None:
        _add(self.used[q], shape, 1)
        if self.outstanding[(app, key)] > 0:
            self.outstanding[(app, key)] -= 1
            self.asked[q][(shape, am)] -= 1

    def ended(self, q: str, shape: tuple) -> None:
        _add(self.used[q], shape, -1)

    def copy(self) -> tuple[dict[str, list[float]], dict[str, Counter]]:
        return ({q: list(u) for q, u in self.used.items()},
                {q: Counter({k: n for k, n in c.items() if n > 0}) for q, c in self.asked.items()})


def analyse(records: Sequence[dict], capacity: Sequence[float],
            weights: Mapping[str, float], max_am_share: float | None = None) -> dict:
    """The breakdown of one run's violations (module doc); max_am_share: the leaves' AM-share
    limit the run had, to count the violations it explains (None: not counted)."""
    app_queue = {r["app"]: r["q"] for r in records if r["ev"] == "alloc"}
    am_key = {r["app"]: r["key"] for r in records
              if r["ev"] == "alloc" and r["c"].endswith("_000001")}
    am_shapes = am_only_shapes(records)
    started = {r["c"]: (r["q"], tuple(r["res"]), r["node"]) for r in records if r["ev"] == "alloc"}
    # each alloc belongs to the first call record after it (written when its commit ended)
    call_of: dict[int, dict] = {}
    waiting: list[int] = []
    for i, r in enumerate(records):
        if r["ev"] == "alloc":
            waiting.append(i)
        elif r["ev"] == "call":
            for j in waiting:
                call_of[j] = r
            waiting = []
    has_calls = bool(call_of)
    # the ledger's state at each collection, and the ends on each node, in time order
    events = [(r["t"], 1, i) for i, r in enumerate(records) if r["ev"] in ("ask", "alloc", "end")]
    events += [(r["collected"], 0, i) for i, r in enumerate(records) if r["ev"] == "call"]
    events.sort()
    ledger = Ledger(len(capacity))
    at_collection: dict[int, tuple] = {}
    node_ends: dict[str, tuple[list[float], list[tuple]]] = defaultdict(lambda: ([], []))
    for t, kind, i in events:
        r = records[i]
        if kind == 0:
            at_collection[id(r)] = ledger.copy()
        elif r["ev"] == "ask":
            q = app_queue.get(r["app"])
            if q is not None:
                ledger.ask(q, r["app"], r["key"], tuple(r["res"]), am_key.get(r["app"]) == r["key"], r["n"])
        elif r["ev"] == "alloc":
            ledger.allocated(r["q"], r["app"], r["key"], tuple(r["res"]), am_key.get(r["app"]) == r["key"])
        elif r["c"] in started:
            q, shape, node = started[r["c"]]
            ledger.ended(q, shape)
            ends = node_ends[node]
            ends[0].append(t)
            ends[1].append(shape)

    def share(used: Mapping[str, Sequence[float]], q: str) -> float:
        return fairness.dominant(used.get(q, [0] * len(capacity)), capacity) / weights.get(q, 1.0)

    counts: Counter = Counter()
    by_size: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    first_in_call = [0, 0]  # violations among calls' first containers, those containers
    am_only = am_held = containers = bad = 0
    am_used: dict[str, list[float]] = defaultdict(lambda: [0.0] * len(capacity))
    am_limit = [max_am_share * c for c in capacity] if max_am_share is not None else None

    def held(q: str, am: tuple) -> bool:
        used = am_used[q]
        return any(used) and not fairness.fits([u + a for u, a in zip(used, am)], am_limit)

    given: dict[int, Counter] = defaultdict(Counter)  # per call: (queue, shape) given so far
    given_used: dict[int, dict[str, list[float]]] = defaultdict(dict)
    am_nodes: dict[int, set] = defaultdict(set)
    for i, r in enumerate(records):
        if r["ev"] == "end" and r["c"] in started and r["c"].endswith("_000001"):
            q, shape, _ = started[r["c"]]
            _add(am_used[q], shape, -1)
        if r["ev"] != "alloc":
            continue
        containers += 1
        call = call_of.get(i)
        ci = id(call) if call is not None else None
        violated = fairness.is_violation(r, capacity, weights)
        if call is not None:
            b = by_size[size_bucket(call["assignments"])]
            b[0] += violated
            b[1] += 1
            if not given[ci]:
                first_in_call[0] += violated
                first_in_call[1] += 1
        if violated:
            bad += 1
            lower = _lower_waiting(r, capacity, weights)
            only_am = all(s in am_shapes for shapes in lower.values() for s in shapes)
            am_only += only_am
            am_held += only_am and am_limit is not None and all(
                held(p, s) for p, shapes in lower.items() for s in shapes)
            if call is not None:
                counts[_category(r, call, lower, only_am, at_collection[ci], given[ci],
                                 given_used[ci], am_nodes[ci], node_ends, share)] += 1
        if call is not None:
            shape = tuple(r["res"])
            given[ci][(r["q"], shape)] += 1
            _add(given_used[ci].setdefault(r["q"], [0.0] * len(capacity)), shape, 1)
            if am_key.get(r["app"]) == r["key"]:
                am_nodes[ci].add(r["node"])
        if r["c"].endswith("_000001"):
            _add(am_used[r["q"]], r["res"], 1)
    return {
        "containers": containers, "violations": bad,
        "per_1000": 1000 * bad / containers if containers else float("nan"),
        "am_only": am_only, "has_calls": has_calls,
        "am_held": am_held if am_limit is not None else None,
        "categories": {c: counts[c] for c in CATEGORIES} if has_calls else {},
        "by_call_size": {k: {"violations": by_size[k][0], "containers": by_size[k][1]}
                         for k in map(size_bucket, (lo for lo, _ in SIZES)) if k in by_size},
        "first_in_call": {"violations": first_in_call[0], "containers": first_in_call[1]},
    }


def _lower_waiting(r: dict, capacity: Sequence[float], weights: Mapping[str, float]) -> dict[str, list[tuple]]:
    """The queues below the container's with a pending shape that fitted its node, and those shapes."""
    queues = r["queues"]

    def share(q: str) -> float:
        used = queues[q]["used"] if q in queues else [0] * len(capacity)
        return fairness.dominant(used, capacity) / weights.get(q, 1.0)

    mine = share(r["q"])
    return {p: [tuple(s[:-1]) for s in v["pending"] if s[-1] > 0 and fairness.fits(s[:-1], r["free"])]
            for p, v in queues.items() if p != r["q"] and share(p) < mine
            and any(s[-1] > 0 and fairness.fits(s[:-1], r["free"]) for s in v["pending"])}


def am_only_shapes(records: Iterable[dict]) -> set[tuple]:
    """The shapes of AMs that no task of the run has (the probe's pending rows carry shapes, not
    request keys: an ask of such a shape is an AM's)."""
    am, task = set(), set()
    for r in records:
        if r["ev"] == "alloc":
            (am if r["c"].endswith("_000001") else task).add(tuple(r["res"]))
    return am - task


def _category(r: dict, call: dict, lower: Mapping[str, list[tuple]], only_am: bool,
              seen: tuple[dict, dict], given: Counter, given_used: Mapping[str, Sequence[float]],
              am_nodes: set, node_ends: Mapping, share) -> str:
    used0, asked0 = seen
    visible = {p: [s for s in shapes
                   if sum(n for (shape, _), n in asked0.get(p, {}).items() if shape == s) > given[(p, s)]]
               for p, shapes in lower.items()}
    visible = {p: s for p, s in visible.items() if s}
    if not visible:
        return CATEGORIES[0]
    if only_am and r["node"] in am_nodes:
        return CATEGORIES[1]
    used = {q: list(u) for q, u in used0.items()}
    for q, u in given_used.items():
        _add(used.setdefault(q, [0.0] * len(u)), u, 1)
    mine = share(used, r["q"])
    visible = {p: s for p, s in visible.items() if share(used, p) < mine}
    if not visible:
        return CATEGORIES[2]
    free = list(r["free"])
    times, shapes = node_ends.get(r["node"], ([], []))
    for k in range(bisect.bisect_right(times, call["collected"]), bisect.bisect_right(times, r["t"])):
        _add(free, shapes[k], -1)
    if not any(fairness.fits(s, free) for ss in visible.values() for s in ss):
        return CATEGORIES[3]
    return CATEGORIES[4]


def report(name: str, a: dict) -> str:
    lines = [f"{name}: {a['violations']} violations in {a['containers']} containers "
             f"({a['per_1000']:.1f} per 1,000); a lower-share queue waited only for an AM in "
             f"{a['am_only']} ({_pct(a['am_only'], a['violations'])})"]
    if a["am_held"] is not None:
        lines.append(f"  held by the AM-share limit: {a['am_held']} ({_pct(a['am_held'], a['violations'])}); "
                     f"the rest {1000 * (a['violations'] - a['am_held']) / a['containers']:.1f} per 1,000")
    for c, n in a["categories"].items():
        lines.append(f"  {c}: {n} ({_pct(n, a['violations'])})")
    if a["has_calls"]:
        for k, v in a["by_call_size"].items():
            lines.append(f"  calls of {k} assignments: {_rate(v)} per 1,000 of {v['containers']} containers")
        lines.append(f"  a call's first container: {_rate(a['first_in_call'])} per 1,000 "
                     f"of {a['first_in_call']['containers']}")
    return "\n".join(lines)


def _pct(n: int, total: int) -> str:
    return f"{100 * n / total:.0f} %" if total else "n/a"


def _rate(v: Mapping[str, int]) -> str:
    return f"{1000 * v['violations'] / v['containers']:.1f}" if v["containers"] else "n/a"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="SLS output directories (with probe.jsonl, bench.json)")
    ap.add_argument("--queues", type=Path, default=HERE / "queues.yaml")
    ap.add_argument("--max-am-share", type=float, default=None,
                    help="the leaves' max-am-share in the runs: count the violations it explains")
    ap.add_argument("--json", action="store_true", help="print the breakdowns as JSON")
    args = ap.parse_args(argv)
    weights = confgen.weights(args.queues)
    out = {}
    for run in args.runs:
        cap = json.loads((run / "bench.json").read_text())["cluster"]
        out[str(run)] = analyse(fairness.read_records(run / "probe.jsonl"), list(cap.values()), weights,
                                args.max_am_share)
        if not args.json:
            print(report(str(run), out[str(run)]))
    if args.json:
        print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
