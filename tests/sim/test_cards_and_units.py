"""The simulator's GPU cards (`gpus:`), fractional amounts, per-node heartbeat phases, queueing
delay and the summary table."""
from __future__ import annotations

import pytest

from scheduler.sim.cli import summary_table
from scheduler.sim.engine import Simulation
from scheduler.sim.policies import prepare
from scheduler.sim.runner import SimulationRequest
from scheduler.sim.formats import SimInputError, parse_cluster
from tests.sim.conftest import TWO_QUEUES, app, run_cli

GPU_NODE = "nodes:\n  - {name: g, gpus: [10240, 10240], resources: {vcores: 8, memory-mb: 32768}}\n"


def test_gpus_give_the_nodes_cards_and_their_sum_as_gpu_mem():
    cluster = parse_cluster("nodes:\n  - name: g\n    count: 2\n    gpus: [10240, 10240]\n"
                            "    resources: {vcores: 8, memory-mb: 32768}\n"
                            "  - {name: h, gpus: [8192], resources: {vcores: 8, gpu-mem: 8192}}\n", "c.yaml")
    assert [(n.name, n.cards, n.resources["gpu-mem"]) for n in cluster.nodes] == [
        ("g-1", (10240, 10240), 20480), ("g-2", (10240, 10240), 20480), ("h", (8192,), 8192)]


@pytest.mark.parametrize("node, needle", [
    ("{name: g, gpus: [10240, 10240], resources: {vcores: 8, gpu-mem: 20000}}",
     "c.yaml:3: nodes[1].resources.gpu-mem: 20000 is not the sum of the node's gpus (10240 + 10240 = 20480)"),
    ("{name: g, gpus: [], resources: {vcores: 8}}", "c.yaml:3: nodes[1].gpus: must be a non-empty list"),
    ("{name: g, gpus: [1024, 0.5], resources: {vcores: 8}}",
     "c.yaml:3: nodes[1].gpus[1]: must be a positive integer of MiB, got 0.5"),
])
def test_a_bad_gpus_list_is_an_error_with_its_field_path(node, needle):
    with pytest.raises(SimInputError) as err:
        parse_cluster(f"nodes:\n  - {{name: c, resources: {{vcores: 1}}}}\n  - {node}\n", "c.yaml")
    assert needle in str(err.value)


def test_a_task_no_single_card_holds_is_refused_before_the_run(files, capsys):
    w = files.workload("w.jsonl", [app("big", "root.a", 0, [(1, {"vcores": 1, "gpu-mem": 15360}, 5)], am=None)])
    code = run_cli(["simulate", "--queues", files.write("q.yaml", TWO_QUEUES),
                    "--cluster", files.write("c.yaml", GPU_NODE), "--workload", w, "--quiet"])
    assert code == 2
    err = capsys.readouterr().err
    assert "app big (workload line 1): stages[0].resources" in err and "a GPU card must hold its gpu-mem" in err


def test_tasks_share_a_card_up_to_its_memory_and_no_further(files):
    # 6 GiB tasks: one per 10 GiB card at a time, though the node total would hold three
    w = files.workload("w.jsonl", [app("t", "root.a", 0, [(4, {"vcores": 1, "gpu-mem": 6144}, 10)], am=None)])
    r = files.simulate(files.write("q.yaml", TWO_QUEUES), files.write("c.yaml", GPU_NODE), w, "--until", "5")
    assert r["queues"]["root.a"]["running"] == 2
    assert r["queues"]["root.a"]["allocated"]["gpu-mem"] == 2 * 6144


def test_fractional_amounts_run_in_thousandths_and_are_reported_as_given(files):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 2, memory-mb: 4096}}\n")
    # 0.3 vcore each: 6 fit in 2 vcores (6 * 0.3 = 1.8), a 7th does not (2.1); exactly, no float drift
    w = files.workload("w.jsonl", [app("f", "root.a", 0, [(7, {"vcores": 0.3, "memory-mb": 1}, 100)], am=None)])
    r = files.simulate(files.write("q.yaml", TWO_QUEUES), cluster, w, "--until", "5")
    a = r["queues"]["root.a"]
    assert a["running"] == 6
    assert a["allocated"] == {"vcores": 1.8, "memory-mb": 6}
    assert r["cluster"]["capacity"] == {"vcores": 2.0, "memory-mb": 4096}
    assert a["dominant_share"] == pytest.approx(0.9)


def test_an_absolute_queue_max_holds_in_the_unit_of_fractional_amounts(files):
    queues = files.write("q.yaml", "queues:\n  root:\n    children:\n      a: {max: {vcores: 1}}\n      b: {}\n")
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 4, memory-mb: 4096}}\n")
    w = files.workload("w.jsonl", [app("f", "root.a", 0, [(8, {"vcores": 0.25, "memory-mb": 1}, 100)], am=None)])
    r = files.simulate(queues, cluster, w, "--until", "5")
    assert r["queues"]["root.a"]["running"] == 4  # max 1 vcore = 4 x 0.25, not 1 thousandth


def test_integer_amounts_given_with_a_trailing_zero_are_integers(files):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 12.0, memory-mb: 4096}}\n")
    w = files.workload("w.jsonl", [app("f", "root.a", 0, [(1, {"vcores": 12.0}, 1)], am=None)])
    r = files.simulate(files.write("q.yaml", TWO_QUEUES), cluster, w)
    assert r["cluster"]["capacity"] == {"vcores": 12, "memory-mb": 4096}
    assert r["queues"]["root.a"]["completed_tasks"] == 1


def test_apps_submitted_on_whole_seconds_spread_over_nodes_in_different_phases(files):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, count: 20, resources: {vcores: 4, memory-mb: 4096}}\n")
    # one small app every 10 s, each done long before the next: with every node in the same phase
    # relative to the whole seconds, the same node would take every one
    w = files.workload("w.jsonl", [app(f"a{i}", "root.a", 10.0 * i, [(1, {"vcores": 1}, 2)], am=None)
                                   for i in range(200)])
    request = SimulationRequest.from_files(files.write("q.yaml", TWO_QUEUES), cluster, w)
    sim = Simulation(prepare("drf", request.config, request.resource_types), request.config,
                     request.cluster, request.apps)
    nodes = []
    assigned = sim._assigned
    sim._assigned = lambda a, node: (nodes.append(node), assigned(a, node))
    sim.run()
    assert len({round(off, 9) for off in sim.offsets}) == 20  # 20 phases
    assert len(set(sim.periods)) == 20 and all(abs(p - 1.0) <= 0.01 for p in sim.periods)
    assert len(nodes) == 200 and len(set(nodes)) >= 10, sorted(set(nodes))


def test_queueing_delay_is_start_minus_submit_per_queue(files):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 1, memory-mb: 4096}}\n")
    # one vcore: the three apps of root.a run one after another, 100 s each
    w = files.workload("w.jsonl", [app(f"a{i}", "root.a", 0.0, [(1, {"vcores": 1}, 100)], am=None)
                                   for i in range(3)])
    r = files.simulate(files.write("q.yaml", TWO_QUEUES), cluster, w)
    starts = sorted(a["start"] - a["submit"] for a in r["apps"])
    delay = r["queues"]["root.a"]["queueing_delay_s"]
    assert starts[0] < 1.0 and 100.0 <= starts[1] < 102.0 and 200.0 <= starts[2] < 204.0
    assert delay["mean"] == pytest.approx(sum(starts) / 3, abs=1e-3)
    assert delay["p50"] == pytest.approx(starts[1], abs=1e-3)
    assert r["queues"]["root.b"]["queueing_delay_s"] is None


def test_table_columns_stay_apart_at_large_values():
    queue = {"running": 123456789, "dominant_share": 0.5, "target_share": None, "pooled_target_share": 0.25,
             "weighted_share": 0.5, "completed_tasks": 9876543210, "completed_apps": 1234567,
             "app_completion_s": {"mean": 12345678.9, "p95": 98765432.1},
             "queueing_delay_s": {"mean": 1.0, "p50": 5432109.8, "p99": 87654321.0}}
    result = {"policy": "drf", "end_time": 1.0, "stalled": False, "queues": {"root.a.very-long-queue-name": queue},
              "utilization": {}, "scheduler": {"decisions": 1, "decision_us": {"p50": 1, "p99": 1}},
              "sim": {"events": 1, "wall_s": 0.1}}
    header, row = summary_table(result).splitlines()[1:3]
    cells = row.split()
    assert cells == ["root.a.very-long-queue-name", "123456789", "0.500", "-", "0.250", "0.500", "9876543210",
                     "1234567", "12345678.9", "98765432.1", "5432109.8", "87654321.0"]
    assert header.split("  ")[0].strip() == "queue" and "wait p99 s" in header
