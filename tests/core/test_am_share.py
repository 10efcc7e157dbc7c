"""max-am-share: a leaf's ApplicationMasters hold at most that fraction of what the leaf may hold."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler import ConfigError, parse_config
from scheduler.explain import why_pending
from tests.core.helpers import make_core, settle
from yarn_bridge.cli import main as cli

NODES = {f"n{i}": {"memory-mb": 8192, "vcores": 8} for i in range(2)}  # 16384 MiB, 16 vcores
AM = {"memory-mb": 1024, "vcores": 1}


def _yaml(x: str = "", parent: str = "") -> str:
    return f"""
queues:
  root:
    children:
      p:
        {parent or "weight: 1"}
        children:
          x: {{{x}}}
      y: {{}}
"""


def _submit_ams(core, queue: str, n: int, am=AM, start: int = 0) -> list[str]:
    ids = []
    for i in range(start, start + n):
        app = f"{queue}-{i}"
        assert core.submit_app(app, "u", queue).accepted
        core.update_request(app, 0, am, 1, am=True)
        ids.append(app)
    return ids


def _ams_settled(x: str, n: int):
    """A core whose leaf root.p.x has settings `x` and n apps asking for their AM, settled."""
    core = make_core(_yaml(x), NODES)
    apps = _submit_ams(core, "root.p.x", n)
    settle(core)
    return core, apps


def _am_running(core, apps) -> int:
    return sum(1 for a in apps if a in core.apps and core.apps[a].containers)


def test_ams_beyond_the_default_half_of_the_queue_max_wait_and_start_when_one_finishes():
    core, apps = _ams_settled("max: {memory-mb: 4096, vcores: 16}", 4)
    assert _am_running(core, apps) == 2  # 0.5 of 4096 MiB: two AMs of 1024
    assert core.snapshot()["queues"]["root.p.x"]["am_usage"]["memory-mb"] == 2048
    first = next(a for a in apps if core.apps[a].containers)
    core.remove_app(first)
    settle(core)
    assert _am_running(core, apps) == 2 and not core.apps.get(first)


def test_tasks_are_not_held_by_the_am_share():
    core = make_core(_yaml("max: {memory-mb: 4096, vcores: 16}"), NODES)
    apps = _submit_ams(core, "root.p.x", 1)
    settle(core)
    core.update_request(apps[0], 1, AM, 10)
    settle(core)
    assert core.snapshot()["queues"]["root.p.x"]["usage"]["memory-mb"] == 4096  # the queue max, not the share


def test_the_share_is_of_the_smallest_max_above_else_of_the_cluster():
    core = make_core(_yaml("max-am-share: 0.25", parent="max: {memory-mb: 8192}"), NODES)
    queues = core.snapshot()["queues"]
    assert queues["root.p.x"]["am_limit"] == {"memory-mb": 2048, "vcores": 4}  # p's max memory, the cluster's vcores
    assert queues["root.y"]["am_limit"] == {"memory-mb": 8192, "vcores": 8}  # the default 0.5 of the cluster


def test_a_parent_share_applies_to_the_leaves_below_it_that_set_none():
    core = make_core(_yaml(parent="max-am-share: 0.125"), NODES)
    queues = core.snapshot()["queues"]
    assert queues["root.p.x"]["max_am_share"] == 0.125
    assert queues["root.y"]["max_am_share"] == 0.5


def test_a_queue_running_no_am_takes_one_even_above_its_share():
    core, apps = _ams_settled("max: {memory-mb: 1024}, max-am-share: 0.1", 2)
    assert _am_running(core, apps) == 1


def test_why_names_the_am_share_in_an_operators_words():
    core, apps = _ams_settled("max: {memory-mb: 4096}", 3)
    waiting = next(a for a in apps if not core.apps[a].containers)
    reasons = why_pending(core, waiting)["requests"][0]["reasons"]
    am = [r for r in reasons if r["code"] == "am-share"]
    assert am and am[0]["message"].startswith(
        "AM share of root.p.x reached: 2048 of 2048 MiB (max-am-share 0.5)")
    assert not any(r["code"] == "ready" for r in reasons)


def test_yarn_am_containers_started_outside_a_decision_count_toward_the_share():
    core = make_core(_yaml("max: {memory-mb: 2048}"), NODES)
    assert core.submit_app("app_1", "u", "root.p.x").accepted
    core.container_started("container_1_0001_01_000001", "app_1", "n0", AM)
    assert core.queues["root.p.x"].am_usage == (1024, 1)
    apps = _submit_ams(core, "root.p.x", 1)
    settle(core)
    assert _am_running(core, apps) == 0  # 1024 + 1024 > 0.5 of 2048
    core.container_finished("container_1_0001_01_000001")
    settle(core)
    assert _am_running(core, apps) == 1


def test_a_reload_recounts_am_usage_and_applies_a_new_share():
    core, apps = _ams_settled("max: {memory-mb: 4096}", 4)
    core.reload(parse_config(_yaml("max: {memory-mb: 4096}, max-am-share: 1.0")))
    assert core.queues["root.p.x"].am_usage == (2048, 2)
    settle(core)
    assert _am_running(core, apps) == 4


@pytest.mark.parametrize("value, message", [
    (0, "queues.root.children.y.max-am-share: must be > 0, got 0"),
    (1.5, "queues.root.children.y.max-am-share: must be at most 1, got 1.5"),
    ("'half'", "queues.root.children.y.max-am-share: must be a number, got 'half'"),
])
def test_a_bad_max_am_share_is_refused_with_its_field_path(value, message):
    with pytest.raises(ConfigError) as err:
        parse_config(f"queues:\n  root:\n    children:\n      y: {{max-am-share: {value}}}\n")
    assert any(e.startswith(message) for e in err.value.errors), err.value.errors


# ---------------------------------------------------------------- property

_events = st.lists(st.tuples(st.sampled_from(["submit", "finish", "task", "beat"]),
                             st.sampled_from(["root.p.x", "root.y"]),
                             st.integers(1, 3), st.integers(0, 50)), max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(share_x=st.sampled_from([0.1, 0.3, 0.5, 1.0]), max_x=st.integers(1024, 16384), events=_events)
def test_am_usage_stays_within_the_share_and_ams_start_while_under_it(share_x, max_x, events):
    core = make_core(_yaml(f"max: {{memory-mb: {max_x}}}, max-am-share: {share_x}"), NODES)
    seq = 0
    for kind, queue, size, pick in events:
        if kind == "submit":
            seq += 1
            _submit_ams(core, queue, 1, {"memory-mb": 512 * size, "vcores": 1}, start=seq)
        elif kind == "task" and core.apps:
            app = sorted(core.apps)[pick % len(core.apps)]
            core.update_request(app, 1, {"memory-mb": 512, "vcores": 1}, size)
        elif kind == "finish" and core.containers:
            core.container_finished(sorted(core.containers)[pick % len(core.containers)])
        settle(core)
        for path in ("root.p.x", "root.y"):
            _check_share(core, path)


def _check_share(core, path: str) -> None:
    """The oracle: AM usage recomputed from the containers, against the share of the queue's max."""
    leaf = core.queues[path]
    ams = [c for c in core.containers.values() if c.am and c.app.queue is leaf]
    used = [sum(c.resources[j] for c in ams) for j in range(2)]
    assert tuple(used) == leaf.am_usage
    cap = [sum(n.capacity[j] for n in core.nodes.values()) for j in range(2)]
    most = [min([cap[j]] + [q.max[j] for q in leaf.ancestors_and_self() if q.max is not None]) for j in range(2)]
    limit = [int(m * leaf.am_share) for m in most]
    assert len(ams) <= 1 or all(u <= lim for u, lim in zip(used, limit)), (path, used, limit)
    # liveness: a waiting AM that fits under the share and in free room would have started
    free = [cap[j] - sum(n.allocated[j] for n in core.nodes.values()) for j in range(2)]
    room_q = [most[j] - leaf.usage[j] for j in range(2)]
    for app in leaf.apps.values():
        req = app.requests.get((0, 0))
        if req is None or req.count == 0:
            continue
        shape = req.capability
        under = not ams or all(u + s <= lim for u, s, lim in zip(used, shape, limit))
        on_a_node = any(all(s <= c - a for s, c, a in zip(shape, n.capacity, n.allocated))
                        for n in core.nodes.values())
        assert not (under and on_a_node and all(s <= r for s, r in zip(shape, room_q))
                    and all(s <= f for s, f in zip(shape, free))), (path, app.id, used, limit)


def test_check_config_shows_each_queues_max_am_share(tmp_path, capsys):
    path = tmp_path / "q.yaml"
    path.write_text("queues:\n  root:\n    max-am-share: 0.3\n    children:\n      etl: {max-am-share: 0.2}\n")
    assert cli(["check-config", str(path)]) == 0
    out = capsys.readouterr().out
    assert "root  max-am-share 0.3 (for the leaves below)" in out and "etl  weight 1; max-am-share 0.2;" in out


@pytest.mark.parametrize("am", [True, False])
def test_an_ask_that_says_whether_it_is_an_am_still_takes_its_new_size(am):
    # The bridge names am on every ask in full; a new size at the same request key must still land.
    core = make_core(_yaml(), NODES)
    assert core.submit_app("app", "u", "x").accepted
    core.update_request("app", 1, {"memory-mb": 1024, "vcores": 1}, 1, am=am)
    core.update_request("app", 1, {"memory-mb": 4096, "vcores": 2}, 3, am=am)
    request = core.apps["app"].requests[(1, 0)]
    assert (request.am, request.count) == (am, 3)
    size = dict(zip(core.types.names, request.capability))
    assert (size["memory-mb"], size["vcores"]) == (4096, 2)
