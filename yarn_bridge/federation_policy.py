"""Federation-wide weighted DRF: per-queue router and AMRM weights from every sub-cluster's yarn-drf status.

Each sub-cluster's core divides its own nodes; a queue starved in one sub-cluster and over its
share in another is invisible to each of them. This module reads every core's `/v1/queues` (the
queue tree, weights, usage, demand, capacity) and computes, per leaf queue:

1. its **federation-wide target**: the pooled fluid fill of hierarchical weighted DRF
   (scheduler.pooled, the rule every core uses for its own pooled target) over the federation's
   total capacity and each leaf's demand summed over the sub-clusters;
2. a **plan** that puts that target where it fits: leaves that fit the fewest sub-clusters are
   placed first (a GPU queue fits only the sub-cluster with `gpu-mem`), each split over the
   sub-clusters it fits in proportion to the room left there;
3. its **weights**: each sub-cluster's part of what the queue still lacks of its plan there (the
   plan minus its usage there, as a share of the federation); a queue that lacks nothing keeps
   its plan's proportions. A sub-cluster without a resource the queue's demand uses gets 0.

The router weights (where the queue's new apps are homed) and the AMRM weights (how an app's asks
are split) are the same: homing an app where its queue has room keeps its AM beside its containers.
A queue fits a sub-cluster when the sub-cluster has some of every resource the queue's demand
uses (a leaf's demand mixing GPU and CPU apps counts as a GPU queue). Queue max limits and min
shares are not part of the federation-wide fill (each core keeps applying them to its own nodes).

Bounded input: a status document that is not what a yarn-drf status server answers raises
StatusError naming the sub-cluster and the field; the caller then changes no policy.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scheduler.policies import POLICIES
from scheduler.pooled import Fill, fill, fill_nodes

MAX_QUEUES = 10_000  # queues in one status document
MAX_AMOUNT = float(1 << 62)  # the status server's "unbounded"; an amount above it is not a resource
WEIGHT_DIGITS = 6  # routeradmin refuses weights whose sum is off 1 by more than 1e-6
_EPS = 1e-9
_DRF = POLICIES["drf"]


class StatusError(ValueError):
    """A sub-cluster's status document is not a yarn-drf `/v1/queues` answer."""


@dataclass(frozen=True)
class QueueStatus:
    name: str
    parent: str | None
    leaf: bool
    weight: float | dict[str, float]
    usage: tuple[float, ...]
    demand: tuple[float, ...]


@dataclass(frozen=True)
class SubClusterStatus:
    id: str
    types: tuple[str, ...]
    capacity: tuple[float, ...]
    queues: dict[str, QueueStatus]


@dataclass(frozen=True)
class QueuePlan:
    """One leaf's federation-wide figures and the weights that move it toward its target."""

    name: str
    share: float  # dominant share of the whole federation now
    target_share: float  # dominant share of its federation-wide target
    weights: dict[str, float]  # sub-cluster id -> weight (router and AMRM), summing to 1


# ---------------------------------------------------------------------------- bounded parsing

def parse_status(sc_id: str, doc: Any) -> SubClusterStatus:
    """A sub-cluster's `/v1/queues` document, checked field by field."""
    where = f"sub-cluster {sc_id}: /v1/queues"
    if not isinstance(doc, dict):
        raise StatusError(f"{where} is not a JSON object")
    types = doc.get("resource_types")
    if not isinstance(types, list) or not types or len(types) > 64 or not all(isinstance(t, str) for t in types) \
            or len(set(types)) != len(types):
        raise StatusError(f"{where}: resource_types must be a list of distinct names")
    names = tuple(types)
    capacity = _amounts(doc.get("capacity"), names, f"{where}: capacity")
    queues = doc.get("queues")
    if not isinstance(queues, list) or len(queues) > MAX_QUEUES:
        raise StatusError(f"{where}: queues must be a list of at most {MAX_QUEUES} queues")
    out: dict[str, QueueStatus] = {}
    for i, q in enumerate(queues):
        if not isinstance(q, dict) or not isinstance(q.get("name"), str) or not q["name"]:
            raise StatusError(f"{where}: queues[{i}] has no name")
        at = f"{where}: queue {q['name']!r}"
        parent = q.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise StatusError(f"{at}: parent must be a queue name or null")
        if not isinstance(q.get("leaf"), bool):
            raise StatusError(f"{at}: leaf must be true or false")
        if q["name"] in out:
            raise StatusError(f"{at} is listed twice")
        out[q["name"]] = QueueStatus(q["name"], parent, q["leaf"], _weight(q.get("weight"), names, at),
                                     _amounts(q.get("usage"), names, f"{at}: usage"),
                                     _amounts(q.get("demand"), names, f"{at}: demand"))
    for q in out.values():
        if q.parent is not None and q.parent not in out:
            raise StatusError(f"{where}: queue {q.name!r} names parent {q.parent!r}, which is not listed")
    return SubClusterStatus(sc_id, names, capacity, out)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _amounts(v: Any, names: tuple[str, ...], at: str) -> tuple[float, ...]:
    if not isinstance(v, dict) or set(v) - set(names):
        raise StatusError(f"{at} must be an object of the resource types {list(names)}")
    out = tuple(v.get(n, 0) for n in names)
    if not all(_number(x) and 0 <= x <= MAX_AMOUNT for x in out):
        raise StatusError(f"{at}: every amount must be a finite number from 0 to 2^62")
    return tuple(float(x) for x in out)


def _weight(v: Any, names: tuple[str, ...], at: str) -> float | dict[str, float]:
    if _number(v) and v > 0:
        return float(v)
    if isinstance(v, dict) and v and not set(v) - set(names) and all(_number(x) and x > 0 for x in v.values()):
        return {k: float(x) for k, x in v.items()}
    raise StatusError(f"{at}: weight must be a number above 0 or an object of them per resource type")


# ---------------------------------------------------------------------------- the plan

def plan(statuses: list[SubClusterStatus]) -> tuple[dict[str, QueuePlan], list[str]]:
    """Every leaf with demand: its federation-wide share, target and weights; and the leaves that
    fit no sub-cluster (they get no policy)."""
    if not statuses:
        raise StatusError("no sub-cluster status to plan from")
    types = statuses[0].types
    for s in statuses[1:]:
        if s.types != types:
            raise StatusError(f"sub-cluster {s.id} has resource types {list(s.types)}, "
                              f"{statuses[0].id} has {list(types)}: one federation, one set")
    total = tuple(sum(col) for col in zip(*(s.capacity for s in statuses)))
    queues = _union(statuses)
    usage = {n: {s.id: s.queues[n].usage if n in s.queues else _zero(types) for s in statuses}
             for n, q in queues.items() if q.leaf}
    demand = {n: tuple(sum(col) for col in zip(*(s.queues[n].demand for s in statuses if n in s.queues)))
              for n in usage}
    target = federation_targets(queues, demand, types, total)
    active = [n for n in usage if any(demand[n])]
    fits = {n: [s for s in statuses if all(c > 0 for c, d in zip(s.capacity, demand[n]) if d > 0)] for n in active}
    placed = _place(sorted(active, key=lambda n: (len(fits[n]), n)), fits, target)
    plans, unfit = {}, []
    for n in active:
        if not fits[n]:
            unfit.append(n)
            continue
        used = tuple(sum(col) for col in zip(*usage[n].values()))
        lack = {s.id: _dominant(tuple(max(0.0, p - u) for p, u in zip(placed[n][s.id], usage[n][s.id])), total)
                for s in fits[n]}
        if sum(lack.values()) <= _EPS:  # nothing lacking: keep the plan's proportions
            lack = {s.id: _dominant(placed[n][s.id], total) for s in fits[n]}
        if sum(lack.values()) <= _EPS:  # no target at all: spread over where it fits
            lack = {s.id: 1.0 for s in fits[n]}
        weights = normalized({s.id: lack.get(s.id, 0.0) for s in statuses})
        plans[n] = QueuePlan(n, _dominant(used, total), _dominant(target[n], total), weights)
    return plans, sorted(unfit)


def federation_targets(queues: dict[str, QueueStatus], demand: dict[str, tuple[float, ...]],
                       types: tuple[str, ...], total: tuple[float, ...]) -> dict[str, tuple[float, ...]]:
    """Each leaf's allocation in hierarchical weighted DRF's fluid fill of the pooled federation."""
    divided = frozenset(types)
    nodes = {n: Fill(n, q.parent is None, tuple(demand.get(n, _zero(types))), None,
                     _DRF.scale(types, divided, total, q.weight)) for n, q in queues.items()}
    roots = [nodes[n] for n, q in queues.items() if q.parent is None]
    if len(roots) != 1:
        raise StatusError(f"the sub-clusters' queues have {len(roots)} roots; one tree is needed")
    for n, q in queues.items():
        if q.parent is not None:
            nodes[q.parent].children.append(nodes[n])
    root = roots[0]
    _sum_demand(root)
    root.limit = total
    fill(root, additive=False)
    return {node.path: node.alloc for node in fill_nodes(root) if not node.children and node.path in demand}


def _sum_demand(node: Fill) -> tuple[float, ...]:
    for child in node.children:
        node.raw = tuple(a + b for a, b in zip(node.raw, _sum_demand(child)))
    if node.children:
        node.frozen = True  # parents grow through their leaves only (as scheduler.pooled builds them)
    return node.raw


def _place(order: list[str], fits: dict[str, list[SubClusterStatus]],
           target: dict[str, tuple[float, ...]]) -> dict[str, dict[str, tuple[float, ...]]]:
    """Each leaf's target split over the sub-clusters it fits, in proportion to the room left in
    each (leaves that fit the fewest first, so a GPU queue's target lands on the GPU sub-cluster)."""
    room = {s.id: list(s.capacity) for ss in fits.values() for s in ss}
    out: dict[str, dict[str, tuple[float, ...]]] = {}
    for n in order:
        t = target[n]
        can = {s.id: min((max(0.0, room[s.id][j]) / x for j, x in enumerate(t) if x > 0), default=0.0) for s in fits[n]}
        scale = max(sum(can.values()), 1.0)  # more room than the target: share it by room
        out[n] = {}
        for sc, c in can.items():
            part = tuple(x * c / scale for x in t)
            room[sc] = [r - p for r, p in zip(room[sc], part)]
            out[n][sc] = part
    return out


def _union(statuses: list[SubClusterStatus]) -> dict[str, QueueStatus]:
    """Every queue of any sub-cluster (dynamic queues exist where apps created them), as first listed."""
    out: dict[str, QueueStatus] = {}
    for s in statuses:
        for n, q in s.queues.items():
            out.setdefault(n, q)
    return out


def _zero(types: tuple[str, ...]) -> tuple[float, ...]:
    return tuple(0.0 for _ in types)


def _dominant(v: tuple[float, ...], total: tuple[float, ...]) -> float:
    return max((x / c for x, c in zip(v, total) if c > 0), default=0.0)


def normalized(raw: dict[str, float]) -> dict[str, float]:
    """Weights rounded to WEIGHT_DIGITS that sum to 1 (the rounding's rest goes to the largest)."""
    total = sum(raw.values())
    out = {k: round(v / total, WEIGHT_DIGITS) for k, v in raw.items()}
    top = max(out, key=lambda k: (out[k], k))
    out[top] = round(out[top] + 1.0 - sum(out.values()), WEIGHT_DIGITS + 3)
    return out


# ---------------------------------------------------------------------------- routeradmin

def policy_names(plans: dict[str, QueuePlan]) -> dict[str, list[str]]:
    """Leaf path -> the queue names to save its policy under: the path (the AMRMProxy looks a
    policy up by the home RM's leaf path) and its last part when no other leaf has it (the Router
    looks it up by the name the app was submitted to, often the short one)."""
    short: dict[str, list[str]] = {}
    for n in plans:
        short.setdefault(n.rsplit(".", 1)[-1], []).append(n)
    return {n: [n] + ([s] if s != n and len(short[s]) == 1 else [])
            for n in plans for s in [n.rsplit(".", 1)[-1]]}


def policy_spec(queue: str, router: dict[str, float], amrm: dict[str, float], headroom_alpha: float = 0.0) -> str:
    """The argument of `yarn routeradmin -policy -s`: QUEUE;SC:w,...;SC:w,...;ALPHA (sub-clusters by id)."""
    def weights(w: dict[str, float]) -> str:
        return ",".join(f"{sc}:{w[sc]!r}" for sc in sorted(w))
    return f"{queue};{weights(router)};{weights(amrm)};{headroom_alpha!r}"
