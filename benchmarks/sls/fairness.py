"""Fairness and latency figures from the allocation probe's records (probe.jsonl, see
benchmarks/sls/java AllocationProbe) and the time series (bench.json), the same rules for all
three schedulers.

DRF violation: a container given to queue Q while some queue P with a strictly lower weighted
dominant share had a pending request that fitted the container's node at that moment. Shares are
those just before the container (d_q = max_r used_q,r / capacity_r / weight_q); "fitted" means
the request's every resource <= the node's free room just before the container. Counted over
every container of the run, per 1,000 containers. Every pending request counts, including those a
scheduler's own rules may hold back (an AM-share limit, a queue's max, locality, blacklists): on
the benchmark's configuration none of these binds (no AM-share limit for Fair and Capacity;
yarn-drf's default max-am-share, 0.5 of the cluster per leaf, is far above a queue's few hundred
AMs; no max, locality or blacklist), so none is left out. violations.py breaks yarn-drf's
violations down by what its core could know when it decided.

Node-aware DRFH target: each queue's demand (containers running + asked for, by shape) placed in
whole containers on the real nodes by progressive filling: the queue with the lowest weighted
dominant share that still has a container to place that fits some node gets its next container,
on the first node it fits (its shapes in the order given: those of its running containers first,
so an AM that runs is in the target before its tasks); a queue none of whose shapes fits any
node stops growing. Shortfall of queue q at a sample: max(0, T_q - S_q), T_q the
dominant share of its target and S_q of what it holds (fractions of the cluster); reported as the
mean over the saturated samples.

Ask to allocation: each app's ask increases (ask records, per request key) queue first in, first
out; each container takes the oldest of its app's key; a decrease withdraws the newest. App start
to allocation: from the app's first ask (the RM's ask for its AM) to each of its containers.
"""
from __future__ import annotations

import heapq
import json
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

Vector = Sequence[float]
Shapes = Mapping[tuple[int, ...], int]  # shape -> containers, in the order to place them


def read_records(path: Path) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def dominant(used: Vector, capacity: Vector) -> float:
    return max((u / c for u, c in zip(used, capacity) if c), default=0.0)


def fits(shape: Vector, free: Vector) -> bool:
    return all(s <= f for s, f in zip(shape, free))


def is_violation(rec: dict, capacity: Vector, weights: Mapping[str, float]) -> bool:
    """Whether one allocation record breaks DRF (module doc)."""
    free = rec.get("free")
    if free is None:
        return False
    queues = rec["queues"]

    def share(q: str) -> float:
        used = queues[q]["used"] if q in queues else [0] * len(capacity)
        return dominant(used, capacity) / weights.get(q, 1.0)

    mine = share(rec["q"])
    return any(share(p) < mine and any(s[-1] > 0 and fits(s[:-1], free) for s in v["pending"])
               for p, v in queues.items() if p != rec["q"])


def violations(records: Iterable[dict], capacity: Vector,
               weights: Mapping[str, float]) -> tuple[int, int]:
    """(violations, containers) over the allocation records."""
    bad = n = 0
    for rec in records:
        if rec["ev"] == "alloc":
            n += 1
            bad += is_violation(rec, capacity, weights)
    return bad, n


class Wait(NamedTuple):
    """One container's wait: the ask increase it took, and when that increase got its first."""
    submitted: float  # ms, its app's first ask (the RM's ask for the AM, made as the app starts)
    asked: float      # ms, the ask increase this container took (first in, first out)
    first: float      # ms, the first container given to that same increase
    allocated: float  # ms
    queue: str
    am: bool          # the attempt's first container (id ..._000001)


def waits(records: Iterable[dict]) -> tuple[list[Wait], int]:
    """Each container's wait (module doc), and allocations that matched no recorded ask."""
    waiting: dict[tuple[str, str], deque[list[float]]] = {}  # [asked, left, first or None]
    submitted: dict[str, float] = {}
    out: list[Wait] = []
    unmatched = 0
    for rec in records:
        if rec["ev"] not in ("ask", "alloc"):
            continue  # a container's end (the preemption figures read those)
        key = (rec["app"], rec["key"])
        if rec["ev"] == "ask":
            q = waiting.setdefault(key, deque())
            submitted.setdefault(rec["app"], rec["t"])
            if rec["n"] > 0:
                q.append([rec["t"], rec["n"], None])
            else:
                _withdraw(q, -rec["n"])
        elif rec["ev"] == "alloc":
            q = waiting.get(key)
            if not q:
                unmatched += 1
                continue
            head = q[0]
            if head[2] is None:
                head[2] = rec["t"]
            out.append(Wait(submitted[rec["app"]], head[0], head[2], rec["t"], rec["q"],
                            rec["c"].endswith("_000001")))
            head[1] -= 1
            if head[1] == 0:
                q.popleft()
    return out, unmatched


def ask_to_allocation_ms(records: Iterable[dict]) -> tuple[list[float], int]:
    """Times from ask to allocation (ms), and allocations that matched no recorded ask."""
    matched, unmatched = waits(records)
    return [w.allocated - w.asked for w in matched], unmatched


def start_to_allocation_ms(records: Iterable[dict]) -> list[float]:
    """Times from each container's app's first ask to the container (ms): what its job waited for
    it, the wait for its AM included, which ask to allocation leaves out (a task is asked for only
    once the AM runs, so a scheduler that keeps AMs waiting has short task waits)."""
    return [w.allocated - w.submitted for w in waits(records)[0]]


def _withdraw(q: deque[list[float]], n: int) -> None:
    while n > 0 and q:
        take = min(n, int(q[-1][1]))
        q[-1][1] -= take
        n -= take
        if q[-1][1] == 0:
            q.pop()


def drfh_targets(nodes: Sequence[Vector], demand: Mapping[str, Shapes], capacity: Vector,
                 weights: Mapping[str, float]) -> dict[str, list[float]]:
    """Each queue's node-aware DRFH allocation of its demand (module doc)."""
    return _drfh_targets_counted(nodes, demand, capacity, weights)[0]


def _drfh_targets_counted(nodes: Sequence[Vector], demand: Mapping[str, Shapes], capacity: Vector,
                          weights: Mapping[str, float]) -> tuple[dict[str, list[float]], int]:
    placed = 0
    free = [list(n) for n in nodes]
    first_fit: dict[tuple[int, ...], int] = {}  # nodes only fill up: a shape's first fit only moves on
    alloc = {q: [0.0] * len(capacity) for q in demand}
    left = {q: dict(shapes) for q, shapes in demand.items()}
    heap = [(0.0, q) for q in sorted(demand) if any(left[q].values())]
    heapq.heapify(heap)
    while heap:
        _, q = heapq.heappop(heap)
        for shape in [s for s, n in left[q].items() if n > 0]:
            i = first_fit.get(shape, 0)
            while i < len(free) and not fits(shape, free[i]):
                i += 1
            first_fit[shape] = i
            if i == len(free):
                left[q][shape] = 0  # fits no node any more
                continue
            free[i] = [f - s for f, s in zip(free[i], shape)]
            alloc[q] = [a + s for a, s in zip(alloc[q], shape)]
            left[q][shape] -= 1
            placed += 1
            break
        if any(left[q].values()):
            heapq.heappush(heap, (dominant(alloc[q], capacity) / weights.get(q, 1.0), q))
    return alloc, placed


def shapes(rows: Iterable[Sequence[int]]) -> dict[tuple[int, ...], int]:
    """[r0, ..., count] rows (as the probe writes them) -> shape -> count."""
    out: dict[tuple[int, ...], int] = {}
    for r in rows:
        out[tuple(r[:-1])] = out.get(tuple(r[:-1]), 0) + r[-1]
    return out


class SampleTarget(NamedTuple):
    """One sample against its node-aware DRFH target: per queue the target's and the held
    dominant share (fractions of the cluster), the containers running and in the target."""
    t_ms: float
    target: dict[str, float]
    held: dict[str, float]
    running: int
    placed: int


def evenly_spaced(samples: Sequence[dict], most: int) -> Sequence[dict]:
    """At most `most` of the samples, evenly spaced (each target is a full placement)."""
    return samples[::max(1, -(-len(samples) // most))]


def sample_targets(samples: Iterable[dict], nodes: Sequence[Vector], capacity: Vector,
                   types: Sequence[str], weights: Mapping[str, float]) -> list[SampleTarget]:
    """Each sample against the node-aware DRFH placement of its demand (module doc)."""
    out = []
    for s in samples:
        demand = {}
        for q, v in s["queues"].items():
            d = shapes(v.get("running_shapes", []))
            for shape, n in shapes(v.get("pending_shapes", [])).items():
                d[shape] = d.get(shape, 0) + n
            demand[q] = d
        target, placed = _drfh_targets_counted(nodes, demand, capacity, weights)
        out.append(SampleTarget(
            s.get("t_ms", 0), {q: dominant(target[q], capacity) for q in s["queues"]},
            {q: dominant([v["used"].get(r, 0) for r in types], capacity) for q, v in s["queues"].items()},
            sum(n for v in s["queues"].values() for *_, n in v.get("running_shapes", [])), placed))
    return out


def shortfalls(samples: Sequence[dict], nodes: Sequence[Vector], capacity: Vector,
               types: Sequence[str], weights: Mapping[str, float],
               max_samples: int = 100) -> tuple[dict[str, float], float]:
    """Per queue, mean over the samples of max(0, target - held) dominant share; and the
    containers running / the containers of the targets, over the same samples (how full the
    scheduler kept the cluster against the node-aware DRFH placement of the same demand).
    Evenly spaced samples, at most max_samples of them."""
    picked = sample_targets(evenly_spaced(samples, max_samples), nodes, capacity, types, weights)
    if not picked:
        return {}, float("nan")
    total: dict[str, float] = {}
    for p in picked:
        for q, held in p.held.items():
            total[q] = total.get(q, 0.0) + max(0.0, p.target[q] - held)
    running = sum(p.running for p in picked)
    placed = sum(p.placed for p in picked)
    return ({q: t / len(picked) for q, t in sorted(total.items())},
            running / placed if placed else float("nan"))
