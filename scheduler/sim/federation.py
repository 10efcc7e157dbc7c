"""A federated simulation: N sub-clusters, each its own SchedulerCore, behind a router.

What YARN Federation does, on the simulator's clock (docs/federation.md, "Scale, in simulation"):
- the Router homes each app in one sub-cluster, drawn at random by the router weights of the
  queue it was submitted to (WeightedRandomRouterPolicy); the home core places it (placement
  rules, ACLs) and runs its AM;
- the AMRMProxy splits each of the AM's ANY asks across the sub-clusters by the queue's AMRM
  weights (largest remainder, headroom alpha 0), skipping sub-clusters none of whose nodes can
  hold the shape (their RM would refuse an ask over its maximum allocation); in a sub-cluster
  other than the home the app is registered, as the proxy's unmanaged AM, in the queue the home
  placed it in. A container granted by a sub-cluster lowers that sub-cluster's part of the ask;
- when the weights change (a policy round), every outstanding ask of the queue is split again,
  as the proxy does when the AM next sends what it still misses.

`Federation` stands where the engine's single SchedulerCore stands, so the engine (heartbeats,
stages, containers) is the single-cluster simulator's, unchanged: each node's heartbeat goes to
its own sub-cluster's core. A container id is its sub-cluster's number and the core's id.
Preemption is not federated here (each core would preempt for local targets only): a queue file
that enables it is refused.
"""
from __future__ import annotations

import random
from collections import ChainMap
from collections.abc import Sequence
from dataclasses import dataclass
from operator import le
from typing import Any

from scheduler import SchedulerCore
from scheduler.config import QueueConfig
from scheduler.model import Assignment, Placement
from scheduler.sim.engine import Simulation
from scheduler.sim.fed_weights import StaticWeights, split
from scheduler.sim.formats import AppSpec, ClusterSpec, SimInputError
from scheduler.sim.policies import prepare


@dataclass
class _Ask:
    """One outstanding ANY ask of an app, by sub-cluster."""

    queue: str
    vector: tuple[int, ...]
    parts: list[int]


class Federation:
    """The sub-clusters' cores behind a router and the AMRMProxy's split (the module docstring)."""

    def __init__(self, config: QueueConfig, types: Sequence[str], clusters: Sequence[ClusterSpec],
                 weights: StaticWeights, clock: Any, seed: int) -> None:
        self.types = list(types)
        self.cores = [SchedulerCore(config, resource_types=self.types, policy="drf", clock=clock)
                      for _ in clusters]
        self.subcluster_of_node = {n.name: s for s, c in enumerate(clusters) for n in c.nodes}
        self.shapes = [{tuple(n.resources.get(t, 0) for t in self.types) for n in c.nodes} for c in clusters]
        self.weights = weights
        self.rng = random.Random(seed)
        self.timeout = config.starvation_timeout_s
        self.nodes = ChainMap(*(core.nodes for core in self.cores))
        self.home: dict[str, int] = {}
        self.queue: dict[str, str] = {}
        self.users: dict[str, str] = {}
        self.registered: dict[str, set[int]] = {}
        self.asks: dict[tuple[str, int], _Ask] = {}
        self.priorities: dict[str, list[int]] = {}    # app -> the priorities of its asks
        # container id -> (sub-cluster, the core's id, queue, resources)
        self.owner: dict[str, tuple[int, str, str, tuple[int, ...]]] = {}
        self.usage = {q: [[0] * len(types) for _ in clusters]
                      for q, spec in config.queues().items() if spec.is_leaf}

    # ------------------------------------------------------------------ the core's interface, as the engine calls it

    def add_node(self, name: str, capacity: dict[str, int], **options: Any) -> None:
        self.cores[self.subcluster_of_node[name]].add_node(name, capacity, **options)

    def submit_app(self, app_id: str, user: str, queue: str | None, **options: Any) -> Placement:
        usable = [True] * len(self.cores)
        home = self.rng.choices(range(len(self.cores)), _positive(self.weights.home(queue), usable))[0]
        placed = self.cores[home].submit_app(app_id, user, queue, **options)
        if placed.accepted:
            self.home[app_id], self.queue[app_id], self.users[app_id] = home, placed.queue, user
            self.registered[app_id] = {home}
        return placed

    def update_request(self, app_id: str, priority: int, resources: dict[str, int], count: int, *,
                       now: float, am: bool) -> None:
        if am:
            self.cores[self.home[app_id]].update_request(app_id, priority, resources, count, now=now, am=True)
            return
        vector = tuple(resources.get(t, 0) for t in self.types)
        ask = self.asks.get((app_id, priority))
        if ask is None:
            ask = self.asks[(app_id, priority)] = _Ask(self.queue[app_id], vector, [0] * len(self.cores))
            self.priorities.setdefault(app_id, []).append(priority)
        ask.vector = vector
        self._send(app_id, priority, ask, split(count, self.weights.of(ask.queue), self.usable(vector)), now)

    def on_heartbeat(self, node: str, now: float) -> list[Assignment]:
        s = self.subcluster_of_node[node]
        out = []
        for a in self.cores[s].on_heartbeat(node, now=now):
            ask = self.asks.get((a.app_id, a.priority))
            if ask is not None and ask.parts[s] > 0:
                ask.parts[s] -= 1
            cid = f"{s}:{a.assignment_id}"
            self.owner[cid] = (s, a.assignment_id, a.queue, a.vector)
            usage = self.usage.setdefault(a.queue, [[0] * len(self.types) for _ in self.cores])[s]
            for j, v in enumerate(a.vector):
                usage[j] += v
            out.append(a._replace(assignment_id=cid))
        return out

    def mark_am(self, cid: str) -> None:
        s, own, _, _ = self.owner[cid]
        self.cores[s].mark_am(own)

    def container_finished(self, cid: str, state: str = "completed") -> None:
        s, own, queue, vector = self.owner.pop(cid)
        usage = self.usage[queue][s]
        for j, v in enumerate(vector):
            usage[j] -= v
        self.cores[s].container_finished(own, state)

    def remove_app(self, app_id: str) -> None:
        for s in self.registered.pop(app_id, ()):
            self.cores[s].remove_app(app_id)
        for priority in self.priorities.pop(app_id, ()):
            del self.asks[(app_id, priority)]
        self.home.pop(app_id, None)
        self.queue.pop(app_id, None)
        self.users.pop(app_id, None)

    # ------------------------------------------------------------------ the split

    def usable(self, vector: tuple[int, ...]) -> list[bool]:
        """Sub-clusters with a node that can hold the shape (an RM refuses asks over its maximum)."""
        return [any(all(map(le, vector, shape)) for shape in shapes) for shapes in self.shapes]

    def resplit(self, queues: set[str], now: float) -> None:
        """The queues' weights changed: every outstanding ask of theirs is split again."""
        for (app_id, priority), ask in list(self.asks.items()):
            if ask.queue in queues and sum(ask.parts):
                parts = split(sum(ask.parts), self.weights.of(ask.queue), self.usable(ask.vector))
                self._send(app_id, priority, ask, parts, now)

    def _send(self, app_id: str, priority: int, ask: _Ask, parts: list[int], now: float) -> None:
        resources = dict(zip(self.types, ask.vector))
        for s, n in enumerate(parts):
            if n == ask.parts[s]:
                continue
            if s not in self.registered[app_id]:
                # The proxy's unmanaged AM in this sub-cluster, in the queue the home placed the app in.
                self.cores[s].submit_app(app_id, self.users[app_id], self.queue[app_id], now=now)
                self.registered[app_id].add(s)
            self.cores[s].update_request(app_id, priority, resources, n, now=now, am=False)
        ask.parts = parts

    # ------------------------------------------------------------------ what a policy service reads

    def waiting(self) -> dict[str, list[bool]]:
        """Per queue, per sub-cluster: asks of the queue wait there."""
        out = {q: [False] * len(self.cores) for q in self.usage}
        for ask in self.asks.values():
            row = out.setdefault(ask.queue, [False] * len(self.cores))
            for s, n in enumerate(ask.parts):
                row[s] = row[s] or n > 0
        return out

    def queue_usable(self) -> dict[str, list[bool]]:
        """Per queue: the sub-clusters some outstanding ask of it can use."""
        out: dict[str, list[bool]] = {}
        for ask in self.asks.values():
            if sum(ask.parts):
                row = out.setdefault(ask.queue, [False] * len(self.cores))
                for s, ok in enumerate(self.usable(ask.vector)):
                    row[s] = row[s] or ok
        return out


def _positive(weights: Sequence[float], usable: Sequence[bool]) -> list[float]:
    w = [x if ok else 0.0 for x, ok in zip(weights, usable)]
    return w if sum(w) > 0 else [1.0 if ok else 0.0 for ok in usable]


class FederatedSimulation(Simulation):
    """The single-cluster engine over the union of the sub-clusters' nodes, its core a Federation.

    Every `policy_s` simulated seconds the weights' round runs on what the sub-clusters report
    (each queue's usage of the federation, where its asks wait) and changed queues' asks are
    split again."""

    def __init__(self, config: QueueConfig, clusters: Sequence[ClusterSpec], apps: Sequence[AppSpec],
                 weights: StaticWeights, *, heartbeat_s: float = 1.0, until: float | None = None,
                 seed: int = 0, policy_s: float = 10.0) -> None:
        if config.preemption.enabled:
            raise SimInputError(["the federated simulation does not preempt: turn preemption off"])
        union = ClusterSpec(tuple(n for c in clusters for n in c.nodes), "federation")
        types = tuple(config.resources) if config.resources else tuple(union.resource_names())
        setup = prepare("drf", config, types, None)
        super().__init__(setup, config, union, apps, heartbeat_s=heartbeat_s, until=until, seed=seed)
        self.federation = Federation(setup.config, self.types, clusters, weights, lambda: self.now, seed)
        self.core = self.federation
        self.weights = weights
        self.policy_s = policy_s
        self.next_policy = policy_s

    def _advance(self, t: float) -> None:
        while self.next_policy <= t and (self.until is None or self.next_policy <= self.until):
            super()._advance(self.next_policy)
            self._policy_round()
            self.next_policy += self.policy_s
        super()._advance(t)

    def _policy_round(self) -> None:
        fed = self.federation
        changed = self.weights.round(self.weighted_shares(), fed.waiting(), fed.queue_usable())
        if changed:
            fed.resplit(changed, self.now)

    def weighted_shares(self) -> dict[str, float]:
        """Each leaf's weighted dominant share of the whole federation's capacity, now."""
        queues = self.setup.config.queues()
        out = {}
        for q, alloc in self.queue_alloc.items():
            weight = queues[q].weight if q in queues else 1.0
            out[q] = max((a / (c * _weight_of(weight, t)) for a, c, t in zip(alloc, self.capacity, self.real_types)
                          if c), default=0.0)
        return out

    def subcluster_of(self, cid: str) -> int:
        return self.federation.owner[cid][0]


def _weight_of(weight: Any, resource: str) -> float:
    """A queue weight is one number or one per resource type."""
    return float(weight.get(resource, 1.0)) if isinstance(weight, dict) else float(weight)

