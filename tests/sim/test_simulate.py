"""`yarn-drf simulate` end to end: the real core on a simulated clock, checked through its JSON."""
from __future__ import annotations

import json

import pytest

from tests.sim.conftest import SCENARIOS, TWO_QUEUES, app, run_cli

CPU = {"vcores": 1, "memory-mb": 1024}


def test_drf_paper_example_through_the_cli_json(files):
    d = SCENARIOS / "drf-paper-example"
    r = files.simulate(str(d / "queues.yaml"), str(d / "cluster.yaml"), str(d / "workload.jsonl"),
                       "--until", "60")
    a, b = r["queues"]["root.a"], r["queues"]["root.b"]
    # <9 CPU, 18 GB>: A's <1, 4 GB> tasks and B's <3, 1 GB> tasks -> 3 and 2, both at 2/3.
    assert (a["running"], b["running"]) == (3, 2)
    assert a["allocated"] == {"vcores": 3, "memory-mb": 12288}
    assert b["allocated"] == {"vcores": 6, "memory-mb": 2048}
    assert a["dominant_share"] == pytest.approx(2 / 3, abs=1e-6)
    assert b["dominant_share"] == pytest.approx(2 / 3, abs=1e-6)
    assert r["policy"] == "drf" and r["end_time"] == 60.0
    assert r["scheduler"]["decisions"] >= 1 and r["scheduler"]["decision_us"]["p50"] is not None


def test_stages_run_one_after_another(files):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, count: 2, resources: {vcores: 8, memory-mb: 8192}}\n")
    queues = files.write("q.yaml", TWO_QUEUES)
    w = files.workload("w.jsonl", [app("j", "root.a", 0.0, [(4, CPU, 10.0), (2, CPU, 20.0)], am=None)])
    # 5 s in: the 4 map-like tasks run, the second stage has not started.
    mid = files.simulate(queues, cluster, w, "--until", "5")
    assert mid["queues"]["root.a"]["running"] == 4
    assert mid["queues"]["root.a"]["completed_tasks"] == 0
    # 15 s in: stage one is done (reported on heartbeats), stage two's 2 tasks run.
    later = files.simulate(queues, cluster, w, "--until", "15")
    assert later["queues"]["root.a"]["running"] == 2
    assert later["queues"]["root.a"]["completed_tasks"] == 4
    done = files.simulate(queues, cluster, w)
    job = done["apps"][0]
    # Stage two starts only after stage one ends: the app takes at least 10 + 20 s.
    assert job["finish"] - job["start"] >= 30.0
    assert done["queues"]["root.a"]["completed_tasks"] == 6
    assert done["queues"]["root.a"]["running"] == 0
    assert done["queues"]["root.a"]["app_completion_s"]["mean"] == pytest.approx(
        job["finish"] - job["submit"], abs=1e-3)


def test_am_container_holds_room_for_the_apps_lifetime(files):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 4, memory-mb: 8192}}\n")
    queues = files.write("q.yaml", TWO_QUEUES)
    w = files.workload("w.jsonl", [
        app("with-am", "root.a", 0.0, [(10, CPU, 100.0)], am={"vcores": 1, "memory-mb": 2048})])
    r = files.simulate(queues, cluster, w, "--until", "50")
    qa = r["queues"]["root.a"]
    assert qa["running"] == 3  # one of the 4 vcores is the AM's
    assert qa["allocated"] == {"vcores": 4, "memory-mb": 2048 + 3 * 1024}
    w2 = files.workload("w2.jsonl", [app("no-am", "root.a", 0.0, [(10, CPU, 100.0)], am=None)])
    r2 = files.simulate(queues, cluster, w2, "--until", "50")
    assert r2["queues"]["root.a"]["running"] == 4
    assert r2["queues"]["root.a"]["allocated"]["vcores"] == 4
    # The app starts when its AM does, and the AM is freed when the app finishes.
    end = files.simulate(queues, cluster, w)
    assert end["queues"]["root.a"]["allocated"] == {"vcores": 0, "memory-mb": 0}
    assert end["apps"][0]["start"] is not None and end["apps"][0]["finish"] >= 400.0


def test_until_stops_the_clock_and_reports_unfinished_apps(files):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 2, memory-mb: 4096}}\n")
    queues = files.write("q.yaml", TWO_QUEUES)
    w = files.workload("w.jsonl", [app("long", "root.a", 0.0, [(2, CPU, 1000.0)], am=None),
                                   app("late", "root.b", 500.0, [(1, CPU, 10.0)], am=None)])
    r = files.simulate(queues, cluster, w, "--until", "100")
    assert r["end_time"] == 100.0
    apps = {a["id"]: a for a in r["apps"]}
    assert apps["long"]["finish"] is None and apps["long"]["start"] is not None
    assert "late" not in apps  # not yet submitted at 100 s
    assert r["queues"]["root.a"]["running"] == 2
    assert r["utilization"]["vcores"] > 0.9  # both cores busy from the first heartbeat on
    full = files.simulate(queues, cluster, w)
    assert full["end_time"] >= 1000.0 and all(a["finish"] for a in full["apps"])


def test_fifo_starves_a_later_queue_that_drf_serves(files):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, count: 4, resources: {vcores: 4, memory-mb: 8192}}\n")
    queues = files.write("q.yaml", TWO_QUEUES)
    w = files.workload("w.jsonl", [app("early", "root.a", 0.0, [(200, CPU, 30.0)], am=None),
                                   app("later", "root.b", 10.0, [(50, CPU, 30.0)], am=None)])
    fifo = files.simulate(queues, cluster, w, "--until", "100", "--policy", "fifo")
    drf = files.simulate(queues, cluster, w, "--until", "100", "--policy", "drf")
    # FIFO: the early app still has asks, so the later queue gets nothing.
    assert fifo["queues"]["root.b"]["running"] == 0
    assert fifo["queues"]["root.a"]["running"] == 16
    # DRF: the later queue gets its half of the 16 cores as tasks finish.
    assert drf["queues"]["root.b"]["running"] == 8
    assert drf["queues"]["root.a"]["running"] == 8
    assert fifo["policy"] == "fifo" and "root.fifo" not in fifo["queues"]


def test_slots_shares_by_slot_count_where_drf_shares_by_dominant_resource(files):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, count: 2, resources: {vcores: 16, memory-mb: 65536}}\n")
    queues = files.write("q.yaml", TWO_QUEUES)
    big, small = {"vcores": 4, "memory-mb": 1024}, {"vcores": 1, "memory-mb": 1024}
    w = files.workload("w.jsonl", [app("big", "root.a", 0.0, [(100, big, 500.0)], am=None),
                                   app("small", "root.b", 0.0, [(100, small, 500.0)], am=None)])
    slots = files.simulate(queues, cluster, w, "--until", "50", "--policy", "slots", "--slots-per-node", "4")
    a, b = slots["queues"]["root.a"], slots["queues"]["root.b"]
    assert a["running"] == b["running"] == 4  # 8 slots, 4 each, whatever the task sizes
    drf = files.simulate(queues, cluster, w, "--until", "50")
    a, b = drf["queues"]["root.a"], drf["queues"]["root.b"]
    assert a["dominant_share"] == pytest.approx(b["dominant_share"], abs=4 / 32)
    assert b["running"] == 4 * a["running"]


def test_invalid_policy_lists_the_valid_ones(files, capsys):
    d = SCENARIOS / "drf-paper-example"
    code = run_cli(["simulate", "--queues", str(d / "queues.yaml"), "--cluster", str(d / "cluster.yaml"),
                    "--workload", str(d / "workload.jsonl"), "--policy", "lottery"])
    assert code == 2
    err = capsys.readouterr().err
    assert "unknown policy 'lottery'" in err
    for name in ("drf", "fifo", "slots", "fair-memory", "drf-no-gpu", "asset"):
        assert name in err


def test_bad_workload_fails_with_file_and_line_and_no_traceback(files, capsys):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 2, memory-mb: 4096}}\n")
    queues = files.write("q.yaml", TWO_QUEUES)
    w = files.write("w.jsonl", json.dumps(app("ok", "root.a", 0, [(1, CPU, 1.0)])) + "\n"
                    + json.dumps(app("gpu", "root.a", 0, [(1, {"gpu-mem": 5}, 1.0)])) + "\n")
    code = run_cli(["simulate", "--queues", queues, "--cluster", cluster, "--workload", w])
    err = capsys.readouterr().err
    assert code == 2 and "w.jsonl:2: stages[0].resources: resource 'gpu-mem'" in err


def test_ask_no_node_can_hold_is_refused_before_the_run(files, capsys):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 2, memory-mb: 4096}}\n")
    queues = files.write("q.yaml", TWO_QUEUES)
    w = files.workload("w.jsonl", [app("huge", "root.a", 0, [(1, {"vcores": 3}, 1.0)])])
    assert run_cli(["simulate", "--queues", queues, "--cluster", cluster, "--workload", w]) == 2
    assert "app huge (workload line 1): stages[0].resources" in capsys.readouterr().err


def test_queue_yaml_resources_list_restricts_node_types(files, capsys):
    cluster = files.write("c.yaml", "nodes:\n  - {name: g, resources: {vcores: 2, memory-mb: 4096, gpu-mem: 8}}\n")
    queues = files.write("q.yaml", "resources: [vcores, memory-mb]\n" + TWO_QUEUES)
    w = files.workload("w.jsonl", [app("x", "root.a", 0, [(1, CPU, 1.0)])])
    assert run_cli(["simulate", "--queues", queues, "--cluster", cluster, "--workload", w]) == 2
    assert "node g: resource 'gpu-mem' is not one of the resource types the queue configuration lists" \
        in capsys.readouterr().err


def test_rejected_apps_are_reported_not_run(files):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 2, memory-mb: 4096}}\n")
    queues = files.write("q.yaml", """\
queues:
  root:
    submit-acl: " "
    admin-acl: " "
    children:
      a: {submit-acl: "alice"}
""")
    w = files.workload("w.jsonl", [
        {**app("ok", "root.a", 0, [(1, CPU, 1.0)]), "user": "alice"},
        {**app("no", "root.a", 0, [(1, CPU, 1.0)]), "user": "mallory"}])
    for policy in ("drf", "fifo"):
        r = files.simulate(queues, cluster, w, "--policy", policy)
        assert [a["id"] for a in r["apps"]] == ["ok"]
        assert r["rejected"][0]["id"] == "no" and "mallory" in r["rejected"][0]["reason"]


def test_resubmitting_apps_run_again_until_the_clock_stops(files, capsys):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 2, memory-mb: 4096}}\n")
    queues = files.write("q.yaml", TWO_QUEUES)
    w = files.workload("w.jsonl", [app("loop", "root.a", 0.0, [(2, CPU, 10.0)], am=None, resubmit=True)])
    r = files.simulate(queues, cluster, w, "--until", "100")
    ids = [a["id"] for a in r["apps"]]
    assert ids[:3] == ["loop", "loop#2", "loop#3"]
    finished = [a for a in r["apps"] if a["finish"] is not None]
    # each round takes 10 s plus up to a heartbeat to report and one to start: 8 or 9 in 100 s
    assert 8 <= len(finished) <= 9
    for prev, nxt in zip(r["apps"], r["apps"][1:]):
        assert nxt["submit"] == prev["finish"]
    assert run_cli(["simulate", "--queues", queues, "--cluster", cluster, "--workload", w]) == 2
    assert "w.jsonl:1: app loop resubmits itself forever: give --until" in capsys.readouterr().err


def test_plot_writes_a_png(files, tmp_path):
    d = SCENARIOS / "drf-paper-example"
    out = tmp_path / "plot.png"
    assert run_cli(["simulate", "--queues", str(d / "queues.yaml"), "--cluster", str(d / "cluster.yaml"),
                    "--workload", str(d / "workload.jsonl"), "--until", "30", "--plot", str(out),
                    "--quiet"]) == 0
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_cli_is_registered_with_yarn_drf():
    from yarn_bridge.cli import COMMANDS

    assert "scheduler.sim.cli" in COMMANDS


def test_heartbeat_interval_sets_when_containers_start_and_end_are_seen(files):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 2, memory-mb: 4096}}\n")
    queues = files.write("q.yaml", TWO_QUEUES)
    w = files.workload("w.jsonl", [app("one", "root.a", 0.0, [(1, CPU, 10.0)], am=None)])
    for ms, slack in (("1000", 1.0), ("5000", 5.0)):
        r = files.simulate(queues, cluster, w, "--heartbeat-ms", ms, "--seed", "4")
        job = r["apps"][0]
        assert 0.0 <= job["start"] < slack             # started on the node's first heartbeat
        ran = job["finish"] - job["start"]
        assert 10.0 <= ran <= 10.0 * 1.01 + slack * 1.01 + 1e-6  # the end is seen on a later heartbeat
        beats = round(ran / slack)  # ... a whole number of the node's periods later, each within 1 % of it
        assert abs(ran / beats - slack) <= 0.01 * slack + 1e-9


def test_bad_queue_yaml_is_reported_with_its_field(files, capsys):
    d = SCENARIOS / "drf-paper-example"
    queues = files.write("q.yaml", "queues:\n  root:\n    children:\n      a: {wieght: 1}\n")
    assert run_cli(["simulate", "--queues", queues, "--cluster", str(d / "cluster.yaml"),
                    "--workload", str(d / "workload.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "q.yaml" in err and "queues.root.children.a.wieght: unknown field" in err


def test_drf_counts_gpu_memory_where_drf_no_gpu_does_not(files):
    # GPU memory is the scarce type: 8 units on a node with 16 cores.
    cluster = files.write("c.yaml", "nodes:\n  - {name: g, resources: {vcores: 16, memory-mb: 65536, gpu-mem: 8}}\n")
    queues = files.write("q.yaml", TWO_QUEUES)
    w = files.workload("w.jsonl", [
        app("gpu", "root.a", 0.0, [(50, {"vcores": 1, "memory-mb": 1024, "gpu-mem": 1}, 500.0)], am=None),
        app("cpu", "root.b", 0.0, [(50, {"vcores": 1, "memory-mb": 1024}, 500.0)], am=None)])
    no_gpu = files.simulate(queues, cluster, w, "--until", "10", "--policy", "drf-no-gpu")
    # Equal CPU shares: 8 cores each (the GPU queue also uses all 8 units of GPU memory).
    assert no_gpu["queues"]["root.a"]["running"] == 8 and no_gpu["queues"]["root.b"]["running"] == 8
    drf = files.simulate(queues, cluster, w, "--until", "10", "--policy", "drf")
    a, b = drf["queues"]["root.a"], drf["queues"]["root.b"]
    # DRF sees the GPU queue's dominant resource (1/8 per task vs 1/16): it gets fewer tasks.
    assert a["running"] < 8 < b["running"] and a["running"] + b["running"] == 16
    assert abs(a["dominant_share"] - b["dominant_share"]) <= 1 / 8 + 1e-9


def test_fair_memory_favours_the_cpu_heavy_queue_that_drf_holds_back(files):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 16, memory-mb: 65536}}\n")
    queues = files.write("q.yaml", TWO_QUEUES)
    w = files.workload("w.jsonl", [
        app("cpu-heavy", "root.a", 0.0, [(50, {"vcores": 4, "memory-mb": 1024}, 500.0)], am=None),
        app("mem-heavy", "root.b", 0.0, [(50, {"vcores": 1, "memory-mb": 4096}, 500.0)], am=None)])
    drf = files.simulate(queues, cluster, w, "--until", "10", "--policy", "drf")
    mem = files.simulate(queues, cluster, w, "--until", "10", "--policy", "fair-memory")
    # DRF: 4 cores = 1/4 per A task, 4 GB = 1/16 per B task -> A 2 tasks, B 8 tasks (both at 1/2).
    assert (drf["queues"]["root.a"]["running"], drf["queues"]["root.b"]["running"]) == (2, 8)
    # Memory alone makes A's tasks look 4x cheaper than B's: A gets more, B fewer.
    assert mem["queues"]["root.a"]["running"] > 2 and mem["queues"]["root.b"]["running"] < 8


@pytest.mark.parametrize("share, started, tasks", [(0.5, 2, 2), (1.0, 4, 0)])
def test_max_am_share_keeps_ams_from_filling_a_queue(files, share, started, tasks):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 16, memory-mb: 16384}}\n")
    queues = files.write("q.yaml", "queues:\n  root:\n    children:\n"
                                   f"      a: {{max: {{vcores: 4}}, max-am-share: {share}}}\n")
    w = files.workload("w.jsonl", [app(f"j{i}", "root.a", 0.0, [(4, CPU, 1000.0)],
                                       am={"vcores": 1, "memory-mb": 1024}) for i in range(4)])
    r = files.simulate(queues, cluster, w, "--until", "50")
    # 4 vcores: at the default half two AMs run and two tasks with them; with a share of 1 the
    # four AMs take the whole queue and no task can ever run (the wedge max-am-share prevents)
    assert sum(a["start"] is not None for a in r["apps"]) == started
    assert r["queues"]["root.a"]["running"] == tasks


def test_a_users_max_running_apps_runs_its_apps_one_after_another_while_another_user_runs_at_once(files):
    cluster = files.write("c.yaml", "nodes:\n  - {name: n, resources: {vcores: 16, memory-mb: 16384}}\n")
    queues = files.write("q.yaml", "queues:\n  root:\n    children:\n"
                                   "      a: {user-limits: {max-running-apps: 1, users: {bob: {max-running-apps: 3}}}}\n")
    w = files.workload("w.jsonl", [app(f"{user}{i}", "root.a", 0.0, [(1, CPU, 10.0)], user=user, am=None)
                                   for user in ("alice", "bob") for i in range(3)])
    r = files.simulate(queues, cluster, w)
    starts = {a["id"]: a["start"] for a in r["apps"]}
    assert [starts[f"alice{i}"] for i in range(3)] == sorted(starts[f"alice{i}"] for i in range(3))
    assert starts["alice1"] >= starts["alice0"] + 10 and starts["alice2"] >= starts["alice1"] + 10
    assert max(starts[f"bob{i}"] for i in range(3)) < 10
    users = r["queues"]["root.a"]["users"]
    assert users["alice"]["apps"] == users["alice"]["completed_apps"] == 3
    assert users["alice"]["queueing_delay_s"]["mean"] >= 10 and users["bob"]["queueing_delay_s"]["p99"] < 10
