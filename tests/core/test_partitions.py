"""Node labels as partitions, against a reference written here, not the core's code.

The reference keeps, from the assignments it sees, every leaf's usage in every partition (a
container counts in the partition of the ask it serves) and every ask's count. For a node of
partition P with room R, the next container goes to a leaf with the lowest weighted dominant
share in P (its usage in P over the capacity of P's nodes, now) among the leaves with an ask
labelled P that fits R; on a node of a non-exclusive partition with no such ask, to a leaf with
the lowest share in the default partition among those with an unlabelled ask that fits R
(borrowed); on an exclusive partition's node never to an unlabelled ask.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler import SchedulerCore, parse_config
from scheduler.config import ConfigError

TYPES = ("vcores", "memory-mb")
EXCLUSIVE = {"gpu": True, "x": False}
LABELS = ("", "gpu", "x")


def wshare(vec, weight, capacity) -> float:
    return max((v / (c * weight) for v, c in zip(vec, capacity) if c), default=0.0)


def fits(shape, room) -> bool:
    return all(s <= r for s, r in zip(shape, room))


class Reference:
    def __init__(self, weights: dict[str, float], asks: dict[str, list]) -> None:
        self.weights = weights
        # leaf -> [[label, shape, count, priority]]
        self.asks = {leaf: [[lab, shape, n, p] for p, (lab, shape, n) in enumerate(items, start=1)]
                     for leaf, items in asks.items()}
        self.usage = {(leaf, lab): [0] * len(TYPES) for leaf in weights for lab in LABELS}

    def capacity(self, core: SchedulerCore, label: str):
        caps = [n.capacity for n in all_nodes(core) if n.partition == label]
        return tuple(map(sum, zip(*caps))) if caps else (0,) * len(TYPES)

    def candidates(self, core, label: str, room) -> dict[str, float]:
        cap = self.capacity(core, label)
        return {leaf: wshare(self.usage[(leaf, label)], self.weights[leaf], cap)
                for leaf, items in self.asks.items()
                if any(lab == label and n > 0 and fits(shape, room) for lab, shape, n, _ in items)}

    def expected(self, core, node, room) -> tuple[str, dict[str, float]]:
        """(the partition whose asks go next on the node, the leaves that may get it, with shares)."""
        got = self.candidates(core, node.partition, room)
        if not got and node.partition and not EXCLUSIVE[node.partition]:
            return "", self.candidates(core, "", room)
        return node.partition, got

    def take(self, leaf: str, priority: int, vector) -> str:
        ask = next(a for a in self.asks[leaf] if a[3] == priority)
        ask[2] -= 1
        usage = self.usage[(leaf, ask[0])]
        for j, v in enumerate(vector):
            usage[j] += v
        return ask[0]


def all_nodes(core: SchedulerCore):
    yield from core.nodes.values()
    for pool in core.partitions.pools.values():
        yield from pool.nodes.values()


shapes = st.tuples(st.integers(1, 6), st.integers(1, 6))
ask = st.tuples(st.sampled_from(LABELS), shapes, st.integers(1, 8))
leaves = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.tuples(st.sampled_from([0.5, 1.0, 2.0, 3.0]),
                                                                          st.lists(ask, min_size=1, max_size=3)),
                         min_size=2, max_size=4)
nodes = st.lists(st.tuples(st.sampled_from(LABELS), st.tuples(st.integers(2, 12), st.integers(2, 12))),
                 min_size=1, max_size=6)
# between heartbeats: None, or (node index, new label)
moves = st.lists(st.one_of(st.none(), st.tuples(st.integers(0, 5), st.sampled_from(LABELS))), min_size=40,
                 max_size=40)


def build(drawn_leaves, drawn_nodes) -> tuple[SchedulerCore, Reference]:
    lines = [f"resources: [{', '.join(TYPES)}]", "reservation: {starvation-timeout-s: null}", "queues:",
             "  root:", "    children:"]
    lines += [f"      {leaf}: {{weight: {w:g}}}" for leaf, (w, _) in drawn_leaves.items()]
    core = SchedulerCore(parse_config("\n".join(lines) + "\n"), resource_types=TYPES)
    core.set_labels(EXCLUSIVE)
    for i, (label, cap) in enumerate(drawn_nodes):
        core.add_node(f"n{i}:1", dict(zip(TYPES, cap)), label=label)
    ref = Reference({leaf: w for leaf, (w, _) in drawn_leaves.items()},
                    {leaf: items for leaf, (_, items) in drawn_leaves.items()})
    for leaf, items in ref.asks.items():
        assert core.submit_app(leaf, "u", f"root.{leaf}").accepted
        for label, shape, n, priority in items:
            core.update_request(leaf, priority, dict(zip(TYPES, shape)), n, label=label)
    return core, ref


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(leaves, nodes, moves)
def test_every_container_goes_to_the_lowest_share_leaf_of_its_partition_even_as_nodes_change_labels(
        drawn_leaves, drawn_nodes, drawn_moves):
    core, ref = build(drawn_leaves, drawn_nodes)
    for step, move in enumerate(drawn_moves):
        if move is not None:
            index, label = move
            core.set_node_label(f"n{index % len(drawn_nodes)}:1", label)
        node = sorted(all_nodes(core), key=lambda n: n.id)[step % len(drawn_nodes)]
        room = [c - a for c, a in zip(node.capacity, node.allocated)]
        pool, allowed = ref.expected(core, node, room)
        got = core.on_heartbeat(node.id, limit=1)
        if not allowed:
            assert got == [], (node.id, node.partition, got)
            continue
        assert len(got) == 1, (node.id, node.partition, allowed)
        a = got[0]
        assert a.node_id == node.id and fits(a.vector, room)
        low = min(allowed.values())
        assert a.queue.rsplit(".", 1)[1] in [leaf for leaf, s in allowed.items() if s <= low + 1e-9], \
            (node.partition, pool, allowed, a)
        assert ref.take(a.app_id, a.priority, a.vector) == pool
    for label in LABELS:
        pool = core.partitions.pool(label)
        assert pool.capacity == ref.capacity(core, label)  # each pool's capacity is its nodes', live
        for leaf in ref.weights:
            assert list(pool.queues[f"root.{leaf}"].usage) == ref.usage[(leaf, label)]


def labelled(yaml_queues: str, nodes: dict[str, tuple[str, int]], **kw) -> SchedulerCore:
    core = SchedulerCore(parse_config("resources: [vcores, memory-mb]\nreservation: {starvation-timeout-s: null}\n"
                                      "queues:\n  root:\n" + yaml_queues), **kw)
    core.set_labels(EXCLUSIVE)
    for node_id, (label, vcores) in nodes.items():
        core.add_node(node_id, {"vcores": vcores, "memory-mb": vcores * 1024}, label=label)
    return core


FLAT = """    children:
      a: {}
      b: {}
"""


def test_a_queues_share_in_a_partition_is_taken_over_that_partitions_capacity():
    core = labelled(FLAT, {"d:1": ("", 100), "g:1": ("gpu", 4)})
    for app, label in (("a1", "gpu"), ("b1", "")):
        core.submit_app(app, "u", "root." + app[0])
        core.update_request(app, 1, {"vcores": 1, "memory-mb": 1024}, 2, label=label)
    for a in core.on_nodes(["d:1", "g:1"]):
        core.container_started("c-" + a.assignment_id, a.app_id, a.node_id, a.resources, assignment_id=a.assignment_id)
    snap = core.snapshot()
    assert snap["partitions"]["gpu"]["queues"]["root.a"]["dominant_share"] == pytest.approx(0.5)  # 2 of 4
    assert snap["queues"]["root.b"]["dominant_share"] == pytest.approx(0.02)  # 2 of 100
    assert snap["queues"]["root.a"]["dominant_share"] == 0.0


def test_an_ask_for_a_label_its_queue_may_not_use_is_ignored_and_an_am_for_it_refused_at_submission():
    core = labelled("""    accessible-node-labels: []
    children:
      a: {accessible-node-labels: [gpu]}
      b: {}
""", {"g:1": ("gpu", 4)})
    refused = core.submit_app("b1", "u", "root.b", label="gpu")
    assert not refused.accepted
    assert "root.b may not use node label 'gpu' (its accessible-node-labels: none)" in refused.reason
    assert core.submit_app("a1", "u", "root.a", label="gpu").accepted
    assert core.submit_app("b2", "u", "root.b").accepted
    ignored = core.counters["ignored_events"]
    core.update_request("b2", 1, {"vcores": 1, "memory-mb": 1024}, 1, label="gpu")
    assert core.counters["ignored_events"] == ignored + 1
    assert core.on_nodes(["g:1"]) == []


def test_default_node_label_expression_is_inherited_and_places_unlabelled_asks():
    core = labelled("""    default-node-label-expression: gpu
    children:
      a: {}
      b: {default-node-label-expression: ""}
""", {"d:1": ("", 4), "g:1": ("gpu", 4)})
    assert core.queues["root.a"].labels[1] == "gpu" and core.queues["root.b"].labels[1] == ""
    for app in ("a1", "b1"):
        core.submit_app(app, "u", "root." + app[0])
        core.update_request(app, 1, {"vcores": 1, "memory-mb": 1024}, 1)
    placed = {a.app_id: a.node_id for a in core.on_nodes(["d:1", "g:1"])}
    assert placed == {"a1": "g:1", "b1": "d:1"}


def test_borrowed_containers_on_a_non_exclusive_node_are_killed_first_when_its_own_asks_wait():
    core = labelled(FLAT, {"x:1": ("x", 4)})
    core.submit_app("b1", "u", "root.b")
    core.update_request("b1", 1, {"vcores": 1, "memory-mb": 1024}, 4)
    borrowed = core.on_nodes(["x:1"])
    assert len(borrowed) == 4  # the partition's idle room, lent to the default partition
    for a in borrowed:
        core.container_started("c-" + a.assignment_id, a.app_id, a.node_id, a.resources,
                               assignment_id=a.assignment_id, priority=1)
    assert core.capacity == (0, 0)  # lent room does not count in the default pool
    core.submit_app("a1", "u", "root.a")
    core.update_request("a1", 1, {"vcores": 2, "memory-mb": 2048}, 1, label="x")
    kills = core.preemption_round(0.0).kill
    assert len(kills) == 2  # the fewest that make room for the waiting ask
    assert {(v.app_id, v.reason, v.for_queue) for v in kills} == {("b1", "non-exclusive", "root.a")}
    for v in kills:
        core.container_finished(v.container_id, "preempted")
    assert [(a.app_id, a.node_id) for a in core.on_nodes(["x:1"])] == [("a1", "x:1")]


def test_an_exclusive_partitions_idle_room_is_never_lent():
    core = labelled(FLAT, {"g:1": ("gpu", 4)})
    core.submit_app("b1", "u", "root.b")
    core.update_request("b1", 1, {"vcores": 1, "memory-mb": 1024}, 4)
    assert core.on_nodes(["g:1"]) == []


def test_a_node_removed_loses_its_containers_in_every_pool_that_counts_them():
    core = labelled(FLAT, {"x:1": ("x", 4)})
    for app, label in (("a1", "x"), ("b1", "")):
        core.submit_app(app, "u", "root." + app[0])
        core.update_request(app, 1, {"vcores": 1, "memory-mb": 1024}, 2, label=label)
    for a in core.on_nodes(["x:1"]):
        core.container_started("c-" + a.assignment_id, a.app_id, a.node_id, a.resources, assignment_id=a.assignment_id)
    assert len(core.containers) == 2 and len(core.partitions.pools["x"].containers) == 2
    assert len(core.remove_node("x:1")) == 4
    assert not core.containers and not core.partitions.pools["x"].containers
    assert core.partitions.pools["x"].queues["root.a"].usage == (0, 0)


@pytest.mark.parametrize("queues, error", [
    ("    accessible-node-labels: [gpu]\n    default-node-label-expression: x\n    children: {a: {}}\n",
     "queues.root.default-node-label-expression: default-node-label-expression 'x' is not one of the queue's "
     "accessible-node-labels (gpu)"),
    ("    default-node-label-expression: x\n    children: {a: {accessible-node-labels: [gpu]}}\n",
     "queues.root.children.a: default-node-label-expression 'x' is not one of the queue's "
     "accessible-node-labels (gpu)"),
    ("    children: {a: {accessible-node-labels: [\"bad label\"]}}\n",
     "queues.root.children.a.accessible-node-labels"),
    ("    children: {a: {accessible-node-labels: all}}\n", "queues.root.children.a.accessible-node-labels"),
])
def test_label_keys_are_validated_with_the_field_named(queues, error):
    with pytest.raises(ConfigError) as caught:
        parse_config("queues:\n  root:\n" + queues)
    assert error in str(caught.value)


def test_star_and_a_string_star_let_a_queue_use_every_label():
    for value in ('"*"', '["*"]'):
        core = labelled(f"    children: {{a: {{accessible-node-labels: {value}}}}}\n", {})
        assert core.submit_app("a1", "u", "root.a", label="gpu").accepted
