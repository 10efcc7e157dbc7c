"""headroom(app): the smallest of the cluster's free room and the room each queue max above the app leaves."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler import parse_config
from tests.core.helpers import make_core, settle

NAMES = ("memory-mb", "vcores")


def _yaml(max_p: str, max_x: str) -> str:
    return f"""
queues:
  root:
    children:
      p:
        max: {max_p}
        children:
          x: {{max: {max_x}}}
          y: {{}}
      z: {{}}
"""


def test_headroom_is_the_queue_max_left_when_that_is_smaller_than_the_free_cluster():
    core = make_core(_yaml("{memory-mb: 6144}", '"50%"'), {"n": {"memory-mb": 16384, "vcores": 16}})
    assert core.submit_app("r", "u", "root.p.x").accepted
    core.update_request("r", 1, {"memory-mb": 1024, "vcores": 1}, 3)
    settle(core)
    # x: 50% of <16384, 16> less its 3 containers; p: 6144 less the same
    assert core.headroom("r") == {"memory-mb": 3072, "vcores": 5}
    assert core.submit_app("z", "u", "root.z").accepted
    assert core.headroom("z") == {"memory-mb": 16384 - 3072, "vcores": 13}  # the free cluster


def test_headroom_never_goes_below_zero_when_a_reload_lowers_a_max_under_the_usage():
    core = make_core(_yaml("{memory-mb: 6144}", "{vcores: 8}"), {"n": {"memory-mb": 16384, "vcores": 16}})
    assert core.submit_app("r", "u", "root.p.x").accepted
    core.update_request("r", 1, {"memory-mb": 1024, "vcores": 1}, 4)
    settle(core)
    core.reload(parse_config(_yaml("{memory-mb: 2048}", "{vcores: 1}")))
    assert core.headroom("r") == {"memory-mb": 0, "vcores": 0}
    assert core.headroom("unknown") is None


_amount = st.one_of(st.integers(0, 40000).map(str), st.integers(1, 100).map(lambda p: f'"{p}%"'))


def _max(draw_mem, draw_cpu) -> str:
    return f"{{memory-mb: {draw_mem}, vcores: {draw_cpu}}}"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(max_p=st.tuples(_amount, _amount), max_x=st.tuples(_amount, _amount),
       nodes=st.lists(st.tuples(st.integers(1024, 16384), st.integers(1, 16)), min_size=1, max_size=4),
       asks=st.lists(st.tuples(st.sampled_from(["root.p.x", "root.p.y", "root.z"]), st.integers(256, 4096),
                               st.integers(1, 4), st.integers(0, 6)), min_size=1, max_size=6),
       removed=st.integers(0, 3))
def test_headroom_matches_an_oracle_computed_from_the_containers(max_p, max_x, nodes, asks, removed):
    core = make_core(_yaml(_max(*max_p), _max(*max_x)),
                     {f"n{i}": {"memory-mb": m, "vcores": c} for i, (m, c) in enumerate(nodes)})
    for i, (queue, mem, cpu, count) in enumerate(asks):
        assert core.submit_app(f"app{i}", "u", queue).accepted
        core.update_request(f"app{i}", 1, {"memory-mb": mem, "vcores": cpu}, count)
    settle(core)
    if removed < len(nodes) - 1:
        core.remove_node(f"n{removed}")  # containers lost, capacity lower: percentages shrink
    specs = parse_config(_yaml(_max(*max_p), _max(*max_x))).queues()
    capacity = [sum(n.capacity[j] for n in core.nodes.values()) for j in range(2)]
    for app_id, app in core.apps.items():
        room = [capacity[j] - sum(c.resources[j] for c in core.containers.values()) for j in range(2)]
        path = app.queue.path
        while path != "root":
            spec = specs[path]
            below = [c for c in core.containers.values() if (c.app.queue.path + ".").startswith(path + ".")]
            for j, name in enumerate(NAMES):
                limit = spec.max.get(name)
                if limit is None:
                    continue
                limit = int(capacity[j] * limit) if isinstance(limit, float) else limit
                room[j] = min(room[j], limit - sum(c.resources[j] for c in below))
            path = path.rsplit(".", 1)[0]
        assert core.headroom(app_id) == {n: max(0, v) for n, v in zip(NAMES, room)}
