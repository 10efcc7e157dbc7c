"""A schedule call for many nodes (SchedulerCore.on_nodes, the default `each-node` choice, with a
call's limit on assignments) decides exactly what the per-node decision does for the same nodes
one heartbeat at a time, in the order the call takes them: the nodes the last call did not finish
first, then the listed ones rotated by one more at every call; a call that reaches its limit stops
on the node it reached it on, and that node and those after it go first in the next call.

Where they may differ, by design (not generated here): an ask that names nodes can be placed on a
named node of the same call while another node's turn runs (the call knows those nodes are
heartbeating; one heartbeat knows only its own node), and `best-fit` chooses the node itself."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.test_batch import NODES as _TWO, OWNERS, SHAPES, USERS_APPS, USERS_YAML
from tests.core.helpers import make_core

NODES = {**_TWO, "h3": {"vcores": 6, "memory-mb": 6144}, "h4": {"vcores": 2, "memory-mb": 12288},
         "h5": {"vcores": 16, "memory-mb": 4096}}

calls = st.lists(st.tuples(
    st.permutations(sorted(NODES)).flatmap(lambda p: st.integers(1, len(p)).map(lambda k: p[:k])),  # listed nodes
    st.integers(0, 6),  # the call's limit (0: none)
    st.lists(st.tuples(st.sampled_from(sorted(USERS_APPS)), st.integers(0, len(SHAPES) - 1),
                       st.integers(0, 6)), max_size=3),  # asks set before the call
    st.lists(st.integers(0, 1000), max_size=3),  # containers that end before it
), min_size=1, max_size=12)


def fresh():
    core = make_core(USERS_YAML, NODES)
    for app, queue in USERS_APPS.items():
        assert core.submit_app(app, OWNERS[app], queue).accepted
    return core


class OneHeartbeatAtATime:
    """The reference: the call's order worked out from the rule above, then one on_heartbeat per
    node, each with what is left of the call's limit."""

    def __init__(self, core) -> None:
        self.core, self.carried, self.rotation = core, [], 0

    def call(self, listed: list[str], now: float, limit: int) -> list:
        carried, self.carried = self.carried, []
        nodes = [n for n in listed if n not in carried]
        start = 0
        if nodes:
            start, self.rotation = self.rotation % len(nodes), self.rotation + 1
        order = carried + nodes[start:] + nodes[:start]
        out: list = []
        for i, node in enumerate(order):
            out += self.core.on_heartbeat(node, now, limit=limit - len(out) if limit else 0)
            if limit and len(out) >= limit:
                self.carried = order[i:]
                break
        return out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls)
def test_a_call_for_many_nodes_assigns_what_one_heartbeat_at_a_time_does(script):
    called, reference = fresh(), fresh()
    beats = OneHeartbeatAtATime(reference)
    for t, (listed, limit, asks, ends) in enumerate(script):
        for core in (called, reference):
            for app, shape, count in asks:
                core.update_request(app, 1, SHAPES[shape], count)
            for pick in ends:
                running = sorted(core.containers)
                if running:
                    core.container_finished(running[pick % len(running)])
        got = [(a.app_id, a.node_id, a.resources) for a in called.on_nodes(list(listed), now=float(t), limit=limit)]
        want = [(a.app_id, a.node_id, a.resources) for a in beats.call(list(listed), float(t), limit)]
        assert got == want, (t, listed, limit)
        if limit:
            assert len(got) <= limit
    assert called.snapshot()["queues"] == reference.snapshot()["queues"]
