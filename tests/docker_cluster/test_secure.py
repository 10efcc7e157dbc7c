"""The Kerberos-secured cluster (tests/docker_cluster/secure_cluster.py): the daemons log in from keytabs, users
submit with tickets from kinit, submission ACLs are checked against the principal's short name and
its Unix groups on the RM host (an app outside them is REJECTED saying why), a client without a
ticket cannot submit, a MapReduce and a Spark job run as their users, and the status server stays on
loopback with its one state-changing request behind its token."""
from __future__ import annotations

import re
import uuid

import docker
import pytest
import requests

from tests.docker_cluster.cluster import (
    CAPACITY_SCHEDULER, ROOT, SLEEP_JOB, YARN_DRF_SCHEDULER, NodeShape, dshell_command, spark_command,
)
from tests.docker_cluster.secure_cluster import KDC_IMAGE, REALM, SecureCluster

QUEUES = ROOT / "conf" / "docker-secure-queues.yaml"
SMALL = {"memory-mb": 256, "vcores": 1}
# One NodeManager is enough: the subject is who may run, not where.
SHAPES = (NodeShape("nm-secure", vcores=8, memory_mb=12288, gpu_mem=0),)


@pytest.fixture(scope="module")
def secure(docker_client, scheduler_name):
    try:
        docker_client.images.get(KDC_IMAGE)
    except docker.errors.ImageNotFound:
        pytest.fail(f"image {KDC_IMAGE} is missing: run 'make images'", pytrace=False)
    klass = YARN_DRF_SCHEDULER if scheduler_name == "yarn-drf" else CAPACITY_SCHEDULER
    c = SecureCluster.create(klass, QUEUES, shapes=SHAPES)
    try:
        c.start()
        yield c
    finally:
        c.stop()


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def app_named(c: SecureCluster, app_name: str) -> dict:
    return c.wait_for(lambda: c.app_by_name(app_name), 60, f"the RM to know {app_name}")


def container_stdout(c: SecureCluster, app_id: str) -> list[str]:
    """What the app's containers printed, read from the NodeManager's log directories."""
    suffix = app_id.removeprefix("application_")
    res = c.nms["nm-secure"].get_wrapped_container().exec_run(
        ["bash", "-c", f"cat $(find / -xdev -path '*userlogs*{suffix}*' -name stdout 2>/dev/null) 2>/dev/null"])
    return res.output.decode(errors="replace").splitlines()


def test_the_daemons_log_in_from_their_keytabs(secure):
    rm_log = secure.rm.get_wrapped_container().logs().decode(errors="replace")
    nm_log = secure.nms["nm-secure"].get_wrapped_container().logs().decode(errors="replace")
    assert f"Login successful for user rm/localhost@{REALM} using keytab file" in rm_log, rm_log[-3000:]
    assert f"Login successful for user nm/localhost@{REALM} using keytab file" in nm_log, nm_log[-3000:]


def test_a_user_in_the_queues_group_runs_there_as_herself(secure):
    c = secure
    c.kinit("alice")
    app_name = name("alice-analytics")
    code, out = c.exec_as("alice", dshell_command(app_name, "analytics", 1, SMALL,
                                                  "sh -c 'echo unix=$(id -un) yarn=$USER'"))
    assert code == 0, out[-3000:]
    app = c.app_by_name(app_name)
    assert (app["user"], app["queue"], app["finalStatus"]) == ("alice", "root.analytics", "SUCCEEDED"), app
    # DefaultContainerExecutor: the container is the app's (YARN's USER) but runs as the
    # NodeManager's Unix user, root here (tests/docker_cluster/secure_cluster.py says why).
    printed = [line for line in container_stdout(c, app["id"]) if line.startswith("unix=")]
    assert printed == ["unix=root yarn=alice"], printed


def test_a_user_outside_the_queues_acl_is_rejected_with_the_reason(secure, requires_yarn_drf):
    c = secure
    c.kinit("bob")
    app_name = name("bob-analytics")
    code, out = c.exec_as("bob", dshell_command(app_name, "analytics", 1, SMALL, "true"))
    assert code != 0, out[-3000:]
    app = app_named(c, app_name)
    assert app["user"] == "bob" and app["state"] == "FAILED", app
    # bob's groups as the RM host resolves them, and the queue's ACL, in the app's diagnostics
    diagnostics = app["diagnostics"]
    assert "user 'bob'" in diagnostics and "ops" in diagnostics and "root.analytics" in diagnostics, diagnostics
    assert "may not submit" in diagnostics, diagnostics
    assert "bob" in out and "analytics" in out, out[-3000:]


def test_the_principal_not_the_unix_user_is_who_submits(secure, requires_yarn_drf):
    c = secure
    c.kinit("alice", principal="bob")  # Unix user alice holding bob's ticket
    try:
        refused, accepted = name("as-bob-analytics"), name("as-bob-ops")
        code, out = c.exec_as("alice", dshell_command(refused, "analytics", 1, SMALL, "true"))
        assert code != 0, out[-3000:]
        app = app_named(c, refused)
        assert app["user"] == "bob" and app["state"] == "FAILED" and "user 'bob'" in app["diagnostics"], app
        c.exec_as("alice", dshell_command(accepted, "ops", 1, SMALL, "sleep 600"), detach=True)

        def placed():
            app = c.app_by_name(accepted)
            return app if app and app["state"] in ("ACCEPTED", "RUNNING") else None
        app = c.wait_for(placed, 120, f"{accepted} to be accepted")
        assert (app["user"], app["queue"]) == ("bob", "root.ops"), app
        c.kill_app(app["id"])
    finally:
        c.kinit("alice")


def test_a_client_without_a_ticket_cannot_submit(secure):
    c = secure
    c.kdestroy("bob")
    app_name = name("no-ticket")
    # YARN's clients retry a refused connection for yarn.resourcemanager.connect.max-wait.ms
    # (15 minutes): this one gives up after a few seconds.
    code, out = c.exec_as("bob", ["yarn", SLEEP_JOB, "-Dyarn.resourcemanager.connect.max-wait.ms=3000",
                                  f"-Dmapreduce.job.name={app_name}", "-Dmapreduce.job.queuename=dev",
                                  "-m", "1", "-r", "0", "-mt", "100"])
    assert code != 0, out[-3000:]
    assert "Client cannot authenticate via:[TOKEN, KERBEROS]" in out, out[-3000:]
    assert c.app_by_name(app_name) is None


def test_a_mapreduce_job_runs_as_its_user(secure):
    c = secure
    c.kinit("alice")
    # Map-only: a reducer's shuffle needs Hadoop's native library in a secure cluster (DOCKER.md).
    code, out = c.exec_as("alice", ["yarn", SLEEP_JOB, "-Dmapreduce.job.queuename=analytics",
                                    "-m", "1", "-r", "0", "-mt", "500"])
    assert code == 0 and "completed successfully" in out, out[-3000:]
    app_id = re.findall(r"Submitted application (application_\d+_\d+)", out)[0]
    app = c.rest(f"/apps/{app_id}")["app"]
    assert (app["user"], app["queue"], app["applicationType"], app["finalStatus"]) == \
        ("alice", "root.analytics", "MAPREDUCE", "SUCCEEDED"), app


def test_a_spark_job_runs_as_its_user(secure):
    c = secure
    c.kinit_from_keytab("bob")
    app_name = name("spark-bob")
    code, out = c.exec_as("bob", spark_command(app_name, "ops", [4, 200], executors=1))
    assert code == 0, out[-3000:]
    app = c.app_by_name(app_name)
    assert (app["user"], app["queue"], app["applicationType"], app["finalStatus"]) == \
        ("bob", "root.ops", "SPARK", "SUCCEEDED"), app


def test_the_status_server_is_on_loopback_and_a_reload_needs_its_token(secure, requires_yarn_drf):
    c = secure
    port = c.status_port()
    code, out = c.exec(["cat", "/proc/net/tcp", "/proc/net/tcp6"])
    assert code == 0, out
    listening = [line.split()[1] for line in out.splitlines()[1:]
                 if len(line.split()) > 3 and line.split()[3] == "0A" and line.split()[1].endswith(f":{port:04X}")]
    assert listening == [f"0100007F:{port:04X}"], listening
    reload = f"http://127.0.0.1:{port}/v1/reload"
    assert requests.post(reload, timeout=10).status_code == 401
    assert requests.post(reload, headers={"Authorization": "Bearer not-the-token"}, timeout=10).status_code == 401
    ok = requests.post(reload, headers={"Authorization": f"Bearer {c.read_status_token()}"}, timeout=30)
    assert ok.status_code == 200, ok.text
