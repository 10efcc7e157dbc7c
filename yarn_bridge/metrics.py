"""Prometheus metrics of the scheduler service, served at /metrics by the status server.

Event counts (schedule calls, heartbeats, assignments, refusals, resyncs, reloads) and latencies
are recorded by the service as they happen: the core's own counters restart when a resync replaces the core, and
Prometheus counters must never go down. Per-queue and per-cluster gauges are read from the live
core at scrape time (under the service lock), so a queue removed by a reload disappears at once
and nothing is ever stale.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from scheduler import SchedulerCore
from scheduler.explain import TargetInput, queue_figures
from scheduler.preemption import PreemptionPlan
from scheduler.resources import vadd

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# A call's decisions take tens of microseconds to tens of milliseconds (it covers every node with
# room); the py4j round trip ~0.1 to a few ms.
DECISION_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
NODE_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
ROUND_TRIP_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class Metrics:
    """The service's instruments, in a registry of their own (one per service, one per test)."""

    def __init__(self, get_core: Callable[[], SchedulerCore] | None = None, lock: Any = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.clock = clock
        self.last_call: float | None = None
        self._mutex = threading.Lock()
        r = self.registry
        self.heartbeats = Counter("yarn_drf_heartbeats", "NodeManager heartbeats the shim reported", registry=r)
        self.calls = Counter("yarn_drf_schedule_calls", "Schedule calls from the shim (each decides for every "
                             "node with free room)", registry=r)
        self.assignments = Counter("yarn_drf_assignments", "Containers assigned by the core", registry=r)
        self.refused = Counter("yarn_drf_refused_assignments",
                               "Assignments the ResourceManager refused on re-check", registry=r)
        self.resyncs = Counter("yarn_drf_resyncs", "Full-state snapshots from the shim (core rebuilt)", registry=r)
        self.reloads = Counter("yarn_drf_config_reloads", "Queue configuration reloads by result",
                               ["result"], registry=r)
        for result in ("ok", "failed"):
            self.reloads.labels(result)  # both series exist from the start, at 0
        self.decision = Histogram("yarn_drf_decision_seconds",
                                  "Time to apply a schedule call's changes and decide for its nodes",
                                  buckets=DECISION_BUCKETS, registry=r)
        self.nodes = Histogram("yarn_drf_schedule_nodes", "Nodes with free room a schedule call decided for",
                               buckets=NODE_BUCKETS, registry=r)
        self.round_trip = Histogram("yarn_drf_bridge_round_trip_seconds",
                                    "Bridge round trip of a schedule call as the Java shim measured it",
                                    buckets=ROUND_TRIP_BUCKETS, registry=r)
        self.preemptions = Counter("yarn_drf_preemptions", "Containers preemption marked (their AM told) and "
                                   "killed after the grace", ["action"], registry=r)
        for action in ("marked", "killed"):
            self.preemptions.labels(action)
        self.work_lost = Counter("yarn_drf_preempted_work_seconds", "Container-seconds of work the preemption "
                                 "kills ended (each killed container's age)", registry=r)
        if get_core is not None:
            self.follow(get_core, lock)

    def follow(self, get_core: Callable[[], SchedulerCore], lock: Any = None) -> None:
        """Reads the per-queue and cluster gauges from the core `get_core` returns, under `lock`."""
        self.registry.register(CoreCollector(get_core, lock))

    # ------------------------------------------------------------------ what the service calls

    def schedule(self, decision_seconds: float, assignments: int, *, nodes: int = 1, heartbeats: int = 1,
                 refused: int = 0, round_trip_seconds: float | None = None) -> None:
        """One schedule call: its latency, the nodes it decided for, the NodeManager heartbeats and
        refusals it reported, the containers it assigned, and the shim's round trip of the one before."""
        self.calls.inc()
        self.heartbeats.inc(heartbeats)
        self.assignments.inc(assignments)
        if refused > 0:
            self.refused.inc(refused)
        self.decision.observe(decision_seconds)
        self.nodes.observe(nodes)
        if round_trip_seconds is not None:
            self.round_trip.observe(round_trip_seconds)
        with self._mutex:
            self.last_call = self.clock()

    def preemption(self, plan: PreemptionPlan, now: float) -> None:
        """Counts a preemption round's new marks and kills (observe-only plans count nothing)."""
        self.preemptions.labels("marked").inc(len(plan.mark))
        self.preemptions.labels("killed").inc(len(plan.kill))
        self.work_lost.inc(sum(max(0.0, now - v.started) for v in plan.kill))

    def resync(self) -> None:
        self.resyncs.inc()

    def reload(self, ok: bool) -> None:
        self.reloads.labels("ok" if ok else "failed").inc()

    # ------------------------------------------------------------------ reading

    def call_age(self) -> float | None:
        """Seconds since the last schedule call, None before the first."""
        with self._mutex:
            last = self.last_call
        return None if last is None else max(0.0, self.clock() - last)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class CoreCollector(Collector):
    """Per-queue and cluster gauges computed from the live core at each scrape."""

    def __init__(self, get_core: Callable[[], SchedulerCore], lock: Any = None) -> None:
        self.get_core = get_core
        self.lock = lock

    def describe(self):
        return []  # computed at scrape time: nothing to check at registration

    def collect(self):
        with self.lock if self.lock is not None else nullcontext():
            core = self.get_core()
            names = core.types.names
            figures = queue_figures(core)
            fill = TargetInput(core)
            draining = {path: q.draining for path, q in core.queues.items()}
            capacity_now = core.capacity
            allocated_now = core.types.zero
            for node in core.nodes.values():
                allocated_now = vadd(allocated_now, node.allocated)
            nodes_now, apps_now = len(core.nodes), len(core.apps)
            preempting = core.preemption.report(core.clock())["queues"]
        goals = fill.compute()  # outside the lock: heartbeats do not wait for it
        usage = GaugeMetricFamily("yarn_drf_queue_usage", "Resources a queue holds", labels=["queue", "resource"])
        pending = GaugeMetricFamily("yarn_drf_queue_pending", "Resources the apps in and below a queue still ask "
                                    "for", labels=["queue", "resource"])
        dominant = GaugeMetricFamily("yarn_drf_queue_dominant_share", "A queue's dominant share of the cluster",
                                     labels=["queue"])
        weighted = GaugeMetricFamily("yarn_drf_queue_weighted_share", "A queue's weighted dominant share of its "
                                     "usage (a leaf's key among its siblings; a parent's key is its "
                                     "hierarchical share)", labels=["queue"])
        target = GaugeMetricFamily("yarn_drf_queue_target_share", "The dominant share a queue's demand settles "
                                   "at under the core's decisions, in whole containers on the real nodes",
                                   labels=["queue"])
        pooled = GaugeMetricFamily("yarn_drf_queue_pooled_target_share", "A queue's weighted-DRF fair share with "
                                   "the cluster taken as one pool (node boundaries ignored)", labels=["queue"])
        running = GaugeMetricFamily("yarn_drf_queue_running_apps", "Runnable apps in and below a queue",
                                    labels=["queue"])
        waiting = GaugeMetricFamily("yarn_drf_queue_waiting_apps", "Apps held back by max-running-apps",
                                    labels=["queue"])
        drain = GaugeMetricFamily("yarn_drf_queue_draining", "1 when a reload removed the queue and it "
                                  "drains its apps", labels=["queue"])
        reservations = GaugeMetricFamily("yarn_drf_queue_reservations", "Nodes reserved for requests of apps "
                                         "in and below a queue", labels=["queue"])
        starved = GaugeMetricFamily("yarn_drf_queue_starved", "1 while preemption counts the queue as starved "
                                    "(below threshold x its target, or its min, past the timeout)", labels=["queue"])
        victims = GaugeMetricFamily("yarn_drf_queue_preemption_victims", "Containers in and below a queue marked "
                                    "for preemption (observe-only: planned)", labels=["queue"])
        for path, state in preempting.items():
            starved.add_metric([path], 1 if state["starved"] else 0)
            victims.add_metric([path], state["victims"])
        for path, f in figures.items():
            for res, u, p in zip(names, f.usage, f.pending):
                usage.add_metric([path, res], u)
                pending.add_metric([path, res], p)
            dominant.add_metric([path], f.dominant_share)
            weighted.add_metric([path], f.weighted_share)
            target.add_metric([path], goals[path].dominant_share)
            pooled.add_metric([path], goals[path].pooled_dominant_share)
            running.add_metric([path], f.running_apps)
            waiting.add_metric([path], f.waiting_apps)
            drain.add_metric([path], 1 if draining[path] else 0)
            reservations.add_metric([path], f.reservations)
        capacity = GaugeMetricFamily("yarn_drf_cluster_capacity", "Cluster capacity", labels=["resource"])
        allocated = GaugeMetricFamily("yarn_drf_cluster_allocated", "Resources held by containers",
                                      labels=["resource"])
        for res, c, a in zip(names, capacity_now, allocated_now):
            capacity.add_metric([res], c)
            allocated.add_metric([res], a)
        nodes = GaugeMetricFamily("yarn_drf_nodes", "Nodes known to the core")
        nodes.add_metric([], nodes_now)
        apps = GaugeMetricFamily("yarn_drf_apps", "Apps known to the core")
        apps.add_metric([], apps_now)
        yield from (usage, pending, dominant, weighted, target, pooled, running, waiting, drain, reservations,
                    starved, victims, capacity, allocated, nodes, apps)
