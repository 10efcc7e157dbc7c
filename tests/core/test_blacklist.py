"""Blacklists: the core never places an app's container on a node or rack its AM blacklisted."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.explain import why_pending
from tests.core.helpers import make_core

QUEUES = "reservation: {starvation-timeout-s: 1}\nqueues:\n  root:\n    children:\n      a: {}\n      b: {}\n"
NODE = {"memory-mb": 4096, "vcores": 4}
RACKS = {"h1": "/r1", "h2": "/r1", "h3": "/r2"}


def _core():
    core = make_core(QUEUES, {})
    for node, rack in RACKS.items():
        core.add_node(node, NODE, rack=rack)
    return core


def test_additions_and_removals_change_where_the_app_may_run():
    core = _core()
    assert core.submit_app("x", "u", "root.a").accepted
    core.update_request("x", 1, {"memory-mb": 1024, "vcores": 1}, 2)
    core.update_blacklist("x", additions=["h1", "/r2"])
    assert core.on_heartbeat("h1", now=0) == [] and core.on_heartbeat("h3", now=0) == []
    core.update_blacklist("x", additions=["h2"], removals=["h1"])  # removals after additions
    assert core.apps["x"].blacklist == {"/r2", "h2"}
    assert len(core.on_heartbeat("h1", now=0)) == 2


def test_a_reservation_on_a_node_the_am_then_blacklists_is_let_go():
    core = _core()
    assert core.submit_app("big", "u", "root.a").accepted
    assert core.submit_app("fill", "u", "root.b").accepted
    core.update_request("fill", 1, {"memory-mb": 4096, "vcores": 1}, 3)
    for node in RACKS:
        core.on_heartbeat(node, now=0)
    core.update_request("big", 1, {"memory-mb": 4096, "vcores": 4}, 1, now=0)
    for t in (0, 2, 4):
        core.on_heartbeat("h1", now=t)
    assert core.nodes["h1"].reserved is not None  # starved: h1 held for big
    core.update_blacklist("big", additions=["h1"])
    assert core.nodes["h1"].reserved is None
    fill = next(iter(core.nodes["h1"].containers))
    core.container_finished(fill)
    assert all(a.app_id != "big" for a in core.on_heartbeat("h1", now=5))


def test_why_names_every_blacklisted_node_when_no_other_may_run_it():
    core = _core()
    assert core.submit_app("x", "u", "root.a").accepted
    core.update_request("x", 1, {"memory-mb": 1024, "vcores": 1}, 1)
    core.update_blacklist("x", additions=["/r1", "h3"])
    reasons = why_pending(core, "x")["requests"][0]["reasons"]
    assert [r["code"] for r in reasons] == ["blacklist"]
    assert reasons[0]["nodes"] == ["h1", "h2", "h3"] and "h1, h2, h3" in reasons[0]["message"]


_places = st.sets(st.sampled_from([*RACKS, "/r1", "/r2"]), max_size=3)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["ask", "blacklist", "beat", "finish"]), st.sampled_from(["x", "y"]),
                          _places, _places, st.integers(1, 4), st.sampled_from(list(RACKS))), max_size=50))
def test_no_container_ever_goes_to_a_place_its_app_blacklisted(events):
    core = _core()
    core.submit_app("x", "u", "root.a")
    core.submit_app("y", "u", "root.b")
    now = 0.0
    for kind, app, add, remove, size, node in events:
        now += 1.0
        if kind == "ask":
            core.update_request(app, size, {"memory-mb": 1024 * size, "vcores": size}, size, now=now)
        elif kind == "blacklist":
            core.update_blacklist(app, sorted(add), sorted(remove))
        elif kind == "finish" and core.containers:
            core.container_finished(sorted(core.containers)[size % len(core.containers)])
        for a in core.on_heartbeat(node, now=now):
            banned = core.apps[a.app_id].blacklist
            assert a.node_id not in banned and RACKS[a.node_id] not in banned, (a, banned)
        for n in core.nodes.values():  # nor is a node held for an app that blacklisted it
            if n.reserved is not None:
                assert not {n.id, n.rack} & n.reserved.app.blacklist
