"""The pooled fair share: the fluid limit of the decision's rule with the cluster as one pool.

Progressive filling, computed exactly, event by event: every leaf grows its demand (usage plus
what its runnable apps ask for) at the pace hierarchical DRF would serve it, until its demand is
met, a max or the cluster runs out of a resource. It ignores node boundaries and whole containers.
Preemption measures starvation and victims by it (pooled_shares: it depends on the demand only,
not on where containers run); scheduler.targets reports it next to the reachable target.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from operator import mul
from typing import Protocol

from scheduler.model import Queue
from scheduler.policies import Policy
from scheduler.queue_limits import UNLIMITED
from scheduler.resources import ResourceTypes, Vector, dominant_share, vadd


class ShareSource(Protocol):
    """What the fill reads of a core (scheduler.core.SchedulerCore is one)."""

    types: ResourceTypes
    policy: Policy
    divided: frozenset[str]
    capacity: Vector
    root: Queue


def pooled_shares(core: ShareSource) -> dict[str, float]:
    """Every queue's pooled target as a dominant share: the fluid fill alone, without the replay
    (what preemption measures starvation and victims by: it depends on the demand only, not on
    where the containers happen to run)."""
    root = build_fill(core.root, core, tuple(float(c) for c in core.capacity))
    fill(root, core.policy.aggregate is sum)
    return {node.path: dominant_share(node.alloc, core.capacity) for node in fill_nodes(root)}


def share_scale(core: ShareSource, q: Queue) -> tuple[float, ...]:
    """The multipliers turning q's usage into its weighted share, at the current cluster capacity.

    The core refreshes its own copy lazily, at its next decision after nodes change; a status read
    must not wait for that (nor refresh the core itself, which is the core's business).
    """
    return core.policy.scale(core.types.names, core.divided, core.capacity, q.spec.weight)


_EPS = 1e-9
_TINY = 1e-12  # the key slope of demand that does not move a queue's key (the core serves it first)
_MAX_SEGMENTS = 100_000


class Fill:
    """One queue in the fluid fill: leaves hold t * demand; parents sum their children.

    It copies what the fill needs from the live queue, so the fill runs without the service lock.
    """

    __slots__ = ("path", "is_root", "children", "raw", "demand", "t", "frozen", "scale", "min_inv", "limit",
                 "alloc", "growable", "growing", "krate", "slope", "v", "rate", "users")

    def __init__(self, path: str, is_root: bool, raw: tuple[int, ...], limit: tuple[float, ...] | None,
                 scale: tuple[float, ...], min_inv: tuple[float, ...] | None = None) -> None:
        self.path = path
        self.is_root = is_root
        self.children: list[Fill] = []
        self.raw = raw  # usage + pending of the queue's own apps (then of its subtree, once built)
        self.demand = tuple(float(v) for v in raw)
        self.t = 0.0
        self.frozen = not any(raw)
        self.scale = scale
        self.min_inv = min_inv
        self.limit = limit
        self.alloc = self.demand
        self.growable = False
        self.growing: list[Fill] = []
        self.krate = 0.0  # how fast this queue's key rises per unit of fill time
        self.slope = 1.0  # how fast its key rises per unit its children's common key rises (leaf: per t)
        self.v: tuple[float, ...] = ()
        self.rate = 0.0  # leaves: dt per unit of fill time
        self.users: list[tuple[str, Fill]] = []  # a leaf with user-limits: its users, filled by user_fill


def build_fill(q: Queue, core: ShareSource, limit: tuple[float, ...] | None = None) -> Fill:
    raw = core.types.zero
    users: dict[str, tuple[int, ...]] = {}
    for app in q.apps.values():
        own = app.usage
        if app.runnable:
            for req in app.pending:
                own = vadd(own, tuple(v * req.count for v in req.capability))
        raw = vadd(raw, own)
        if app.owner is not None:
            users[app.user] = vadd(users.get(app.user, core.types.zero), own)
    if limit is None and q.max is not None:
        limit = tuple(math.inf if m >= UNLIMITED else float(m) for m in q.max)
    node = Fill(q.path, q.parent is None, raw, limit, share_scale(core, q), q.min_inv)
    if q.users is not None:
        unit = core.policy.scale(core.types.names, core.divided, core.capacity, 1.0)
        node.users = [(name, Fill(f"{q.path}/{name}", False, demand, None,
                                   tuple(x / q.users[name].weight for x in unit)))
                      for name, demand in users.items()]
    for child in q.children.values():
        node.children.append(build_fill(child, core))
        raw = vadd(raw, node.children[-1].raw)
    node.raw = raw
    if node.children:
        node.frozen = True  # parents grow through their leaves only
    return node


def user_fill(leaf: Fill, additive: bool) -> list[tuple[float, ...]]:
    """The leaf's pooled allocation divided among its users (in the order of leaf.users): the
    fluid fill one level down, the leaf's part as the pool."""
    if not leaf.users:
        return []
    pool = Fill(leaf.path, True, leaf.raw, leaf.alloc, tuple(0.0 for _ in leaf.alloc))  # (its key: never compared)
    pool.children = [user for _, user in leaf.users]
    pool.frozen = True
    fill(pool, additive)
    return [user.alloc for user in pool.children]


def fill_nodes(node: Fill):
    yield node
    for child in node.children:
        yield from fill_nodes(child)


def fill(root: Fill, additive: bool) -> None:
    nodes = list(fill_nodes(root))
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


def _sum_up(n: Fill) -> None:
    if n.children:
        width = len(n.demand)
        n.alloc = tuple(sum(c.alloc[j] for c in n.children) for j in range(width))
    else:
        n.alloc = tuple(n.t * d for d in n.demand)


def _freeze_tight(n: Fill) -> None:
    """A queue (or the cluster) out of a resource: every leaf below it that uses it stops."""
    tight = [j for j, (a, m) in enumerate(zip(n.alloc, n.limit)) if a >= m - _EPS * max(m, 1.0)]
    if tight:
        for leaf in fill_nodes(n):
            if not leaf.children and any(leaf.demand[j] > 0 for j in tight):
                leaf.frozen = True


def _key(n: Fill, additive: bool) -> tuple[int, float]:
    """The core's key of a queue at its current fill: (0, how far below min) or (1, weighted share)."""
    if n.min_inv is not None:
        below = max(map(mul, n.alloc, n.min_inv))
        if below < 1.0 - _EPS:
            return 0, below
    parts = list(map(mul, n.alloc, n.scale))
    return 1, (sum(parts) if additive else max(parts))


def _key_rate(n: Fill, phase: int, growth: Sequence[float], additive: bool) -> float:
    """How fast the key of `n` rises when its allocation grows by `growth` per unit."""
    factors = n.min_inv if phase == 0 else n.scale
    if additive and phase == 1:
        return sum(map(mul, growth, factors))
    parts = list(map(mul, n.alloc, factors))
    top = max(parts)
    # Under max, the key follows the fastest of the components tied at the top.
    return max((g * f for p, g, f in zip(parts, growth, factors) if p >= top - _EPS * max(top, 1.0)),
               default=0.0)


def _slopes(n: Fill, additive: bool) -> None:
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


def _rates(n: Fill, krate: float) -> None:
    """Top-down: the key of `n` rises at `krate`; its growing children's common key at krate / slope."""
    n.krate = krate
    if not n.children:
        n.rate = krate / n.slope if n.growable else 0.0
        return
    inner = krate if n.is_root else krate / n.slope  # root: its children set the pace
    growing = set(map(id, n.growing))
    for c in n.children:
        _rates(c, inner if id(c) in growing else 0.0)


def _next_event(nodes: list[Fill], leaves: list[Fill], additive: bool) -> float:
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


