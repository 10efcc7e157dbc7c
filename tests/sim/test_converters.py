"""`yarn-drf workload swim` and `yarn-drf workload synthetic`."""
from __future__ import annotations

import json

import pytest

from scheduler.sim.formats import load_workload
from scheduler.sim.swim import GIB, MIB
from tests.sim.conftest import run_cli

# Lines in the SWIM format (job, submit s, gap s, map input, shuffle, reduce output bytes).
TRACE = "\n".join([
    "job0\t9\t9\t1762\t0\t14347",                              # tiny map-only job
    f"job1\t18\t9\t{10 * GIB}\t{GIB // 2}\t{GIB // 2}",        # filter: shuffle <= input / 4
    f"job2\t20\t2\t{GIB}\t{3 * GIB}\t{GIB}",                    # expand: shuffle >= input
    f"job3\t25\t5\t{4 * GIB}\t{2 * GIB}\t0",                    # transform
    f"job4\t30\t5\t{2000 * GIB}\t{5000 * GIB}\t0",              # huge: both caps apply
]) + "\n"


def _convert(files, *extra: str) -> list[dict]:
    trace = files.write("trace.tsv", TRACE)
    out = files.root / "w.jsonl"
    assert run_cli(["workload", "swim", trace, "--out", str(out), *extra]) == 0
    load_workload(out)  # what the converter writes is a valid workload
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_swim_task_counts_durations_and_shapes_follow_the_documented_rules(files):
    jobs = {j["id"]: j for j in _convert(files)}
    tiny = jobs["job0"]
    assert len(tiny["stages"]) == 1 and tiny["stages"][0]["tasks"] == 1 and tiny["submit"] == 9.0
    assert tiny["stages"][0]["duration"] == pytest.approx(5.0 + (1762 + 14347) / (8 * MIB), abs=1e-3)
    f = jobs["job1"]["stages"]
    assert f[0]["tasks"] == 40 and f[0]["resources"] == {"vcores": 2, "memory-mb": 2048}
    assert f[0]["duration"] == pytest.approx(5.0 + 256 / 8, abs=1e-3)  # 256 MiB per map at 8 MiB/s
    assert f[1]["tasks"] == 1 and f[1]["duration"] == pytest.approx(5.0 + 1024 / 8, abs=1e-3)
    e = jobs["job2"]["stages"]
    assert e[0]["resources"] == {"vcores": 1, "memory-mb": 4096} and e[0]["tasks"] == 4
    assert e[1]["resources"] == {"vcores": 1, "memory-mb": 8192} and e[1]["tasks"] == 4
    t = jobs["job3"]["stages"]
    assert t[0]["resources"] == {"vcores": 1, "memory-mb": 2048} and t[1]["tasks"] == 2
    huge = jobs["job4"]["stages"]
    assert huge[0]["tasks"] == 4000 and huge[1]["tasks"] == 999


def test_swim_users_and_queues_are_round_robin(files):
    jobs = _convert(files, "--queues", "root.x,root.y", "--users", "3", "--no-am")
    assert [j["user"] for j in jobs] == ["user0", "user1", "user2", "user0", "user1"]
    assert [j["queue"] for j in jobs] == ["root.x", "root.y", "root.x", "root.x", "root.y"]
    assert all(j["am"] is None for j in jobs)


def test_swim_queue_by_class_separates_cpu_and_memory_heavy_jobs(files):
    jobs = {j["id"]: j for j in _convert(files, "--queues", "root.f,root.t,root.e", "--queue-by", "class")}
    assert [jobs[f"job{i}"]["queue"] for i in range(5)] == ["root.f", "root.f", "root.e", "root.t", "root.e"]


def test_swim_bad_line_names_file_and_line(files, capsys):
    trace = files.write("bad.tsv", "job0\t1\t1\t10\t0\t0\njob1\t2\tnot-enough-fields\n")
    assert run_cli(["workload", "swim", trace, "--out", str(files.root / "w.jsonl")]) == 2
    assert "bad.tsv:2: expected 6 tab-separated fields" in capsys.readouterr().err


def test_synthetic_is_seeded_and_mixes_kinds(files):
    def gen(name: str, seed: str, mix: str = "cpu=1,memory=1,gpu=1") -> list[dict]:
        out = files.root / name
        assert run_cli(["workload", "synthetic", "--out", str(out), "--apps", "60", "--seed", seed,
                        "--mix", mix]) == 0
        load_workload(out)
        return [json.loads(line) for line in out.read_text().splitlines()]

    a, b, c = gen("a.jsonl", "1"), gen("b.jsonl", "1"), gen("c.jsonl", "2")
    assert a == b and a != c
    kinds = {j["id"].rsplit("-", 1)[1] for j in a}
    assert kinds == {"cpu", "memory", "gpu"}
    gpu = [j for j in a if j["id"].endswith("-gpu")]
    assert all(s["resources"].get("gpu-mem", 0) > 0 for j in gpu for s in j["stages"])
    only_cpu = gen("d.jsonl", "1", "cpu=1,memory=0,gpu=0")
    assert all(j["id"].endswith("-cpu") for j in only_cpu)
    submits = [j["submit"] for j in a]
    assert submits == sorted(submits) and submits[-1] > 0


def test_synthetic_rejects_unknown_kind(files, capsys):
    assert run_cli(["workload", "synthetic", "--out", str(files.root / "x.jsonl"), "--mix", "tpu=1"]) == 2
    assert "unknown kind 'tpu'" in capsys.readouterr().err
