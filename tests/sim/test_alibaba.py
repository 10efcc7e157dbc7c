"""`yarn-drf workload alibaba-gpu` on a synthetic sample in the trace's format
(tests/sim/data/alibaba-gpu), and a simulation of what it writes."""
from __future__ import annotations

from pathlib import Path

import pytest

from scheduler.sim.formats import load_cluster, load_workload
from tests.sim.conftest import run_cli

SAMPLE = Path(__file__).parent / "data" / "alibaba-gpu"


def convert(files, *extra: str) -> tuple[dict, dict, str]:
    out = {k: str(files.root / f"{k}") for k in ("c.yaml", "w.jsonl", "q.yaml")}
    code = run_cli(["workload", "alibaba-gpu", str(SAMPLE / "nodes.csv"), str(SAMPLE / "pods.csv"),
                    "--cluster-out", out["c.yaml"], "--out", out["w.jsonl"], "--queues-out", out["q.yaml"], *extra])
    assert code == 0
    nodes = {n.name: n for n in load_cluster(out["c.yaml"]).nodes}  # valid files, as the simulator reads them
    apps = {a.id: a for a in load_workload(out["w.jsonl"])}
    return nodes, apps, out


def test_nodes_get_their_cards_and_fractional_cpus_exactly(files):
    nodes, _, _ = convert(files)
    assert nodes["sample-node-0"].cards is None and "gpu-mem" not in nodes["sample-node-0"].resources
    assert nodes["sample-node-1"].cards == (16384,) * 8
    assert nodes["sample-node-1"].resources == {"vcores": 96, "memory-mb": 786432, "gpu-mem": 8 * 16384}
    assert float(nodes["sample-node-3"].resources["vcores"]) == 8.5


def test_pods_become_one_task_apps_without_an_am_with_gpu_memory_as_a_share_of_a_card(files):
    _, apps, _ = convert(files)
    shared = apps["sample-pod-1"]
    assert shared.am is None and shared.queue == "root.be" and shared.user == "be"
    assert shared.submit == 10.0 and shared.stages[0].tasks == 1
    assert shared.stages[0].duration == 610 - 12  # deletion - scheduled
    res = shared.stages[0].resources
    assert float(res["vcores"]) == 6.5 and float(res["gpu-mem"]) == pytest.approx(0.46 * 16384)
    assert apps["sample-pod-2"].stages[0].resources["gpu-mem"] == 8 * 16384  # eight whole cards
    assert apps["sample-pod-5"].stages[0].resources["gpu-mem"] == 2048      # 125 milli of 16 GiB
    assert "gpu-mem" not in apps["sample-pod-3"].stages[0].resources       # a CPU-only pod
    assert "sample-pod-4" not in apps  # never scheduled: the trace has no run time for it
    assert sorted(apps) == [f"sample-pod-{i}" for i in (0, 1, 2, 3, 5, 6)]


def test_no_cards_and_card_size_and_time_scale_options(files):
    nodes, apps, _ = convert(files, "--no-cards", "--card-mib", "24576", "--time-scale", "10")
    assert nodes["sample-node-2"].cards is None and nodes["sample-node-2"].resources["gpu-mem"] == 2 * 24576
    assert apps["sample-pod-1"].submit == 1.0
    assert float(apps["sample-pod-1"].stages[0].resources["gpu-mem"]) == pytest.approx(0.46 * 24576)


def test_the_converted_sample_runs_and_multi_card_pods_take_whole_cards(files):
    _, _, out = convert(files)
    r = files.simulate(out["q.yaml"], out["c.yaml"], out["w.jsonl"], "--heartbeat-ms", "1000")
    finished = {a["id"]: a for a in r["apps"]}
    assert all(a["finish"] is not None for a in finished.values())
    assert set(r["queues"]) == {"root.be", "root.burstable", "root.ls"}
    ran = finished["sample-pod-2"]["finish"] - finished["sample-pod-2"]["start"]
    assert 7195 <= ran <= 7195 + 1.01  # deletion - scheduled, seen at the node's next heartbeat
    # the 2-GPU pod needs two entirely free cards: sample-node-2's two T4 are the only pair left
    # beside the 8-card node the 8-GPU pod holds, and one of them holds pod 0 until it ends
    assert finished["sample-pod-6"]["start"] == finished["sample-pod-0"]["finish"]


def test_a_pod_list_without_the_trace_columns_is_refused_with_the_missing_ones(files, capsys):
    pods = files.write("p.csv", "name,cpu_milli\nx,1000\n")
    code = run_cli(["workload", "alibaba-gpu", str(SAMPLE / "nodes.csv"), pods, "--cluster-out",
                    str(files.root / "c.yaml"), "--out", str(files.root / "w.jsonl")])
    assert code == 2
    err = capsys.readouterr().err
    assert "p.csv:1: the pod list has no column memory_mib, num_gpu, gpu_milli" in err


def test_a_bad_number_names_file_line_and_column(files, capsys):
    text = (SAMPLE / "pods.csv").read_text().replace("sample-pod-5,250,", "sample-pod-5,lots,")
    pods = files.write("p.csv", text)
    code = run_cli(["workload", "alibaba-gpu", str(SAMPLE / "nodes.csv"), pods, "--cluster-out",
                    str(files.root / "c.yaml"), "--out", str(files.root / "w.jsonl")])
    assert code == 2
    assert "p.csv:7: cpu_milli: must be a non-negative integer, got 'lots'" in capsys.readouterr().err
    assert not (files.root / "w.jsonl").exists()  # nothing half-written
