"""Shared drivers for core tests: build a core from YAML and run heartbeats to quiescence."""
from __future__ import annotations

from scheduler import SchedulerCore, parse_config


def make_core(yaml_text: str, nodes: dict[str, dict[str, int]], **kwargs) -> SchedulerCore:
    core = SchedulerCore(parse_config(yaml_text), **kwargs)
    for node_id, capacity in nodes.items():
        core.add_node(node_id, capacity)
    return core


def settle(core: SchedulerCore, now: float = 0.0, max_rounds: int = 1000) -> list:
    """Heartbeats every node, round after round, until a whole round assigns nothing."""
    got_all = []
    for _ in range(max_rounds):
        got = [a for node_id in list(core.nodes) for a in core.on_heartbeat(node_id, now=now)]
        if not got:
            return got_all
        got_all += got
    raise AssertionError("the cluster never settled")


def queue_usage(core: SchedulerCore, path: str) -> dict[str, int]:
    return core.snapshot()["queues"][path]["usage"]


def share(core: SchedulerCore, path: str, weighted: bool = False) -> float:
    q = core.snapshot()["queues"][path]
    return q["weighted_share"] if weighted else q["dominant_share"]


class LongTasks:
    """A cluster of tasks that never end on their own, driven as the bridge will drive the core:
    a preemption round then a heartbeat of every node each second. A killed task goes back to its
    app's pending work (its ask is raised by one), as an AM asks again for a lost task."""

    def __init__(self, core: SchedulerCore) -> None:
        self.core = core
        self.plans: list = []  # (time, plan) of every round
        self.killed: list = []

    def ask(self, app: str, queue: str, shape: dict[str, int], count: int, now: float = 0.0,
            priority: int = 1) -> None:
        if app not in self.core.apps:
            assert self.core.submit_app(app, "u", queue, now=now).accepted
        self.core.update_request(app, priority, shape, count, now=now)

    def step(self, now: float) -> list:
        """One second: a preemption round (kills done at once), then every node heartbeats."""
        core = self.core
        plan = core.preemption_round(now)
        self.plans.append((now, plan))
        for v in plan.kill:
            c = core.containers[v.container_id]
            req = c.app.requests[c.key]
            core.container_finished(v.container_id, "preempted")
            core.update_request(c.app.id, c.key[0], c.resources, req.count + 1, allocation_id=c.key[1], now=now)
            self.killed.append(v)
        return [a for node_id in list(core.nodes) for a in core.on_heartbeat(node_id, now=now)]

    def run(self, start: float, end: float) -> None:
        t = start
        while t < end:
            self.step(t)
            t += 1.0

    def marked(self, since: float = float("-inf")) -> list:
        return [v for t, plan in self.plans if t >= since for v in plan.mark]
