"""The leaves placement creates share one spec (config.CREATED) and, under one parent, the limits
worked out for the first of them (QueueTree._sibling_limits): every setting in force of such a leaf
equals that of a leaf built the long way (its own spec, its limits worked out for it alone) under
the same parent, for random parents and settings above it, whether it was created before the
cluster's capacity changed, after, or while the core had not yet recomputed its limits for it."""
from __future__ import annotations

import yaml
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from scheduler import ConfigError, SchedulerCore, parse_config
from scheduler.config import CREATED, QueueSpec
from scheduler.model import Queue
from scheduler.placement import Target
from yarn_bridge import protocol

TYPES = ["memory-mb", "vcores", "gpu-mem"]
USERS = ["alice", "bob", "carol", "dave"]
GROUPS = [[], ["ops"], ["ml", "ops"]]

weights = st.one_of(st.sampled_from([1, 2.5, 0.1]), st.fixed_dictionaries({"memory-mb": st.sampled_from([1, 3])}))
maxes = st.one_of(st.just("40%"), st.fixed_dictionaries({}, optional={"memory-mb": st.sampled_from([4096, "50%"]),
                                                                       "vcores": st.sampled_from([8, "25%"])}))
settings_of = st.fixed_dictionaries({}, optional={
    "weight": weights,
    "max": maxes.filter(bool),  # (a whole amount, or a share of the cluster)
    "min": st.fixed_dictionaries({"vcores": st.sampled_from([1, 4])}),
    "max-container": st.fixed_dictionaries({}, optional={"memory-mb": st.sampled_from([2048, 8192]),
                                                         "vcores": st.sampled_from([2, 4])}).filter(bool),
    "max-am-share": st.sampled_from([0.1, 0.5, 1.0]),
    "node-locality-delay-s": st.sampled_from([0, 2.5]),
    "rack-locality-delay-s": st.sampled_from([0, 7]),
    "accessible-node-labels": st.sampled_from([["gpu"], "*", []]),
    "default-node-label-expression": st.sampled_from(["gpu"]),
    "submit-acl": st.sampled_from(["alice", "bob ops", "*", " "]),
    "admin-acl": st.sampled_from(["carol", " ml"]),
    "max-running-apps": st.sampled_from([1, 5]),
    "preemptable": st.booleans(),
})


def config_text(root: dict, mid: dict, parent: dict, nested: bool) -> str:
    """root -> [mid ->] users (a parent with settings of its own), placement creating users.<user>."""
    users = {**parent, "children": {}}
    tree = {"mid": {**mid, "children": {"users": users}}} if nested else {"users": users}
    parent_path = "root.mid.users" if nested else "root.users"
    return yaml.safe_dump({
        "resources": TYPES,
        "placement": [{"rule": "user", "parent": parent_path, "create": True}],
        "queues": {"root": {**root, "children": tree}},
    })


def in_force(core: SchedulerCore, q: Queue) -> tuple:
    """What the core holds of a leaf's settings (its queue's own objects: shared functions compare
    by identity within one core), its entry for the shim under its own name, and its ACLs' answers."""
    entry = protocol.queue_entry(q.path, q)
    del entry["name"]
    acl = tuple(bool(core._acl_refusal(q.path, user, groups)) for user in USERS for groups in GROUPS)
    return (q.scale, q.weigh, q.min_inv, q.app_weigh, q.up_raw, q.up, q.max, q.am_share, q.am_limit,
            q.locality_delays, q.labels, q.nested, q.is_leaf, q.max_apps, q.users, q.depth, entry, acl)


def long_way(core: SchedulerCore, parent: Queue, name: str) -> Queue:
    """A leaf of the defaults built as the core built every leaf before the shared spec."""
    return core._build(QueueSpec(path=f"{parent.path}.{name}"), parent)


@settings(max_examples=60, deadline=None)
@given(settings_of, settings_of, settings_of, st.booleans(), st.integers(0, 2))
def test_a_created_leaf_has_every_setting_of_a_leaf_built_the_long_way_under_the_same_parent(
        root, mid, parent_settings, nested, grow_when):
    try:
        config = parse_config(config_text(root, mid, parent_settings, nested))
    except ConfigError:
        assume(False)  # (a default label the queue may not use, and the like)
    core = SchedulerCore(config)
    core.add_node("n1", {"memory-mb": 65536, "vcores": 64, "gpu-mem": 0})
    core.on_nodes(["n1"])  # (the limits at this capacity; no app asks for anything)
    parent = core.queues["root.mid.users" if nested else "root.users"]
    created: list[Queue] = []
    for step, user in enumerate(["u1", "u2", "u3", "u4"]):
        if step == grow_when:  # the capacity changes: the limits of the leaves made so far are stale
            core.add_node(f"n{step + 2}", {"memory-mb": 8192, "vcores": 4, "gpu-mem": 0})
        # (what placement does for a `user, create: true` rule once the ACLs let the user in)
        created.append(core._create_leaf(Target(f"{parent.path}.{user}", True)))
        assert created[-1].spec is CREATED
        # right away, as the core has it now (the capacity may have changed since the limits were made)
        assert in_force(core, created[-1]) == in_force(core, long_way(core, parent, f"ref{step}"))
    core.on_nodes(["n1"])  # (the core recomputes every queue's limits at the new capacity)
    created.append(core._create_leaf(Target(f"{parent.path}.u5", True)))  # (after: none of the stale limits)
    for step, leaf in enumerate(created):
        reference = long_way(core, parent, f"again{step}")
        assert in_force(core, leaf) == in_force(core, reference), leaf.path


def test_the_leaves_created_under_one_parent_share_one_spec_and_their_limits():
    """(What makes a created leaf cheap; the property above says sharing changes nothing.)"""
    core = SchedulerCore(parse_config(config_text({}, {}, {"weight": 2, "max": {"vcores": "50%"}}, False)))
    core.add_node("n1", {"memory-mb": 65536, "vcores": 64, "gpu-mem": 0})
    leaves = [core.queues[core.submit_app(f"app_{u}", u).queue] for u in USERS]
    assert all(q.spec is CREATED and q.path == f"root.users.{u}" for q, u in zip(leaves, USERS))
    assert len({id(q.max) for q in leaves}) == len({id(q.am_limit) for q in leaves}) == 1
