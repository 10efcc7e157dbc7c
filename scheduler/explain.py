"""Read-only analysis of a live SchedulerCore for operators: fair targets and why requests wait.

`targets(core)` computes each queue's weighted-DRF target: the allocation it would hold if every
queue with demand got its fair part. It is progressive filling (the DRF paper's water-filling)
over the whole tree at once: each leaf's allocation grows along its demand vector (usage plus
what its runnable apps ask), the children of every queue rising together at equal weighted
dominant share; a leaf stops when it has all its demand or when a resource it uses runs out in
the cluster or in the `max` of a queue above it, and queues below their `min` go first, the way
the core serves them. The fill is exact (event by event), not sampled.

`why_pending(core, app_id)` names, for each pending request of an app, every reason it is not
running now, in the terms the core decides by (max-running-apps, queue max, reservations, node
room per resource, locality).

Nothing here changes the core; callers hold the service lock while calling.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from operator import mul

from scheduler.core import SchedulerCore
from scheduler.model import App, Node, Queue, Request
from scheduler.resources import dominant_resource, dominant_share, fits, vadd, vsub

UNLIMITED = 1 << 62  # the core's "no max on this resource"


@dataclass(frozen=True)
class Target:
    """A queue's fair target: the allocation vector and its (weighted) dominant share."""

    allocation: tuple[float, ...]
    dominant_share: float
    weighted_share: float
    demand: tuple[int, ...]  # usage + pending of runnable apps, before max caps


# ---------------------------------------------------------------------------- targets

_EPS = 1e-9
_TINY = 1e-12  # the key slope of demand that does not move a queue's key (the core serves it first)
_MAX_SEGMENTS = 100_000


class _Fill:
    """One queue in the fluid fill: leaves hold t * demand; parents sum their children.

    It copies what the fill needs from the live queue, so the fill runs without the service lock.
    """

    __slots__ = ("path", "is_root", "children", "raw", "demand", "t", "frozen", "scale", "min_inv", "limit",
                 "alloc", "growable", "growing", "krate", "slope", "v", "rate")

    def __init__(self, q: Queue, raw: tuple[int, ...], limit: tuple[float, ...] | None,
                 scale: tuple[float, ...]) -> None:
        self.path = q.path
        self.is_root = q.parent is None
        self.children: list[_Fill] = []
        self.raw = raw  # usage + pending of the queue's own apps (then of its subtree, once built)
        self.demand = tuple(float(v) for v in raw)
        self.t = 0.0
        self.frozen = not any(raw)
        self.scale = scale
        self.min_inv = q.min_inv
        self.limit = limit
        self.alloc = self.demand
        self.growable = False
        self.growing: list[_Fill] = []
        self.krate = 0.0  # how fast this queue's key rises per unit of fill time
        self.slope = 1.0  # how fast its key rises per unit its children's common key rises (leaf: per t)
        self.v: tuple[float, ...] = ()
        self.rate = 0.0  # leaves: dt per unit of fill time


class TargetInput:
    """What the target fill needs, copied from the core: take it under the lock, compute after."""

    def __init__(self, core: SchedulerCore) -> None:
        self.capacity = core.capacity
        self.aggregate = core.policy.aggregate
        self.root = _build_fill(core.root, core, tuple(float(c) for c in core.capacity))

    def compute(self) -> dict[str, Target]:
        """Every queue's weighted-DRF target (see `targets`). Runs once per input."""
        _fill(self.root, self.aggregate is sum)
        cap = self.capacity
        return {node.path: Target(
            allocation=node.alloc,
            dominant_share=dominant_share(node.alloc, cap),
            weighted_share=self.aggregate(map(mul, node.alloc, node.scale)) if node.scale else 0.0,
            demand=node.raw,
        ) for node in _fill_nodes(self.root)}


def targets(core: SchedulerCore) -> dict[str, Target]:
    """Every queue's weighted-DRF target allocation (see the module doc).

    The fill is the fluid limit of the core's own decision, computed event by event: between
    events every growing leaf grows linearly, at rates that keep the keys of the growing children
    of each queue equal (queues below their min by how far below, the others by weighted dominant
    share, the lowest key first). Events: a leaf has all its demand; a queue's max or the cluster
    runs out of a resource (the leaves using it stop: DRF progressive filling); a queue reaches its
    min; a parent's dominant resource changes; a waiting child's key is reached.
    """
    return TargetInput(core).compute()


def _build_fill(q: Queue, core: SchedulerCore, limit: tuple[float, ...] | None = None) -> _Fill:
    raw = core.types.zero
    for app in q.apps.values():
        raw = vadd(raw, app.usage)
        if app.runnable:
            for req in app.pending:
                raw = vadd(raw, tuple(v * req.count for v in req.capability))
    if limit is None and q.max is not None:
        limit = tuple(math.inf if m >= UNLIMITED else float(m) for m in q.max)
    node = _Fill(q, raw, limit, share_scale(core, q))
    for child in q.children.values():
        node.children.append(_build_fill(child, core))
        raw = vadd(raw, node.children[-1].raw)
    node.raw = raw
    if node.children:
        node.frozen = True  # parents grow through their leaves only
    return node


def _fill_nodes(node: _Fill):
    yield node
    for child in node.children:
        yield from _fill_nodes(child)


def _fill(root: _Fill, additive: bool) -> None:
    nodes = list(_fill_nodes(root))
    leaves = [n for n in nodes if not n.children]
    for _ in range(_MAX_SEGMENTS):
        for n in reversed(nodes):  # children before parents
            _sum_up(n)
        for n in nodes:
            if n.limit is not None:
                _freeze_tight(n)
        for n in leaves:
            if n.t >= 1.0 - _EPS:
                n.frozen = True
        for n in reversed(nodes):
            n.growable = (not n.frozen) if not n.children else any(c.growable for c in n.children)
        if not root.growable:
            return
        for n in reversed(nodes):
            _slopes(n, additive)
        _rates(root, 1.0)
        step = _next_event(nodes, leaves, additive)
        if not math.isfinite(step):
            return
        for n in leaves:
            if n.rate:
                n.t = min(1.0, n.t + step * n.rate)
    for n in reversed(nodes):
        _sum_up(n)


def _sum_up(n: _Fill) -> None:
    if n.children:
        width = len(n.demand)
        n.alloc = tuple(sum(c.alloc[j] for c in n.children) for j in range(width))
    else:
        n.alloc = tuple(n.t * d for d in n.demand)


def _freeze_tight(n: _Fill) -> None:
    """A queue (or the cluster) out of a resource: every leaf below it that uses it stops."""
    tight = [j for j, (a, m) in enumerate(zip(n.alloc, n.limit)) if a >= m - _EPS * max(m, 1.0)]
    if tight:
        for leaf in _fill_nodes(n):
            if not leaf.children and any(leaf.demand[j] > 0 for j in tight):
                leaf.frozen = True


def _key(n: _Fill, additive: bool) -> tuple[int, float]:
    """The core's key of a queue at its current fill: (0, how far below min) or (1, weighted share)."""
    if n.min_inv is not None:
        below = max(map(mul, n.alloc, n.min_inv))
        if below < 1.0 - _EPS:
            return 0, below
    parts = list(map(mul, n.alloc, n.scale))
    return 1, (sum(parts) if additive else max(parts))


def _key_rate(n: _Fill, phase: int, growth: Sequence[float], additive: bool) -> float:
    """How fast the key of `n` rises when its allocation grows by `growth` per unit."""
    factors = n.min_inv if phase == 0 else n.scale
    if additive and phase == 1:
        return sum(map(mul, growth, factors))
    parts = list(map(mul, n.alloc, factors))
    top = max(parts)
    # Under max, the key follows the fastest of the components tied at the top.
    return max((g * f for p, g, f in zip(parts, growth, factors) if p >= top - _EPS * max(top, 1.0)),
               default=0.0)


def _slopes(n: _Fill, additive: bool) -> None:
    """Bottom-up: the growing children of `n` and how its key rises with theirs."""
    if not n.growable:
        n.growing, n.v = [], ()
        return
    phase = _key(n, additive)[0]
    if not n.children:
        n.slope = max(_key_rate(n, phase, n.demand, additive), _TINY)
        n.v = tuple(d / n.slope for d in n.demand)
        return
    candidates = [(c, _key(c, additive)) for c in n.children if c.growable]
    lowest = min(k for _, k in candidates)
    n.growing = [c for c, k in candidates if k[0] == lowest[0] and k[1] <= lowest[1] + _EPS * max(lowest[1], 1.0)]
    growth = [0.0] * len(n.demand)
    for c in n.growing:
        for j, x in enumerate(c.v):
            growth[j] += x
    n.slope = max(_key_rate(n, phase, growth, additive), _TINY)
    n.v = tuple(g / n.slope for g in growth)


def _rates(n: _Fill, krate: float) -> None:
    """Top-down: the key of `n` rises at `krate`; its growing children's common key at krate / slope."""
    n.krate = krate
    if not n.children:
        n.rate = krate / n.slope if n.growable else 0.0
        return
    inner = krate if n.is_root else krate / n.slope  # root: its children set the pace
    growing = set(map(id, n.growing))
    for c in n.children:
        _rates(c, inner if id(c) in growing else 0.0)


def _next_event(nodes: list[_Fill], leaves: list[_Fill], additive: bool) -> float:
    step = math.inf
    growth: dict[int, list[float]] = {}
    for n in leaves:
        if n.rate > 0:
            step = min(step, (1.0 - n.t) / n.rate)  # all its demand
    for n in reversed(nodes):
        if n.children:
            g = [0.0] * len(n.demand)
            for c in n.children:
                for j, x in enumerate(growth[id(c)]):
                    g[j] += x
        else:
            g = [n.rate * d for d in n.demand]
        growth[id(n)] = g
        if n.limit is not None:  # a max, or the cluster, runs out of a resource
            for a, m, r in zip(n.alloc, n.limit, g):
                if r > 0 and math.isfinite(m):
                    step = min(step, max(0.0, (m - a) / r))
        if n.is_root or not any(g):
            continue
        phase = _key(n, additive)[0]
        factors = n.min_inv if phase == 0 else n.scale
        parts = [a * f for a, f in zip(n.alloc, factors)]
        rates = [x * f for x, f in zip(g, factors)]
        if phase == 0:  # reaches its min when its first min'd resource does
            step = min([step] + [(1.0 - p) / r for p, r in zip(parts, rates) if r > 0])
        if n.children and (phase == 0 or not additive):  # another resource overtakes the leading one
            top = max(parts)
            lead = max((r for p, r in zip(parts, rates) if p >= top - _EPS * max(top, 1.0)), default=0.0)
            step = min([step] + [(top - p) / (r - lead) for p, r in zip(parts, rates) if r > lead])
    for n in nodes:  # the growing children's key reaches a waiting child's
        if not n.growing:
            continue
        phase, level = _key(n.growing[0], additive)
        pace = n.growing[0].krate
        for c in n.children:
            if c.growable and c not in n.growing:
                k = _key(c, additive)
                if k[0] == phase and pace > 0:
                    step = min(step, max(0.0, (k[1] - level) / pace))
    return step


# ---------------------------------------------------------------------------- live figures

def share_scale(core: SchedulerCore, q: Queue) -> tuple[float, ...]:
    """The multipliers turning q's usage into its weighted share, at the current cluster capacity.

    The core refreshes its own copy lazily, at its next decision after nodes change; a status read
    must not wait for that (nor refresh the core itself, which is the core's business).
    """
    return core.policy.scale(core.types.names, core.divided, core.capacity, q.spec.weight)


@dataclass(frozen=True)
class QueueFigures:
    usage: tuple[int, ...]
    pending: tuple[int, ...]  # what the apps in and below the queue still ask for
    dominant_share: float
    dominant_resource: str | None
    weighted_share: float
    running_apps: int
    waiting_apps: int  # held back by max-running-apps
    reservations: int  # nodes reserved for requests of apps in and below the queue


def queue_figures(core: SchedulerCore) -> dict[str, QueueFigures]:
    """Per queue, what operators look at, in one pass over apps and nodes (O(apps x depth))."""
    zero, cap, names = core.types.zero, core.capacity, core.types.names
    pending = dict.fromkeys(core.queues, zero)
    waiting = dict.fromkeys(core.queues, 0)
    for app in core.apps.values():
        own = zero
        for req in app.pending:
            own = vadd(own, tuple(v * req.count for v in req.capability))
        for q in app.queue.ancestors_and_self():
            if own != zero:
                pending[q.path] = vadd(pending[q.path], own)
            if not app.runnable:
                waiting[q.path] += 1
    reserved = reservations_by_queue(core)
    return {path: QueueFigures(
        usage=q.usage, pending=pending[path],
        dominant_share=dominant_share(q.usage, cap), dominant_resource=dominant_resource(q.usage, cap, names),
        weighted_share=core.policy.aggregate(map(mul, q.usage, share_scale(core, q))),
        running_apps=q.running_apps, waiting_apps=waiting[path], reservations=reserved.get(path, 0),
    ) for path, q in core.queues.items()}


def reservations_by_queue(core: SchedulerCore) -> dict[str, int]:
    """How many nodes hold a reservation for a request of an app in (or below) each queue."""
    out: dict[str, int] = {}
    for node in core.nodes.values():
        if node.reserved is not None:
            for q in node.reserved.app.queue.ancestors_and_self():
                out[q.path] = out.get(q.path, 0) + 1
    return out


# ---------------------------------------------------------------------------- why pending

def why_pending(core: SchedulerCore, app_id: str) -> dict | None:
    """The app's requests, each pending one with every reason it is not running now; None if unknown."""
    app = core.apps.get(app_id)
    if app is None:
        return None
    now = core.clock()
    types = core.types
    requests = []
    for req in sorted(app.requests.values(), key=lambda r: r.key):
        entry = {
            "priority": req.key[0],
            "allocation_id": req.key[1],
            "resources": types.to_dict(req.capability),
            "pending": req.count,
            "relax_locality": req.relax,
            "nodes": {n: c for n, c in req.nodes.items() if c > 0},
            "racks": {r: {"count": v[0], "relax_locality": v[1]} for r, v in req.racks.items()},
            "reserved_node": req.reserved_node.id if req.reserved_node is not None else None,
        }
        if req.count > 0:
            entry["waiting_s"] = round(max(0.0, now - req.since), 3)
            entry["reasons"] = _reasons(core, app, req, now)
        requests.append(entry)
    return {
        "app": app.id,
        "user": app.user,
        "queue": app.queue.path,
        "queue_draining": app.queue.draining,
        "runnable": app.runnable,
        "usage": types.to_dict(app.usage),
        "containers": len(app.containers),
        "requests": requests,
    }


def _reason(code: str, message: str, **details) -> dict:
    return {"code": code, "message": message, **details}


def _reasons(core: SchedulerCore, app: App, req: Request, now: float) -> list[dict]:
    types = core.types
    shape = types.format(req.capability)
    if not app.runnable:
        limit = _app_limit(app.queue)
        ahead = core.waiting_ahead(app, limit)
        return [_reason("max-running-apps",
                        f"the app is not running yet: max-running-apps reached in {limit.path} "
                        f"({limit.running_apps} of {limit.max_apps} running); {ahead} app(s) wait ahead of it",
                        queue=limit.path, running=limit.running_apps, limit=limit.max_apps, ahead=ahead)]
    out = []
    for q in app.queue.ancestors_and_self():
        if q.max is None:
            continue
        after = vadd(q.usage, req.capability)
        over = [j for j, (u, m) in enumerate(zip(after, q.max)) if u > m]
        if over:
            parts = [f"{types.names[j]} {q.usage[j]} used of max {q.max[j]}, needs {req.capability[j]} more"
                     for j in over]
            out.append(_reason("queue-at-max", f"queue {q.path} is at its max: " + "; ".join(parts),
                               queue=q.path, resources=[types.names[j] for j in over]))
    if req.reserved_node is not None:
        node = req.reserved_node
        free = vsub(node.capacity, node.allocated)
        short = [f"{types.names[j]} {free[j]} free of {req.capability[j]}"
                 for j in range(len(free)) if req.capability[j] > free[j]]
        out.append(_reason("holds-reservation",
                           f"holds a reservation on node {node.id}; it starts there when the node frees "
                           f"{'; '.join(short) or 'room (it fits now: at the next heartbeat)'}",
                           node=node.id))
    at_max = any(r["code"] == "queue-at-max" for r in out)
    # Room on a node does not make a request at its queue's max ready.
    out += [r for r in _node_reasons(core, app, req, shape) if not (at_max and r["code"] == "ready")]
    # Only a request that is large enough for some node but finds no room there can reserve one.
    if core.timeout is not None and req.reserved_node is None and any(r["code"] == "no-node-room" for r in out):
        waited = now - req.since
        left = core.timeout - waited
        out.append(_reason("starvation", f"waiting {waited:.0f} s; "
                           + (f"may reserve a node after {left:.0f} s more (starvation timeout "
                              f"{core.timeout:g} s)" if left > 0 else
                              f"past the starvation timeout ({core.timeout:g} s): the next node that is "
                              f"large enough reserves for it when its queue is next in fair order"),
                           waited_s=round(waited, 3), timeout_s=core.timeout))
    return out


def _app_limit(leaf: Queue) -> Queue:
    for q in leaf.ancestors_and_self():
        if q.max_apps is not None and q.running_apps >= q.max_apps:
            return q
    return leaf


def _node_reasons(core: SchedulerCore, app: App, req: Request, shape: str) -> list[dict]:
    types = core.types
    nodes = list(core.nodes.values())
    if not nodes:
        return [_reason("no-nodes", "the cluster has no nodes")]
    local = [n for n in nodes if req.allows(n)]
    where = _locality_text(req)
    if not local:
        return [_reason("locality", f"relax-locality is off and no node of the cluster matches its locality "
                                    f"({where})", nodes=sorted(req.nodes), racks=sorted(req.racks))]
    banned = [n for n in local if n.id in app.blacklist or n.rack in app.blacklist]
    allowed = [n for n in local if n not in banned]
    if not allowed:
        return [_reason("blacklist", "the app's AM blacklisted every node it may run on: "
                                     + ", ".join(sorted(n.id for n in banned)), nodes=sorted(n.id for n in banned))]
    out = []
    elsewhere = []  # reasons naming room the request may not use
    if len(local) < len(nodes) and any(fits(req.capability, _free(n)) for n in nodes if n not in local):
        elsewhere.append(_reason("locality", f"nodes outside its locality ({where}) have room, but "
                                             "relax-locality is off"))
    roomy_banned = sorted(n.id for n in banned if fits(req.capability, _free(n)))
    if roomy_banned:
        elsewhere.append(_reason("blacklist", "the app's AM blacklisted nodes that have room: "
                                              + ", ".join(roomy_banned), nodes=roomy_banned))
    big = [n for n in allowed if fits(req.capability, n.capacity)]
    if not big:
        short = _short(req, allowed, "capacity")
        parts = [_largest(types, j, req, allowed, lambda n: n.capacity) for j in short]
        out.append(_reason("too-large", f"no node is large enough for {shape}: " + "; ".join(parts),
                           resources=[types.names[j] for j in short]))
        return out + elsewhere
    room = [n for n in big if fits(req.capability, _free(n))]
    if not room:
        short = _short(req, big, "free")
        if short:
            parts = [_largest(types, j, req, big, _free) for j in short]
            message = f"no node has room for {shape}: " + "; ".join(parts)
        else:
            near = min(big, key=lambda n: sum(max(0, c - f) / max(c, 1)
                                              for c, f in zip(req.capability, _free(n))))
            short = [j for j, (c, f) in enumerate(zip(req.capability, _free(near))) if c > f]
            lack = [f"{types.names[j]} {_free(near)[j]} free of {req.capability[j]}" for j in short]
            message = (f"no node has room for {shape} at once (each resource is free somewhere); "
                       f"the nearest, {near.id}, lacks " + "; ".join(lack))
        out.append(_reason("no-node-room", message, resources=[types.names[j] for j in short],
                           largest_free={types.names[j]: max(_free(n)[j] for n in big) for j in range(len(types))}))
        return out + elsewhere
    open_nodes = [n for n in room if n.reserved is None or n.reserved is req]
    if not open_nodes:
        holders = sorted({f"{n.id} (for app {n.reserved.app.id} {types.format(n.reserved.capability)})"
                          for n in room})
        out.append(_reason("behind-reservation", "waiting behind a reservation: the nodes with room are "
                                                 "reserved for other requests: " + ", ".join(holders),
                           nodes=sorted(n.id for n in room)))
        return out
    names = sorted(n.id for n in open_nodes)
    out.append(_reason("ready", f"fits now on {len(names)} node(s) ({', '.join(names[:5])}"
                                f"{', ...' if len(names) > 5 else ''}); it starts at the next heartbeat of one "
                                "of them unless queues and apps with a lower share take the room first",
                       nodes=names))
    return out


def _free(node: Node) -> tuple[int, ...]:
    return vsub(node.capacity, node.allocated)


def _short(req: Request, nodes: list[Node], what: str) -> list[int]:
    """Resources of the request larger than the largest capacity (or free amount) on any of `nodes`."""
    get = (lambda n: n.capacity) if what == "capacity" else _free
    return [j for j, c in enumerate(req.capability) if c > max(get(n)[j] for n in nodes)]


def _largest(types, j: int, req: Request, nodes: list[Node], get) -> str:
    best = max(nodes, key=lambda n: get(n)[j])
    kind = "capacity" if get is not _free else "free"
    return (f"{types.names[j]} needs {req.capability[j]}, the largest {kind} on any node is "
            f"{get(best)[j]} ({best.id})")


def _locality_text(req: Request) -> str:
    parts = []
    if req.nodes:
        parts.append("nodes " + ", ".join(sorted(n for n, c in req.nodes.items() if c > 0) or sorted(req.nodes)))
    if req.racks:
        parts.append("racks " + ", ".join(sorted(req.racks)))
    return "; ".join(parts) or "any node"
