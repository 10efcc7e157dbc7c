"""Weighted DRF outcomes: the papers' examples and their properties on random clusters."""
from __future__ import annotations

import math
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler import SchedulerCore, parse_config
from tests.core.helpers import make_core, settle

TWO_QUEUES = "queues:\n  root:\n    children:\n      a: {}\n      b: {}\n"


def flat_yaml(weights: list[int]) -> str:
    return "queues:\n  root:\n    children:\n" + "".join(
        f"      q{i}: {{weight: {w}}}\n" for i, w in enumerate(weights))


def test_drf_paper_example_gives_three_and_two_tasks_at_equal_shares():
    core = make_core(TWO_QUEUES, {"n1": {"vcores": 9, "memory-mb": 18 * 1024}})
    core.submit_app("A", "u", "a")
    core.submit_app("B", "u", "b")
    core.update_request("A", 1, {"vcores": 1, "memory-mb": 4 * 1024}, 100)
    core.update_request("B", 1, {"vcores": 3, "memory-mb": 1 * 1024}, 100)

    got = settle(core)

    assert Counter(a.app_id for a in got) == {"A": 3, "B": 2}
    queues = core.snapshot()["queues"]
    assert queues["root.a"]["usage"] == {"memory-mb": 12 * 1024, "vcores": 3}
    assert queues["root.b"]["usage"] == {"memory-mb": 2 * 1024, "vcores": 6}
    assert math.isclose(queues["root.a"]["dominant_share"], 2 / 3)
    assert math.isclose(queues["root.b"]["dominant_share"], 2 / 3)
    assert queues["root.a"]["dominant_resource"] == "memory-mb"
    assert queues["root.b"]["dominant_resource"] == "vcores"


def test_weights_two_to_one_give_shares_two_to_one_within_one_container():
    yaml = "queues:\n  root:\n    children:\n      heavy: {weight: 2}\n      light: {weight: 1}\n"
    nodes = {f"n{i}": {"vcores": 16, "memory-mb": 32768} for i in range(20)}
    core = make_core(yaml, nodes)
    for app, queue, shape in (("h", "heavy", {"vcores": 2, "memory-mb": 2048}),
                              ("l", "light", {"vcores": 1, "memory-mb": 4096})):
        core.submit_app(app, "u", queue)
        core.update_request(app, 1, shape, 10_000)

    settle(core)

    q = core.snapshot()["queues"]
    heavy, light = q["root.heavy"]["dominant_share"], q["root.light"]["dominant_share"]
    one_container = max(2 / 320, 4096 / (20 * 32768))
    assert abs(heavy - 2 * light) <= 2 * one_container
    assert math.isclose(q["root.heavy"]["weighted_share"], heavy / 2)


def test_per_resource_weights_divide_each_resource_share():
    yaml = ("queues:\n  root:\n    children:\n"
            "      gpu: {weight: {gpu-mem: 2, vcores: 1, memory-mb: 1}}\n      cpu: {}\n")
    core = make_core(yaml, {"n1": {"vcores": 10, "memory-mb": 10240, "gpu-mem": 10240}},
                     resource_types=["memory-mb", "vcores", "gpu-mem"])
    core.submit_app("g", "u", "gpu")
    core.update_request("g", 1, {"vcores": 1, "memory-mb": 1024, "gpu-mem": 2048}, 100)
    settle(core)
    q = core.snapshot()["queues"]["root.gpu"]
    # 5 containers hold half of gpu-mem: weighted share = 0.5 / 2, the vcores share 0.5 / 1 dominates
    assert q["usage"]["gpu-mem"] == 10240
    assert math.isclose(q["weighted_share"], 0.5)


def test_gpu_and_cpu_queues_get_equal_shares_of_their_own_bottleneck():
    yaml = "queues:\n  root:\n    children:\n      gpu: {}\n      cpu: {}\n"
    node = {"vcores": 32, "memory-mb": 131072, "gpu-mem": 20480}
    core = make_core(yaml, {f"n{i}": node for i in range(8)},
                     resource_types=["memory-mb", "vcores", "gpu-mem"])
    core.submit_app("g", "u", "gpu")
    core.update_request("g", 1, {"vcores": 1, "memory-mb": 2048, "gpu-mem": 1024}, 10_000)
    core.submit_app("c", "u", "cpu")
    core.update_request("c", 1, {"vcores": 1, "memory-mb": 1024}, 10_000)

    settle(core)

    q = core.snapshot()["queues"]
    assert q["root.gpu"]["dominant_resource"] == "gpu-mem"
    assert q["root.cpu"]["dominant_resource"] == "vcores"
    gpu_share = q["root.gpu"]["usage"]["gpu-mem"] / (8 * 20480)
    cpu_share = q["root.cpu"]["usage"]["vcores"] / (8 * 32)
    assert abs(gpu_share - cpu_share) <= 1 / 160 + 1 / 256
    assert gpu_share > 0.45  # neither side starves the other


def test_drf_without_gpu_lets_the_cpu_queue_starve_the_gpu_queue():
    # The same load under drf-no-gpu: gpu-mem is only checked for fit, so the GPU queue looks cheap.
    yaml = "queues:\n  root:\n    children:\n      gpu: {}\n      cpu: {}\n"
    node = {"vcores": 16, "memory-mb": 65536, "gpu-mem": 20480}
    shares = {}
    for policy in ("drf", "drf-no-gpu"):
        core = make_core(yaml, {"n1": node}, resource_types=["memory-mb", "vcores", "gpu-mem"], policy=policy)
        core.submit_app("g", "u", "gpu")
        core.update_request("g", 1, {"vcores": 1, "memory-mb": 1024, "gpu-mem": 4096}, 100)
        core.submit_app("c", "u", "cpu")
        core.update_request("c", 1, {"vcores": 1, "memory-mb": 1024}, 100)
        settle(core)
        shares[policy] = core.snapshot()["queues"]["root.gpu"]["usage"]["gpu-mem"]
    assert shares["drf-no-gpu"] == 20480  # only cpu+mem count: it looks small, fills the GPU memory
    assert shares["drf"] < shares["drf-no-gpu"]


# ---------------------------------------------------------------- properties on random clusters

SHAPES = st.fixed_dictionaries({"vcores": st.integers(1, 6), "memory-mb": st.sampled_from([512, 1024, 3072, 8192])})
NODES = st.fixed_dictionaries({"vcores": st.integers(4, 48), "memory-mb": st.sampled_from([8192, 16384, 65536])})


@st.composite
def mixed_clusters(draw):
    nodes = draw(st.lists(NODES, min_size=1, max_size=12))
    queues = draw(st.lists(st.tuples(st.integers(1, 4), st.lists(st.tuples(SHAPES, st.integers(1, 60)),
                                                                 min_size=1, max_size=3)),
                           min_size=2, max_size=5))
    return nodes, queues


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_clusters())
def test_random_clusters_respect_capacity_settle_fully_and_always_serve_the_lowest_share(cluster):
    nodes, queues = cluster
    core = make_core(flat_yaml([w for w, _ in queues]), {f"n{i}": n for i, n in enumerate(nodes)})
    names = core.types.names
    remaining: dict[str, list] = {}
    for qi, (_, apps) in enumerate(queues):
        for ai, (shape, count) in enumerate(apps):
            app = f"q{qi}-a{ai}"
            core.submit_app(app, "u", f"q{qi}")
            core.update_request(app, 1, shape, count)
            remaining[app] = [f"root.q{qi}", tuple(shape[n] for n in names), count]
    weights = {f"root.q{i}": w for i, (w, _) in enumerate(queues)}
    capacity = tuple(sum(n[r] for n in nodes) for r in names)
    usage = {q: [0] * len(names) for q in weights}

    def wshare(q):
        return max(u / c for u, c in zip(usage[q], capacity)) / weights[q]

    for _ in range(200):
        assigned = False
        for node_id, node in core.nodes.items():
            free = [c - a for c, a in zip(node.capacity, node.allocated)]
            for a in core.on_heartbeat(node_id):
                # DRFH: no queue with a lower weighted share had a request fitting this node's room
                chosen = wshare(a.queue)
                for app, (q, shape, left) in remaining.items():
                    if left and q != a.queue and all(s <= f for s, f in zip(shape, free)):
                        assert wshare(q) >= chosen - 1e-9, f"{q} was lower than {a.queue} and fitted"
                free = [f - v for f, v in zip(free, a.vector)]
                assert min(free) >= 0, "node over-allocated"
                remaining[a.app_id][2] -= 1
                usage[a.queue] = [u + v for u, v in zip(usage[a.queue], a.vector)]
                assigned = True
        if not assigned:
            break
    for node in core.nodes.values():
        free = [c - a for c, a in zip(node.capacity, node.allocated)]
        assert min(free) >= 0
        for app, (_, shape, left) in remaining.items():
            assert not (left and all(s <= f for s, f in zip(shape, free))), \
                f"{app} still fits {node.id} after the cluster settled"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(weights=st.lists(st.integers(1, 4), min_size=2, max_size=5), node_count=st.integers(4, 40),
       node=NODES, shape=SHAPES)
def test_one_container_shape_on_many_nodes_meets_the_papers_discrete_bounds(weights, node_count, node, shape):
    """The DRF paper's bounds for whole tasks: gap, sharing incentive and envy-freeness within one container.

    The bounds are the paper's single-pool theorems; with mixed shapes across many nodes the
    leftovers of each node that only small containers fit widen them (DRFH), which the test above
    covers with the greedy invariant instead.
    """
    if not all(shape[r] <= node[r] for r in shape):
        return
    core = make_core(flat_yaml(weights), {f"n{i}": node for i in range(node_count)})
    for i in range(len(weights)):
        core.submit_app(f"a{i}", "u", f"q{i}")
        core.update_request(f"a{i}", 1, shape, 100_000)
    settle(core)
    snap = core.snapshot()
    cap = snap["capacity"]
    container = max(shape[r] / cap[r] for r in shape)  # dominant share of one container
    qs = [snap["queues"][f"root.q{i}"] for i in range(len(weights))]
    weighted = [q["weighted_share"] for q in qs]
    one = container / min(weights)  # the largest weighted share of a single container
    assert max(weighted) - min(weighted) <= one + 1e-9
    total_w = sum(weights)
    for i, q in enumerate(qs):
        # sharing incentive: at least its weighted part of the cluster, less one container (weighted)
        assert q["dominant_share"] >= weights[i] / total_w * (1 - node_count * container) - weights[i] * one - 1e-9
        # envy-freeness: another queue's allocation scaled to my weight runs at most one more container
        mine = min(q["usage"][r] / shape[r] for r in shape)
        for j, other in enumerate(qs):
            scaled = min(other["usage"][r] * weights[i] / weights[j] / shape[r] for r in shape)
            assert scaled <= mine + weights[i] / min(weights) + 1e-9
