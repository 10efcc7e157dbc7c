"""AM containers are spread: one per node per offer, unless no other node has room for it.

Hadoop's TestRM.testActivatingApplicationAfterAddingNM: two AMs asked for anywhere, two empty
nodes, one heartbeat: one AM starts there, the other waits for the second node's heartbeat."""
from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.helpers import make_core

YAML = """
queues:
  root:
    children:
      a: {max-am-share: 1.0}
"""
AM = {"memory-mb": 1024, "vcores": 1}
TASK = {"memory-mb": 512, "vcores": 1}


def _core(nodes: int, memory: int = 8192):
    return make_core(YAML, {f"n{i}": {"memory-mb": memory, "vcores": 16} for i in range(nodes)})


def _submit_ams(core, n: int) -> list[str]:
    apps = [f"app{i}" for i in range(n)]
    for app in apps:
        assert core.submit_app(app, "u", "root.a").accepted
        core.update_request(app, 0, AM, 1, am=True)
    return apps


def test_a_second_am_waits_for_the_heartbeat_of_another_node_with_room():
    core = _core(2)
    _submit_ams(core, 2)
    first = core.on_heartbeat("n0")
    assert [(a.app_id, a.node_id) for a in first] == [("app0", "n0")]
    assert [(a.app_id, a.node_id) for a in core.on_heartbeat("n1")] == [("app1", "n1")]


def test_the_next_offer_of_the_same_node_takes_the_next_am():
    core = _core(2)
    _submit_ams(core, 2)
    core.on_heartbeat("n0")
    assert [(a.app_id, a.node_id) for a in core.on_heartbeat("n0")] == [("app1", "n0")]


def test_a_call_offering_several_nodes_gives_each_one_am():
    core = _core(3)
    _submit_ams(core, 5)
    got = core.on_nodes(["n0", "n1", "n2"])
    assert sorted(Counter(a.node_id for a in got).values()) == [1, 1, 1]


def test_a_node_takes_every_am_when_no_other_node_has_room():
    core = make_core(YAML, {"n0": {"memory-mb": 8192, "vcores": 16},
                            "small": {"memory-mb": 512, "vcores": 16}})  # too small for an AM
    _submit_ams(core, 3)
    assert [a.node_id for a in core.on_heartbeat("n0")] == ["n0"] * 3


def test_a_nodes_turn_ends_with_its_am_while_another_node_has_room_for_one():
    """Rather than pass over every app waiting for its AM: tasks go on at the node's next offer."""
    core = _core(2)
    assert core.submit_app("t", "u", "root.a").accepted
    core.update_request("t", 1, TASK, 4)
    _submit_ams(core, 1)
    assert [a.app_id for a in core.on_heartbeat("n0")] == ["t", "app0"]  # fair order; then the turn ends
    assert [a.app_id for a in core.on_heartbeat("n0")] == ["t"] * 3


def test_a_node_alone_with_room_takes_its_am_and_tasks_in_one_offer():
    core = make_core(YAML, {"n0": {"memory-mb": 8192, "vcores": 16}})
    assert core.submit_app("t", "u", "root.a").accepted
    core.update_request("t", 1, TASK, 4)
    _submit_ams(core, 2)
    assert sorted(a.app_id for a in core.on_heartbeat("n0")) == ["app0", "app1"] + ["t"] * 4


def test_tasks_are_not_spread():
    core = _core(2)
    assert core.submit_app("t", "u", "root.a").accepted
    core.update_request("t", 1, TASK, 6)
    assert len(core.on_heartbeat("n0")) == 6


@settings(max_examples=60, deadline=None)
@given(memories=st.lists(st.sampled_from([512, 1024, 2048, 4096]), min_size=1, max_size=5),
       ams=st.integers(1, 12), offered=st.integers(1, 5))
def test_a_node_gets_two_ams_in_one_call_only_if_no_other_node_has_room(memories, ams, offered):
    core = make_core(YAML, {f"n{i}": {"memory-mb": m, "vcores": 16} for i, m in enumerate(memories)})
    _submit_ams(core, ams)
    nodes = list(core.nodes)[:offered]
    got = core.on_nodes(nodes)
    free = {n.id: n.capacity[0] - n.allocated[0] for n in core.nodes.values()}
    for node_id, k in Counter(a.node_id for a in got).items():
        if k > 1:  # rooms only shrink within a call: none had room when the second AM was placed
            assert all(f < AM["memory-mb"] for n, f in free.items() if n != node_id), (node_id, free)
    # no AM left waiting while an offered node that got none has room for it
    waiting = ams - len(got)
    placed_on = {a.node_id for a in got}
    if waiting:
        assert all(free[n] < AM["memory-mb"] for n in nodes if n not in placed_on), (free, placed_on)
