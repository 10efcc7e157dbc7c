"""SchedulerCore.batch(): events applied with one re-keying at the end must decide exactly as
events applied one by one, ties included."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.helpers import make_core

YAML = ("queues:\n  root:\n    children:\n      a: {weight: 2}\n      b:\n        children:\n"
        "          b1: {}\n          b2: {order: fifo}\n")
NODES = {"h1": {"vcores": 8, "memory-mb": 8192}, "h2": {"vcores": 4, "memory-mb": 16384}}
APPS = {"x": "a", "y": "a", "z": "b1", "w": "b2"}
# the same tree with users in a and b1: three apps of two users in a, two users in b1
USERS_YAML = YAML.replace("a: {weight: 2}", "a: {weight: 2, user-limits: {users: {alice: {weight: 2}}}}").replace(
    "b1: {}", "b1: {user-limits: {max-running-apps: 1}}")
USERS_APPS = {**APPS, "v": "a", "u": "b1"}
OWNERS = {"x": "alice", "y": "bob", "v": "alice", "z": "alice", "u": "bob", "w": "u"}
SHAPES = ({"vcores": 1, "memory-mb": 1024}, {"vcores": 2, "memory-mb": 512}, {"vcores": 1, "memory-mb": 3072})

events = st.one_of(
    st.tuples(st.just("start"), st.sampled_from(sorted(APPS)), st.sampled_from(sorted(NODES)),
              st.integers(0, len(SHAPES) - 1)),
    st.tuples(st.just("finish"), st.integers(0, 100)),
    st.tuples(st.just("ask"), st.sampled_from(sorted(APPS)), st.integers(0, 5)),
    st.tuples(st.just("remove"), st.sampled_from(sorted(APPS))),
    st.tuples(st.just("submit"), st.sampled_from(sorted(APPS))),
)
scripts = st.lists(st.lists(events, max_size=12), min_size=1, max_size=10)


def fresh(users: bool = False):
    core = make_core(USERS_YAML if users else YAML, NODES)
    for app, queue in (USERS_APPS if users else APPS).items():
        assert core.submit_app(app, OWNERS[app] if users else "u", queue).accepted
    core.snapshot()  # settles the nodes' capacity: otherwise the first decision re-keys everything
    return core


def apply(core, event, serial: list[int]) -> None:
    kind = event[0]
    if kind == "start":
        _, app, node, shape = event
        serial[0] += 1
        core.container_started(f"c{serial[0]}", app, node, SHAPES[shape])
    elif kind == "finish":
        running = sorted(core.containers)
        if running:
            core.container_finished(running[event[1] % len(running)])
    elif kind == "ask":
        core.update_request(event[1], 1, SHAPES[0], event[2])
    elif kind == "remove":
        if event[1] in core.apps:
            core.remove_app(event[1])
    elif event[1] not in core.apps:
        users = core.queues["root.a"].users is not None
        core.submit_app(event[1], OWNERS[event[1]] if users else "u", APPS[event[1]])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scripts, st.booleans())
def test_a_batch_decides_exactly_as_events_one_by_one(script, users):
    """With users in leaves too (user-limits): users tied on share come out in the same order."""
    eager, batched = fresh(users), fresh(users)
    serials = [0], [0]
    for t, group in enumerate(script):
        for event in group:
            apply(eager, event, serials[0])
        with batched.batch():
            for event in group:
                apply(batched, event, serials[1])
        for node in sorted(NODES):
            got = [(a.app_id, a.resources) for a in eager.on_heartbeat(node, now=float(t))]
            assert got == [(a.app_id, a.resources) for a in batched.on_heartbeat(node, now=float(t))]
        snap_e, snap_b = eager.snapshot(), batched.snapshot()
        assert snap_e["queues"] == snap_b["queues"] and snap_e["apps"] == snap_b["apps"]


def test_usage_is_current_inside_a_batch_and_keys_after_it():
    core = fresh()
    core.update_request("x", 1, SHAPES[0], 4)
    core.update_request("z", 1, SHAPES[0], 4)
    with core.batch():
        for i in range(6):
            core.container_started(f"c{i}", "x", "h1", SHAPES[0])
        assert core.snapshot()["queues"]["root.a"]["usage"]["vcores"] == 6
    # a is now far above b's share: the next container goes to b, though x was first before
    [first, *_] = core.on_heartbeat("h2", now=0)
    assert first.app_id == "z"


def test_an_app_removed_in_a_batch_leaves_its_queue_correctly_keyed():
    core = fresh()
    for i in range(6):
        core.container_started(f"x{i}", "x", "h1", SHAPES[0])
    for i in range(2):
        core.container_started(f"z{i}", "z", "h1", SHAPES[0])
    core.update_request("y", 1, SHAPES[0], 1)  # y waits in a, untouched by the batch
    core.update_request("z", 1, SHAPES[0], 1)
    with core.batch():
        core.remove_app("x")  # a drops from 6 vcores to none, below b's 2
    [first, *_] = core.on_heartbeat("h2", now=0)
    assert first.app_id == "y"



def test_queues_tied_on_share_come_out_in_the_order_of_their_last_touch():
    # Every queue ends the batch at zero usage with asks pending: ties, broken by push order.
    # b is touched through b1, then a, then b again through b2: eager re-keying pushes b last,
    # so a goes first, though b was touched first.
    script = [("ask", "z", 3), ("ask", "x", 3), ("ask", "w", 3)]
    eager, batched = fresh(), fresh()
    for event in script:
        apply(eager, event, [0])
    with batched.batch():
        for event in script:
            apply(batched, event, [0])
    firsts = [core.on_heartbeat("h1", now=0)[0].app_id for core in (eager, batched)]
    assert firsts == ["x", "x"]


def test_users_tied_on_share_come_out_in_the_order_of_their_last_touch_also_when_an_app_leaves():
    # alice is touched through x, then bob through y, then alice again as v leaves: eager re-keying
    # pushes alice last, so bob goes first, though alice was touched first.
    script = [("ask", "x", 3), ("ask", "y", 3), ("remove", "v")]
    eager, batched = fresh(users=True), fresh(users=True)
    for core in (eager, batched):
        core.update_request("v", 1, SHAPES[0], 1)
    for event in script:
        apply(eager, event, [0])
    with batched.batch():
        for event in script:
            apply(batched, event, [0])
    firsts = [core.on_heartbeat("h1", now=0)[0].app_id for core in (eager, batched)]
    assert firsts == ["y", "y"]
