"""Queues that placement creates, in a stock Hadoop 3.4.1 ResourceManager running the yarn-drf
shim: the core sends the shim only the new queues' entries ("queues_built"), and YARN's view of
the tree (the app's queue, `yarn queue -status`, the scheduler's queue list) has them while the
queues of the file stay as they were."""
from __future__ import annotations

import pytest

from tests.jvm_cluster.conftest import started_cluster

QUEUES = """
resources: [memory-mb, vcores, gpu-mem]
placement:
  - rule: user
    parent: root.users
    create: true
queues:
  root:
    children:
      default:                # (distributed shell's client asks YARN about it before submitting)
        weight: 2
      users:
        children: {}
"""


@pytest.fixture(scope="module")
def cluster():
    with started_cluster(QUEUES) as c:
        yield c


def test_each_new_user_gets_a_queue_yarn_knows_and_the_files_queues_stay(cluster):
    for user in ("zoe", "yann"):
        cluster.dshell("default", 1, "memory-mb=256,vcores=1", user=user, name=f"created-{user}")
    for user in ("zoe", "yann"):
        app = cluster.wait_for(lambda u=user: cluster.app_named(f"created-{u}"), 60, f"{user}'s app submitted")
        cluster.wait_for(lambda a=app["id"]: cluster.app(a)["state"] == "RUNNING", 120, f"{user}'s app running")
        assert cluster.app(app["id"])["queue"] == f"root.users.{user}"
        status = cluster.yarn("queue", "-status", f"root.users.{user}")
        assert status.returncode == 0 and f"Queue Name : {user}" in status.stdout, status.stdout + status.stderr
    listed = cluster.cli("org.apache.hadoop.mapred.JobQueueClient", "-list")
    assert listed.returncode == 0, listed.stderr
    for q in ("default", "users", "zoe", "yann"):
        assert f"Queue Name : {q}" in listed.stdout, listed.stdout
    kept = cluster.yarn("queue", "-status", "root.default")
    assert "State : RUNNING" in kept.stdout, kept.stdout
    for app in cluster.apps():
        cluster.yarn("application", "-kill", app["id"])
