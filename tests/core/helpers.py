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
