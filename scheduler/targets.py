"""Each queue's target: the allocation the decisions converge to, and the pooled fair share.

`targets(core)` (or `TargetInput(core).compute()`, which copies what it needs under the service
lock and computes after it) gives every queue two figures:

- the **reachable target** (`allocation`, `dominant_share`, `weighted_share`): where the core's
  own decisions take the current demand, in whole containers on the real nodes. A scratch
  SchedulerCore with the same queues, weights, limits and policy (no reservations, no locality)
  starts from the live placement, lets what runnable apps ask for fill the free room, then ends
  every running container but the AMs once, in turn (its app asks for it again and its node
  heartbeats), and heartbeats every node until nothing more fits. An AM stays where it runs: it
  ends only with its app, so the decisions never move it. This is where hierarchical DRF settles, and what
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
from scheduler.model import App, Queue, is_am
from scheduler.queue_limits import count_running
from scheduler.pooled import build_fill, fill, fill_nodes, user_fill
from scheduler.resources import dominant_share

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
        self.root = build_fill(core.root, core, tuple(float(c) for c in core.capacity))
        self.replay = ReplayInput(core)

    def compute(self) -> dict[str, Target]:
        """Every queue's targets (see the module doc). Runs once per input."""
        additive = self.aggregate is sum
        fill(self.root, additive)
        reached = self.replay.compute()
        cap = self.capacity
        none = tuple(0.0 for _ in cap)
        out = {}
        for node in fill_nodes(self.root):
            alloc = reached.queues.get(node.path, none)
            users = {name: UserTarget(reached.users.get((node.path, name), none), pooled, user.raw)
                     for (name, user), pooled in zip(node.users, user_fill(node, additive))}
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
        self.running = tuple((c.app.id, c.node.id, c.resources, c.cards, is_am(c)) for c in core.containers.values())
        holding = {app_id for app_id, *_ in self.running}
        self.apps = tuple(
            _ReplayApp(app.id, app.user, app.queue.path, app.priority,
                       tuple((r.key[0], r.capability, r.count) for r in app.pending) if app.runnable else ())
            for app in sorted(core.apps.values(), key=lambda a: a.seq)
            if app.id in holding or (app.runnable and app.pending))
        self.key = (self.config, self.nodes, self.running, self.apps)

    @classmethod
    def of(cls, types: tuple[str, ...], config: QueueConfig, nodes: Sequence[tuple], running: Sequence[tuple],
           apps: Sequence[tuple]) -> ReplayInput:
        """An input not copied from one core: a federation's, merged from its sub-clusters' cores
        (yarn_bridge.federation_policy). `nodes`, `running` and `apps` as to_doc lists them."""
        inp = cls.__new__(cls)
        inp.types, inp.policy, inp.config = types, "drf", config
        inp.nodes = tuple((n, r, tuple(c), tuple(k) if k else None) for n, r, c, k in nodes)
        inp.running = tuple((a, n, tuple(s), tuple(k), am) for a, n, s, k, am in running)
        inp.apps = tuple(_ReplayApp(i, u, leaf, prio, tuple((p, tuple(s), c) for p, s, c in asks))
                         for i, u, leaf, prio, asks in apps)
        inp.key = (inp.config, inp.nodes, inp.running, inp.apps)
        return inp

    def to_doc(self) -> dict:
        """The nodes, running containers and runnable apps' asks as JSON-able rows (the status
        server's /v1/demand): nodes [id, rack, capacity, card sizes or null], running [app, node,
        resources, cards, am], apps [id, user, leaf, priority, [[priority, resources, count]...]]."""
        return {"resource_types": list(self.types),
                "nodes": [[n, r, list(c), list(k) if k else None] for n, r, c, k in self.nodes],
                "running": [[a, n, list(s), list(k), am] for a, n, s, k, am in self.running],
                "apps": [[a.id, a.user, a.leaf, a.priority, [[p, list(s), c] for p, s, c in a.asks]]
                         for a in self.apps]}

    def compute(self) -> Reached:
        """Where the replay settles (see Reached); cached while the input is the same."""
        global _last
        if _last is not None and _last[0] == self.key:
            return _last[1]
        result = _replay(self)
        _last = (self.key, result)
        return result


@dataclass(frozen=True)
class Reached:
    """Where the replay settles: each queue's allocation, each user's in a leaf with users (by
    (leaf, user)), and each leaf's allocation on each node it holds containers on (a federation's
    policy tells from it which sub-cluster a leaf's target is in)."""

    queues: dict[str, tuple[float, ...]]
    users: dict[tuple[str, str], tuple[float, ...]]
    placed: dict[str, dict[str, tuple[float, ...]]]  # leaf -> node id -> allocation


_last: tuple[tuple, Reached] | None = None


def _live_spec(q: Queue) -> QueueSpec:
    """The live queue as a spec (dynamic and draining queues included), without app limits:
    the replay admits the runnable apps only."""
    limits = q.spec.user_limits
    return replace(q.spec, path=q.path, max_running_apps=None, user_limits=limits and limits.without_app_limits(),
                   children=tuple(_live_spec(c) for c in q.children.values()),
                   parent=bool(q.children) or q.spec.parent)


def _replay(inp: ReplayInput) -> Reached:
    """The decisions' own churn from the live placement: the running containers stay where they
    are; what apps ask for fills the free room; then every running container but the AMs (which
    end only with their apps, so where they run is given) ends once, in turn, its app asks for it
    again and its node heartbeats; then every node heartbeats until nothing
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
    placed = [(f"r{i}", app_id, node_id, shape, cards, am) for i, (app_id, node_id, shape, cards, am)
              in enumerate(inp.running) if node_id in core.nodes]
    for cid, app_id, node_id, shape, cards, _ in placed:
        core.container_started(cid, app_id, node_id, shape, cards=cards or None)  # (): on no card
    _settle(core, [n[0] for n in nodes])
    for cid, app_id, node_id, shape, _, am in placed:
        if am:  # an AM ends only with its app: the decisions never move it
            continue
        core.container_finished(cid)
        app = core.apps[app_id]
        key = (_RUNNING, _shape_id(app, shape))
        asked = app.requests[key].count if key in app.requests else 0
        core.update_request(app_id, key[0], shape, asked + 1, allocation_id=key[1])  # it asks for it again
        core.on_heartbeat(node_id)
    _settle(core, [n[0] for n in nodes])
    placed: dict[str, dict[str, tuple[float, ...]]] = {}
    for c in core.containers.values():
        on = placed.setdefault(c.app.queue.path, {})
        on[c.node.id] = tuple(a + r / scale for a, r in zip(on.get(c.node.id, core.types.zero), c.resources))
    return Reached({path: tuple(u / scale for u in q.usage) for path, q in core.queues.items()},
                   {(path, user.name): tuple(u / scale for u in user.usage)
                    for path, q in core.queues.items() if q.users for user in q.users.values()},
                   placed)


def _admit(core: SchedulerCore, spec: _ReplayApp) -> None:
    """Puts the app straight into its leaf as runnable (the live core has placed it already)."""
    leaf = core.queues[spec.leaf]
    app = App(spec.id, spec.user, leaf, spec.priority, core.types.zero, 0.0)
    app.runnable = True
    core.apps[app.id] = app
    core.enter_leaf(app, leaf)
    count_running(app, 1)  # the core's own count: its queues' and its user's


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
