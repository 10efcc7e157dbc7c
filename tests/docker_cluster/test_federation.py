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


@pytest.fixture(scope="module")
def federation(docker_client, scheduler_name, requires_yarn_drf):
    with running(Federation.create(scheduler_class(scheduler_name), QUEUES)) as fed:
        yield fed


def app_id(client_output: str) -> str:
    found = re.findall(r"application_\d+_\d+", client_output)
    assert found, f"no application id in the client's output:\n{client_output[-3000:]}"
    return found[0]


def test_a_shell_app_through_the_router_completes_with_its_containers_split_over_both_subclusters(federation):
    # The AM in SC-1 (router weights), its six containers split evenly by the AMRM weights.
    federation.save_policy("*", {"SC-1": 1.0, "SC-2": 0.0}, {"SC-1": 0.5, "SC-2": 0.5})
    tag = uuid.uuid4().hex[:6]
    code, out = federation.submit_dshell(f"fed-{tag}", "dev", 6, SMALL, federation.marked_command(tag, 3))
    assert code == 0 and "Application completed successfully" in out, out[-3000:]
    ran = federation.marks_by_subcluster(tag)
    assert {sc: len(ids) for sc, ids in ran.items()} == {"SC-1": 3, "SC-2": 3}, ran
    # each sub-cluster's yarn-drf core saw the app: SC-1 its AM and containers, SC-2 its unmanaged AM's
    for sc in federation.subclusters.values():
        assert app_id(out) in {a["id"] for a in sc.apps()}, f"{sc.id} does not know {app_id(out)}"


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
