"""Delay scheduling inside the DRF order (scheduler.locality): node-local first, bounded waits
for rack-local and any node, per-queue delays, and YARN's hard relax-locality rule."""
from __future__ import annotations

import pytest

from scheduler import SchedulerCore, parse_config
from scheduler.explain import why_pending

NODE = {"vcores": 4, "memory-mb": 4096}
TASK = {"vcores": 4, "memory-mb": 1024}  # one fills a node's vcores
SMALL = {"vcores": 1, "memory-mb": 512}


def cluster(queues: str = "a: {}\n      b: {}", top: str = "", node_s: float = 2, rack_s: float = 3,
            racks: dict[str, str] | None = None, **kwargs) -> SchedulerCore:
    """h1, h2 in /r1 and h3 in /r2 (node ids host:port, as YARN's), no reservations."""
    yaml = (f"reservation: {{starvation-timeout-s: null}}\n{top}queues:\n  root:\n"
            f"    node-locality-delay-s: {node_s}\n    rack-locality-delay-s: {rack_s}\n"
            f"    children:\n      {queues}\n")
    core = SchedulerCore(parse_config(yaml), **kwargs)
    for host, rack in (racks or {"h1": "/r1", "h2": "/r1", "h3": "/r2"}).items():
        core.add_node(f"{host}:8041", NODE, rack=rack)
    return core


def ask(core: SchedulerCore, app: str, queue: str, count: int, nodes=(), racks=(), shape=None,
        relax: bool = True, now: float = 0.0, priority: int = 1) -> None:
    """A request as a YARN AM sends it: each named host and rack wants `count`, and ANY `count`."""
    if app not in core.apps:
        assert core.submit_app(app, "u", queue).accepted
    shape = shape or TASK
    for host in nodes:
        core.update_request(app, priority, shape, count, location=host, now=now)
    for rack in racks:
        core.update_request(app, priority, shape, count, location=rack, now=now)
    core.update_request(app, priority, shape, count, relax_locality=relax, now=now)


def placed(assignments) -> list[tuple[str, str]]:
    return [(a.app_id, a.node_id.split(":")[0]) for a in assignments]


def fill(core: SchedulerCore, host: str) -> None:
    """Fills the node with a container of a third app in a queue of its own (`c`)."""
    ask(core, f"filler-{host}", "c", 1, nodes=[host], racks=[core.nodes[f"{host}:8041"].rack], relax=False)
    assert placed(core.on_heartbeat(f"{host}:8041", now=0)) == [(f"filler-{host}", host)]


ABC = "a: {}\n      b: {}\n      c: {}"


# ---------------------------------------------------------------- where its turn places it

def test_a_request_naming_a_host_goes_to_that_nodemanager_at_once_when_the_call_offers_it():
    core = cluster()
    ask(core, "x", "a", 1, nodes=["h2"], racks=["/r1"])
    # the call's first node is h1, where x's turn comes: it goes to h2, which the same call offers
    assert placed(core.on_nodes(["h1:8041", "h3:8041", "h2:8041"], now=0)) == [("x", "h2")]


def test_a_request_names_a_node_by_its_host_or_by_its_id():
    core = cluster(node_s=100, rack_s=100)
    ask(core, "x", "a", 1, nodes=["h2:8041"], racks=["/r1"])
    ask(core, "y", "b", 1, nodes=["h3"], racks=["/r2"])
    assert core.on_heartbeat("h1:8041", now=0) == []  # neither is local to h1: both wait
    assert placed(core.on_heartbeat("h2:8041", now=0)) == [("x", "h2")]
    assert placed(core.on_heartbeat("h3:8041", now=0)) == [("y", "h3")]


def test_within_a_call_node_local_comes_before_rack_local_before_any_node_even_past_the_delays():
    core = cluster(ABC, node_s=0, rack_s=0)  # no wait at all: only the call's choice is left
    fill(core, "h1")
    ask(core, "x", "a", 3, nodes=["h1"], racks=["/r1"])
    # h1 is full: the most local node with room is h2 (its rack), then h3 (any)
    assert placed(core.on_nodes(["h3:8041", "h2:8041"], now=0)) == [("x", "h2"), ("x", "h3")]


def test_without_delays_a_request_goes_anywhere_at_once_as_before():
    core = cluster(node_s=0, rack_s=0)
    ask(core, "x", "a", 1, nodes=["h1"], racks=["/r1"])
    assert placed(core.on_heartbeat("h3:8041", now=0)) == [("x", "h3")]


# ---------------------------------------------------------------- bounded waits

def test_it_waits_the_node_delay_for_its_node_then_takes_its_rack_then_after_the_rack_delay_any_node():
    core = cluster(ABC, node_s=2, rack_s=3)
    fill(core, "h1")
    ask(core, "x", "a", 2, nodes=["h1"], racks=["/r1"])
    h2_h3 = ["h2:8041", "h3:8041"]
    assert core.on_nodes(h2_h3, now=10) == []  # first passed over at 10: the clock starts
    assert core.on_nodes(h2_h3, now=11.9) == []
    assert placed(core.on_nodes(h2_h3, now=12)) == [("x", "h2")]  # 2 s: rack-local (h2, not h3)
    # that container was rack-local: the next one waits no node delay, only the rack delay
    assert core.on_nodes(["h3:8041"], now=12) == []
    assert core.on_nodes(["h3:8041"], now=14.9) == []
    assert placed(core.on_nodes(["h3:8041"], now=15)) == [("x", "h3")]


def test_the_clock_starts_when_the_request_is_first_passed_over_not_when_it_asked():
    core = cluster(ABC, node_s=2, rack_s=3)
    fill(core, "h1")
    ask(core, "x", "a", 1, nodes=["h1"], racks=["/r1"], now=0)
    assert core.on_heartbeat("h2:8041", now=50) == []  # its first turn comes late: it still waits
    assert placed(core.on_heartbeat("h2:8041", now=52)) == [("x", "h2")]


def test_while_its_clock_runs_after_the_node_delay_it_is_passed_over_on_other_racks_until_the_rack_delay():
    core = cluster(ABC, node_s=2, rack_s=3)
    fill(core, "h1")
    fill(core, "h2")
    ask(core, "x", "a", 1, nodes=["h1"], racks=["/r1"])
    assert core.on_heartbeat("h3:8041", now=0) == []
    assert core.on_heartbeat("h3:8041", now=4.9) == []  # rack-local allowed since 2, but h3 is not
    assert placed(core.on_heartbeat("h3:8041", now=5)) == [("x", "h3")]


def test_a_node_local_container_brings_the_wait_back_and_an_off_switch_one_keeps_it_relaxed():
    core = cluster(ABC, node_s=2, rack_s=0)
    ask(core, "x", "a", 4, nodes=["h1"], racks=["/r1"])
    assert placed(core.on_heartbeat("h1:8041", now=0)) == [("x", "h1")]
    assert core.on_heartbeat("h3:8041", now=1) == []  # after a node-local container it waits again
    assert placed(core.on_heartbeat("h3:8041", now=3)) == [("x", "h3")]  # waited 2 s (from 1)
    assert core.snapshot()["nodes"]["h2:8041"]["allocated"] == {"memory-mb": 0, "vcores": 0}
    assert placed(core.on_heartbeat("h2:8041", now=3)) == [("x", "h2")]  # relaxed: no new wait


def test_a_request_that_starts_waiting_anew_waits_for_locality_anew():
    core = cluster(ABC, node_s=2, rack_s=0)
    fill(core, "h1")
    ask(core, "x", "a", 1, nodes=["h1"], racks=["/r1"])
    core.on_heartbeat("h3:8041", now=0)
    assert placed(core.on_heartbeat("h3:8041", now=2)) == [("x", "h3")]  # relaxed to any node
    core.update_request("x", 1, TASK, 1, now=5)  # one more, after its count was 0
    assert core.on_heartbeat("h2:8041", now=5) == []
    assert placed(core.on_heartbeat("h2:8041", now=7)) == [("x", "h2")]


def test_a_request_naming_only_racks_waits_for_its_rack_not_for_a_node():
    core = cluster(ABC, node_s=100, rack_s=3)
    ask(core, "x", "a", 2, racks=["/r2"])
    assert core.on_heartbeat("h1:8041", now=0) == []
    assert placed(core.on_heartbeat("h3:8041", now=0)) == [("x", "h3")]  # rack-local at once
    assert core.on_heartbeat("h1:8041", now=1) == []  # the container stopped its clock: it starts again
    assert placed(core.on_heartbeat("h1:8041", now=4)) == [("x", "h1")]  # any node 3 s later


def test_a_request_whose_named_nodes_want_nothing_more_waits_for_nothing():
    core = cluster(ABC, node_s=100, rack_s=100)
    ask(core, "x", "a", 2, nodes=["h1"], racks=["/r1"])
    core.update_request("x", 1, TASK, 0, location="h1")
    core.update_request("x", 1, TASK, 0, location="/r1")
    assert placed(core.on_heartbeat("h3:8041", now=0)) == [("x", "h3")]


# ---------------------------------------------------------------- YARN's hard rule

def test_relax_locality_false_is_never_placed_off_its_nodes_and_racks_however_long_it_waits():
    core = cluster(ABC, node_s=0, rack_s=0)
    fill(core, "h2")
    ask(core, "x", "a", 3, nodes=["h2"], racks=["/r1"], relax=False)
    core.update_request("x", 1, TASK, 3, location="/r1", relax_locality=False)  # not even h1 in its rack
    for t in (0, 10, 1000):
        assert core.on_nodes(["h1:8041", "h3:8041"], now=t) == []
    reasons = why_pending(core, "x")["requests"][0]["reasons"]
    assert [r["code"] for r in reasons] == ["no-node-room", "locality"]


def test_relax_locality_false_on_any_with_a_relaxed_rack_takes_its_rack_after_the_node_delay_never_others():
    core = cluster(ABC, node_s=2, rack_s=0)
    fill(core, "h1")
    ask(core, "x", "a", 2, nodes=["h1"], racks=["/r1"], relax=False)
    assert core.on_nodes(["h3:8041", "h2:8041"], now=0) == []
    assert placed(core.on_nodes(["h3:8041", "h2:8041"], now=2)) == [("x", "h2")]
    assert core.on_nodes(["h3:8041"], now=500) == []


# ---------------------------------------------------------------- the DRF order

def test_a_queue_waiting_for_locality_is_passed_over_and_takes_its_turn_back_after_the_delay():
    core = cluster(ABC, node_s=2, rack_s=0)
    fill(core, "h1")
    ask(core, "x", "a", 10, nodes=["h1"], racks=["/r1"], shape=SMALL)  # a: waits for h1
    ask(core, "y", "b", 10, shape=SMALL)                                 # b: any node
    got = core.on_heartbeat("h3:8041", now=0, limit=2)
    assert placed(got) == [("y", "h3"), ("y", "h3")]  # a, lower, is passed over while it waits
    # after the delay a is the lowest again and takes every turn until it catches up with b
    assert placed(core.on_heartbeat("h3:8041", now=2)) == [("x", "h3"), ("x", "h3")]  # (h3 is full)
    shares = core.snapshot()["queues"]
    assert shares["root.a"]["usage"] == shares["root.b"]["usage"]


def test_per_queue_delays_and_inheritance_from_the_parent():
    core = cluster("quick: {node-locality-delay-s: 0, rack-locality-delay-s: 0}\n"
                   "      team:\n        rack-locality-delay-s: 1\n        children:\n"
                   "          patient: {node-locality-delay-s: 5}\n          inherits: {}\n      c: {}",
                   node_s=2, rack_s=3)
    assert core.queues["root.team.patient"].locality_delays == (5.0, 1.0)
    assert core.queues["root.team.inherits"].locality_delays == (2.0, 1.0)
    assert core.queues["root.quick"].locality_delays == (0.0, 0.0)
    assert core.queues["root.c"].locality_delays == (2.0, 3.0)
    fill(core, "h1")
    for app, queue in (("q", "quick"), ("p", "team.patient"), ("i", "team.inherits")):
        ask(core, app, queue, 1, nodes=["h1"], racks=["/r1"], shape=SMALL)
    assert placed(core.on_heartbeat("h3:8041", now=0)) == [("q", "h3")]
    assert placed(core.on_heartbeat("h3:8041", now=2.9)) == []
    assert placed(core.on_heartbeat("h3:8041", now=3)) == [("i", "h3")]  # 2 + 1
    assert placed(core.on_heartbeat("h3:8041", now=5.9)) == []
    assert placed(core.on_heartbeat("h3:8041", now=6)) == [("p", "h3")]  # 5 + 1


def test_defaults_without_locality_keys_are_one_second_each():
    core = SchedulerCore(parse_config("queues: {root: {children: {a: {}}}}\n"))
    assert core.queues["root.a"].locality_delays == (1.0, 1.0)


def test_a_reload_applies_new_delays_to_the_requests_waiting():
    core = cluster(ABC, node_s=100, rack_s=100)
    fill(core, "h1")
    ask(core, "x", "a", 1, nodes=["h1"], racks=["/r1"])
    assert core.on_heartbeat("h3:8041", now=0) == []
    core.reload(parse_config("reservation: {starvation-timeout-s: null}\nqueues:\n  root:\n"
                             "    node-locality-delay-s: 1\n    rack-locality-delay-s: 1\n"
                             "    children: {a: {}, b: {}, c: {}}\n"))
    assert placed(core.on_heartbeat("h3:8041", now=2)) == [("x", "h3")]


def test_a_starving_request_waiting_for_its_node_does_not_reserve_another_before_its_delay():
    core = cluster(ABC, top="", node_s=30, rack_s=30)
    core.reload(parse_config("reservation: {starvation-timeout-s: 5}\nqueues:\n  root:\n"
                             "    node-locality-delay-s: 30\n    rack-locality-delay-s: 30\n"
                             "    children: {a: {}, b: {}, c: {}}\n"))
    ask(core, "small", "b", 100, shape=SMALL)
    for host in ("h1", "h2", "h3"):
        core.on_heartbeat(f"{host}:8041", now=0)
    ask(core, "big", "a", 1, nodes=["h1"], racks=["/r1"])  # a, empty, is first in fair order
    core.on_heartbeat("h3:8041", now=0)
    core.on_heartbeat("h3:8041", now=10)  # starved past 5 s, but h3 is not a node it accepts yet
    assert core.snapshot()["nodes"]["h3:8041"]["reserved_for"] is None
    core.on_heartbeat("h1:8041", now=10)
    assert core.snapshot()["nodes"]["h1:8041"]["reserved_for"].startswith("big")


# ---------------------------------------------------------------- other node choices and explain

def test_best_fit_places_the_head_on_a_node_local_node_and_waits_by_the_same_rule():
    core = cluster(ABC, node_s=2, rack_s=0, node_choice="best-fit")
    ask(core, "x", "a", 1, nodes=["h3"], racks=["/r2"])
    assert placed(core.on_nodes(["h1:8041", "h2:8041", "h3:8041"], now=0)) == [("x", "h3")]
    fill(core, "h1")
    ask(core, "y", "b", 1, nodes=["h1"], racks=["/r1"])
    assert placed(core.on_nodes(["h2:8041"], now=0)) == []
    assert placed(core.on_nodes(["h2:8041"], now=2)) == [("y", "h2")]


def test_why_says_the_request_waits_for_locality_and_how_long_is_left():
    clock = [0.0]
    core = cluster(ABC, node_s=2, rack_s=3, clock=lambda: clock[0])
    fill(core, "h1")
    ask(core, "x", "a", 1, nodes=["h1"], racks=["/r1"])
    core.on_heartbeat("h3:8041", now=10)
    clock[0] = 10.5
    [req] = why_pending(core, "x")["requests"]
    [wait] = [r for r in req["reasons"] if r["code"] == "locality-delay"]
    assert wait["level"] == "node-local" and wait["rack_local_in_s"] == pytest.approx(1.5)
    assert wait["any_node_in_s"] == pytest.approx(4.5)
    assert "h1" in wait["message"] and "1.5 s" in wait["message"] and "4.5 s" in wait["message"]
    assert not any(r["code"] == "ready" for r in req["reasons"])  # h2 and h3 have room it may not use yet
    clock[0] = 13
    [req] = why_pending(core, "x")["requests"]
    [wait] = [r for r in req["reasons"] if r["code"] == "locality-delay"]
    assert wait["level"] == "rack-local" and wait["any_node_in_s"] == pytest.approx(2.0)
    assert [r["nodes"] for r in req["reasons"] if r["code"] == "ready"] == [["h2:8041"]]
