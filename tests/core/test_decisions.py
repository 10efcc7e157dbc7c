"""Heartbeat decisions: limits, ordering, locality, reservations, and the event contract."""
from __future__ import annotations

import logging
from collections import Counter

import pytest

from scheduler import SchedulerCore, parse_config
from tests.core.helpers import make_core, settle

NODE = {"vcores": 8, "memory-mb": 8192}


def two_queue_core(extra_a: str = "", extra_b: str = "", nodes=None, top: str = "") -> SchedulerCore:
    yaml = (f"{top}queues:\n  root:\n    children:\n"
            f"      a: {{{extra_a}}}\n      b: {{{extra_b}}}\n")
    return make_core(yaml, nodes or {"n1": NODE})


def submit(core, app, queue, shape, count, priority=1, **kw):
    assert core.submit_app(app, "u", queue).accepted
    core.update_request(app, priority, shape, count, **kw)


def test_a_heartbeat_assigns_several_containers_until_nothing_fits():
    core = two_queue_core()
    submit(core, "x", "a", {"vcores": 1, "memory-mb": 1024}, 100)
    got = core.on_heartbeat("n1", now=0)
    assert len(got) == 8
    assert core.on_heartbeat("n1", now=0) == []


def test_min_is_served_first_then_weights():
    core = two_queue_core(extra_a="weight: 10", extra_b="min: {vcores: 4}")
    submit(core, "x", "a", {"vcores": 1, "memory-mb": 1024}, 100)
    submit(core, "y", "b", {"vcores": 1, "memory-mb": 1024}, 100)
    got = core.on_heartbeat("n1", now=0)
    # b is below its min of 4 vcores: it gets 4 first despite a's weight 10; the rest goes by weight
    assert [a.app_id for a in got[:4]] == ["y"] * 4
    assert Counter(a.app_id for a in got) == {"y": 4, "x": 4}


def test_max_absolute_and_percentage_are_never_exceeded():
    nodes = {"n1": NODE, "n2": NODE}
    core = two_queue_core(extra_a="max: {vcores: 3}", extra_b="max: '25%'", nodes=nodes)
    submit(core, "x", "a", {"vcores": 1, "memory-mb": 512}, 100)
    submit(core, "y", "b", {"vcores": 1, "memory-mb": 512}, 100)
    settle(core)
    q = core.snapshot()["queues"]
    assert q["root.a"]["usage"]["vcores"] == 3
    assert q["root.b"]["usage"]["vcores"] == 4  # 25% of 16 vcores


def test_max_running_apps_holds_apps_back_until_one_finishes():
    core = two_queue_core(extra_a="max-running-apps: 1")
    submit(core, "first", "a", {"vcores": 1, "memory-mb": 512}, 2)
    placement = core.submit_app("second", "u", "a")
    assert placement.accepted and "max-running-apps" in placement.reason
    core.update_request("second", 1, {"vcores": 1, "memory-mb": 512}, 2)
    assert {a.app_id for a in settle(core)} == {"first"}
    core.remove_app("first")
    assert {a.app_id for a in settle(core)} == {"second"}


def test_fifo_leaf_serves_apps_in_submission_order_and_drf_leaf_interleaves():
    for order, expected in (("fifo", ["p", "p", "p", "p"]), ("drf", ["p", "q", "p", "q"])):
        core = two_queue_core(extra_a=f"order: {order}", nodes={"n1": {"vcores": 4, "memory-mb": 8192}})
        submit(core, "p", "a", {"vcores": 1, "memory-mb": 512}, 10)
        submit(core, "q", "a", {"vcores": 1, "memory-mb": 512}, 10)
        assert [a.app_id for a in core.on_heartbeat("n1", now=0)] == expected


def test_a_queue_whose_request_does_not_fit_this_node_does_not_block_others():
    core = two_queue_core(nodes={"small": {"vcores": 2, "memory-mb": 2048}, "big": {"vcores": 16, "memory-mb": 65536}})
    submit(core, "huge", "a", {"vcores": 8, "memory-mb": 32768}, 1)
    submit(core, "tiny", "b", {"vcores": 1, "memory-mb": 512}, 2)
    got = core.on_heartbeat("small", now=0)
    assert [a.app_id for a in got] == ["tiny", "tiny"]
    assert [a.app_id for a in core.on_heartbeat("big", now=0)] == ["huge"]


def test_requests_are_served_in_priority_order():
    core = two_queue_core(nodes={"n1": {"vcores": 2, "memory-mb": 8192}})
    submit(core, "x", "a", {"vcores": 1, "memory-mb": 100}, 5, priority=20)
    core.update_request("x", 10, {"vcores": 1, "memory-mb": 200}, 1)
    got = core.on_heartbeat("n1", now=0)
    assert [a.priority for a in got] == [10, 20]


def test_locality_node_rack_and_relax():
    nodes = {"h1": NODE, "h2": NODE}
    core = make_core("queues:\n  root:\n    children:\n      a: {}\n", {})
    core.add_node("h1", NODE, rack="/r1")
    core.add_node("h2", NODE, rack="/r2")
    submit(core, "x", "a", {"vcores": 1, "memory-mb": 512}, 1, relax_locality=False)
    core.update_request("x", 1, {"vcores": 1, "memory-mb": 512}, 1, location="h2")
    core.update_request("x", 1, {"vcores": 1, "memory-mb": 512}, 1, location="/r2", relax_locality=False)
    assert core.on_heartbeat("h1", now=0) == []  # not relaxed: only h2 will do
    [a] = core.on_heartbeat("h2", now=0)
    assert a.node_id == "h2"
    del nodes


def test_starved_big_request_gets_a_reservation_and_is_served():
    def run(timeout: str) -> tuple[bool, dict]:
        core = two_queue_core(nodes={"n1": {"vcores": 4, "memory-mb": 4096}},
                              top=f"reservation: {{starvation-timeout-s: {timeout}}}\n")
        submit(core, "small", "a", {"vcores": 1, "memory-mb": 1024}, 10_000)
        running = [a.assignment_id for a in core.on_heartbeat("n1", now=0)]
        submit(core, "big", "b", {"vcores": 4, "memory-mb": 4096}, 1, now=0)
        for t in range(1, 200):  # one small container ends per second and the node refills
            core.container_finished(running.pop(0))
            got = core.on_heartbeat("n1", now=float(t))
            if any(a.app_id == "big" for a in got):
                return True, core.counters
            running += [a.assignment_id for a in got]
        return False, core.counters

    served, counters = run("null")
    assert not served and counters["reservations_made"] == 0
    served, counters = run("30")
    assert served and counters["reservations_made"] == 1 and counters["reservations_satisfied"] == 1


def test_reservation_is_dropped_when_the_request_is_withdrawn():
    core = two_queue_core(nodes={"n1": {"vcores": 4, "memory-mb": 4096}},
                          top="reservation: {starvation-timeout-s: 5}\n")
    submit(core, "small", "a", {"vcores": 1, "memory-mb": 1024}, 100)
    running = [a.assignment_id for a in core.on_heartbeat("n1", now=0)]
    submit(core, "big", "b", {"vcores": 4, "memory-mb": 4096}, 1, now=0)
    assert core.on_heartbeat("n1", now=0) == []  # b is first in fair order from now on
    core.container_finished(running.pop())
    assert core.on_heartbeat("n1", now=10) == []  # reserved now: the small app may not refill
    assert core.snapshot()["nodes"]["n1"]["reserved_for"].startswith("big")
    core.update_request("big", 1, {"vcores": 4, "memory-mb": 4096}, 0)
    assert core.snapshot()["nodes"]["n1"]["reserved_for"] is None
    assert [a.app_id for a in core.on_heartbeat("n1", now=11)] == ["small"]


def test_assignment_confirmation_refusal_and_repeated_finish():
    core = two_queue_core()
    submit(core, "x", "a", {"vcores": 4, "memory-mb": 4096}, 3)
    first, second = core.on_heartbeat("n1", now=0)
    core.container_started("container_1", "x", "n1", {"vcores": 4, "memory-mb": 4096},
                           assignment_id=first.assignment_id)
    core.assignment_refused(second.assignment_id, "request no longer outstanding")
    snap = core.snapshot()
    assert snap["queues"]["root.a"]["usage"] == {"memory-mb": 4096, "vcores": 4}
    assert snap["apps"]["x"]["pending"] == 2  # the refused container's ask is given back
    core.container_finished("container_1")
    core.container_finished("container_1")  # repeated: harmless
    assert core.snapshot()["queues"]["root.a"]["usage"] == {"memory-mb": 0, "vcores": 0}
    assert len(core.on_heartbeat("n1", now=1)) == 2


def test_an_assignment_the_shim_deferred_is_given_back_quietly_and_a_refused_one_with_a_warning(caplog):
    core = two_queue_core()
    submit(core, "x", "a", {"vcores": 4, "memory-mb": 4096}, 3)
    first, second = core.on_heartbeat("n1", now=0)
    with caplog.at_level(logging.DEBUG, logger="yarn_drf.core"):
        core.assignment_refused(first.assignment_id, "deferred: a queue below asked for an AM since the call's collection")
        core.assignment_refused(second.assignment_id, "request no longer outstanding")
    assert [(r.levelno, "deferred" in r.getMessage()) for r in caplog.records] == [
        (logging.DEBUG, True), (logging.WARNING, False)]
    assert core.snapshot()["apps"]["x"]["pending"] == 3  # both given back


def test_unknown_and_malformed_events_are_counted_and_ignored():
    core = two_queue_core()
    core.update_request("ghost", 1, {"vcores": 1}, 1)
    core.container_started("c1", "ghost", "n1", {"vcores": 1})
    core.on_heartbeat("no-such-node")
    core.assignment_refused("a999", "x")
    core.remove_node("no-such-node")
    core.submit_app("x", "u", "a")
    core.update_request("x", 1, {"bogus-resource": 1}, 1)
    core.update_request("x", 1, {"vcores": 1}, -3)
    core.container_finished("never-existed")  # finishing an unknown container is a harmless repeat
    assert core.counters["ignored_events"] == 7
    assert core.snapshot()["apps"]["x"]["pending"] == 0


def test_node_removal_frees_its_containers_and_capacity():
    core = two_queue_core(nodes={"n1": NODE, "n2": NODE})
    submit(core, "x", "a", {"vcores": 8, "memory-mb": 1024}, 2)
    got = settle(core)
    lost = core.remove_node(got[0].node_id)
    assert lost == [got[0].assignment_id]
    snap = core.snapshot()
    assert snap["capacity"] == {"memory-mb": 8192, "vcores": 8}
    assert snap["queues"]["root.a"]["usage"]["vcores"] == 8


def test_placement_rules_acls_and_dynamic_queues():
    yaml = """
placement:
  - {rule: specified}
  - {rule: user, parent: root.users, create: true}
  - {rule: reject}
queues:
  root:
    submit-acl: " "
    admin-acl: "ops"
    children:
      prod: {submit-acl: "alice etl"}
      users: {submit-acl: "*", children: {bob: {}}}
"""
    core = make_core(yaml, {"n1": NODE})
    assert core.submit_app("1", "alice", "prod").queue == "root.prod"
    assert core.submit_app("2", "carol", "prod", groups=["etl"]).queue == "root.prod"
    denied = core.submit_app("3", "mallory", "prod", groups=["dev"])
    assert not denied.accepted and "may not submit to queue 'root.prod'" in denied.reason
    assert core.submit_app("4", "ops", "prod").accepted  # admins may submit anywhere
    assert core.submit_app("5", "bob", None).queue == "root.users.bob"
    created = core.submit_app("6", "dave.smith", "nowhere")
    assert created.queue == "root.users.dave_dot_smith"
    assert core.snapshot()["queues"]["root.users.dave_dot_smith"]["dynamic"]


def test_no_rule_placing_the_app_rejects_it_with_every_reason():
    core = make_core("placement: [{rule: specified}]\nqueues: {root: {children: {a: {}}}}\n", {})
    result = core.submit_app("x", "u", "b")
    assert not result.accepted
    assert "specified: queue 'root.b' does not exist" in result.reason


def test_reload_changes_weights_at_once_and_drains_removed_queues():
    core = two_queue_core(nodes={"n1": {"vcores": 12, "memory-mb": 65536}})
    submit(core, "x", "a", {"vcores": 1, "memory-mb": 512}, 100)
    submit(core, "y", "b", {"vcores": 1, "memory-mb": 512}, 100)
    core.on_heartbeat("n1", now=0)  # 6 and 6
    summary = core.reload(parse_config("queues: {root: {children: {a: {weight: 3}}}}\n"))
    assert summary["removed"] == [] and summary["draining"] == ["root.b"] and summary["changed"] == ["root.a"]
    assert not core.submit_app("z", "u", "b").accepted  # draining: no new apps
    for cid in list(core.containers):
        core.container_finished(cid)
    got = core.on_heartbeat("n1", now=1)
    counts = Counter(a.app_id for a in got)
    assert counts["x"] == 3 * counts["y"]  # the new weight took effect at the next heartbeat


def test_reload_refuses_to_turn_a_busy_leaf_into_a_parent_and_keeps_the_old_config():
    core = two_queue_core()
    submit(core, "x", "a", {"vcores": 1, "memory-mb": 512}, 1)
    with pytest.raises(Exception, match="cannot become a parent"):
        core.reload(parse_config("queues: {root: {children: {a: {children: {c: {}}}}}}\n"))
    assert core.submit_app("y", "u", "b").queue == "root.b"


def test_capacity_changes_rescale_shares():
    core = two_queue_core()
    submit(core, "x", "a", {"vcores": 4, "memory-mb": 1024}, 1)
    core.on_heartbeat("n1", now=0)
    assert core.snapshot()["queues"]["root.a"]["dominant_share"] == 0.5
    core.add_node("n2", NODE)
    assert core.snapshot()["queues"]["root.a"]["dominant_share"] == 0.25


def test_blacklisted_nodes_and_racks_get_nothing_of_the_app():
    core = make_core("queues:\n  root:\n    children:\n      a: {}\n", {})
    core.add_node("h1", NODE, rack="/r1")
    core.add_node("h2", NODE, rack="/r2")
    core.add_node("h3", NODE, rack="/r3")
    submit(core, "x", "a", {"vcores": 1, "memory-mb": 512}, 3)
    core.set_blacklist("x", ["h1", "/r2"])
    assert core.on_heartbeat("h1", now=0) == [] and core.on_heartbeat("h2", now=0) == []
    assert len(core.on_heartbeat("h3", now=0)) == 3
