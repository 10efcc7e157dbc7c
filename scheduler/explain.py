"""Read-only analysis of a live SchedulerCore for operators: fair targets and why requests wait.

`targets(core)` computes each queue's weighted-DRF target: the allocation it would hold if every
queue with demand got its fair part. It is progressive filling (the DRF paper's water-filling),
done top-down over the tree: among the children of a queue, each child's allocation grows along
its demand vector at the same weighted-dominant-share level until a resource runs out (children
that use it stop) or the child has all its demand; a child's demand is capped by its `max`, and
children below their `min` are filled first, up to their min, the way the core serves them first.

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
from scheduler.resources import dominant_share, fits, vadd, vsub

UNLIMITED = 1 << 62  # the core's "no max on this resource"
_BISECTIONS = 200


@dataclass(frozen=True)
class Target:
    """A queue's fair target: the allocation vector and its (weighted) dominant share."""

    allocation: tuple[float, ...]
    dominant_share: float
    weighted_share: float
    demand: tuple[int, ...]  # usage + pending of runnable apps, before max caps


# ---------------------------------------------------------------------------- water-filling

def waterfill(directions: Sequence[Sequence[float]], rates: Sequence[float], lo: Sequence[float],
              hi: Sequence[float], room: Sequence[float], level_cap: float = math.inf) -> list[float]:
    """Progressive filling over entities that grow along fixed direction vectors.

    Entity i holds t_i * directions[i] with t_i(level) = clamp(level * rates[i], lo[i], hi[i]).
    The level rises for all unfrozen entities together; when a resource of `room` is used up,
    every entity using that resource freezes (DRF progressive filling), and an entity also stops
    at hi. Returns the t_i. The sum of lo must fit `room` (it is the starting point).
    """
    n = len(directions)
    t = [min(lo[i], hi[i]) for i in range(n)]
    active = {i for i in range(n) if hi[i] > t[i] and rates[i] > 0 and any(directions[i])}
    level = 0.0
    while active:
        fixed = _load(directions, t, (i for i in range(n) if i not in active), len(room))

        def load_at(lam: float) -> list[float]:
            out = list(fixed)
            for i in active:
                ti = min(max(lam * rates[i], lo[i]), hi[i])
                for j, d in enumerate(directions[i]):
                    out[j] += ti * d
            return out

        top = min(level_cap, max(hi[i] / rates[i] for i in active))
        if _fits(load_at(top), room):
            level = top
        else:
            low, high = level, top
            for _ in range(_BISECTIONS):
                mid = (low + high) / 2
                if mid in (low, high):
                    break
                if _fits(load_at(mid), room):
                    low = mid
                else:
                    high = mid
            level = low
        for i in active:
            t[i] = min(max(level * rates[i], lo[i]), hi[i])
        if level >= level_cap:
            break
        used = load_at(level)
        full = [j for j, r in enumerate(room) if r - used[j] <= 1e-9 * max(r, 1.0)]
        done = {i for i in active if t[i] >= hi[i] or any(directions[i][j] > 0 for j in full)}
        active -= done or set(active)  # nothing froze: rounding; stop rather than loop
    return t


def _load(directions, t, which, width: int) -> list[float]:
    out = [0.0] * width
    for i in which:
        for j, d in enumerate(directions[i]):
            out[j] += t[i] * d
    return out


def _fits(used: Sequence[float], room: Sequence[float]) -> bool:
    return all(u <= r + 1e-12 * max(r, 1.0) for u, r in zip(used, room))


# ---------------------------------------------------------------------------- targets

def targets(core: SchedulerCore) -> dict[str, Target]:
    """Every queue's weighted-DRF target allocation (see the module doc)."""
    core.snapshot()  # brings limits and scales up to date after capacity changes
    cap = core.capacity
    demand: dict[str, tuple[int, ...]] = {}
    effective: dict[str, tuple[float, ...]] = {}
    _demands(core.root, core, demand, effective)
    root_alloc = tuple(min(e, c) for e, c in zip(effective[core.root.path], cap))
    alloc: dict[str, tuple[float, ...]] = {core.root.path: root_alloc}
    _divide(core.root, core, effective, alloc)
    out = {}
    for path, q in core.queues.items():
        a = alloc.get(path, (0.0,) * len(cap))
        out[path] = Target(
            allocation=a,
            dominant_share=dominant_share(a, cap),
            weighted_share=core.policy.aggregate(map(mul, a, q.scale)) if q.scale else 0.0,
            demand=demand[path],
        )
    return out


def _demands(q: Queue, core: SchedulerCore, demand: dict, effective: dict) -> tuple[float, ...]:
    """Fills demand (raw) and effective (capped by max, per subtree) for `q` and below."""
    zero = core.types.zero
    raw = zero
    for app in q.apps.values():
        raw = vadd(raw, app.usage)
        if app.runnable:
            for req in app.pending:
                raw = vadd(raw, tuple(v * req.count for v in req.capability))
    eff: tuple[float, ...] = tuple(float(v) for v in raw)
    for child in q.children.values():
        child_eff = _demands(child, core, demand, effective)
        eff = tuple(a + b for a, b in zip(eff, child_eff))
        raw = vadd(raw, demand[child.path])
    if q.max is not None:
        eff = _scaled(eff, _cap_factor(eff, q.max))
    demand[q.path], effective[q.path] = raw, eff
    return eff


def _cap_factor(vector: Sequence[float], limit: Sequence[float]) -> float:
    """The largest s <= 1 with s * vector within limit (demand grows along its own direction)."""
    s = 1.0
    for v, m in zip(vector, limit):
        if v > 0 and m < UNLIMITED:
            s = min(s, m / v)
    return s


def _scaled(vector: Sequence[float], s: float) -> tuple[float, ...]:
    return tuple(v * s for v in vector)


def _divide(parent: Queue, core: SchedulerCore, effective: dict, alloc: dict) -> None:
    """Water-fills `parent`'s allocation among its children, then recurses."""
    children = list(parent.children.values())
    if not children:
        return
    room = alloc[parent.path]
    cap = core.capacity
    dirs = [effective[c.path] for c in children]
    hi = [1.0 if any(d) else 0.0 for d in dirs]
    shares = [core.policy.aggregate(map(mul, d, c.scale)) if c.scale else 0.0 for d, c in zip(dirs, children)]
    # The capacity cap: a child cannot get more of a resource than its parent holds.
    hi = [min(h, _cap_factor(d, room)) for h, d in zip(hi, dirs)]

    # 1. Demand that the policy does not count (e.g. gpu-mem under drf-no-gpu) has key 0 in the
    #    core and is served first; fill it by plain dominant share.
    free = [i for i, s in enumerate(shares) if s == 0 and hi[i] > 0]
    lo = [0.0] * len(children)
    if free:
        rates = [1.0 / max(dominant_share(dirs[i], cap), 1e-300) if i in free else 0.0
                 for i in range(len(children))]
        t = waterfill(dirs, rates, lo, [hi[i] if i in free else 0.0 for i in range(len(children))], room)
        for i in free:
            lo[i] = hi[i] = t[i]

    # 2. Children below their min first, the furthest below first, up to the min.
    mins = [_min_factor(c, d, core) for c, d in zip(children, dirs)]
    want = [min(m, h) if i not in free else 0.0 for i, (m, h) in enumerate(zip(mins, hi))]
    if any(want):
        t = waterfill(dirs, want, lo, [max(w, l) for w, l in zip(want, lo)], room, level_cap=1.0)
        lo = [max(a, b) for a, b in zip(lo, t)]

    # 3. Weighted DRF over the rest: equal weighted dominant share for every child still growing.
    rates = [1.0 / s if s > 0 else 0.0 for s in shares]
    t = waterfill(dirs, rates, lo, hi, room)
    for c, d, ti in zip(children, dirs, t):
        alloc[c.path] = _scaled(d, ti)
        _divide(c, core, effective, alloc)


def _min_factor(q: Queue, direction: Sequence[float], core: SchedulerCore) -> float:
    """The t at which t * direction reaches q's min (the core's "below min" ends): 0 without a min."""
    if not q.spec.min:
        return 0.0
    factors = [amount / direction[core.types.index[name]] for name, amount in q.spec.min.items()
               if amount > 0 and direction[core.types.index[name]] > 0]
    return min(1.0, min(factors)) if factors else 1.0


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
        ahead = next((i for i, a in enumerate(core.waiting) if a is app), 0)
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
    out += _node_reasons(core, app, req, shape)
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
