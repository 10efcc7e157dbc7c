"""Ask ids: update_counts must leave the core exactly as update_request with the full ask would."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.helpers import make_core

YAML = "queues:\n  root:\n    children:\n      a: {weight: 2}\n      b: {}\n"
NODES = {"h1": {"vcores": 8, "memory-mb": 8192}, "h2": {"vcores": 4, "memory-mb": 16384}}
RACKS = {"h1": "/r1", "h2": "/r2"}
APPS = {"x": "a", "y": "b"}
SHAPES = ({"vcores": 1, "memory-mb": 1024}, {"vcores": 2, "memory-mb": 512}, {"vcores": 1, "memory-mb": 4096})
LOCATIONS = ("*", "*", "/r1", "h2")

# An ask: (app, priority, location). All locations of one (app, priority) share its shape, as in YARN.
asks = st.tuples(st.sampled_from(sorted(APPS)), st.integers(1, 2), st.sampled_from(LOCATIONS))
steps = st.lists(st.one_of(
    st.tuples(st.just("count"), asks, st.integers(0, 6)),
    st.tuples(st.just("reshape"), asks, st.integers(0, len(SHAPES) - 1)),
    st.tuples(st.just("heartbeat"), st.sampled_from(sorted(NODES))),
    st.tuples(st.just("finish"), st.integers(0, 50)),
    st.tuples(st.just("reset"), st.sampled_from(sorted(APPS))),
), min_size=1, max_size=60)


def fresh():
    core = make_core(YAML, {})
    for node, capacity in NODES.items():
        core.add_node(node, capacity, rack=RACKS[node])
    for app, queue in APPS.items():
        assert core.submit_app(app, "u", queue).accepted
    return core


def state(core) -> dict:
    snap = core.snapshot()
    return {"queues": {p: q["usage"] for p, q in snap["queues"].items()},
            "apps": {a: (s["pending"], s["usage"]) for a, s in snap["apps"].items()},
            "requests": {a: sorted((k, r.count, sorted(r.racks.items()), sorted(r.nodes.items()), r.relax)
                                   for k, r in core.apps[a].requests.items()) for a in APPS}}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps)
def test_count_updates_by_id_equal_full_updates(script):
    """The shim's side in miniature: an ask goes in full the first time and after its shape
    changed (under a new id), and as a count by id otherwise."""
    full, by_id = fresh(), fresh()
    shapes: dict[tuple, int] = {}  # (app, priority) -> index into SHAPES
    counts: dict[tuple, int] = {}  # (app, priority, location) -> count last sent
    ids: dict[tuple, int] = {}  # (app, priority, location) -> id, for asks sent in full since a reset
    next_id = iter(range(1, 10**6))

    def send_full(key, count):
        app, prio, location = key
        shape, relax = SHAPES[shapes.setdefault((app, prio), 0)], location != "/r1"
        full.update_request(app, prio, shape, count, location=location, relax_locality=relax)
        ids[key] = next(next_id)
        by_id.update_request(app, prio, shape, count, location=location, relax_locality=relax, ask_id=ids[key])
        counts[key] = count

    for t, step in enumerate(script):
        if step[0] == "count":
            key, count = step[1], step[2]
            if key in ids:
                app, prio, location = key
                full.update_request(app, prio, SHAPES[shapes[(app, prio)]], count, location=location,
                                    relax_locality=location != "/r1")
                by_id.update_counts([(ids[key], count)])
                counts[key] = count
            else:
                send_full(key, count)
        elif step[0] == "reshape":
            (app, prio, _), shape = step[1], step[2]
            shapes[(app, prio)] = shape
            for key in [k for k in ids if k[:2] == (app, prio)]:
                send_full(key, counts[key])
        elif step[0] == "heartbeat":
            got = [(a.app_id, a.priority, a.resources) for a in full.on_heartbeat(step[1], now=float(t))]
            assert got == [(a.app_id, a.priority, a.resources) for a in by_id.on_heartbeat(step[1], now=float(t))]
        elif step[0] == "finish":
            running = sorted(full.containers)
            if running:
                cid = running[step[1] % len(running)]
                full.container_finished(cid)
                by_id.container_finished(cid)
        else:
            full.reset_requests(step[1])
            by_id.reset_requests(step[1])
            ids = {k: v for k, v in ids.items() if k[0] != step[1]}
        assert state(full) == state(by_id)
    assert by_id.counters["ignored_events"] == full.counters["ignored_events"] == 0


def test_ids_die_with_their_app_and_unknown_ids_are_counted_not_raised():
    core = fresh()
    core.update_request("x", 1, SHAPES[0], 2, ask_id=7)
    core.update_counts([(7, 5)])
    assert core.snapshot()["apps"]["x"]["pending"] == 5
    core.reset_requests("x")  # a new attempt: YARN dropped the asks, so their ids go too
    core.update_counts([(7, 3)])
    core.update_counts([(99, 1)])
    core.update_counts([(7, -1)])
    assert core.counters["ignored_events"] == 3
    assert core.snapshot()["apps"]["x"]["pending"] == 0
    core.update_request("y", 1, SHAPES[0], 1, ask_id=8)
    core.remove_app("y")
    assert not core.asks and not core.located_asks


def test_a_bad_count_by_id_changes_nothing():
    core = fresh()
    core.update_request("x", 1, SHAPES[0], 2, ask_id=1)
    for bad in (True, 1.5, "3", None):
        core.update_counts([(1, bad)])
    assert core.counters["ignored_events"] == 4
    assert core.snapshot()["apps"]["x"]["pending"] == 2


def test_withdrawing_by_id_drops_the_reservation():
    core = make_core("reservation: {starvation-timeout-s: 5}\n" + YAML, {"n1": {"vcores": 4, "memory-mb": 4096}})
    for app, queue in APPS.items():
        core.submit_app(app, "u", queue)
    core.update_request("x", 1, {"vcores": 1, "memory-mb": 1024}, 100, now=0)
    running = [a.assignment_id for a in core.on_heartbeat("n1", now=0)]
    core.update_request("y", 1, {"vcores": 4, "memory-mb": 4096}, 1, now=0, ask_id=3)
    assert core.on_heartbeat("n1", now=0) == []  # b is first in fair order from now on
    core.container_finished(running.pop())
    assert core.on_heartbeat("n1", now=10) == []
    assert core.snapshot()["nodes"]["n1"]["reserved_for"].startswith("y")
    core.update_counts([(3, 0)])
    assert core.snapshot()["nodes"]["n1"]["reserved_for"] is None
    assert [a.app_id for a in core.on_heartbeat("n1", now=11)] == ["x"]
