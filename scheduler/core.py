"""SchedulerCore: cluster state, events, and the hierarchical-DRF decision at each node heartbeat.

Fairness state is computed when a node offers room, never by a periodic thread: every queue's
key (its H-DRF share, or how far it is below its `min`) is refreshed the moment something below
it changes, in its parent's keyed heap. A leaf's share is its weighted dominant share; a parent's
is that of its children's usage rescaled to its lowest child with demand (H-DRF, Bhattacharya et
al.: scheduler.hdrf); a leaf with `user-limits` is a parent of its users, one more level
of H-DRF. A heartbeat walks down the tree taking, at each level, the lowest-keyed child that has
something fitting this node and its limits; a child that cannot fit is set aside for the rest of
the heartbeat, which re-keys its parents (it no longer holds their level down), so a queue whose
requests do not fit never blocks the others (DRFH). Cost per assigned container: one push per
tree level and O(resources) arithmetic per level.

SchedulerCore is the one class callers use; its parts are the classes it is built on, one module
each, in one line of bases (scheduler.core_state names them): a part calls only what it and the
parts before it define, so the modules import each other one way only. This module holds what
needs every part: reloads, node labels (pools are SchedulerCores), headroom, the preemption
planner and the status snapshot.
"""
from __future__ import annotations

import logging
import time
from dataclasses import replace
from collections.abc import Callable, Mapping, Sequence
from operator import mul

from scheduler.config import ConfigError, QueueConfig, QueueSpec
from scheduler.decision import Decision
from scheduler.model import Queue, User, apps_below
from scheduler.partitions import Partitions
from scheduler.preemption import PreemptionPlan, Preemptor
from scheduler.queue_limits import count_running
from scheduler.resources import Vector, dominant_resource, dominant_share, vadd, vmin, vsub

log = logging.getLogger("yarn_drf.core")


class SchedulerCore(Decision):
    """The decision core. Not thread-safe: the caller serialises calls."""

    def __init__(self, config: QueueConfig, resource_types: Sequence[str] | None = None,
                 policy: str = "drf", clock: Callable[[], float] = time.monotonic,
                 node_choice: str = "each-node", max_app_priority: int | None = None) -> None:
        """`node_choice`: how on_nodes picks the node the per-node decision runs on next
        (scheduler.multinode). `max_app_priority`: the cluster's highest application priority
        (YARN's yarn.cluster.max-application-priority, whose default is 0); a higher one given to
        submit_app, recover_app or update_app_priority is lowered to it. None: priorities are
        taken as given (the caller, like YARN's RM, has capped them)."""
        super().__init__(config, resource_types, policy, clock, node_choice, max_app_priority)
        self._preemptor: Preemptor | None = None
        self._install(config)

    def reload(self, config: QueueConfig) -> dict:
        """Installs a validated config; apps keep running, queues that vanish while holding apps drain."""
        self._check_reload(config)
        old_queues = self.queues
        self._install(config)
        draining = []
        for app in self.apps.values():
            old = app.queue
            new = self.queues.get(old.path) or self._keep_draining(old.path, old)
            if new.draining and old.path not in draining:
                draining.append(old.path)
            app.queue = new
            new.apps[app.id] = app
        self._recount()  # (it puts each app under its user again, with the new user-limits)
        self.counters["reloads"] += 1
        old_paths, new_paths = set(old_queues), set(self.queues)
        changed = [p for p in old_paths & new_paths
                   if _own(old_queues[p]) != _own(self.queues[p]) and not self.queues[p].draining]
        summary = {"added": sorted(new_paths - old_paths), "removed": sorted(old_paths - new_paths),
                   "changed": sorted(changed), "draining": sorted(draining)}
        log.info("config reloaded from %s: %s", config.source, summary)
        for pool in self.partitions.pools.values() if self.partitions is not None else ():
            pool.reload(config)
        return summary

    def _check_reload(self, config: QueueConfig) -> None:
        """Refuses a config that would turn a queue holding apps, or one of its ancestors, into a leaf or parent clash."""
        specs = config.queues()
        errors = []
        for path in sorted({app.queue.path for app in self.apps.values()}):
            spec = specs.get(path)
            if spec is not None and not spec.is_leaf:
                errors.append(f"queues.{path}: holds running apps and cannot become a parent queue")
            parts = path.split(".")
            for i in range(1, len(parts) - 1):
                anc = specs.get(".".join(parts[:i + 1]))
                if anc is not None and anc.is_leaf:
                    errors.append(f"queues.{anc.path}: cannot become a leaf while {path} below it holds apps")
        if errors:
            raise ConfigError(sorted(set(errors)), config.source)
        config.check_resources(self.types.names)

    def _recount(self) -> None:
        """Rebuilds every derived number (usage, runnable counts, shapes, heaps) from apps and containers."""
        zero = self.types.zero
        for q in self.queues.values():
            q.usage, q.running_apps, q.am_usage = zero, 0, zero
            q.shapes.clear()
            q.waiting.clear()
            if q.users is not None:
                q.users.clear()
        self._reset_keys()  # (masks too: _add_shape sets them again)
        for app in sorted(self.apps.values(), key=lambda a: a.seq):
            owner = app.owner = self._user(app.queue, app.user)
            for q in app.queue.ancestors_and_self():
                q.usage = vadd(q.usage, app.usage)
            app.queue.am_usage = vadd(app.queue.am_usage, app.am_usage)
            if owner is not None:
                owner.apps += 1
                owner.usage = vadd(owner.usage, app.usage)
            if app.runnable:
                count_running(app, 1)
                for req in app.pending:
                    self._add_shape(app, req.capability)
            else:
                self._hold(app)
        self._admit_waiting(self.root)  # a reload may have raised a max-running-apps
        for app in self.apps.values():
            self._requeue(app)

    def set_labels(self, labels: Mapping[str, bool]) -> None:
        """The cluster's node labels, name -> exclusive (YARN's RMNodeLabelsManager), as a whole."""
        if self.partitions is None:
            self.partitions = Partitions(self, self._pool)
        self.partitions.set_labels(dict(labels))

    def _pool(self, label: str) -> SchedulerCore:
        pool = SchedulerCore(self.config, self.types.names, self.policy.name, self.clock,
                             self._node_choice_name, self.max_app_priority)
        pool.partition, pool._aid = label, f"a{label}-"
        pool.hold_changes = self.hold_changes
        return pool

    def headroom(self, app_id: str) -> dict[str, int] | None:
        """What the app could still get now (YARN's headroom, which an AM such as MapReduce's uses
        to ramp reducers down): per resource, the smallest of the cluster's free room and what the
        `max` of its queue and of each ancestor leaves, never below 0. None for an unknown app.
        O(depth x resources): for allocate responses, not for the decision."""
        app = self.apps.get(app_id)
        if app is None:
            return None
        return self.types.to_dict(self.queue_headroom(app.queue, {}))

    def queue_headroom(self, q: Queue, known: dict[Queue, Vector]) -> Vector:
        """headroom's amounts, in the types' order, for any app of queue `q`. `known` holds the
        queues' worked out before: a caller asking for many queues passes one dict, so the leaves
        under one parent (thousands, where placement creates them) each take one step from it."""
        room = known.get(q)
        if room is None:
            if self._stale:
                self._refresh()
            parent = q.parent
            room = vsub(self.capacity, self.root.usage) if parent is None else self.queue_headroom(parent, known)
            if q.max is not None:
                room = vmin(room, vsub(q.max, q.usage))
            room = known[q] = tuple([max(0, v) for v in room])
        return room

    def preemption_round(self, now: float | None = None) -> PreemptionPlan:
        """One round of preemption toward the targets (scheduler.preemption): what to tell AMs,
        what to kill now. The caller runs it on a timer (every second or so), never per heartbeat."""
        if self._preemptor is None:
            self._preemptor = Preemptor(self)
        now = self._now(now)
        plan = self._preemptor.round(now)
        return plan if self.partitions is None else self.partitions.merge(plan, now)

    @property
    def preemption(self) -> Preemptor:
        """The planner's state (starved queues, outstanding marks, counters), for status pages."""
        if self._preemptor is None:
            self._preemptor = Preemptor(self)
        return self._preemptor

    def snapshot(self) -> dict:
        """The state as plain JSON-able data, for status pages, tests and the simulator."""
        if self._stale:
            self._refresh()
        names, cap = self.types.names, self.capacity
        queues = {}
        for path, q in self.queues.items():
            pending = self.types.zero
            for app in apps_below(q):
                for req in app.pending:
                    pending = vadd(pending, tuple(v * req.count for v in req.capability))
            queues[path] = {
                "weight": q.spec.weight,
                "usage": self.types.to_dict(q.usage),
                "pending": self.types.to_dict(pending),
                "dominant_share": dominant_share(q.usage, cap),
                "dominant_resource": dominant_resource(q.usage, cap, names),
                "weighted_share": self.policy.aggregate(map(mul, q.usage, q.scale)) if q.scale else 0.0,
                "min": dict(q.spec.min),
                "max": self.types.to_dict(q.max) if q.max else None,
                "running_apps": q.running_apps,
                **({"am_usage": self.types.to_dict(q.am_usage), "am_limit": self.types.to_dict(q.am_limit),
                    "max_am_share": q.am_share} if q.am_limit is not None else {}),
                "waiting_apps": sum(not a.runnable for a in apps_below(q)),
                **({"users": {u.name: self._user_status(u) for u in q.users.values()}} if q.users is not None else {}),
                "leaf": q.is_leaf,
                "draining": q.draining,
                "dynamic": q.dynamic,
            }
        return {
            "resource_types": list(names),
            "capacity": self.types.to_dict(cap),
            "queues": queues,
            "nodes": {n.id: {"rack": n.rack, "capacity": self.types.to_dict(n.capacity),
                             "allocated": self.types.to_dict(n.allocated),
                             "reserved_for": f"{n.reserved.app.id}/{n.reserved.key}" if n.reserved else None,
                             **({"cards": n.cards.to_list()} if n.cards is not None else {})}
                      for n in self.nodes.values()},
            "apps": {a.id: {"queue": a.queue.path, "user": a.user, "runnable": a.runnable, "priority": a.priority,
                            "usage": self.types.to_dict(a.usage), "containers": len(a.containers),
                            "pending": sum(r.count for r in a.pending)}
                     for a in self.apps.values()},
            "containers": len(self.containers),
            "counters": dict(self.counters),
            **({"partitions": {label: {"exclusive": parts.exclusive.get(label), **pool.snapshot()}
                               for label, pool in parts.pools.items()}}
               if (parts := self.partitions) is not None else {}),
        }

    def _user_status(self, user: User) -> dict:
        return {"weight": user.weight, "max_running_apps": user.max_apps, "usage": self.types.to_dict(user.usage),
                "weighted_share": user.weigh(user.usage),
                "running_apps": user.running_apps, "waiting_apps": len(user.waiting)}


def _own(q: Queue) -> QueueSpec:
    """A queue's own settings, without its children, to tell what a reload changed (at its own
    path: the leaves placement created share one spec)."""
    return replace(q.spec, path=q.path, children=())
