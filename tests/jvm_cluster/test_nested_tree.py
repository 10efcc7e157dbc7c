"""A nested queue tree in a real ResourceManager where placement creates a queue per group: an app
that names a parent queue passes the `specified` rule, and the `primary-group` rule takes the first
group Hadoop's group mapping gives the RM for the submitting user (here its static overrides,
`hadoop.user.group.static.mapping.overrides`), creates root.groups.<group> under a parent with no
static children, and the app runs there; a user the mapping gives no group is rejected with every
rule's reason. (The Docker e2e tests cover the `user` rule, `user-limits` and H-DRF shares on the
default tree; this is what they do not. The apps name a queue because the distributed-shell client
asks the RM for its queue's info before it submits, and this tree has no "default".)"""
from __future__ import annotations

import pytest

from tests.jvm_cluster.conftest import started_cluster

QUEUES = """
resources: [memory-mb, vcores, gpu-mem]
placement:
  - rule: specified
  - rule: primary-group
    parent: root.groups
    create: true
  - rule: reject
queues:
  root:
    children:
      teams:
        weight: 2
        children:
          a: {weight: 1}
          b: {weight: {vcores: 2, memory-mb: 1}}
      groups:
        children: {}
"""
# dora's groups: physics first; erin has none (Hadoop's syntax: user=group,group;user=;).
GROUPS = "dora=physics,optics;erin=;"


@pytest.fixture(scope="module")
def cluster():
    with started_cluster(QUEUES, nm_count=1, rm_extra={"hadoop.user.group.static.mapping.overrides": GROUPS}) as c:
        yield c


def test_an_app_naming_a_parent_lands_in_the_queue_created_for_its_users_primary_group(cluster):
    cluster.dshell("teams", 1, "memory-mb=256,vcores=1", user="dora", name="dora-app", command="sleep 1")
    app = cluster.wait_for(lambda: (a := cluster.app_named("dora-app")) and a["state"] == "FINISHED" and a,
                           240, "dora's app to finish")
    assert app["finalStatus"] == "SUCCEEDED" and app["queue"] == "root.groups.physics", app
    status = cluster.yarn("queue", "-status", "root.groups.physics")
    assert "Queue Path : root.groups.physics" in status.stdout and "State : RUNNING" in status.stdout, status.stdout
    queues = {q["name"]: q for q in cluster.status_json("v1/queues")["queues"]}
    assert queues["root.groups.physics"]["dynamic"] and queues["root.groups"]["children"] == ["root.groups.physics"]
    assert not queues["root.teams"]["leaf"] and queues["root.teams.b"]["weight"] == {"vcores": 2, "memory-mb": 1}


def test_a_user_without_groups_is_rejected_with_every_rules_reason(cluster):
    cluster.dshell("teams", 1, "memory-mb=256,vcores=1", user="erin", name="erin-app", command="true")
    app = cluster.wait_for(lambda: (a := cluster.app_named("erin-app")) and a["state"] == "FAILED" and a,
                           120, "erin's app rejected")
    assert "specified: queue 'root.teams' is a parent queue" in app["diagnostics"], app["diagnostics"]
    assert "primary-group: user 'erin' has no groups" in app["diagnostics"]
    assert "the reject rule was reached" in app["diagnostics"]
    assert "root.groups.erin" not in {q["name"] for q in cluster.status_json("v1/queues")["queues"]}
