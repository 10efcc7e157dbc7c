"""MapReduce's reducer ramp-down on yarn-drf's per-app headroom (docs/deploy.md, "Controls", Headroom).

MapReduce's AM (RMContainerAllocator.preemptReducesIfNeeded, Hadoop 3.4.1) preempts reducers when
no map runs, a map is pending, and its headroom minus its reducers not yet allocated cannot fit a
map: at once (`mapreduce.job.reducer.preempt.delay.sec`, 0). Otherwise only its unconditional
preemption (`mapreduce.job.reducer.unconditional-preempt.delay.sec`, 300 s) frees them. This test
builds that state on purpose in a queue whose max holds the AM, one map and two reducers:

- one map, three reducers, reduce slow start 0: with the map running, the AM asks for every
  reducer; two run, the third waits for the queue's room;
- the map's JVM is killed: the freed room goes at once to the waiting reducer (the only ask there
  is), and the AM learns of the failure only from its next allocate, then asks for the map again;
- now three reducers hold the queue's max, and they wait for the map's output forever. Told the
  queue's remaining max (nothing), the AM preempts a reducer within a heartbeat; told the cluster's
  free room (plenty), it would wait the 300 s.
"""
from __future__ import annotations

import re
import uuid
from datetime import datetime

import pytest

from tests.docker_cluster.cluster import SLEEP_JOB, YARN_DRF_SCHEDULER, Cluster, NodeShape

SHAPES = (NodeShape("nm-mr", vcores=8, memory_mb=4096, gpu_mem=0),)
# The AM (512 MiB), one map and two reducers (256 MiB each: the image's mapred-site) fill it.
QUEUES = """\
resources: [memory-mb, vcores, gpu-mem]
queues:
  root:
    submit-acl: " "
    admin-acl: "hadoop"
    children:
      batch:
        max: {memory-mb: 1280}
        submit-acl: "*"
"""
PREEMPT = re.compile(r"^(\S+ \S+) INFO .*RMContainerAllocator: Going to preempt (\d+) due to lack of space for maps$",
                     re.M)
FAILED_MAP = re.compile(r"^(\S+ \S+) INFO .*RMContainerAllocator: Added (attempt_\S+_m_000000_\d+) to list of "
                        r"failed maps$", re.M)
PREEMPTING = re.compile(r"RMContainerAllocator: Preempting (attempt_\S+_r_\d+_\d+)$", re.M)


@pytest.fixture(scope="module")
def mr_cluster(docker_client, scheduler_name, tmp_path_factory):
    if scheduler_name != "yarn-drf":
        pytest.skip("the headroom under test is yarn-drf's: the RM image cannot run `yarn-drf serve`")
    queues = tmp_path_factory.mktemp("mr-headroom") / "queues.yaml"
    queues.write_text(QUEUES)
    c = Cluster.create(YARN_DRF_SCHEDULER, queues, shapes=SHAPES)
    try:
        c.start()
        yield c
    finally:
        c.stop()


def nm_exec(c: Cluster, cmd: list[str]) -> str:
    res = c.nms["nm-mr"].get_wrapped_container().exec_run(cmd)
    assert res.exit_code == 0, (cmd, res.output)
    return res.output.decode(errors="replace")


def task_jvms(c: Cluster, app_id: str, kind: str) -> list[str]:
    """Process ids of the app's task JVMs of kind "m" (maps) or "r" (reducers), not their launch shells."""
    attempt = "attempt_" + app_id.removeprefix("application_") + f"_{kind}_"
    rows = [line.split() for line in nm_exec(c, ["ps", "-eo", "pid=,args="]).splitlines()]
    return [row[0] for row in rows
            if len(row) > 1 and row[1].endswith("/java") and "org.apache.hadoop.mapred.YarnChild" in row
            and any(arg.startswith(attempt) for arg in row)]


def am_log(c: Cluster, app_id: str) -> str:
    """The MapReduce AM's syslog (its container is the app's first)."""
    return nm_exec(c, ["bash", "-c", f"find / -xdev -path '*/{app_id}/container_*_000001/syslog' 2>/dev/null "
                                     "| xargs -r cat"])


def log_time(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f")


def test_reducers_holding_the_queues_max_are_ramped_down_for_a_pending_map_within_seconds(mr_cluster):
    c = mr_cluster
    name = f"ramp-down-{uuid.uuid4().hex[:6]}"
    c.exec_detached(["yarn", SLEEP_JOB, "-Dmapreduce.job.queuename=batch",
                     "-Dmapreduce.job.reduce.slowstart.completedmaps=0",
                     # the defaults, spelled out: only the headroom path can act within 300 s
                     "-Dmapreduce.job.reducer.preempt.delay.sec=0",
                     "-Dmapreduce.job.reducer.unconditional-preempt.delay.sec=300",
                     "-m", "1", "-r", "3", "-mt", "15000", "-rt", "500"], name)
    app = c.wait_for(lambda: next(iter(re.findall(r"Submitted application (application_\d+_\d+)",
                                                  c.client_log(name))), None), 60, "the job's application id")
    # The map and two reducers run; the third reducer's ask waits for the queue's room.
    maps = c.wait_for(lambda: len(c.app_containers(app)) == 4 and task_jvms(c, app, "m"), 120,
                      "the map and two reducers running")
    nm_exec(c, ["kill", "-9", *maps])

    log = c.wait_for(lambda: PREEMPT.search(text := am_log(c, app)) and text, 90,
                     "reducer preemption in the AM's log")
    failed = FAILED_MAP.search(log)
    assert failed, log[-3000:]
    preempt = PREEMPT.search(log)
    assert preempt.group(2) == "1", preempt.group(0)
    # Well inside the 300 s fallback: the headroom said there was no room for the map.
    waited = (log_time(preempt.group(1)) - log_time(failed.group(1))).total_seconds()
    assert 0 <= waited < 60, (failed.group(0), preempt.group(0))
    assert PREEMPTING.search(log), log[-3000:]

    done = c.wait_for(lambda: (a := c.rest(f"/apps/{app}")["app"])["state"] in ("FINISHED", "FAILED", "KILLED")
                      and a, 150, "the job's end")
    assert done["finalStatus"] == "SUCCEEDED", (done, c.client_log(name))
