"""A tiny run of Hadoop's Scheduler Load Simulator with yarn-drf, through the benchmark's own
runner: a real ResourceManager with the shim (via the SLS wrapper), the real Python core as its
child, simulated NodeManagers and AMs. Keeps the SLS benchmark (benchmarks/sls) working."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import netns
import run as sls_run
import workload

pytestmark = pytest.mark.jvm

NODES = 4


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> tuple[Path, dict]:
    if not netns.available():
        pytest.skip("SLS runs are isolated in a network namespace, which needs root")
    for jar in (sls_run.COMPANION_JAR, sls_run.CLASSPATH_TXT, sls_run.SHIM_JAR):
        assert jar.exists(), f"{jar} missing: `make test` builds it (TEST_PREREQS sls-jar)"
    out = tmp_path_factory.mktemp("sls")
    cmd = [sys.executable, str(sls_run.HERE / "run.py"), "--sizes", str(NODES), "--schedulers", "yarn-drf",
           "--out", str(out), "--duration-s", "4", "--arrival-s", "2", "--tasks-per-job", "3",
           "--task-s", "1,2", "--load", "0.5", "--timeout-s", "150", "--heap-mb", "768",
           "--timer-window", "20000",
           # A loaded CI machine must not turn a slow bridge call into a refused submission
           # (which SLS never retries); the benchmark itself keeps the shim's default.
           "--bridge-timeout-ms", "2000"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"SLS run failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return out, json.loads((out / "results.json").read_text())[str(NODES)]["yarn-drf"]


def test_every_job_of_the_trace_finishes(smoke) -> None:
    out, r = smoke
    trace = workload.job_queues(out / str(NODES) / "trace.json")
    assert r["finished"]
    assert r["jobs"] == len(trace)
    assert {q for q in r["jct"]} == set(trace.values())


def test_every_task_and_am_got_exactly_one_container(smoke) -> None:
    out, r = smoke
    tasks = sum(len(json.loads(line)["job.tasks"])
                for line in (out / str(NODES) / "trace.json").read_text().splitlines() if line.strip())
    jobs = r["jobs"]
    assert r["containers_allocated"] == tasks + jobs


def test_sls_timed_the_scheduler(smoke) -> None:
    _, r = smoke
    assert r["node_update"]["count"] > 0 and r["node_update"]["p50_us"] > 0
    assert r["allocate"]["count"] > 0 and r["allocate"]["p99_us"] >= r["allocate"]["p50_us"]


def test_gpu_memory_was_allocated_to_the_gpu_queue(smoke) -> None:
    _, r = smoke
    bench = json.loads((Path(r["sls_dir"]) / "bench.json").read_text())
    assert bench["scheduler"] == "org.yarndrf.sls.SlsYarnDrfScheduler"
    assert bench["cluster"]["gpu-mem"] == NODES * workload.NODE.gpu_mem
    gpu_used = max(s["queues"].get("gpu", {}).get("used", {}).get("gpu-mem", 0) for s in bench["samples"])
    cpu_gpu_used = max(s["queues"].get("cpu", {}).get("used", {}).get("gpu-mem", 0) for s in bench["samples"])
    assert gpu_used > 0
    assert cpu_gpu_used == 0
