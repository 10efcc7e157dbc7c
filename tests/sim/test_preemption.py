"""Preemption in the simulator: the core's plan executed on the simulated clock (issue 15)."""
from __future__ import annotations

from tests.sim.conftest import SCENARIOS, TWO_QUEUES, app

CPU = {"vcores": 1, "memory-mb": 1024}
PREEMPTION = ("preemption: {enabled: true, fair-share-timeout-s: 10, min-share-timeout-s: 5, grace-s: 5, "
              "max-per-round: '100%'}\n")
CLUSTER = "nodes:\n  - {name: n, count: 2, resources: {vcores: 4, memory-mb: 8192}}\n"


def test_a_preempted_task_runs_again_and_its_lost_work_is_counted(files):
    """a's eight 100-s tasks fill the cluster; b's four arrive at 20 s, starve until 30 s, and a's
    victims are killed at 35 s: their tasks run again from the start, so a completes its eight
    tasks only once the four rerun ones have run a full 100 s each."""
    cluster = files.write("c.yaml", CLUSTER)
    queues = files.write("q.yaml", PREEMPTION + TWO_QUEUES)
    w = files.workload("w.jsonl", [app("long", "root.a", 0.0, [(8, CPU, 100.0)], am=None),
                                   app("late", "root.b", 20.0, [(4, CPU, 30.0)], am=None)])
    r = files.simulate(queues, cluster, w)
    p = r["preemption"]
    assert p["killed"] == 4 and p["told"] == 4 and p["released_in_grace"] == 0
    assert 4 * 30 <= p["work_lost_container_s"] <= 4 * 36  # started at 0-1 s, killed at 35-36 s
    assert r["queues"]["root.a"]["completed_tasks"] == 8 and r["queues"]["root.b"]["completed_tasks"] == 4
    late = next(a for a in r["apps"] if a["id"] == "late")
    assert late["start"] <= 37.0  # not at 100 s, when a's first tasks end
    assert r["end_time"] >= 135.0  # a's four killed tasks ran 100 s again after b's ended


def test_without_the_preemption_section_nothing_is_preempted(files):
    cluster = files.write("c.yaml", CLUSTER)
    queues = files.write("q.yaml", TWO_QUEUES)
    w = files.workload("w.jsonl", [app("long", "root.a", 0.0, [(8, CPU, 100.0)], am=None),
                                   app("late", "root.b", 20.0, [(4, CPU, 30.0)], am=None)])
    r = files.simulate(queues, cluster, w)
    assert r["preemption"] is None
    assert next(a for a in r["apps"] if a["id"] == "late")["start"] >= 100.0


def test_an_am_is_not_preempted_when_its_queue_would_lose_its_whole_app_with_it(files):
    """a's 2-vcore AM and two 1-vcore tasks fill the node; b's 3-vcore task needs the AM's room
    and one task's. YARN ends an app's tasks with its AM, so a would lose all it holds and fall
    below its target (a quarter): nothing is preempted, and b's task waits for a's work to end."""
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 4, memory-mb: 8192}}\n")
    queues = files.write("q.yaml", PREEMPTION + TWO_QUEUES.replace("b: {weight: 1}", "b: {weight: 3}"))
    w = files.workload("w.jsonl", [
        app("long", "root.a", 0.0, [(2, CPU, 200.0)], am={"vcores": 2, "memory-mb": 1024}),
        app("late", "root.b", 20.0, [(1, {"vcores": 3, "memory-mb": 1024}, 30.0)], am=None)])
    r = files.simulate(queues, cluster, w)
    assert r["preemption"]["killed"] == 0 and r["preemption"]["work_lost_container_s"] == 0
    late = next(a for a in r["apps"] if a["id"] == "late")
    assert late["start"] >= 200.0 and r["queues"]["root.a"]["completed_tasks"] == 2


def test_the_late_queue_scenario_reaches_its_share_within_timeout_and_grace(files):
    d = SCENARIOS / "preemption-late-queue"
    r = files.simulate(str(d / "queues.yaml"), str(d / "cluster.yaml"), str(d / "workload.jsonl"), "--until", "200")
    assert r["queues"]["root.b"]["dominant_share"] == 0.5 and r["queues"]["root.a"]["dominant_share"] == 0.5
    assert r["preemption"]["killed"] == 80  # b's AM and 79 tasks: no more than b asks for
