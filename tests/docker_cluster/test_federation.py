"""YARN Federation of yarn-drf sub-clusters (tests/docker_cluster/federation.py): apps submitted to
the Router run to completion with containers in both sub-clusters as the AMRM weights split them,
the Router lists them, and a sub-cluster whose RM is killed takes down only what ran there."""
from __future__ import annotations

import re
import uuid

import pytest

from tests.docker_cluster.cluster import MR_EXAMPLES_JAR
from tests.docker_cluster.conftest import QUEUES, running, scheduler_class
from tests.docker_cluster.federation import Federation

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


def test_killing_one_subclusters_rm_leaves_the_other_scheduling_new_apps_through_the_router(federation):
    # Last in the module: SC-2's RM stays down. An app homed and running in SC-2 first.
    federation.save_policy("*", {"SC-1": 0.0, "SC-2": 1.0}, {"SC-1": 0.0, "SC-2": 1.0})
    victim = uuid.uuid4().hex[:6]
    federation.exec_detached(federation_dshell(federation, f"fed-{victim}", 2, victim, 3600), f"fed-{victim}")
    federation._wait(lambda: len(federation.marks_by_subcluster(victim)["SC-2"]) == 2,
                     "the SC-2 app's two containers to start", 180)
    federation.subclusters["SC-2"].kill_rm()
    federation.down.add("SC-2")
    # The Router marks a sub-cluster lost once its heartbeats stop for the expiration (20 s here).
    federation._wait(lambda: "SC_LOST" in subcluster_states(federation), "the Router to mark SC-2 lost", 180,
                     describe=lambda: subcluster_states(federation))
    lost = subcluster_states(federation)
    assert re.search(r"SC-2\s.*SC_LOST", lost) and re.search(r"SC-1\s.*SC_RUNNING", lost), lost
    federation.save_policy("*", {"SC-1": 1.0, "SC-2": 0.0}, {"SC-1": 1.0, "SC-2": 0.0})
    tag = uuid.uuid4().hex[:6]
    code, out = federation.submit_dshell(f"fed-{tag}", "dev", 3, SMALL, federation.marked_command(tag, 1))
    assert code == 0 and "Application completed successfully" in out, out[-3000:]
    assert [len(ids) for ids in federation.marks_by_subcluster(tag).values()] == [3, 0]
    # the victim's containers still run on their NodeManager (it outlives its RM); its app never
    # completed: nothing of SC-2's moved to SC-1
    assert len(federation.marks_by_subcluster(victim)["SC-2"]) == 2
    assert "Application completed successfully" not in federation.client_log(f"fed-{victim}")


def federation_dshell(federation: Federation, name: str, num: int, tag: str, seconds: int) -> list[str]:
    from tests.docker_cluster.cluster import dshell_command
    return dshell_command(name, "dev", num, SMALL, federation.marked_command(tag, seconds))


def subcluster_states(federation: Federation) -> str:
    """`yarn routeradmin -subCluster -getSubClusters`: each sub-cluster's id and state."""
    return federation.exec(["yarn", "routeradmin", "-subCluster", "-getSubClusters"])[1]
