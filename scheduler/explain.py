"""Read-only analysis of a live SchedulerCore for operators: queue figures and why requests wait.

`queue_figures(core)` gives what operators look at per queue; the targets are in
scheduler.targets (imported here for the callers that read both).

`why_pending(core, app_id)` names, for each pending request of an app, every reason it is not
running now, in the terms the core decides by (max-running-apps, queue max, reservations, node
room per resource, locality and its delay, starvation of its queue).

Nothing here changes the core; callers hold the service lock while calling.
"""
from __future__ import annotations

from dataclasses import dataclass
from operator import mul

from scheduler.cards import no_card_message
from scheduler.core import SchedulerCore
from scheduler.locality import LEVELS, level, permits, relaxes_in
from scheduler.model import NODE_LOCAL, App, Node, Queue, Request
from scheduler.resources import dominant_resource, dominant_share, fits, vadd, vsub
from scheduler.pooled import share_scale
from scheduler.queue_limits import app_limit
from scheduler.targets import Target, TargetInput, targets

__all__ = ["QueueFigures", "Target", "TargetInput", "queue_figures", "reservations_by_queue", "targets",
           "why_pending"]


# ---------------------------------------------------------------------------- live figures

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
            "am": req.am,
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
        limit = app_limit(app.queue) or app.queue
        user = app.owner
        if user is not None and user.full and not (limit.max_apps is not None
                                                   and limit.running_apps >= limit.max_apps):
            ahead = core.waiting_ahead(app, user)
            return [_reason("user-max-running-apps",
                            f"the app is not running yet: user {user.name} runs its max-running-apps in "
                            f"{app.queue.path} ({user.running_apps} of {user.max_apps}); {ahead} app(s) of "
                            f"{user.name} wait ahead of it", queue=app.queue.path, user=user.name,
                            running=user.running_apps, limit=user.max_apps, ahead=ahead)]
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
    if req.am:
        out += am_share(core, app.queue, req)
    if req.reserved_node is not None:
        node = req.reserved_node
        free = _free(node)
        short = [f"{types.names[j]} {free[j]} free of {req.capability[j]}"
                 for j in range(len(free)) if req.capability[j] > free[j]]
        out.append(_reason("holds-reservation",
                           f"holds a reservation on node {node.id}; it starts there when the node frees "
                           f"{'; '.join(short) or 'room (it fits now: at the next heartbeat)'}",
                           node=node.id))
    at_max = any(r["code"] in ("queue-at-max", "am-share") for r in out)
    # Room on a node does not make a request at its queue's max ready.
    out += [r for r in _node_reasons(core, app, req, shape, now) if not (at_max and r["code"] == "ready")]
    # Only a request that is large enough for some node but finds no room there can reserve one.
    if core.timeout is not None and req.reserved_node is None and any(r["code"] == "no-node-room" for r in out):
        out.append(_starvation(core, app.queue, now))
    if core.config.preemption.enabled and any(r["code"] in ("no-node-room", "holds-reservation") for r in out):
        out.append(_preemption(core, app.queue, now))
    return out


UNITS = {"memory-mb": "MiB", "gpu-mem": "MiB of gpu-mem"}


def am_share(core: SchedulerCore, leaf: Queue, req: Request) -> list[dict]:
    """Why an AM request waits for its queue's max-am-share (SchedulerCore._am_limit), if it does."""
    limit = leaf.am_limit
    if limit is None or not any(leaf.am_usage):
        return []
    names = core.types.names
    over = [j for j, (u, c, m) in enumerate(zip(leaf.am_usage, req.capability, limit)) if u + c > m]
    if not over:
        return []
    parts = [f"{leaf.am_usage[j]} of {limit[j]} {UNITS.get(names[j], names[j])}" for j in over]
    return [_reason("am-share", f"AM share of {leaf.path} reached: {'; '.join(parts)} (max-am-share "
                                f"{leaf.am_share:g}); this AM needs {core.types.format(req.capability)} and starts "
                                "when AMs of the queue finish", queue=leaf.path, resources=[names[j] for j in over],
                    max_am_share=leaf.am_share)]


def _preemption(core: SchedulerCore, leaf: Queue, now: float) -> dict:
    """Where the request's queue stands with preemption (scheduler.preemption), as of its last round."""
    spec = core.config.preemption
    report = core.preemption.report(now)["queues"].get(leaf.path)
    if report is None or report["target_share"] is None:
        return _reason("preemption", f"preemption has not measured queue {leaf.path} yet (it does once a round)")
    share, target = report["share"], report["target_share"]
    figures = dict(share=share, target_share=target, incoming=report["incoming"])
    if report["starved"]:
        coming = (f"{report['incoming']} container(s) are {'planned (observe-only)' if spec.observe_only else 'marked'}"
                  f" for it" if report["incoming"] else
                  "no container can be taken for it now (none whose release makes room on a node, from a "
                  "preemptable queue that stays at or above its target)")
        return _reason("preemption", f"its queue {leaf.path} has starved ({report['starved']}) for "
                                     f"{report['starved_for_s']:.0f} s at share {share:.1%} of its target "
                                     f"{target:.1%}; {coming}", starved=report["starved"], **figures)
    if report["below_target_for_s"] is not None:
        return _reason("preemption", f"its queue {leaf.path} is below {spec.threshold:g} x its target {target:.1%} "
                                     f"(share {share:.1%}) for {report['below_target_for_s']:.0f} s; it starves after "
                                     f"{spec.fair_share_timeout_s:g} s (below its min: {spec.min_share_timeout_s:g} s)",
                       **figures)
    return _reason("preemption", f"its queue {leaf.path} is at or above {spec.threshold:g} x its target "
                                 f"{target:.1%} (share {share:.1%}): nothing is preempted for it", **figures)


def _starvation(core: SchedulerCore, leaf: Queue, now: float) -> dict:
    """Where the request's queue stands on the starvation clock (see SchedulerCore._reserve_for_head)."""
    timeout = core.timeout
    if core.head is not leaf:
        first = core.head.path if core.head is not None else "none yet"
        return _reason("starvation", f"its queue {leaf.path} is not first in fair order (first: {first}); a node "
                                     f"is reserved only for the queue first in fair order for {timeout:g} s "
                                     "(the starvation timeout)", first=first, timeout_s=timeout)
    waited = now - core.head_since
    left = timeout - waited
    return _reason("starvation", f"its queue {leaf.path} has been first in fair order for {waited:.0f} s; "
                   + (f"it may reserve a node after {left:.0f} s more (starvation timeout {timeout:g} s)"
                      if left > 0 else f"past the starvation timeout ({timeout:g} s): the next node large enough "
                                       "for this request is reserved for it at its heartbeat"),
                   first=leaf.path, waited_s=round(waited, 3), timeout_s=timeout)


def _node_reasons(core: SchedulerCore, app: App, req: Request, shape: str, now: float) -> list[dict]:
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
    big = [n for n in allowed if n.holds(req.capability)]
    if not big:
        short = _short(req, allowed, "capacity")
        parts = [_largest(types, j, req, allowed, _limit) for j in short]
        out.append(_reason("too-large", f"no node is large enough for {shape}: " + "; ".join(parts),
                           resources=[types.names[j] for j in short]))
        return out + _card_reasons(req, allowed) + elsewhere
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
        return out + _card_reasons(req, allowed) + elsewhere
    open_nodes = [n for n in room if n.reserved is None or n.reserved is req]
    if not open_nodes:
        holders = sorted({f"{n.id} (for app {n.reserved.app.id} {types.format(n.reserved.capability)})"
                          for n in room})
        out.append(_reason("behind-reservation", "waiting behind a reservation: the nodes with room are "
                                                 "reserved for other requests: " + ", ".join(holders),
                           nodes=sorted(n.id for n in room)))
        return out
    delays = app.queue.locality_delays
    accepted = [n for n in open_nodes if permits(req, n, delays, now)]
    if len(accepted) < len(open_nodes):
        out.append(_locality_delay(app.queue, req, now))
    if not accepted:
        return out
    names = sorted(n.id for n in accepted)
    out.append(_reason("ready", f"fits now on {len(names)} node(s) ({', '.join(names[:5])}"
                                f"{', ...' if len(names) > 5 else ''}); it starts at the next heartbeat of one "
                                "of them unless queues and apps with a lower share take the room first",
                       nodes=names))
    return out


def _locality_delay(leaf: Queue, req: Request, now: float) -> dict:
    """How long the request still waits for locality before it takes the nodes with room (scheduler.locality)."""
    delays = leaf.locality_delays
    accepts = level(req, delays, now)
    relaxes = relaxes_in(req, delays, now)
    assert relaxes is not None  # (a node with room it does not take yet: it waits for locality)
    to_rack, to_any = relaxes
    wanted = "a node-local slot" if accepts == NODE_LOCAL else "a rack-local slot"
    steps = ([f"takes a node in its racks in {to_rack:.1f} s"] if accepts == NODE_LOCAL and req.wanted_racks else [])
    steps.append(f"takes any node in {to_any:.1f} s" if req.relax else "never takes another node (relax-locality off)")
    clock = ("" if req.skipped_since is not None else
             "; its clock starts the first time it is passed over on a node it does not take")
    return _reason("locality-delay",
                   f"waits for {wanted} ({_locality_text(req)}); nodes elsewhere have room: it "
                   f"{' and '.join(steps)} (node-locality-delay-s {delays[0]:g}, rack-locality-delay-s "
                   f"{delays[1]:g} in {leaf.path}){clock}",
                   level=LEVELS[accepts], rack_local_in_s=round(to_rack, 3), any_node_in_s=round(to_any, 3),
                   clock_started=req.skipped_since is not None)


CARD_REASONS = 5  # nodes named in "no-card-room" reasons; the rest are counted


def _card_reasons(req: Request, nodes: list[Node]) -> list[dict]:
    """The nodes among `nodes` whose cards hold not the request's gpu-mem now, though it may be
    free on the node in total: the first few by id, each named, and how many in all."""
    blocked = sorted((n for n in nodes if n.cards is not None and (
        req.capability[n.cards.index] > n.cards.reach() or not n.cards.holds(req.capability))),
        key=lambda n: n.id)
    out = [_reason("no-card-room", no_card_message(n.id, req.capability[n.cards.index], n.cards),
                   node=n.id, cards_free=list(n.cards.free)) for n in blocked[:CARD_REASONS]]
    if len(blocked) > CARD_REASONS:
        out.append(_reason("no-card-room", f"and {len(blocked) - CARD_REASONS} more node(s) where no single "
                                           "card has that much free", nodes=len(blocked)))
    return out


def _free(node: Node) -> tuple[int, ...]:
    """What a request may use on the node now (with cards: gpu-mem is the cards' reach)."""
    free = vsub(node.capacity, node.allocated)
    return free if node.cards is None else node.cards.room(free)


def _limit(node: Node) -> tuple[int, ...]:
    return node.limit


def _short(req: Request, nodes: list[Node], what: str) -> list[int]:
    """Resources of the request larger than the largest capacity (or free amount) on any of `nodes`."""
    get = _limit if what == "capacity" else _free
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
