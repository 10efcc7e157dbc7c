"""A resync never re-decides placement: after the queue file changed so that placement or ACLs
would now put YARN's running apps elsewhere (or nowhere), a restarted core takes each app into the
queue YARN runs it in, and its usage per node and per queue equals YARN's exactly."""
from __future__ import annotations

import pytest

from tests.bridge import messages
from tests.bridge.invariants import check_accounting
from tests.bridge.messages import schedule, submit
from yarn_bridge.service import CoreService

TYPES = ["memory-mb", "vcores", "gpu-mem"]
BEFORE = """
resources: [memory-mb, vcores, gpu-mem]
placement: [{rule: specified}, {rule: user, parent: root.users, create: true}, {rule: reject}]
queues:
  root:
    submit-acl: " "
    admin-acl: " "
    children:
      shared: {submit-acl: "alice,bob"}
      old: {submit-acl: "*"}
      users: {submit-acl: "*", children: {}}
"""
CHANGES = {  # what the file says after the change, and the apps placement or ACLs would now move
    "the submit-acl narrowed": (BEFORE.replace('"alice,bob"', '"alice"'), {"app_bob"}),
    "a queue removed": (BEFORE.replace('      old: {submit-acl: "*"}\n', ""), {"app_old"}),
    "placement: [specified, reject]": (BEFORE.replace(
        "{rule: user, parent: root.users, create: true}, ", ""), {"app_carol"}),
}
NODES = {f"n{i}:1": {"memory-mb": 16384, "vcores": 16, "gpu-mem": 0} for i in range(3)}
SUBMITTED = [("app_alice", "alice", "shared"), ("app_bob", "bob", "shared"), ("app_old", "dave", "old"),
             ("app_carol", "carol", None)]


def call(svc: CoreService, **msg) -> dict:
    reply = messages.call(svc, **msg)
    assert reply["ok"], reply
    return reply


def run_apps(svc: CoreService) -> tuple[dict, list]:
    """Submits the apps, lets the core assign their asks and YARN start them: YARN's state."""
    call(svc, type="snapshot", epoch=1, resources=TYPES, apps=[], containers=[], asks=[],
         nodes=[{"node": n, "capacity": c, "rack": "/r"} for n, c in NODES.items()])
    queues = {}
    for app, user, queue in SUBMITTED:
        placed = submit(svc, app, user, queue, epoch=1)
        assert placed["accepted"], placed
        queues[app] = (user, placed["queue"])
    asks = [[i, 1 + i, app, 1, 0, "*", True, 1024 * (1 + i % 2), 1 + i, 0] for i, app in enumerate(queues)]
    rows = []
    for a in schedule(svc, epoch=1, nodes=list(NODES), asks=asks)["assignments"]:
        rows.append([f"c_{len(rows)}", a["app"], a["node"], a["priority"], a["allocation_id"], a["assignment_id"],
                     *(a["resources"][t] for t in TYPES)])
    call(svc, type="schedule", epoch=1, seq=messages.next_seq(svc), started=rows)
    assert len(rows) == 10 and {r[1] for r in rows} == set(queues)
    return queues, rows


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_after_the_file_changed_a_restarted_core_counts_every_container_where_yarn_runs_it(tmp_path, change):
    path = tmp_path / "queues.yaml"
    path.write_text(BEFORE)
    queues, rows = run_apps(CoreService(path))
    assert queues["app_carol"][1] == "root.users.carol", "placed by the user rule, in a queue it created"
    text, misplaced = CHANGES[change]
    path.write_text(text)
    svc = CoreService(path)  # the core restarted: the new file, then YARN's snapshot
    reply = call(svc, type="snapshot", epoch=2, resources=TYPES,
                 nodes=[{"node": n, "capacity": c, "rack": "/r"} for n, c in NODES.items()],
                 apps=[{"app": a, "user": u, "queue": q, "groups": []} for a, (u, q) in queues.items()],
                 containers=[r[:5] + [None] + r[6:] for r in rows], asks=[], counts=[])
    core = svc.core
    assert {a: core.apps[a].queue.path for a in queues} == {a: q for a, (_, q) in queues.items()}
    for node in NODES:
        assert core.nodes[node].allocated == _sum(r for r in rows if r[2] == node), node
    for queue in {q for _, q in queues.values()}:
        assert core.queues[queue].usage == _sum(r for r in rows if queues[r[1]][1] == queue), queue
    assert core.root.usage == _sum(rows) and len(core.containers) == len(rows)
    assert core.counters["apps_recovered_misplaced"] == len(misplaced)
    listed = {q["name"]: q for q in reply["queues"]}
    for app in misplaced:  # the shim learns of a queue the file lacks: draining, its app still in it
        assert queues[app][1] in listed
    check_accounting(core)


def test_an_app_recovered_after_an_rm_restart_keeps_its_queue_too(tmp_path):
    path = tmp_path / "queues.yaml"
    path.write_text(CHANGES["a queue removed"][0])
    svc = CoreService(path)
    call(svc, type="snapshot", epoch=1, resources=TYPES, apps=[], containers=[], asks=[],
         nodes=[{"node": "n0:1", "capacity": NODES["n0:1"], "rack": "/r"}])
    # The RM restarted: YARN recovers the app in root.old (its queue before), then its container.
    call(svc, type="schedule", epoch=1, seq=messages.next_seq(svc),
         deltas=[{"op": "app_added", "app": "app_old", "user": "dave", "queue": "root.old", "groups": []}],
         started=[["c_1", "app_old", "n0:1", 1, 0, None, 2048, 2, 0]])
    q = svc.core.queues["root.old"]
    assert svc.core.apps["app_old"].queue is q and q.draining
    assert q.usage == (2048, 2, 0) and svc.core.nodes["n0:1"].allocated == (2048, 2, 0)
    check_accounting(svc.core)


def _sum(rows) -> tuple:
    total = [0, 0, 0]
    for r in rows:
        for i, x in enumerate(r[6:]):
            total[i] += x
    return tuple(total)


def test_a_file_naming_a_resource_type_the_cluster_lacks_still_schedules_after_a_snapshot(tmp_path):
    """check-config cannot know the cluster's types: a file weighting gpu-mem, started on a cluster
    without it, once made every snapshot fail and the shim resync for ever. The settings the cluster
    cannot honour are left out, said in the log and in /v1/health, and the rest schedules."""
    path = tmp_path / "queues.yaml"
    path.write_text("""
resources: [memory-mb, vcores, gpu-mem]
queues:
  root:
    children:
      a: {weight: {gpu-mem: 3, vcores: 2}, min: {gpu-mem: 1024}, max: {gpu-mem: 2048, vcores: 8}}
      b: {}
""")
    svc = CoreService(path)
    call(svc, type="snapshot", epoch=1, resources=["memory-mb", "vcores"], apps=[], containers=[], asks=[],
         nodes=[{"node": "n1:1", "capacity": {"memory-mb": 8192, "vcores": 16}, "rack": "/r"}])
    assert sorted(svc.config_warnings) == [
        "queues.root.children.a.max.gpu-mem: ignored, the cluster has no resource type gpu-mem",
        "queues.root.children.a.min.gpu-mem: ignored, the cluster has no resource type gpu-mem",
        "queues.root.children.a.weight.gpu-mem: ignored, the cluster has no resource type gpu-mem",
        "resources: gpu-mem: ignored, the cluster has no resource type gpu-mem"]
    a = svc.core.queues["root.a"].spec
    assert a.weight == {"vcores": 2.0} and a.min == {} and a.max == {"vcores": 8}
    assert submit(svc, "app_a", "u", "a", epoch=1)["accepted"]
    got = schedule(svc, epoch=1, asks=[[1, 20, "app_a", 1, 0, "*", True, 512, 1]])["assignments"]
    got += schedule(svc, epoch=1)["assignments"]
    assert sum(x["resources"]["vcores"] for x in got) == 8, "a's vcores max still holds"
    check_accounting(svc.core)
    # a reload is checked against the cluster it would run on: the same file is refused there
    reply = call(svc, type="reload", epoch=1)
    assert reply["accepted"] is False and any("gpu-mem: unknown resource type" in e for e in reply["errors"])


def test_a_resync_restores_each_users_usage_running_and_waiting_apps_in_a_leaf_with_user_limits(tmp_path):
    path = tmp_path / "queues.yaml"
    path.write_text("queues: {root: {children: {research: {user-limits: {max-running-apps: 1, "
                    "users: {alice: {weight: 2, max-running-apps: 2}}}}}}}\n")
    node = {"node": "n0:1", "capacity": NODES["n0:1"], "rack": "/r"}
    live = CoreService(path)
    call(live, type="snapshot", epoch=1, resources=TYPES, apps=[], containers=[], asks=[], nodes=[node])
    apps = [("a1", "alice"), ("b1", "bob"), ("a2", "alice"), ("a3", "alice"), ("b2", "bob")]
    for app, user in apps:
        assert submit(live, app, user, "research", epoch=1)["accepted"]
    asks = [[i, 1 + i, app, 1, 0, "*", True, 1024, 1, 0] for i, (app, _) in enumerate(apps)]
    rows = [[f"c_{i}", a["app"], a["node"], a["priority"], a["allocation_id"], None,
             *(a["resources"][t] for t in TYPES)]
            for i, a in enumerate(schedule(live, epoch=1, nodes=["n0:1"], asks=asks)["assignments"])]
    assert {r[1] for r in rows} == {"a1", "a2", "b1"}  # a3 and b2 wait for their users' max-running-apps
    restarted = CoreService(path)
    call(restarted, type="snapshot", epoch=2, resources=TYPES, nodes=[node], asks=[], counts=[],
         apps=[{"app": a, "user": u, "queue": "root.research", "groups": []} for a, u in apps], containers=rows)
    want = {n: (u.usage, u.running_apps, len(u.waiting)) for n, u in live.core.queues["root.research"].users.items()}
    got = {n: (u.usage, u.running_apps, len(u.waiting)) for n, u in restarted.core.queues["root.research"].users.items()}
    assert got == want
    assert {a for a, app in restarted.core.apps.items() if app.runnable} == {"a1", "a2", "b1"}
    check_accounting(restarted.core)
