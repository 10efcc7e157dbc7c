"""The engine's heartbeat shortcuts must not change any outcome."""
from __future__ import annotations

import json

from scheduler import parse_config
from scheduler.sim.formats import parse_cluster, parse_workload
from scheduler.sim.runner import SimulationRequest, simulate
from scheduler.sim.synthetic import generate_apps

QUEUES = """\
reservation: {starvation-timeout-s: 20}
queues:
  root:
    children:
      a: {weight: 2}
      b: {weight: 1}
      c: {weight: {vcores: 1, memory-mb: 1, gpu-mem: 3}}
"""
CLUSTER = """\
nodes:
  - {name: cpu, count: 3, resources: {vcores: 16, memory-mb: 32768}}
  - {name: gpu, count: 2, resources: {vcores: 8, memory-mb: 32768, gpu-mem: 20480}}
"""


def _run(policy: str, skip: bool) -> dict:
    lines = generate_apps(apps=60, queues=["root.a", "root.b", "root.c"],
                          mix={"cpu": 1, "memory": 1, "gpu": 1}, arrival_s=15.0, seed=7)
    apps = parse_workload("\n".join(json.dumps(x) for x in lines), "w.jsonl")
    request = SimulationRequest.build(parse_config(QUEUES), parse_cluster(CLUSTER, "c.yaml"), apps,
                                      policy=policy, slots_per_node=6, seed=1)
    result, sim = simulate(request, skip_idle=skip)
    return result, sim


def test_skipping_idle_and_full_heartbeats_changes_nothing():
    for policy in ("drf", "slots"):
        fast, fast_sim = _run(policy, True)
        slow, slow_sim = _run(policy, False)
        assert fast["apps"] == slow["apps"]
        assert fast["queues"] == slow["queues"]
        assert fast["utilization"] == slow["utilization"]
        assert fast["end_time"] == slow["end_time"]
        # The shortcuts did apply, and the run used reservations, which they must respect.
        assert fast_sim.counters["heartbeats_idle"] + fast_sim.counters["heartbeats_full"] > 0
        assert slow_sim.counters["heartbeats_full"] == slow_sim.counters["heartbeats_idle"] == 0
        assert slow_sim.counters["decisions"] == slow_sim.counters["heartbeats"]
        assert fast_sim.counters["decisions"] < slow_sim.counters["decisions"]
    assert all(a["finish"] is not None for a in fast["apps"])


def test_reservations_happen_in_the_shortcut_workload():
    result, sim = _run("drf", True)
    assert sim.core.counters["reservations_made"] > 0
