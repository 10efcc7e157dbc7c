"""Each queue's target: the allocation the decisions converge to, and the pooled fair share.

`targets(core)` (or `TargetInput(core).compute()`, which copies what it needs under the service
lock and computes after it) gives every queue two figures:

- the **reachable target** (`allocation`, `dominant_share`, `weighted_share`): where the core's
  own decisions take the current demand, in whole containers on the real nodes. A scratch
  SchedulerCore with the same queues, weights, limits and policy (no reservations, no locality)
  starts from the live placement, lets what runnable apps ask for fill the free room, then ends
  every running container once, in turn (its app asks for it again and its node heartbeats), and
  heartbeats every node until nothing more fits. This is where hierarchical DRF settles, and what
  a queue's share can reach: not where history left the containers, and not what a pooled
  cluster would give.
- the **pooled target** (`pooled_allocation`, `pooled_dominant_share`): the fluid limit of the
  same rule with the cluster as one pool (progressive filling, computed exactly, event by event).
  It ignores node boundaries and whole containers, so it can promise a queue room that no node
  has (e.g. vcores left on a node whose memory is used up).

In a leaf with `user-limits`, each user gets both figures too (`Target.users`): the replay's
decisions go through the user level as the live core's do; the pooled figure divides the leaf's
pooled allocation among its users by the same fluid fill, one level down (users by weighted
dominant share, each up to what its apps use and ask for).

The replay is bounded: when the demand comes to more than REPLAY_BUDGET containers, it replays on
a sample of the nodes spread evenly over each node shape, with each request's count scaled by the
sample's fraction, and scales the result back (then the figures are approximate: a few percent).
The last result is kept and reused while the demand and the nodes are unchanged.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from operator import mul
from zlib import crc32

from scheduler.config import QueueConfig, QueueSpec
from scheduler.core import SchedulerCore
from scheduler.model import App, Queue
from scheduler.resources import dominant_share, vadd

UNLIMITED = 1 << 62  # the core's "no max on this resource"
REPLAY_BUDGET = 2_000  # containers the replay places at most (see the module doc)
_RUNNING = -(1 << 30)  # request priority of an ended container asked for again: before what apps ask for


@dataclass(frozen=True)
class UserTarget:
    """A user's targets in its leaf: reachable (the replay) and pooled (the leaf's pooled part, filled)."""

    allocation: tuple[float, ...]
    pooled_allocation: tuple[float, ...]
    demand: tuple[int, ...]  # usage + pending of its runnable apps in the leaf


@dataclass(frozen=True)
class Target:
    """A queue's targets: reachable (the replay) and pooled (the fluid fill)."""

    allocation: tuple[float, ...]
    dominant_share: float
    weighted_share: float
    demand: tuple[int, ...]  # usage + pending of runnable apps, before max caps
    pooled_allocation: tuple[float, ...]
    pooled_dominant_share: float
    pooled_weighted_share: float
    users: dict[str, UserTarget] = field(default_factory=dict)  # a leaf with user-limits: per user


class TargetInput:
    """What the targets need, copied from the core: take it under the lock, compute after."""

    def __init__(self, core: SchedulerCore) -> None:
        self.capacity = core.capacity
        self.aggregate = core.policy.aggregate
        self.root = _build_fill(core.root, core, tuple(float(c) for c in core.capacity))
        self.replay = ReplayInput(core)

    def compute(self) -> dict[str, Target]:
        """Every queue's targets (see the module doc). Runs once per input."""
        additive = self.aggregate is sum
        _fill(self.root, additive)
        reached, reached_users = self.replay.compute()
        cap = self.capacity
        none = tuple(0.0 for _ in cap)
        out = {}
        for node in _fill_nodes(self.root):
            alloc = reached.get(node.path, none)
            users = {name: UserTarget(reached_users.get((node.path, name), none), pooled, user.raw)
                     for (name, user), pooled in zip(node.users, _user_fill(node, additive))}
            out[node.path] = Target(
                allocation=alloc,
                dominant_share=dominant_share(alloc, cap),
                weighted_share=self.aggregate(map(mul, alloc, node.scale)) if node.scale else 0.0,
                demand=node.raw,
                pooled_allocation=node.alloc,
                pooled_dominant_share=dominant_share(node.alloc, cap),
                pooled_weighted_share=self.aggregate(map(mul, node.alloc, node.scale)) if node.scale else 0.0,
                users=users,
            )
        return out


def targets(core: SchedulerCore) -> dict[str, Target]:
    """Every queue's reachable and pooled targets (see the module doc)."""
    return TargetInput(core).compute()


def pooled_shares(core: SchedulerCore) -> dict[str, float]:
    """Every queue's pooled target as a dominant share: the fluid fill alone, without the replay
    (what preemption measures starvation and victims by: it depends on the demand only, not on
    where the containers happen to run)."""
    root = _build_fill(core.root, core, tuple(float(c) for c in core.capacity))
    _fill(root, core.policy.aggregate is sum)
    return {node.path: dominant_share(node.alloc, core.capacity) for node in _fill_nodes(root)}


def share_scale(core: SchedulerCore, q: Queue) -> tuple[float, ...]:
    """The multipliers turning q's usage into its weighted share, at the current cluster capacity.

    The core refreshes its own copy lazily, at its next decision after nodes change; a status read
    must not wait for that (nor refresh the core itself, which is the core's business).
    """
    return core.policy.scale(core.types.names, core.divided, core.capacity, q.spec.weight)



# ---------------------------------------------------------------------------- reachable: the replay

@dataclass(frozen=True)
class _ReplayApp:
    id: str
    user: str
    leaf: str
    priority: int
    asks: tuple[tuple[int, tuple[int, ...], int], ...]  # (priority, shape, count) of a runnable app


class ReplayInput:
    """The queue tree, the nodes, the running containers and what runnable apps ask for, copied
    from the core (O(apps + containers))."""

    def __init__(self, core: SchedulerCore) -> None:
        self.types = core.types.names
        self.policy = core.policy.name
        self.config = QueueConfig(root=_live_spec(core.root), resources=core.config.resources,
                                  starvation_timeout_s=None, source="<replay>")
        self.nodes = tuple((n.id, n.rack, n.capacity, n.cards and n.cards.sizes) for n in core.nodes.values())
        self.running = tuple((c.app.id, c.node.id, c.resources, c.cards) for c in core.containers.values())
        holding = {app_id for app_id, _, _, _ in self.running}
        self.apps = tuple(
            _ReplayApp(app.id, app.user, app.queue.path, app.priority,
                       tuple((r.key[0], r.capability, r.count) for r in app.pending) if app.runnable else ())
            for app in sorted(core.apps.values(), key=lambda a: a.seq)
            if app.id in holding or (app.runnable and app.pending))
        self.key = (self.config, self.nodes, self.running, self.apps)

    def compute(self) -> _Reached:
        """Each queue's allocation once the replay settles, and each user's in a leaf with users
        (by (leaf, user)); cached while the input is the same."""
        global _last
        if _last is not None and _last[0] == self.key:
            return _last[1]
        result = _replay(self)
        _last = (self.key, result)
        return result


_Reached = tuple[dict[str, tuple[float, ...]], dict[tuple[str, str], tuple[float, ...]]]
_last: tuple[tuple, _Reached] | None = None


def _live_spec(q: Queue) -> QueueSpec:
    """The live queue as a spec (dynamic and draining queues included), without app limits:
    the replay admits the runnable apps only."""
    limits = q.spec.user_limits
    return replace(q.spec, max_running_apps=None, user_limits=limits and limits.without_app_limits(),
                   children=tuple(_live_spec(c) for c in q.children.values()),
                   parent=bool(q.children) or q.spec.parent)


def _replay(inp: ReplayInput) -> _Reached:
    """The decisions' own churn from the live placement: the running containers stay where they
    are; what apps ask for fills the free room; then every running container ends once, in turn,
    its app asks for it again and its node heartbeats; then every node heartbeats until nothing
    more fits. A container that ended comes back where the decision rule puts it, so after one
    turnover the allocation is where the decisions lead, not where history left it."""
    nodes, scale = _sample(inp)
    core = SchedulerCore(inp.config, resource_types=list(inp.types), policy=inp.policy, clock=lambda: 0.0)
    for node_id, rack, capacity, cards in nodes:
        core.add_node(node_id, dict(zip(inp.types, capacity)), rack=rack, cards=cards)
    for spec in inp.apps:
        _admit(core, spec)
        for allocation_id, (priority, shape, count) in enumerate(spec.asks):
            wanted = _scaled(count, scale, f"{spec.id}/{allocation_id}")
            if wanted:
                core.update_request(spec.id, priority, shape, wanted, allocation_id=allocation_id)
    placed = [(f"r{i}", app_id, node_id, shape, cards) for i, (app_id, node_id, shape, cards)
              in enumerate(inp.running) if node_id in core.nodes]
    for cid, app_id, node_id, shape, cards in placed:
        core.container_started(cid, app_id, node_id, shape, cards=cards or None)  # (): on no card
    _settle(core, [n[0] for n in nodes])
    for cid, app_id, node_id, shape, _ in placed:
        core.container_finished(cid)
        app = core.apps[app_id]
        key = (_RUNNING, _shape_id(app, shape))
        asked = app.requests[key].count if key in app.requests else 0
        core.update_request(app_id, key[0], shape, asked + 1, allocation_id=key[1])  # it asks for it again
        core.on_heartbeat(node_id)
    _settle(core, [n[0] for n in nodes])
    return ({path: tuple(u / scale for u in q.usage) for path, q in core.queues.items()},
            {(path, user.name): tuple(u / scale for u in user.usage)
             for path, q in core.queues.items() if q.users for user in q.users.values()})


def _admit(core: SchedulerCore, spec: _ReplayApp) -> None:
    """Puts the app straight into its leaf as runnable (the live core has placed it already)."""
    leaf = core.queues[spec.leaf]
    app = App(spec.id, spec.user, leaf, spec.priority, core.types.zero, 0.0)
    app.runnable = True
    core.apps[app.id] = app
    core.enter_leaf(app, leaf)
    core._count_running(app, 1)  # the core's own count: its queues' and its user's


def _shape_id(app: App, shape: tuple[int, ...]) -> int:
    """The allocation id of the app's request for `shape` again (one per shape, after its asks)."""
    ids = [key[1] for key in app.requests if key[0] == _RUNNING and app.requests[key].capability == shape]
    return ids[0] if ids else len(app.requests) + 1_000_000


def _settle(core: SchedulerCore, nodes: list[str]) -> None:
    while any([a for node_id in nodes for a in core.on_heartbeat(node_id)]):
        pass


def _sample(inp: ReplayInput) -> tuple[Sequence[tuple], float]:
    """The nodes to replay on and their fraction of the cluster (see REPLAY_BUDGET)."""
    wanted = len(inp.running) + sum(n for app in inp.apps for _, _, n in app.asks)
    if wanted <= REPLAY_BUDGET or len(inp.nodes) < 2:
        return inp.nodes, 1.0
    picked = max(1, round(len(inp.nodes) * REPLAY_BUDGET / wanted))
    by_shape = sorted(inp.nodes, key=lambda n: (n[2], n[0]))  # evenly across each node shape
    step = len(by_shape) / picked
    nodes = [by_shape[int(i * step)] for i in range(picked)]
    return nodes, picked / len(inp.nodes)


def _scaled(count: int, scale: float, name: str) -> int:
    """count * scale, rounded up or down by a fixed fraction drawn from `name`: unbiased over many
    requests, and the same at every replay of the same input."""
    if scale == 1.0:
        return count
    return math.floor(count * scale + (crc32(name.encode()) % 1000) / 1000)


# ---------------------------------------------------------------------------- pooled: the fluid fill

_EPS = 1e-9
_TINY = 1e-12  # the key slope of demand that does not move a queue's key (the core serves it first)
_MAX_SEGMENTS = 100_000


class _Fill:
    """One queue in the fluid fill: leaves hold t * demand; parents sum their children.

    It copies what the fill needs from the live queue, so the fill runs without the service lock.
    """

    __slots__ = ("path", "is_root", "children", "raw", "demand", "t", "frozen", "scale", "min_inv", "limit",
                 "alloc", "growable", "growing", "krate", "slope", "v", "rate", "users")

    def __init__(self, path: str, is_root: bool, raw: tuple[int, ...], limit: tuple[float, ...] | None,
                 scale: tuple[float, ...], min_inv: tuple[float, ...] | None = None) -> None:
        self.path = path
        self.is_root = is_root
        self.children: list[_Fill] = []
        self.raw = raw  # usage + pending of the queue's own apps (then of its subtree, once built)
        self.demand = tuple(float(v) for v in raw)
        self.t = 0.0
        self.frozen = not any(raw)
        self.scale = scale
        self.min_inv = min_inv
        self.limit = limit
        self.alloc = self.demand
        self.growable = False
        self.growing: list[_Fill] = []
        self.krate = 0.0  # how fast this queue's key rises per unit of fill time
        self.slope = 1.0  # how fast its key rises per unit its children's common key rises (leaf: per t)
        self.v: tuple[float, ...] = ()
        self.rate = 0.0  # leaves: dt per unit of fill time
        self.users: list[tuple[str, _Fill]] = []  # a leaf with user-limits: its users, filled by _user_fill


def _build_fill(q: Queue, core: SchedulerCore, limit: tuple[float, ...] | None = None) -> _Fill:
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
    node = _Fill(q.path, q.parent is None, raw, limit, share_scale(core, q), q.min_inv)
    if q.users is not None:
        unit = core.policy.scale(core.types.names, core.divided, core.capacity, 1.0)
        node.users = [(name, _Fill(f"{q.path}/{name}", False, demand, None,
                                   tuple(x / q.users[name].weight for x in unit)))
                      for name, demand in users.items()]
    for child in q.children.values():
        node.children.append(_build_fill(child, core))
        raw = vadd(raw, node.children[-1].raw)
    node.raw = raw
    if node.children:
        node.frozen = True  # parents grow through their leaves only
    return node


def _user_fill(leaf: _Fill, additive: bool) -> list[tuple[float, ...]]:
    """The leaf's pooled allocation divided among its users (in the order of leaf.users): the
    fluid fill one level down, the leaf's part as the pool."""
    if not leaf.users:
        return []
    pool = _Fill(leaf.path, True, leaf.raw, leaf.alloc, tuple(0.0 for _ in leaf.alloc))  # (its key: never compared)
    pool.children = [user for _, user in leaf.users]
    pool.frozen = True
    _fill(pool, additive)
    return [user.alloc for user in pool.children]


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


