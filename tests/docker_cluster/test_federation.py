"""YARN Federation of yarn-drf sub-clusters (tests/docker_cluster/federation.py): apps submitted to
the Router (distributed shell, MapReduce, Spark) run to completion with containers in both
sub-clusters as the AMRM weights split them, the Router lists them, a sub-cluster whose RM is
killed takes down only what ran there, and that RM restarted recovers its containers."""
from __future__ import annotations

import re
import uuid

import pytest
import requests

from tests.docker_cluster.cluster import MR_EXAMPLES_JAR
from tests.docker_cluster.conftest import QUEUES, running, scheduler_class
from tests.docker_cluster.federation import Federation
from tests.drf import queue_usage

SMALL = {"memory-mb": 256, "vcores": 1}
pytestmark = pytest.mark.usefixtures("requires_yarn_drf")  # every sub-cluster runs yarn-drf


@pytest.fixture(scope="module")
def federation(docker_client, scheduler_name):
    with running(Federation.create(scheduler_class(scheduler_name), QUEUES)) as fed:
        yield fed


def app_id(client_output: str) -> str:
    found = re.findall(r"application_\d+_\d+", client_output)
    assert found, f"no application id in the client's output:\n{client_output[-3000:]}"
    return found[0]


def test_a_shell_app_through_the_router_runs_its_am_in_one_subcluster_and_its_containers_in_the_other(federation):
    # The AM in SC-1 (router weights), every ask to SC-2 (AMRM weights): the AMRMProxy registers an
    # unmanaged AM for the app in SC-2, whose yarn-drf core places the containers. (Even AMRM
    # weights split each ask, but SC-1 fills its half before SC-2's unmanaged AM is registered and
    # the AM's next ask, of what is still missing, is split again: where they land is a race.)
    federation.save_policy("*", {"SC-1": 1.0, "SC-2": 0.0}, {"SC-1": 0.0, "SC-2": 1.0})
    tag = uuid.uuid4().hex[:6]
    code, out = federation.submit_dshell(f"fed-{tag}", "dev", 4, SMALL, federation.marked_command(tag, 3))
    assert code == 0 and "Application completed successfully" in out, out[-3000:]
    ran = federation.marks_by_subcluster(tag)
    assert (len(ran["SC-1"]), len(ran["SC-2"])) == (0, 4), ran
    # container ids of SC-2 carry its epoch (1000): none collides with one of SC-1's
    assert all(c.startswith("container_e1000_") for c in ran["SC-2"]), ran
    sc1, sc2 = (federation.subclusters[s].apps() for s in ("SC-1", "SC-2"))
    home = {a["id"]: a for a in sc1}[app_id(out)]
    uam = {a["id"]: a for a in sc2}[app_id(out)]
    assert not home.get("unmanagedApplication") and uam.get("unmanagedApplication"), (home, uam)


def test_the_router_lists_the_apps_of_every_subcluster(federation):
    federation.save_policy("*", {"SC-1": 0.0, "SC-2": 1.0}, {"SC-1": 0.0, "SC-2": 1.0})
    tag = uuid.uuid4().hex[:6]
    code, out = federation.submit_dshell(f"fed-{tag}", "dev", 1, SMALL, federation.marked_command(tag, 1))
    assert code == 0 and "Application completed successfully" in out, out[-3000:]
    ran = federation.marks_by_subcluster(tag)
    assert (len(ran["SC-1"]), len(ran["SC-2"])) == (0, 1), ran
    homes = {sc.id: {a["id"] for a in sc.apps() if not a.get("unmanagedApplication")}
             for sc in federation.subclusters.values()}
    assert app_id(out) in homes["SC-2"] and app_id(out) not in homes["SC-1"], homes
    code, listed = federation.exec(["yarn", "application", "-list", "-appStates", "ALL"])
    assert code == 0, listed
    for ids in homes.values():
        for a in ids:
            assert a in listed, f"{a} missing from `yarn application -list` through the Router:\n{listed}"
    assert app_id(out) in {a["id"] for a in (federation.rest("/apps").get("apps") or {}).get("app") or []}


def test_a_mapreduce_job_through_the_router_completes(federation):
    federation.save_policy("*", {"SC-1": 1.0, "SC-2": 0.0}, {"SC-1": 0.5, "SC-2": 0.5})
    code, out = federation.exec(["yarn", "jar", MR_EXAMPLES_JAR, "pi", "-Dmapreduce.job.queuename=dev", "4", "100"])
    assert code == 0 and "Estimated value of Pi is" in out, out[-4000:]


def test_a_spark_job_through_the_router_runs_its_driver_at_home_and_its_executors_where_the_amrm_weights_send_them(
        federation):
    # The driver (the AM, cluster mode) in SC-1, every executor ask to SC-2: the job's shuffle
    # crosses the sub-clusters and its result is checked by the job itself.
    federation.save_policy("*", {"SC-1": 1.0, "SC-2": 0.0}, {"SC-1": 0.0, "SC-2": 1.0})
    name = f"fed-spark-{uuid.uuid4().hex[:6]}"
    code, out = federation.submit_spark(name, "dev", [8, 1500], executors=2)
    assert code == 0 and re.search(r"final status: SUCCEEDED", out), out[-4000:]
    spark = app_id(out)
    home, uam = (federation.subclusters[s].rest(f"/apps/{spark}")["app"] for s in ("SC-1", "SC-2"))
    assert home["finalStatus"] == "SUCCEEDED" and not home.get("unmanagedApplication"), home
    # The executors ran in SC-2: the unmanaged AM there, which has no AM container, used room.
    assert uam.get("unmanagedApplication") and uam["memorySeconds"] > 0 and uam["vcoreSeconds"] > 0, uam


def test_a_killed_subcluster_rm_fails_only_its_own_work_and_restarted_recovers_its_containers(federation):
    # Last in the module. An app homed and running in SC-2 only (the victim), one in SC-1 only.
    sc2 = federation.subclusters["SC-2"]
    federation.save_policy("*", {"SC-1": 0.0, "SC-2": 1.0}, {"SC-1": 0.0, "SC-2": 1.0})
    victim = uuid.uuid4().hex[:6]
    federation.exec_detached(federation_dshell(federation, f"fed-{victim}", 2, victim, 3600), f"fed-{victim}")
    federation._wait(lambda: len(federation.marks_by_subcluster(victim)["SC-2"]) == 2,
                     "the SC-2 app's two containers to start", 180)
    federation.save_policy("*", {"SC-1": 1.0, "SC-2": 0.0}, {"SC-1": 1.0, "SC-2": 0.0})
    bystander = uuid.uuid4().hex[:6]
    federation.exec_detached(federation_dshell(federation, f"fed-{bystander}", 2, bystander, 30), f"fed-{bystander}")
    federation._wait(lambda: len(federation.marks_by_subcluster(bystander)["SC-1"]) == 2,
                     "the SC-1 app's two containers to start", 180)
    before = sc2.running_containers()
    assert len(before) == 3, before  # the victim's AM and its two containers

    sc2.kill_rm()
    federation.down.add("SC-2")
    # The Router marks a sub-cluster lost once its heartbeats stop for the expiration (20 s here).
    federation._wait(lambda: "SC_LOST" in subcluster_states(federation), "the Router to mark SC-2 lost", 180,
                     describe=lambda: subcluster_states(federation))
    lost = subcluster_states(federation)
    assert re.search(r"SC-2\s.*SC_LOST", lost) and re.search(r"SC-1\s.*SC_RUNNING", lost), lost
    # What ran only in SC-1 completes; a new app homed there too.
    tag = uuid.uuid4().hex[:6]
    code, out = federation.submit_dshell(f"fed-{tag}", "dev", 3, SMALL, federation.marked_command(tag, 1))
    assert code == 0 and "Application completed successfully" in out, out[-3000:]
    assert [len(ids) for ids in federation.marks_by_subcluster(tag).values()] == [3, 0]
    federation._wait(lambda: "Application completed" in federation.client_log(f"fed-{bystander}"),
                     "the SC-1 app to end", 180)
    assert "Application completed successfully" in federation.client_log(f"fed-{bystander}")
    # The victim's containers still run on their NodeManager (it outlives its RM); nothing of
    # SC-2's moved to SC-1.
    assert len(federation.marks_by_subcluster(victim)["SC-2"]) == 2
    assert "Application completed successfully" not in federation.client_log(f"fed-{victim}")

    # SC-2's RM again, from its state store: the Router sees the sub-cluster back, its RM and its
    # yarn-drf core hold the victim's containers again, the same ones, each counted once.
    sc2.restart_rm()
    federation.down.discard("SC-2")
    federation._wait(lambda: re.search(r"SC-2\s.*SC_RUNNING", subcluster_states(federation)),
                     "the Router to see SC-2 running again", 180, describe=lambda: subcluster_states(federation))
    recovered = federation._wait(lambda: recovered_containers(sc2, len(before)),
                                 "SC-2 to recover the victim's containers", 180)
    assert set(recovered) == set(before), (sorted(before), sorted(recovered))
    core = sc2.core_status()
    assert sum(a["containers"] for a in core["apps"].values()) == len(before), core["apps"]
    # By the containers, not by queue name: YARN's state store keeps the queue as the app named it.
    held = queue_usage({k: {**v, "queue": "root"} for k, v in recovered.items()})["root"]
    assert core["queues"]["root"]["usage"] == held, (core["queues"]["root"]["usage"], held)
    # A new app homed in SC-2 runs there and completes.
    federation.save_policy("*", {"SC-1": 0.0, "SC-2": 1.0}, {"SC-1": 0.0, "SC-2": 1.0})
    tag = uuid.uuid4().hex[:6]
    code, out = federation.submit_dshell(f"fed-{tag}", "dev", 2, SMALL, federation.marked_command(tag, 1))
    assert code == 0 and "Application completed successfully" in out, out[-3000:]
    assert [len(ids) for ids in federation.marks_by_subcluster(tag).values()] == [0, 2]


def recovered_containers(sc, count: int) -> dict | None:
    """The sub-cluster RM's running containers once it has `count` and its core counts as many."""
    try:
        running = sc.running_containers()
        core = sc.core_status()
    except requests.RequestException:  # the RM or its core is still starting
        return None
    counted = sum(a["containers"] for a in core["apps"].values())
    return running if len(running) == count and counted == count else None


def federation_dshell(federation: Federation, name: str, num: int, tag: str, seconds: int) -> list[str]:
    from tests.docker_cluster.cluster import dshell_command
    return dshell_command(name, "dev", num, SMALL, federation.marked_command(tag, seconds))


def subcluster_states(federation: Federation) -> str:
    """`yarn routeradmin -subCluster -getSubClusters`: each sub-cluster's id and state."""
    return federation.exec(["yarn", "routeradmin", "-subCluster", "-getSubClusters"])[1]
