"""The simulator's JSON result (its documented output format)."""
from __future__ import annotations

from typing import Any

from scheduler.sim.engine import Simulation
from scheduler.sim.stats import summary
from scheduler.resources import dominant_share
from scheduler.targets import TargetInput, UserTarget

FORMAT_VERSION = 1


def _weighted_share(alloc: list[int], capacity: tuple[int, ...], types: tuple[str, ...],
                    weight: float | dict[str, float]) -> float:
    """max_j u_j / (C_j * w_j): the core's weighted dominant share under policy drf."""
    best = 0.0
    for name, u, c in zip(types, alloc, capacity):
        if c:
            w = weight.get(name, 1.0) if isinstance(weight, dict) else weight
            best = max(best, u / (c * w))
    return best


def _unscale(types: tuple[str, ...], scales: dict[str, int]):
    """Amounts per type as the inputs gave them (a type simulated in thousandths divided back)."""
    def unit(values) -> dict[str, int | float]:
        return {t: v / scales[t] if t in scales else v for t, v in zip(types, values)}
    return unit


def _round(t: float | None) -> float | None:
    return None if t is None else round(t, 3)


def _preemption(sim: Simulation) -> dict[str, Any] | None:
    """What preemption did (None when the queue file leaves it off)."""
    if not sim.preempting:
        return None
    counters = sim.core.preemption.counters
    return {"rounds": sim.preemption["rounds"], "told": sim.preemption["told"],
            "killed": sim.preemption["killed"], "released_in_grace": counters["released"],
            "cancelled": counters["cancelled"],
            "work_lost_container_s": round(sim.preemption["work_lost_container_s"], 3)}


def _users(sim: Simulation, queue: str, goals: dict[str, UserTarget], capacity: tuple) -> dict[str, Any]:
    """Per user of a leaf with user-limits: its apps, their queueing delay (max-running-apps per
    user holds apps back) and, for users with apps at the end, the user's target shares."""
    out: dict[str, Any] = {}
    for user in sorted({a.spec.user for a in sim.states.values() if a.queue == queue}):
        mine = [a for a in sim.states.values() if a.queue == queue and a.spec.user == user]
        goal = goals.get(user)
        out[user] = {
            "apps": len(mine),
            "completed_apps": sum(a.finish is not None for a in mine),
            "queueing_delay_s": summary([a.start - a.spec.submit for a in mine if a.start is not None], (50, 99)),
            "target_share": None if goal is None else round(dominant_share(goal.allocation, capacity), 6),
            "pooled_target_share": None if goal is None else round(dominant_share(goal.pooled_allocation, capacity), 6),
        }
    return out


def build_result(sim: Simulation) -> dict[str, Any]:
    """Everything the run measured, as a JSON-able dict."""
    end = sim.now if sim.until is None else sim.until
    capacity = sim.capacity
    types = sim.real_types
    core_queues = sim.core.snapshot().get("queues", {})
    # The targets of the demand at the end (running containers and what runnable apps still ask),
    # for policies that decide by the configured queues.
    goals = TargetInput(sim.core).compute() if sim.setup.submit_queue is None else {}
    label_queues = sim.label_config.queues()
    completion: dict[str, list[float]] = {q: [] for q in sim.queue_alloc}
    delay: dict[str, list[float]] = {q: [] for q in sim.queue_alloc}
    apps = []
    for app in sim.states.values():
        apps.append({"id": app.spec.id, "queue": app.queue, "user": app.spec.user,
                     "submit": _round(app.spec.submit), "start": _round(app.start), "finish": _round(app.finish)})
        if app.finish is not None:
            completion[app.queue].append(app.finish - app.spec.submit)
        if app.start is not None:
            delay[app.queue].append(app.start - app.spec.submit)
    unit = _unscale(types, sim.scales)
    queues: dict[str, Any] = {}
    for q, alloc in sorted(sim.queue_alloc.items()):
        share = max((a / c for a, c in zip(alloc, capacity) if c), default=0.0)
        if sim.setup.submit_queue is None and q in core_queues:
            weighted = core_queues[q].get("weighted_share", share)
        else:
            spec = label_queues.get(q)
            weighted = _weighted_share(alloc, capacity, types, spec.weight if spec else 1.0)
        queues[q] = {
            "running": sim.queue_running[q],
            "allocated": unit(alloc),
            "dominant_share": round(share, 6),
            "weighted_share": round(weighted, 6),
            "target_share": round(goals[q].dominant_share, 6) if q in goals else None,
            "pooled_target_share": round(goals[q].pooled_dominant_share, 6) if q in goals else None,
            "completed_tasks": sim.queue_tasks_done[q],
            "completed_apps": len(completion[q]),
            "app_completion_s": summary(completion[q]),
            "queueing_delay_s": summary(delay[q], (50, 99)),
            "apps_not_started": sum(1 for a in sim.states.values() if a.queue == q and a.start is None),
        }
        leaf = sim.core.queues.get(q) if sim.setup.submit_queue is None else None
        if leaf is not None and leaf.users is not None:
            queues[q]["users"] = _users(sim, q, goals[q].users if q in goals else {}, capacity)
    utilization = {t: round(sim.area[j] / (capacity[j] * end), 6) if capacity[j] and end > 0 else 0.0
                   for j, t in enumerate(types)}
    p50, p99 = sim.latency.percentile(50), sim.latency.percentile(99)
    wall = getattr(sim, "wall_s", 0.0)
    events = sim.counters["events"] + sim.counters["assignments"] + sim.counters["containers_finished"]
    return {
        "format": FORMAT_VERSION,
        "policy": sim.setup.name,
        "end_time": round(end, 3),
        "stalled": sim.stalled,
        "cluster": {"nodes": len(sim.node_names), "capacity": unit(capacity),
                    "heartbeat_s": sim.heartbeat},
        "queues": queues,
        "utilization": utilization,
        "apps": apps,
        "rejected": sim.rejected,
        "scheduler": {
            "decisions": sim.counters["decisions"],
            "assignments": sim.counters["assignments"],
            "decision_us": {"p50": None if p50 is None else round(p50, 2),
                            "p99": None if p99 is None else round(p99, 2)},
            "core_counters": dict(sim.core.counters),
        },
        "preemption": _preemption(sim),
        "sim": {
            # submits + heartbeats + container starts + container ends
            "events": events,
            "heartbeats": sim.counters["heartbeats"],
            "heartbeats_idle": sim.counters["heartbeats_idle"],
            "heartbeats_full": sim.counters["heartbeats_full"],
            "containers_started": sim.counters["assignments"] - sim.counters["excess_assignments"],
            "containers_finished": sim.counters["containers_finished"],
            "excess_assignments": sim.counters["excess_assignments"],
            "wall_s": round(wall, 3),
            "events_per_s": round(events / wall, 1) if wall > 0 else None,
        },
    }
