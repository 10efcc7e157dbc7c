"""ResourceManager HA on the Docker cluster (tests/docker_cluster/ha_cluster.py): ZooKeeper, two RMs with
ZKRMStateStore, work-preserving recovery and embedded automatic failover.

- kill -9 of the active RM's JVM under a mixed workload (distributed shell and MapReduce from three
  queues): the standby takes over, nothing the RMs knew before the kill is lost or counted twice,
  the queues return to their hierarchical-DRF shares, and an app submitted during the outage completes;
- 20 manual transitions (`yarn rmadmin -transitionToStandby/-transitionToActive --forcemanual`):
  one core per active RM and none in the standby, no leaked process or token file, no failed
  refresh, and the cluster still schedules afterwards.
"""
from __future__ import annotations

import re
import time
import uuid
from collections import Counter

import pytest
import requests

from tests.docker_cluster.cluster import SLEEP_JOB, resource_map
from tests.docker_cluster.conftest import QUEUES, running, scheduler_class
from tests.docker_cluster.ha_cluster import RM_IDS, HaCluster
from tests.docker_cluster.history import ContainerHistory
from tests.docker_cluster.test_drf import Job, assert_hdrf, wait_stable
from tests.drf import RESOURCES, queue_usage

# One app per queue, each wanting far more than its share: prod CPU-heavy, dev memory-heavy, ml GPU-memory-heavy.
JOBS = (
    Job("prod", "prod", None, {"memory-mb": 1024, "vcores": 2}, 30),
    Job("dev", "dev", None, {"memory-mb": 4096, "vcores": 1}, 30),
    Job("ml", "ml", None, {"memory-mb": 2048, "vcores": 1, "gpu-mem": 2048}, 30),
)
MR_MAPS = 4
MR_MAP_MS = 120_000  # the maps run through the failover
TRANSITION_CYCLES = 20


@pytest.fixture(scope="module")
def ha_cluster(docker_client, scheduler_name):
    with running(HaCluster.create(scheduler_class(scheduler_name), QUEUES)) as c:
        yield c


@pytest.fixture
def idle_ha(ha_cluster):
    """Both RMs up (one active), no app running before and after the test."""
    for rm_id in sorted(ha_cluster.down):
        ha_cluster.restart_rm(rm_id)
    ha_cluster.wait_active(180)
    ha_cluster.kill_all_apps()
    yield ha_cluster
    ha_cluster.wait_active(180)
    ha_cluster.kill_all_apps()


# ---- kill -9 of the active RM ------------------------------------------------------------

def test_kill_9_of_the_active_rm_loses_no_container_and_the_queues_return_to_their_targets(
        idle_ha, scheduler_name):
    c = idle_ha
    tag = uuid.uuid4().hex[:6]
    capacity = {r: sum(_node_total(n).get(r, 0) for n in c.running_nodes()) for r in RESOURCES}
    # The maps run through the failover and end while the queues compete again: the oracle must
    # count them in the decisions taken before they ended, so a watcher records every container.
    with ContainerHistory(c) as history:
        _kill_and_recover(c, scheduler_name, tag, capacity, history)


def _kill_and_recover(c, scheduler_name: str, tag: str, capacity: dict[str, int], history: ContainerHistory) -> None:
    mr_id, mr_log = start_mapreduce(c, tag)
    blocker_id = hold_all_but_three_vcores(c, tag)
    sleepers = []
    for job in JOBS:
        name = f"{job.name}-{tag}"
        c.submit_dshell(name, job.queue, job.count, job.shape)
        sleepers.append(c.wait_for(lambda: _app_id(c, name), 120, f"{name} submitted"))
    c.wait_for(lambda: all(_asking(c, app_id) for app_id in sleepers), 240,
               "every queue's app to run its AM and ask for its containers")

    before = c.running_containers()
    c.wait_for(lambda: set(before) <= c.nm_running(), 60, "the NodeManagers to run them")
    old = c.active_id
    killed_at, killed_ms = c.kill_rm(old), int(time.time() * 1000)
    # The blocker's containers end normally while no RM is active; an app is submitted meanwhile.
    code, out = c.exec(["touch", f"/shared/release-{tag}"])
    assert code == 0, out
    outage = f"outage-{tag}"
    c.submit_dshell(outage, "ml", 2, {"memory-mb": 256, "vcores": 1}, command="sleep 2")

    new = c.wait_active(240, other_than=old)
    active_s = time.monotonic() - killed_at
    c.wait_for_nodes(len(c.shapes), 180)
    print(f"\nfailover: {new} active {active_s:.1f} s after the kill of {old}")

    # Every container the RMs knew before the kill is accounted for.
    after = assert_every_container_accounted_for(c, before, blocker_id, mr_id, mr_log, tag)
    print(f"accounted for: {len(after)} containers running on, "
          f"{sum(1 for v in before.values() if v['app'] in (blocker_id, mr_id))} ended normally")

    # The queues return to their hierarchical-DRF shares (yarn-drf's; CapacityScheduler has its own),
    # and the new core counts exactly what YARN runs. The new RM allocates nothing for its
    # work-preserving scheduling wait (10 s) after recovery: settled means settled after that.
    c.wait_for(lambda: any(v["started"] > killed_ms for v in c.running_containers().values()), 180,
               "the new active RM to allocate again")
    running = wait_stable(c, quiet_s=8, timeout_s=300)
    assert_no_container_counted_twice(c)
    if scheduler_name == "yarn-drf":
        assert_hdrf(c, running, {job: c.app_by_name(f"{job.name}-{tag}") for job in JOBS}, capacity,
                    ended=history.ended(running))
        assert_core_started_from_the_recovered_state(c, new, running)

    # The app submitted during the outage completes once the queues' apps give way.
    for app_id in sleepers:
        c.kill_app(app_id)
    outage_id = c.wait_for(lambda: _app_id(c, outage), 60, "the app submitted during the outage")
    c.wait_for(lambda: _final(c, outage_id) == "SUCCEEDED", 240, "the app submitted during the outage to succeed")

    # The killed RM, started again, rejoins as the standby: no core, and its predecessor's private
    # directory (token, ports), which the SIGKILL left in its container's /tmp, gone.
    c.restart_rm(old)
    assert _processes_settled(c, new, old, scheduler_name == "yarn-drf") is None


def assert_every_container_accounted_for(c, before: dict, blocker_id: str, mr_id: str, mr_log: str,
                                         tag: str) -> dict:
    """Each container of `before` still runs in the new RM's view and on its NodeManager, or, for
    the blocker and the MapReduce job, ended normally; no AM was started again. The new RM's
    running containers."""
    c.wait_for(lambda: _final(c, blocker_id) == "SUCCEEDED", 240,
               "the blocker's containers to end with exit status 0 (its distributed shell succeeds)")
    after = c.wait_for(lambda: _recovered(c, before, {blocker_id, mr_id}), 240,
                       "the new RM and the NodeManagers to run every container that was running")
    c.wait_for(lambda: _final(c, mr_id) == "SUCCEEDED", 360, "the MapReduce job to succeed")
    assert_mapreduce_lost_nothing(c, mr_log)
    for app_id in {v["app"] for v in before.values()}:
        attempts = c.rest(f"/apps/{app_id}/appattempts")["appAttempts"]["appAttempt"]
        assert len(attempts) == 1, (app_id, attempts)
    # The blocker's containers each ended normally, once: a container lost in the failover would
    # leave no mark, and one its AM asked for again in its place would leave a new id.
    blocked = {k for k, v in before.items() if v["app"] == blocker_id}
    code, out = c.exec(["ls", f"/shared/ended-{tag}"])
    assert code == 0 and set(out.split()) == blocked - {_am_container(c, blocker_id)}, (out, blocked)
    assert not blocked & c.nm_running()
    return after


def start_mapreduce(c, tag: str) -> tuple[str, str]:
    """A map-only MapReduce job in dev whose maps run through the failover: its app id, and the name
    of its client's log."""
    log = f"mr-{tag}"
    c.exec_detached(["yarn", SLEEP_JOB, "-Dmapreduce.job.queuename=dev",
                     "-m", str(MR_MAPS), "-r", "0", "-mt", str(MR_MAP_MS)], log)
    app_id = c.wait_for(lambda: next((a["id"] for a in c.apps() if a["applicationType"] == "MAPREDUCE"), None),
                        120, "the MapReduce job's submission")
    c.wait_for(lambda: _running(c, app_id) == MR_MAPS + 1, 300, f"the MapReduce job's AM and {MR_MAPS} maps")
    return app_id, log


def hold_all_but_three_vcores(c, tag: str) -> str:
    """A distributed shell in dev whose containers hold every free vcore but three (the AMs of the
    queues' apps) until /shared/release-TAG exists; then each leaves its id in /shared/ended-TAG
    and exits 0. Its app id."""
    free = sum(resource_map(n["availableResource"]).get("vcores", 0) for n in c.running_nodes())
    name, n = f"blocker-{tag}", free - 1 - len(JOBS)
    code, out = c.exec(["mkdir", "-p", f"/shared/ended-{tag}"])
    assert code == 0, out
    c.submit_dshell(name, "dev", n, {"memory-mb": 128, "vcores": 1},
                    command=f"while [ ! -e /shared/release-{tag} ]; do sleep 1; done; "
                            f"touch /shared/ended-{tag}/$CONTAINER_ID")
    app_id = c.wait_for(lambda: _app_id(c, name), 120, f"{name} submitted")
    c.wait_for(lambda: _running(c, app_id) == n + 1, 240, f"the blocker's {n} containers")
    return app_id


def _recovered(c, before: dict, finishing: set[str]) -> dict | None:
    """The new RM's running containers once every container of `before` is running again in the
    new RM's view and on its NodeManager, except those of the `finishing` apps, which may instead
    have ended (their apps' outcome proves how)."""
    after = c.running_containers()
    on_nms = c.nm_running()
    missing = [k for k, v in before.items() if v["app"] not in finishing and not (k in after and k in on_nms)]
    moved = [k for k, v in before.items() if k in after and (after[k]["app"], after[k]["node"]) != (v["app"], v["node"])]
    assert not moved, f"containers moved to another app or node: {moved}"
    gone = [k for k, v in before.items() if v["app"] in finishing and k in after and k not in on_nms]
    return None if missing or gone else after


def assert_mapreduce_lost_nothing(c, log_name: str) -> None:
    """Every map ran exactly once: no attempt killed, failed or run again (a container lost with
    the RM would be)."""
    def counters() -> str | None:
        log = c.client_log(log_name, tail=80)
        return log if "Job Counters" in log else None

    log = c.wait_for(counters, 120, "the MapReduce client to print the job's counters")
    assert "completed successfully" in log, log[-3000:]
    launched = re.search(r"Launched map tasks=(\d+)", log)
    assert launched and int(launched.group(1)) == MR_MAPS, log[-3000:]
    assert not re.search(r"(Killed|Failed) map tasks=", log), log[-3000:]


def assert_no_container_counted_twice(c) -> None:
    """Each container id is listed once by the RM and runs on one NodeManager; each node's used
    resources in YARN's books are the sum of the containers it runs."""
    listed = [x["containerId"] for a in c.apps("RUNNING") for x in c.app_containers(a["id"])]
    assert not [k for k, n in Counter(listed).items() if n > 1], listed
    per_nm = Counter(k for ids in c.nm_running_by_node().values() for k in ids)
    assert not [k for k, n in per_nm.items() if n > 1], per_nm
    running = c.running_containers()
    for node in c.running_nodes():
        used = dict.fromkeys(RESOURCES, 0)
        for v in running.values():
            if v["node"] == node["id"]:
                for r in RESOURCES:
                    used[r] += v["resources"].get(r, 0)
        books = resource_map(node["usedResource"])
        assert used == {r: books.get(r, 0) for r in RESOURCES}, (node["id"], used, books)


def assert_core_started_from_the_recovered_state(c, rm_id: str, running: dict) -> None:
    """The new active RM runs one core, which resynchronised from the recovered state and counts
    exactly what YARN runs."""
    assert len(c.serve_pids(rm_id)) == 1
    assert "core resynchronised" in c.rm_log(rm_id)
    usage = queue_usage(running)

    def core_matches():
        try:
            core = c.core_status()
        except requests.RequestException:
            return None
        same = all(core["queues"][q]["usage"] == u for q, u in usage.items())
        return core if same and sum(a["containers"] for a in core["apps"].values()) == len(running) else None

    c.wait_for(core_matches, 60, "the new core's usage to equal YARN's")


# ---- manual transitions ------------------------------------------------------------------

def test_manual_transitions_keep_one_core_per_active_rm_and_never_fail_the_refresh(idle_ha, scheduler_name):
    c = idle_ha
    cores = scheduler_name == "yarn-drf"
    for cycle in range(TRANSITION_CYCLES):
        old = c.wait_active(60)
        new = next(i for i in RM_IDS if i != old)
        code, out = c.rmadmin("-transitionToStandby", "--forcemanual", old)
        assert code == 0, f"cycle {cycle}: transitionToStandby {old}: {out[-2000:]}"
        code, out = c.rmadmin("-transitionToActive", "--forcemanual", new)
        assert code == 0, f"cycle {cycle}: transitionToActive {new}: {out[-2000:]}\n{c.rm_log(new, 60)}"
        assert c.states() == {old: "STANDBY", new: "ACTIVE"}, f"cycle {cycle}: {c.states()}"
        c.find_active()
        # (the old core takes its time to go)
        c.wait_for(lambda: _processes_settled(c, new, old, cores) is None, 60,
                   f"cycle {cycle}: the processes to settle",
                   describe=lambda: _processes_settled(c, new, old, cores) or "settled")
    for rm_id in RM_IDS:
        assert "Error on refreshAll" not in c.rm_log(rm_id), _lines(c.rm_log(rm_id), "refreshAll")

    c.wait_for_nodes(len(c.shapes), 180)
    tag = uuid.uuid4().hex[:6]
    code, out = c.submit_dshell(f"after-transitions-{tag}", "dev", 2, {"memory-mb": 256, "vcores": 1},
                                command="sleep 1", wait=True)
    assert code == 0, out[-3000:]
    assert _final(c, _app_id(c, f"after-transitions-{tag}")) == "SUCCEEDED"


def _processes_settled(c, active: str, standby: str, cores: bool) -> str | None:
    """None when the active RM container runs its JVM and (yarn-drf) one core with one private
    directory holding one token file, and the standby's its JVM alone and neither; else what
    differs."""
    for rm_id, want in ((active, 1 if cores else 0), (standby, 0)):
        serves = c.serve_pids(rm_id)
        files, others = _token_files(c, rm_id), _other_processes(c, rm_id, serves)
        if len(serves) != want or len(files) != 2 * want or others:
            return f"{rm_id}: yarn-drf serve {serves}, core directories and token files {files}, other processes {others}"
    return None


def _token_files(c, rm_id: str) -> list[str]:
    """The cores' private directories in the RM container (java.io.tmpdir/yarn-drf-*), and any
    token file left anywhere under /tmp."""
    code, out = c.rm_exec(rm_id, ["sh", "-c", "find /tmp -maxdepth 1 -name 'yarn-drf-*'; "
                                              "find /tmp -path '*yarn-drf*' -name token"])
    return out.split()


def _other_processes(c, rm_id: str, serves: list[int]) -> list[str]:
    """Processes in the RM container besides tini, the RM's JVM, its core (with the core's reload
    parse worker, a child of a live `yarn-drf serve`: an orphaned one counts) and this probe."""
    code, out = c.rm_exec(rm_id, ["ps", "-eo", "pid=,ppid=,args="])
    assert code == 0, out
    known = ("tini", "resourcemanager.ResourceManager", "yarn-drf serve", "ps -eo")
    others = []
    for line in out.splitlines():
        _, ppid, args = line.split(None, 2)
        if any(k in args for k in known) or ("yarn_bridge.reload_worker" in args and int(ppid) in serves):
            continue
        others.append(line)
    return others


# ---- REST helpers ------------------------------------------------------------------------

def _app_id(c, name: str) -> str | None:
    app = c.app_by_name(name)
    return app["id"] if app else None


def _running(c, app_id: str) -> int:
    """Running containers of a running app."""
    if c.rest(f"/apps/{app_id}")["app"]["state"] != "RUNNING":
        return 0
    return sum(1 for x in c.app_containers(app_id) if x.get("containerState") in (None, "RUNNING"))


def _asking(c, app_id: str) -> bool:
    """The app runs its AM and has containers outstanding in the RM."""
    app = c.rest(f"/apps/{app_id}")["app"]
    return app["state"] == "RUNNING" and any(
        int(a.get("numContainers", 0)) > 0 for a in app.get("resourceRequests") or [])


def _am_container(c, app_id: str) -> str:
    attempts = c.rest(f"/apps/{app_id}/appattempts")["appAttempts"]["appAttempt"]
    return attempts[-1]["containerId"]


def _final(c, app_id: str) -> str | None:
    """The app's final status once it ended."""
    app = c.rest(f"/apps/{app_id}")["app"]
    return app["finalStatus"] if app["state"] in ("FINISHED", "FAILED", "KILLED") else None


def _node_total(node: dict) -> dict[str, int]:
    free, used = resource_map(node["availableResource"]), resource_map(node["usedResource"])
    return {r: free.get(r, 0) + used.get(r, 0) for r in RESOURCES}


def _lines(log: str, needle: str) -> str:
    return "\n".join(line for line in log.splitlines() if needle in line)[-4000:]
