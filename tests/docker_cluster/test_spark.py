"""Spark on YARN, unchanged, on yarn-drf: the project's SleepShuffle job through spark-submit in
cluster and client mode, GPU memory asked by executors (with and without a unit), dynamic
allocation with shuffle tracking growing and shrinking, and Spark holding its hierarchical DRF share
against distributed-shell apps; a MapReduce wordcount runs alongside (docker/spark, docs/spark.md)."""
from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

from tests.docker_cluster.cluster import GPU, MR_EXAMPLES_JAR
from tests.docker_cluster.test_drf import (
    Job, assert_hdrf, hold_every_vcore, release_when_all_pending, start_the_ams, wait_stable,
)

AM_CONTAINER = "_000001"  # the first container of an attempt is its ApplicationMaster
# wordcount's input and its oracle, computed in the cluster: 2 files of 100,000 words drawn from
# 5,000, and the expected count of each word as "word\tcount" lines, as wordcount writes them.
MAKE_WORDS = """
import collections, os, sys
os.makedirs(sys.argv[1] + "/in")
counts = collections.Counter()
for f in range(2):
    words = [f"w{(i * 7919 + f) % 5000}" for i in range(100_000)]
    counts.update(words)
    with open(f"{sys.argv[1]}/in/part-{f}.txt", "w") as out:
        out.write(" ".join(words) + "\\n")
with open(sys.argv[1] + "/expected", "w") as out:
    out.writelines(f"{w}\\t{n}\\n" for w, n in counts.items())
"""
# wordcount's reducer outputs, merged and sorted, equal the expected lines (prints their count).
CHECK_COUNTS = """
import glob, sys
got = sorted(l for p in glob.glob(sys.argv[1] + "/out/part-r-*") for l in open(p))
want = sorted(open(sys.argv[1] + "/expected"))
assert got == want, (len(got), len(want), got[:3], want[:3])
print(len(got))
"""


def app_containers(c, app_id: str) -> dict[str, dict]:
    return {k: v for k, v in c.running_containers().items() if v["app"] == app_id}


def wordcount(c, queue: str, base: str) -> tuple[int, str]:
    """MapReduce wordcount (examples 3.4.2) with 2 reducers in `queue` over generated words."""
    code, out = c.exec(["python3", "-c", MAKE_WORDS, base])
    if code != 0:
        return code, out
    return c.exec(["yarn", "jar", MR_EXAMPLES_JAR, "wordcount", f"-Dmapreduce.job.queuename={queue}",
                   "-Dmapreduce.job.reduces=2", f"{base}/in", f"{base}/out"])


def test_spark_in_cluster_mode_runs_gpu_executors_on_the_gpu_node_alongside_wordcount(idle_cluster,
                                                                                   requires_yarn_drf):
    c = idle_cluster
    tag = uuid.uuid4().hex[:6]
    name = f"spark-gpu-{tag}"
    with ThreadPoolExecutor(max_workers=1) as pool:
        mapreduce = pool.submit(wordcount, c, "dev", f"/shared/wordcount-{tag}")
        # A bare number, as Spark's stage-level profiles always send it: read as 4096 MiB, not
        # 4096 bytes (which YARN itself would round down to 0).
        c.spark_submit(name, "ml", [8, 3000], executors=2,
                       conf={"spark.yarn.executor.resource.gpu-mem.amount": "4096"}, wait=False)

        def both_executors():
            app = c.app_by_name(name)
            if not app or app["state"] != "RUNNING":
                return None
            containers = app_containers(c, app["id"])
            return containers if len(containers) == 3 else None

        containers = c.wait_for(both_executors, 180, "the Spark AM and its 2 executors")
        gpu_node = c.gpu_node_id()
        for cid, info in containers.items():
            if cid.endswith(AM_CONTAINER):
                assert info["resources"].get(GPU, 0) == 0, (cid, info)
            else:
                assert info["resources"][GPU] == 4096 and info["node"] == gpu_node, (cid, info, gpu_node)
        app = c.wait_app(name, ("FINISHED", "FAILED", "KILLED"), 180)
        assert app["finalStatus"] == "SUCCEEDED", (app, c.client_log(name))
        assert app["queue"] in ("ml", "root.research.ml") and app["applicationType"] == "SPARK", app

        code, out = mapreduce.result(timeout=300)
    assert code == 0, out[-3000:]
    code, out = c.exec(["python3", "-c", CHECK_COUNTS, f"/shared/wordcount-{tag}"])
    assert code == 0 and int(out.strip()) == 5000, out[-2000:]
    wordcounts = [a for a in c.apps() if a["name"] == "word count"]
    assert len(wordcounts) == 1 and wordcounts[0]["finalStatus"] == "SUCCEEDED", wordcounts
    assert wordcounts[0]["queue"] in ("dev", "root.research.dev"), wordcounts


def test_spark_dynamic_allocation_grows_while_tasks_run_and_gives_executors_back_when_idle(
        idle_cluster, requires_yarn_drf):
    c = idle_cluster
    name = f"spark-da-{uuid.uuid4().hex[:6]}"
    conf = {
        "spark.dynamicAllocation.enabled": "true",
        # No external shuffle service on this cluster (docs/spark.md): executors holding shuffle data
        # are tracked instead, and released once it is no longer needed.
        "spark.dynamicAllocation.shuffleTracking.enabled": "true",
        "spark.dynamicAllocation.shuffleTracking.timeout": "2s",
        "spark.dynamicAllocation.minExecutors": "0",
        "spark.dynamicAllocation.maxExecutors": "4",
        "spark.dynamicAllocation.schedulerBacklogTimeout": "1s",
        "spark.dynamicAllocation.executorIdleTimeout": "2s",
    }
    with ThreadPoolExecutor(max_workers=1) as pool:
        # Client mode: the driver is the spark-submit process; 16 tasks of 2 s, then 25 s idle.
        driver = pool.submit(c.spark_submit, name, "dev", [16, 2000, 25], mode="client", conf=conf)
        app = c.wait_for(lambda: c.app_by_name(name), 120, "the Spark app")
        peak = 0

        def idle_again():
            nonlocal peak
            a = c.rest(f"/apps/{app['id']}")["app"]
            executors = a["runningContainers"] - 1
            peak = max(peak, executors)
            return a if peak >= 2 and executors == 0 and a["state"] == "RUNNING" else None

        idle = c.wait_for(idle_again, 150, "executors to grow and then all be given back")
        assert 2 <= peak <= 4, peak
        # Nothing left pending once Spark's target dropped to 0: in YARN and in the core.
        asks = idle.get("resourceRequests") or []
        assert sum(r["numContainers"] for r in asks if r["resourceName"] == "*") == 0, asks
        detail = c.rest_status(f"/v1/apps/{app['id']}")
        assert all(r["pending"] == 0 for r in detail["requests"]), detail
        code, out = driver.result(timeout=120)
    assert code == 0, out[-3000:]
    assert "SleepShuffle: 16 tasks on" in out and "sum 120 (expected 120)" in out, out[-3000:]
    app = c.rest(f"/apps/{app['id']}")["app"]
    assert app["finalStatus"] == "SUCCEEDED" and app["queue"] in ("dev", "root.research.dev"), app


# Queues of the default tree: prod (weight 2) and dev run distributed-shell apps, ml runs Spark.
SPARK_EXECUTOR = {"memory-mb": 2048, "vcores": 1, GPU: 2048}  # 1664m + 384m overhead
PROD = Job("prod", "prod", None, {"memory-mb": 1024, "vcores": 2}, 30)
DEV = Job("dev", "dev", None, {"memory-mb": 4096, "vcores": 1}, 30)
SPARK = Job("spark", "ml", None, SPARK_EXECUTOR, 30, spark=True)  # far more executors than its share


def test_spark_competing_with_distributed_shell_apps_gets_its_hierarchical_drf_share(idle_cluster,
                                                                                     requires_yarn_drf):
    c = idle_cluster
    tag = uuid.uuid4().hex[:6]
    jobs = (PROD, DEV, SPARK)
    capacity = hold_every_vcore(c, len(jobs), tag)
    for job in jobs:
        job.submit(c, tag)
    names = [f"{job.name}-{tag}" for job in jobs]
    start_the_ams(c, names, tag)
    release_when_all_pending(c, names, tag)
    running = wait_stable(c)
    spark = [v for v in running.values() if v["queue"] == "root.research.ml"]
    executors = [v for v in spark if v["resources"].get(GPU)]
    assert len(executors) == len(spark) - 1, spark
    assert all(v["resources"] == SPARK_EXECUTOR for v in executors), executors
    assert_hdrf(c, running, {job: c.app_by_name(f"{job.name}-{tag}") for job in jobs}, capacity)
