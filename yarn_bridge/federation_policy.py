"""Federation-wide weighted DRF: per-queue router and AMRM weights from every sub-cluster's yarn-drf status.

Each sub-cluster's core divides its own nodes; a queue starved in one sub-cluster and over its
share in another is invisible to each of them. This module reads every core's `/v1/queues` (the
queue tree, weights, usage, demand, capacity) and computes, per leaf queue:

1. its **federation-wide target**, shape-aware: where the cores' own decisions would take the
   federation's demand on the federation's real nodes, in whole containers (the reachable target
   of scheduler.targets, replayed over every sub-cluster's nodes, running containers and asks at
   once, as each core's `/v1/demand` lists them). Without those documents, the pooled fluid fill
   of hierarchical weighted DRF (scheduler.pooled) over the federation's total capacity and each
   leaf's demand summed over the sub-clusters: it ignores node shapes, so it promises a CPU queue
   the vcores of a GPU node that a GPU queue's containers, which fit nowhere else, hold;
2. a **plan**: where that target is, sub-cluster by sub-cluster. Shape-aware, it is where the
   replay put the leaf's containers (each replayed node is one sub-cluster's); pooled, leaves that
   fit the fewest sub-clusters are placed first (a GPU queue fits only the sub-cluster with
   `gpu-mem`), each split over the sub-clusters it fits in proportion to the room left there;
3. its **AMRM weights** (how an app's asks are split): each sub-cluster's part of what the queue
   still lacks of its plan there (the plan minus its usage there, as a share of the federation); a
   queue that lacks nothing keeps its plan's proportions. A sub-cluster without a resource the
   queue's demand uses gets 0, and so does one where a queue that fits fewer sub-clusters lacks
   some of its plan (the wider queue yields it: that core orders queues by their shares of *its*
   nodes, where the wider queue's part looks small);
4. its **router weights** (where its new apps, and so their AMs, are homed): its AMRM weights over
   the *open* sub-clusters, those where no leaf that fits only some sub-clusters fits (no GPU
   sub-cluster while a GPU queue is active), or its AMRM weights when none is open. An AM asks for memory and vcores only, and each core
   divides its own nodes by the shares *it* sees: an AM homed in the only sub-cluster a GPU queue
   fits takes room that queue's containers cannot find elsewhere, and (the GPU queue's own AMs)
   raises the GPU queue's share there, so that core serves the others first.

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

from scheduler.config import QueueConfig, QueueSpec
from scheduler.policies import POLICIES
from scheduler.pooled import Fill, fill, fill_nodes
from scheduler.targets import ReplayInput

MAX_QUEUES = 10_000  # queues in one status document
MAX_ROWS = 1_000_000  # nodes, containers or apps in one demand document
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
class SubClusterDemand:
    """A sub-cluster core's `/v1/demand`: its nodes, running containers and runnable apps' asks
    (scheduler.targets.ReplayInput.to_doc's rows, checked)."""

    id: str
    nodes: tuple[tuple, ...]
    running: tuple[tuple, ...]
    apps: tuple[tuple, ...]


@dataclass(frozen=True)
class QueuePlan:
    """One leaf's federation-wide figures and the weights that move it toward its target."""

    name: str
    share: float  # dominant share of the whole federation now
    target_share: float  # dominant share of its federation-wide target
    weights: dict[str, float]  # sub-cluster id -> AMRM weight, summing to 1
    router: dict[str, float]  # sub-cluster id -> router weight, summing to 1


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


def parse_demand(sc_id: str, doc: Any, types: tuple[str, ...]) -> SubClusterDemand:
    """A sub-cluster's `/v1/demand` document, checked row by row against its resource types."""
    where = f"sub-cluster {sc_id}: /v1/demand"
    if not isinstance(doc, dict) or doc.get("resource_types") != list(types):
        raise StatusError(f"{where}: resource_types must be {list(types)}, as its /v1/queues says")
    rows = {k: doc.get(k) for k in ("nodes", "running", "apps")}
    for k, v in rows.items():
        if not isinstance(v, list) or len(v) > MAX_ROWS:
            raise StatusError(f"{where}: {k} must be a list of at most {MAX_ROWS} rows")

    def vector(v: Any) -> bool:
        return isinstance(v, list) and len(v) == len(types) and all(_number(x) and 0 <= x <= MAX_AMOUNT for x in v)

    def ints(v: Any) -> bool:
        return isinstance(v, list) and len(v) <= 64 and all(isinstance(x, int) and not isinstance(x, bool)
                                                           and 0 <= x <= MAX_AMOUNT for x in v)

    def text(v: Any) -> bool:
        return isinstance(v, str) and bool(v)

    def check(k: str, i: int, ok: bool) -> None:
        if not ok:
            raise StatusError(f"{where}: {k}[{i}] is not a {k} row")

    for i, r in enumerate(rows["nodes"]):
        check("nodes", i, isinstance(r, list) and len(r) == 4 and text(r[0]) and text(r[1]) and vector(r[2])
              and (r[3] is None or ints(r[3])))
    for i, r in enumerate(rows["running"]):
        check("running", i, isinstance(r, list) and len(r) == 5 and text(r[0]) and text(r[1]) and vector(r[2])
              and ints(r[3]) and isinstance(r[4], bool))
    for i, r in enumerate(rows["apps"]):
        check("apps", i, isinstance(r, list) and len(r) == 5 and all(text(x) for x in r[:3])
              and isinstance(r[3], int) and not isinstance(r[3], bool) and isinstance(r[4], list)
              and all(isinstance(a, list) and len(a) == 3 and isinstance(a[0], int) and vector(a[1])
                      and isinstance(a[2], int) and not isinstance(a[2], bool) and 0 <= a[2] <= MAX_AMOUNT
                      for a in r[4]))
    # node ids are the sub-cluster's own: prefixed, so two sub-clusters' nodes never meet
    return SubClusterDemand(sc_id, tuple((f"{sc_id}/{n}", rack, cap, cards) for n, rack, cap, cards in rows["nodes"]),
                            tuple((a, f"{sc_id}/{n}", res, cards, am) for a, n, res, cards, am in rows["running"]),
                            tuple(tuple(r) for r in rows["apps"]))


# ---------------------------------------------------------------------------- the plan

def plan(statuses: list[SubClusterStatus], demands: list[SubClusterDemand] | None = None,
         seen: dict[str, frozenset[int]] | None = None) -> tuple[dict[str, QueuePlan], list[str]]:
    """Every leaf with demand: its federation-wide share, target (shape-aware with `demands`,
    pooled without) and weights; and the leaves that fit no sub-cluster (they get no policy).
    `seen`, kept by the caller from round to round: the resources (by index) each leaf's demand has
    used since it last had none, updated here. A leaf fits only where all of them are: a GPU queue
    whose apps ask only for their AMs for a round is still a GPU queue, and its weights stay off
    the sub-clusters without cards, where its next asks could not run."""
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
    active = [n for n in usage if any(demand[n])]
    before = seen if seen is not None else {}
    uses = {n: before.get(n, frozenset()) | {i for i, d in enumerate(demand[n]) if d > 0} for n in active}
    if seen is not None:
        seen.clear()
        seen.update(uses)
    fits = {n: [s for s in statuses if all(s.capacity[i] > 0 for i in uses[n])] for n in active}
    if demands is not None:
        target, placed = reachable_targets(queues, demand, types, demands)
    else:
        target = federation_targets(queues, demand, types, total)
        placed = _place(sorted(active, key=lambda n: (len(fits[n]), n)), fits, target)
    unfit = sorted(n for n in active if not fits[n])
    fitting = {n: [s.id for s in fits[n]] for n in active if fits[n]}
    # each leaf's plan and what it lacks of it, by sub-cluster it fits
    there = {n: {sc: placed[n].get(sc, _zero(types)) for sc in scs} for n, scs in fitting.items()}
    lack = {n: {sc: _dominant(tuple(max(0.0, p - u) for p, u in zip(there[n][sc], usage[n][sc])), total)
                for sc in scs} for n, scs in fitting.items()}
    # sub-clusters no leaf needs more than the others: none of the leaves that fit only some fits there
    open_ = [s.id for s in statuses if not any(s.id in scs for scs in fitting.values() if len(scs) < len(statuses))]
    plans = {}
    for n, scs in fitting.items():
        weights = amrm_weights([s.id for s in statuses], lack[n], there[n], total,
                               yielded={sc for sc in scs for m, other in fitting.items()
                                        if len(other) < len(scs) and lack[m].get(sc, 0.0) > _EPS})
        used = tuple(sum(col) for col in zip(*usage[n].values()))
        plans[n] = QueuePlan(n, _dominant(used, total), _dominant(target[n], total), weights,
                             router_weights(weights, open_))
    return plans, unfit


def amrm_weights(subclusters: list[str], lack: dict[str, float], plan: dict[str, tuple[float, ...]],
                 total: tuple[float, ...], yielded: set[str]) -> dict[str, float]:
    """A leaf's AMRM weights: in proportion to what it lacks of its plan in each sub-cluster it
    fits (`lack`, `plan`: by those sub-clusters), but none in a sub-cluster it yields, where a leaf
    that fits fewer sub-clusters lacks some of its own plan: each core serves the leaf that is
    poorest by *its* shares, and a CPU queue with a small part in the GPU sub-cluster is poorer
    there than the GPU queue, whatever their federation-wide shares. Lacking nothing, a leaf keeps
    its plan's proportions; without a plan, it is spread evenly; over the sub-clusters it does not
    yield, or over all it fits when it yields every one."""
    free = [sc for sc in lack if sc not in yielded] or list(lack)
    raw = {sc: lack[sc] for sc in free}
    if sum(raw.values()) <= _EPS:
        raw = {sc: _dominant(plan[sc], total) for sc in free}
    if sum(raw.values()) <= _EPS:
        raw = dict.fromkeys(free, 1.0)
    return normalized({sc: raw.get(sc, 0.0) for sc in subclusters})


def router_weights(amrm: dict[str, float], open_: list[str]) -> dict[str, float]:
    """Where a leaf's apps are homed: its AMRM weights over the open sub-clusters, those that no
    leaf fitting only some sub-clusters fits (evenly over them where its asks go elsewhere); its
    AMRM weights when none is open."""
    if not open_:
        return amrm
    home = {sc: amrm[sc] for sc in open_}
    if sum(home.values()) <= _EPS:
        home = {sc: 1.0 for sc in open_}
    return normalized({sc: home.get(sc, 0.0) for sc in amrm})


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


def reachable_targets(queues: dict[str, QueueStatus], demand: dict[str, tuple[float, ...]],
                      types: tuple[str, ...], demands: list[SubClusterDemand]
                      ) -> tuple[dict[str, tuple[float, ...]], dict[str, dict[str, tuple[float, ...]]]]:
    """Each leaf's shape-aware federation-wide target, and its part in each sub-cluster: the cores'
    reachable-target replay (scheduler.targets) over every sub-cluster's nodes, containers and asks
    as one cluster. An app with parts in several sub-clusters (its home and its unmanaged AMs) is
    one app with every part's asks, wherever the AMRM weights sent them. Users, limits and locality
    are each core's."""
    children: dict[str | None, list[str]] = {}
    for n, q in queues.items():
        children.setdefault(q.parent, []).append(n)
    roots = children.get(None, [])
    if len(roots) != 1:
        raise StatusError(f"the sub-clusters' queues have {len(roots)} roots; one tree is needed")
    config = QueueConfig(root=_spec(queues, children, roots[0]), resources=types, starvation_timeout_s=None,
                         source="<federation>")
    apps: dict[str, list] = {}
    for d in demands:
        for app_id, user, leaf, priority, asks in d.apps:
            if leaf not in queues or not queues[leaf].leaf:
                continue  # not a leaf of the union's tree: its work is no leaf's target
            apps.setdefault(app_id, [app_id, user, leaf, priority, []])[4].extend(asks)
    # (each core lists every app that holds a container, so every container's app is here)
    running = [r for d in demands for r in d.running if r[0] in apps]
    inp = ReplayInput.of(types, config, [n for d in demands for n in d.nodes], running, list(apps.values()))
    reached = inp.compute()
    zero = _zero(types)
    subcluster = {n[0]: d.id for d in demands for n in d.nodes}
    placed: dict[str, dict[str, tuple[float, ...]]] = {n: {} for n in demand}
    for leaf, on in reached.placed.items():
        for node, alloc in on.items():
            if leaf in placed:
                sc = subcluster[node]
                placed[leaf][sc] = tuple(a + b for a, b in zip(placed[leaf].get(sc, zero), alloc))
    return {n: reached.queues.get(n, zero) for n in demand}, placed


def _spec(queues: dict[str, QueueStatus], children: dict[str | None, list[str]], name: str) -> QueueSpec:
    return QueueSpec(path=name, weight=queues[name].weight, parent=not queues[name].leaf,
                     children=tuple(_spec(queues, children, c) for c in children.get(name, [])))


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
