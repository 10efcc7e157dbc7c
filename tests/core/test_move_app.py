"""move_app: `yarn application -movetoqueue` in the core: ACLs, the target's limits, accounting moved at once."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.bridge.invariants import check_accounting
from tests.core.helpers import make_core, settle

QUEUES = """
queues:
  root:
    submit-acl: " "
    admin-acl: " "
    children:
      a:
        submit-acl: "alice"
        children:
          x: {}
          y: {max-running-apps: 1}
          z: {max-running-apps: 1}
      b: {max: {memory-mb: 4096}, submit-acl: "alice"}
      c: {submit-acl: "carol"}
"""
NODES = {f"n{i}": {"memory-mb": 8192, "vcores": 8} for i in range(2)}
ONE = {"memory-mb": 1024, "vcores": 1}


def _running(core, app: str, queue: str, n: int, am: bool = True) -> None:
    assert core.submit_app(app, "alice", queue).accepted
    core.update_request(app, 0, ONE, 1, am=am)
    core.update_request(app, 1, ONE, n)
    settle(core)


def test_a_move_carries_the_apps_usage_and_am_usage_with_it():
    core = make_core(QUEUES, NODES)
    _running(core, "app", "root.a.x", 2)
    result = core.move_app("app", "root.b", "alice")
    assert result.accepted and result.queue == "root.b"
    queues = core.snapshot()["queues"]
    assert queues["root.b"]["usage"]["memory-mb"] == 3072 and queues["root.a.x"]["usage"]["memory-mb"] == 0
    assert queues["root.a"]["usage"]["memory-mb"] == 0
    assert queues["root.b"]["am_usage"]["memory-mb"] == 1024 and queues["root.a.x"]["am_usage"]["memory-mb"] == 0
    check_accounting(core)


def test_a_move_the_acls_deny_is_refused_with_the_reason():
    core = make_core(QUEUES, NODES)
    _running(core, "app", "root.a.x", 1)
    result = core.move_app("app", "root.c", "alice", ["staff"])
    assert not result.accepted and "'alice'" in result.reason and "root.c" in result.reason
    assert core.apps["app"].queue.path == "root.a.x"
    check_accounting(core)


def test_a_move_over_the_targets_max_is_refused_and_nothing_moves():
    core = make_core(QUEUES, NODES)
    _running(core, "big", "root.a.x", 4)  # 5 x 1024 > b's max 4096
    result = core.move_app("big", "root.b", "alice")
    assert not result.accepted
    assert result.reason == "queue root.b would go over its max: memory-mb 0 used + 5120 of the app > max 4096"
    assert core.snapshot()["queues"]["root.a.x"]["usage"]["memory-mb"] == 5120
    check_accounting(core)


def test_a_running_app_cannot_move_into_a_queue_at_its_max_running_apps():
    core = make_core(QUEUES, NODES)
    _running(core, "first", "root.a.y", 1)
    _running(core, "other", "root.a.x", 1)
    result = core.move_app("other", "root.a.y", "alice")
    assert not result.accepted and result.reason == "queue root.a.y runs its max-running-apps (1 of 1)"


def test_moving_the_running_app_out_lets_the_waiting_one_run():
    core = make_core(QUEUES, NODES)
    _running(core, "first", "root.a.y", 1)
    _running(core, "second", "root.a.y", 1)
    assert not core.apps["second"].runnable
    assert core.move_app("first", "root.a.x", "alice").accepted
    assert core.apps["second"].runnable
    settle(core)
    assert core.apps["second"].containers
    check_accounting(core)


def test_a_waiting_app_waits_in_the_target_in_submission_order_or_runs_if_it_may():
    core = make_core(QUEUES, NODES)
    for app, queue in (("y-run", "root.a.y"), ("y-wait", "root.a.y"), ("z-run", "root.a.z"),
                       ("y-wait2", "root.a.y"), ("z-wait", "root.a.z")):
        assert core.submit_app(app, "alice", queue).accepted
    assert core.move_app("y-wait2", "root.a.z", "alice").accepted  # z is full: it waits there
    assert [a.id for a in core.queues["root.a.z"].waiting] == ["y-wait2", "z-wait"]
    check_accounting(core)
    core.remove_app("z-run")
    assert core.apps["y-wait2"].runnable and not core.apps["z-wait"].runnable
    assert core.move_app("y-wait", "root.a.x", "alice").accepted
    assert core.apps["y-wait"].runnable  # x has no limit
    check_accounting(core)


def test_unknown_parent_and_missing_targets_are_refused():
    core = make_core(QUEUES, NODES)
    _running(core, "app", "root.a.x", 1)
    assert core.move_app("app", "root.a", "alice").reason == "queue 'root.a' is a parent queue; apps run in leaf queues"
    assert core.move_app("app", "root.zz", "alice").reason == "queue 'root.zz' does not exist"
    assert not core.move_app("nope", "root.b", "alice").accepted


# ---------------------------------------------------------------- property

_ops = st.lists(st.tuples(st.sampled_from(["submit", "ask", "move", "finish", "remove"]),
                          st.integers(0, 40), st.sampled_from(["root.a.x", "root.a.y", "root.b", "root.c"])),
                max_size=40)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ops)
def test_any_sequence_of_moves_keeps_every_queues_usage_the_sum_of_its_apps_containers(ops):
    core = make_core(QUEUES, NODES)
    seq = 0
    for kind, pick, queue in ops:
        apps = sorted(core.apps)
        if kind == "submit":
            seq += 1
            core.submit_app(f"app{seq:02d}", "alice", queue)
            core.update_request(f"app{seq:02d}", 0, ONE, 1, am=True)
        elif kind == "ask" and apps:
            core.update_request(apps[pick % len(apps)], 1, ONE, pick % 4)
        elif kind == "move" and apps:
            app = core.apps[apps[pick % len(apps)]]
            before = app.queue
            result = core.move_app(app.id, queue, "alice")
            assert app.queue.path == (queue if result.accepted else before.path)
        elif kind == "finish" and core.containers:
            core.container_finished(sorted(core.containers)[pick % len(core.containers)])
        elif kind == "remove" and apps:
            core.remove_app(apps[pick % len(apps)])
        settle(core)
        check_accounting(core)
        b = core.queues["root.b"]
        assert b.usage[0] <= 4096  # a move never takes b over its max
        assert core.queues["root.a.y"].running_apps <= 1
