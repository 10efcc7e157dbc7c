"""The queue list Java holds stays the core's whole tree when the service sends only the new
queues' entries ("queues_built") to add to the list it sent last: after any sequence of schedule calls
that create queues (placement with create, apps recovered into queues the file lacks), reloads
between trees and resyncs, the list Java holds (the last whole list, each reply's queues_built
applied to it) equals the list built from the whole tree (the same entries; new queues come after
the older ones, each after its parent): so a reply carries the change whenever the tree changed, a draining queue that placement re-creates at its own
path included (the service used to miss that one: it compared the number of queues)."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.core.test_placement_view import CONFIGS, NAMES, PATHS
from yarn_bridge import protocol
from yarn_bridge.service import CoreService

EPOCH = 1
steps = st.lists(st.one_of(
    st.tuples(st.just("submit"), st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from([None, *NAMES, *PATHS])),
                                          max_size=4)),
    st.tuples(st.just("recover"), st.sampled_from(NAMES), st.sampled_from(PATHS)),
    st.tuples(st.just("reload"), st.integers(0, len(CONFIGS) - 1)),
    st.tuples(st.just("snapshot"),),
), max_size=12)


def rebuilt(service: CoreService) -> list[dict]:
    core = service.core
    return [protocol.queue_entry(p, core.queues[p]) for p in sorted(core.queues, key=lambda p: (p.count("."), p))]


def call(service: CoreService, **fields) -> dict:
    reply = json.loads(service.handle(json.dumps({"v": protocol.VERSION, "epoch": service.epoch or EPOCH, **fields})))
    assert reply["ok"], reply
    return reply


def applied(java: list[dict], reply: dict) -> list[dict]:
    """What the shim's tree holds after a schedule reply (QueueTree.update, then QueueTree.grow):
    the whole list if it has one; then each entry of queues_built added, or replacing the queue's
    entry, in order, a new queue's parent already there; then each name of queues_created, a
    created leaf's entry made from its parent's (created_entry)."""
    out = {q["name"]: q for q in reply.get("queues", java)}
    for entry in reply.get("queues_built", []):
        name = entry["name"]
        assert name in out or name.rsplit(".", 1)[0] in out, f"{name} before its parent"
        out[name] = entry
    for parent, names in reply.get("queues_created", {}).items():
        assert names and not out[parent]["leaf"], f"created under {parent}, which the shim has as a leaf"
        for name in names:
            out[f"{parent}.{name}"] = created_entry(out[parent], f"{parent}.{name}")
    return list(out.values())


def created_entry(parent: dict, path: str) -> dict:
    """The entry the shim makes for a leaf named in queues_created (QueueSettings.createdUnder):
    weight 1, no max, empty ACLs, its parent's max_container, labels and default_label."""
    return {"name": path, "leaf": True, "weight": 1.0, "max": {}, "max_fraction": None, "submit_acl": "",
            "admin_acl": "", "draining": False,
            **{field: parent[field] for field in ("max_container", "labels", "default_label") if field in parent}}


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps)
# a draining queue re-created at its own path: alice's app keeps root.users.alice after the reload
# drops it, and her next app is placed there by `user, create: true`
@example([("submit", [("alice", None)]), ("reload", 1), ("submit", [("alice", None)])])
def test_the_list_java_last_received_equals_the_whole_tree_after_any_sequence(tmp_path, sequence):
    queues = tmp_path / "queues.yaml"
    queues.write_text(CONFIGS[0])
    service = CoreService(queues)
    java = call(service, type="snapshot", resources=["memory-mb", "vcores", "gpu-mem"])["queues"]
    seq, apps = 0, 0
    for step in sequence:
        seq += 1
        before = len(service.core.queues)
        if step[0] == "submit":
            subs = [{"app": f"application_1_{apps + i:04d}", "user": user, "groups": [],
                     **({"queue": queue} if queue else {})} for i, (user, queue) in enumerate(step[1])]
            apps += len(subs)
            reply = call(service, type="schedule", seq=seq, submissions=subs)
        elif step[0] == "recover":
            apps += 1
            reply = call(service, type="schedule", seq=seq, deltas=[
                {"op": "app_added", "app": f"application_1_{apps:04d}", "user": step[1], "queue": step[2]}])
        elif step[0] == "reload":
            queues.write_text(CONFIGS[step[1]])
            reply = call(service, type="reload")
            if reply["accepted"]:
                java = reply["queues"]
            continue
        else:
            reply = call(service, type="snapshot", resources=["memory-mb", "vcores", "gpu-mem"])
            java = reply["queues"]
            continue
        if len(service.core.queues) > before:
            assert ("queues_built" in reply or "queues_created" in reply) and "queues" not in reply, step
        java = applied(java, reply)
        whole = rebuilt(service)
        assert {q["name"]: q for q in java} == {q["name"]: q for q in whole} and len(java) == len(whole), step
        names = [q["name"] for q in java]
        assert all(n.rsplit(".", 1)[0] in names[:i] for i, n in enumerate(names) if n != "root"), names


def test_the_leaves_a_call_creates_are_named_under_their_parent_and_sent_no_entry_of_their_own(tmp_path):
    """(10,000 new users: a reply of 10,000 names, not 10,000 entries; the property above checks
    that the shim's rule makes each entry the core would have sent.)"""
    queues = tmp_path / "queues.yaml"
    queues.write_text(CONFIGS[0])
    service = CoreService(queues)
    call(service, type="snapshot", resources=["memory-mb", "vcores", "gpu-mem"])
    users = [f"u{i:03d}" for i in range(200)]
    reply = call(service, type="schedule", seq=1, submissions=[
        {"app": f"application_1_{i:04d}", "user": user, "groups": []} for i, user in enumerate(users)])
    assert reply["queues_created"] == {"root.users": users} and "queues_built" not in reply
    assert len(service.queue_list()) == len(service.core.queues)  # (the whole list, made when asked for)
