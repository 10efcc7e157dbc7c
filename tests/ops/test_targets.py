"""Targets: the pooled fill against hand-computed water-filling (see each test's working), and the
reachable target against what the core's decisions actually settle to on the real nodes."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler import SchedulerCore, parse_config
from scheduler import targets as targets_module
from scheduler.targets import ReplayInput, targets


def core_with(yaml_text: str, capacity: dict[str, int], demands: dict[str, tuple[dict[str, int], int]],
              **kwargs) -> SchedulerCore:
    core = SchedulerCore(parse_config(yaml_text), **kwargs)
    core.add_node("n1", capacity)
    for i, (queue, (shape, count)) in enumerate(sorted(demands.items())):
        core.submit_app(f"app{i}", "u", queue)
        core.update_request(f"app{i}", 1, shape, count)
    return core


TWO = """
resources: [vcores, memory-mb]
queues:
  root:
    children:
      a: {}
      b: {}
"""


def test_drf_paper_example_both_get_two_thirds():
    # <9 CPU, 18 GB>; A's tasks <1, 4>, B's <3, 1>: A <3, 12>, B <6, 2>, both at dominant share 2/3.
    core = core_with(TWO, {"vcores": 9, "memory-mb": 18},
                     {"root.a": ({"vcores": 1, "memory-mb": 4}, 10), "root.b": ({"vcores": 3, "memory-mb": 1}, 10)})
    t = targets(core)
    assert t["root.a"].pooled_dominant_share == pytest.approx(2 / 3)
    assert t["root.b"].pooled_dominant_share == pytest.approx(2 / 3)
    assert t["root.a"].pooled_allocation == pytest.approx((3, 12))
    assert t["root.b"].pooled_allocation == pytest.approx((6, 2))
    assert t["root.a"].demand == (10, 40)


def test_the_core_converges_to_the_drf_paper_target():
    core = core_with(TWO, {"vcores": 9, "memory-mb": 18},
                     {"root.a": ({"vcores": 1, "memory-mb": 4}, 10), "root.b": ({"vcores": 3, "memory-mb": 1}, 10)})
    t = targets(core)
    while core.on_heartbeat("n1", now=0):
        pass
    snap = core.snapshot()["queues"]
    for q in ("root.a", "root.b"):
        assert snap[q]["dominant_share"] == pytest.approx(t[q].pooled_dominant_share)
        assert snap[q]["dominant_share"] == pytest.approx(t[q].dominant_share)


GPU_AND_CPU = """
resources: [vcores, memory-mb, gpu-mem]
queues:
  root:
    children:
      gpu: {}
      team:
        children: {cpu: {}, etl: {weight: 2}}
"""


def gpu_and_cpu_core(pairs: int = 2, asked: int = 100) -> SchedulerCore:
    """GPU nodes and as many CPU nodes; GPU tasks need 2 vcores with their GPU, on a GPU node."""
    core = SchedulerCore(parse_config(GPU_AND_CPU))
    for i in range(pairs):
        core.add_node(f"gpu{i:02}", {"vcores": 4, "memory-mb": 8192, "gpu-mem": 2})
        core.add_node(f"cpu{i:02}", {"vcores": 4, "memory-mb": 8192, "gpu-mem": 0})
    for app, queue, shape in (("g", "gpu", {"vcores": 2, "memory-mb": 2048, "gpu-mem": 1}),
                              ("c", "cpu", {"vcores": 1, "memory-mb": 1024}),
                              ("e", "etl", {"vcores": 1, "memory-mb": 2048})):
        core.submit_app(app, "u", queue)
        core.update_request(app, 1, shape, asked)
    return core


def settle(core: SchedulerCore) -> None:
    while any([a for node in list(core.nodes) for a in core.on_heartbeat(node, now=0)]):
        pass


def test_the_reachable_target_is_what_the_decisions_settle_to_and_the_pooled_one_may_not_be():
    # Pooled, gpu would hold 2.67 GPUs (share 0.667); on the nodes the CPU queues take vcores of
    # the GPU nodes in turn and gpu gets 2 tasks (0.5): the reachable target says so.
    core = gpu_and_cpu_core()
    t = targets(core)
    settle(core)
    snap = core.snapshot()["queues"]
    for path in ("root.gpu", "root.team", "root.team.cpu", "root.team.etl"):
        assert tuple(snap[path]["usage"].values()) == pytest.approx(t[path].allocation), path
        assert snap[path]["dominant_share"] == pytest.approx(t[path].dominant_share)
    assert t["root.gpu"].dominant_share == pytest.approx(0.5)
    assert t["root.gpu"].pooled_dominant_share > 0.6


def test_the_reachable_target_counts_running_containers_with_their_shapes():
    # Half the cluster runs: the target replays those containers and what is still asked for.
    core = gpu_and_cpu_core()
    settle(core)
    settled = {p: v["usage"] for p, v in core.snapshot()["queues"].items()}
    for cid in sorted(core.containers)[::2]:
        core.container_finished(cid)
    t = targets(core)
    for path, usage in settled.items():
        assert tuple(usage.values()) == pytest.approx(t[path].allocation), path


@pytest.mark.parametrize("second_id, b_reaches", [("_000001", False), ("_000002", True)])
def test_an_am_stays_where_it_runs_in_the_replay(second_id, b_reaches):
    # n1 has one vcore and 8 GB: a's AM holds the vcore, so b's <1, 6 GB> tasks fit nowhere for as
    # long as a runs; the replay moves a's ordinary containers but never its AM (it ends with the
    # app). The same container as a task (`_000002`) is moved, and b reaches n1.
    core = SchedulerCore(parse_config(TWO))
    core.add_node("n1", {"vcores": 1, "memory-mb": 8})
    core.add_node("n2", {"vcores": 4, "memory-mb": 4})
    core.submit_app("app_a", "u", "root.a")
    core.submit_app("app_b", "u", "root.b")
    core.container_started(f"container_1_0001_01{second_id}", "app_a", "n1", {"vcores": 1, "memory-mb": 1})
    core.update_request("app_a", 1, {"vcores": 1, "memory-mb": 1}, 10)
    core.update_request("app_b", 1, {"vcores": 1, "memory-mb": 6}, 1)
    t = targets(core)
    assert (t["root.b"].dominant_share > 0) == b_reaches, t["root.b"]
    if not b_reaches:  # what the live decisions do: b waits for the AM's node
        settle(core)
        assert core.snapshot()["queues"]["root.b"]["dominant_share"] == 0


def test_a_demand_too_large_to_replay_whole_is_replayed_on_a_sample_of_the_nodes(monkeypatch):
    core = gpu_and_cpu_core(pairs=40, asked=1000)
    exact = targets(core)
    monkeypatch.setattr(targets_module, "REPLAY_BUDGET", 300)
    monkeypatch.setattr(targets_module, "_last", None)
    sampled = targets(core)
    for path in ("root.gpu", "root.team.cpu", "root.team.etl"):
        # 3000 containers asked: 10% of the nodes, every tenth
        assert sampled[path].dominant_share == pytest.approx(exact[path].dominant_share, abs=0.05), path


def test_the_replay_is_reused_while_demand_and_nodes_stay_the_same():
    core = gpu_and_cpu_core()
    first = ReplayInput(core).compute()
    assert ReplayInput(core).compute() is first
    core.update_request("g", 1, {"vcores": 2, "memory-mb": 2048, "gpu-mem": 1}, 1)
    assert ReplayInput(core).compute() is not first


def test_weights_scale_the_level():
    # B weight 2: A's share s, B's 2s. CPU: 4.5s + 18s <= 9 -> s = 0.4; memory 18s + 6s <= 18 holds.
    yaml_text = TWO.replace("b: {}", "b: {weight: 2}")
    core = core_with(yaml_text, {"vcores": 9, "memory-mb": 18},
                     {"root.a": ({"vcores": 1, "memory-mb": 4}, 10), "root.b": ({"vcores": 3, "memory-mb": 1}, 10)})
    t = targets(core)
    assert t["root.a"].pooled_dominant_share == pytest.approx(0.4)
    assert t["root.b"].pooled_dominant_share == pytest.approx(0.8)
    assert t["root.b"].pooled_weighted_share == pytest.approx(0.4)


def test_progressive_filling_continues_for_queues_not_using_the_saturated_resource():
    # <10 CPU, 10 mem>; c: <1, 0>, b: <1, 0.5> (as <2, 1>), m: <0, 1>. CPU fills at s = 0.5
    # (c 5 CPU, b 5 CPU + 2.5 mem); m keeps growing on memory alone: 2.5 + 10s <= 10 -> 0.75.
    yaml_text = """
resources: [vcores, memory-mb]
queues:
  root:
    children: {c: {}, b: {}, m: {}}
"""
    core = core_with(yaml_text, {"vcores": 10, "memory-mb": 10},
                     {"root.c": ({"vcores": 1}, 100), "root.b": ({"vcores": 2, "memory-mb": 1}, 100),
                      "root.m": ({"memory-mb": 1}, 100)})
    t = targets(core)
    assert t["root.c"].pooled_dominant_share == pytest.approx(0.5)
    assert t["root.b"].pooled_dominant_share == pytest.approx(0.5)
    assert t["root.m"].pooled_dominant_share == pytest.approx(0.75)
    assert t["root"].pooled_allocation == pytest.approx((10, 10))


HIER = """
resources: [vcores]
queues:
  root:
    children:
      p:
        children: {x: {}, y: {}}
      q: {weight: 2}
"""


def test_hierarchy_divides_the_parents_part():
    # 12 CPU: p:q = 1:2 -> 4 and 8; x and y split p's 4.
    core = core_with(HIER, {"vcores": 12}, {"root.p.x": ({"vcores": 1}, 50), "root.p.y": ({"vcores": 1}, 50),
                                            "root.q": ({"vcores": 1}, 50)})
    t = targets(core)
    assert [t[p].pooled_dominant_share for p in ("root.p", "root.q", "root.p.x", "root.p.y")] == pytest.approx(
        [1 / 3, 2 / 3, 1 / 6, 1 / 6])


def test_demand_caps_a_queue_and_the_rest_goes_to_others():
    # x wants 1 CPU: y gets the rest of p's 4. Then x and y want 1 each: p needs 2, q gets 10.
    core = core_with(HIER, {"vcores": 12}, {"root.p.x": ({"vcores": 1}, 1), "root.p.y": ({"vcores": 1}, 50),
                                            "root.q": ({"vcores": 1}, 50)})
    t = targets(core)
    assert t["root.p.x"].pooled_allocation == pytest.approx((1,))
    assert t["root.p.y"].pooled_allocation == pytest.approx((3,))
    core = core_with(HIER, {"vcores": 12}, {"root.p.x": ({"vcores": 1}, 1), "root.p.y": ({"vcores": 1}, 1),
                                            "root.q": ({"vcores": 1}, 50)})
    t = targets(core)
    assert t["root.p"].pooled_allocation == pytest.approx((2,))
    assert t["root.q"].pooled_allocation == pytest.approx((10,))


def test_queue_without_demand_has_target_zero():
    core = core_with(HIER, {"vcores": 12}, {"root.q": ({"vcores": 1}, 50)})
    t = targets(core)
    assert t["root.p"].pooled_dominant_share == 0
    assert t["root.q"].pooled_dominant_share == pytest.approx(1.0)


def test_max_caps_the_target():
    core = core_with(HIER.replace("q: {weight: 2}", "q: {weight: 2, max: {vcores: 6}}"), {"vcores": 12},
                     {"root.p.x": ({"vcores": 1}, 50), "root.q": ({"vcores": 1}, 50)})
    t = targets(core)
    assert t["root.q"].pooled_allocation == pytest.approx((6,))
    assert t["root.p"].pooled_allocation == pytest.approx((6,))


def test_min_is_filled_first():
    # p (weight 1) has min 6 of 12: it gets 6 first; q (weight 2) then reaches level 6/12/2 = 0.25
    # with 6 -- without the min it would be p 4, q 8.
    core = core_with(HIER.replace("      p:\n", "      p:\n        min: {vcores: 6}\n"), {"vcores": 12},
                     {"root.p.x": ({"vcores": 1}, 50), "root.q": ({"vcores": 1}, 50)})
    t = targets(core)
    assert t["root.p"].pooled_allocation == pytest.approx((6,))
    assert t["root.q"].pooled_allocation == pytest.approx((6,))


def test_mins_that_do_not_fit_are_shared_by_how_far_below_min():
    # Both mins 8 of 12: filled at the same fraction of their min -> 6 each.
    text = """
resources: [vcores]
queues:
  root:
    children:
      a: {min: {vcores: 8}}
      b: {min: {vcores: 8}, weight: 5}
"""
    core = core_with(text, {"vcores": 12}, {"root.a": ({"vcores": 1}, 50), "root.b": ({"vcores": 1}, 50)})
    t = targets(core)
    assert t["root.a"].pooled_allocation == pytest.approx((6,))
    assert t["root.b"].pooled_allocation == pytest.approx((6,))


def test_demand_the_policy_does_not_count_is_served_first():
    # drf-no-gpu: gpu-mem does not count in shares, so a GPU-only queue has key 0 and gets all it asks.
    text = """
resources: [vcores, gpu-mem]
queues:
  root:
    children: {cpu: {}, gpu: {}}
"""
    core = core_with(text, {"vcores": 10, "gpu-mem": 100},
                     {"root.cpu": ({"vcores": 1}, 50), "root.gpu": ({"gpu-mem": 10}, 5)}, policy="drf-no-gpu")
    t = targets(core)
    assert t["root.gpu"].pooled_allocation == pytest.approx((0, 50))
    assert t["root.cpu"].pooled_allocation == pytest.approx((10, 0))


def test_siblings_with_different_dominant_resources_inside_a_weighted_parent():
    # <16 vcores, 32768 MB, 8000 gpu>. batch (max 4 vcores) stops at share 0.25. Inside prod, etl
    # (<1, 2048> x 20) and ml (<1, 1024, 3000> x 3) rise at equal share s: etl uses 16s vcores,
    # ml (gpu-dominant) 8000s * 3/9000 = 2.667s: 4 + 18.667s = 16 -> s = 9/14 for both.
    text = """
resources: [vcores, memory-mb, gpu-mem]
queues:
  root:
    children:
      prod:
        weight: 2
        children:
          etl: {}
          ml: {max: {gpu-mem: 8000}}
      batch: {max: {vcores: 4}}
"""
    core = core_with(text, {"vcores": 16, "memory-mb": 32768, "gpu-mem": 8000},
                     {"root.prod.etl": ({"vcores": 1, "memory-mb": 2048}, 20),
                      "root.prod.ml": ({"vcores": 1, "memory-mb": 1024, "gpu-mem": 3000}, 3),
                      "root.batch": ({"vcores": 1, "memory-mb": 2048}, 20)})
    t = targets(core)
    assert t["root.batch"].pooled_dominant_share == pytest.approx(0.25)
    assert t["root.prod.etl"].pooled_dominant_share == pytest.approx(9 / 14)
    assert t["root.prod.ml"].pooled_dominant_share == pytest.approx(9 / 14)
    assert t["root.prod"].pooled_allocation[0] == pytest.approx(12)


shapes = st.tuples(st.integers(0, 4), st.integers(0, 4096), st.integers(0, 2000))


@settings(max_examples=60, deadline=None)
@given(demands=st.lists(st.tuples(shapes, st.integers(0, 30)), min_size=6, max_size=6),
       weights=st.lists(st.sampled_from([1, 2, 3]), min_size=3, max_size=3),
       caps=st.lists(st.one_of(st.none(), st.integers(1, 20)), min_size=3, max_size=3),
       min_cpu=st.integers(0, 12))
def test_fill_invariants(demands, weights, caps, min_cpu):
    """Within capacity, demand and every max; a leaf short of its demand is blocked by a full resource."""
    def maxline(c):
        return f", max: {{vcores: {c}}}" if c is not None else ""
    text = f"""
resources: [vcores, memory-mb, gpu-mem]
queues:
  root:
    children:
      a:
        weight: {weights[0]}
        min: {{vcores: {min_cpu}}}
        children: {{x: {{weight: {weights[1]}{maxline(caps[0])}}}, y: {{}}}}
      b:
        weight: {weights[2]}
        children: {{p: {{{maxline(caps[1])[2:]}}}, q: {{}}}}
      c: {{max: {{vcores: {caps[2] or 40}}}}}
      d: {{}}
"""
    leaves = ["root.a.x", "root.a.y", "root.b.p", "root.b.q", "root.c", "root.d"]
    core = SchedulerCore(parse_config(text))
    core.add_node("n1", {"vcores": 24, "memory-mb": 32768, "gpu-mem": 4000})
    for i, (leaf, (shape, count)) in enumerate(zip(leaves, demands)):
        core.submit_app(f"app{i}", "u", leaf)
        core.update_request(f"app{i}", 1, dict(zip(("vcores", "memory-mb", "gpu-mem"), shape)), count)
    t = targets(core)
    cap = core.capacity
    assert all(a <= c * (1 + 1e-9) + 1e-6 for a, c in zip(t["root"].pooled_allocation, cap))
    for path, q in core.queues.items():
        if q.max is not None:
            assert all(a <= m * (1 + 1e-9) + 1e-6 for a, m in zip(t[path].pooled_allocation, q.max))
        kids = [t[c.path].pooled_allocation for c in q.children.values()]
        if kids:
            assert t[path].pooled_allocation == pytest.approx(tuple(map(sum, zip(*kids))), rel=1e-9, abs=1e-6)
    for leaf in leaves:
        alloc, want = t[leaf].pooled_allocation, t[leaf].demand
        assert all(a <= d * (1 + 1e-9) + 1e-6 for a, d in zip(alloc, want))
        if any(d and a < d * (1 - 1e-6) for a, d in zip(alloc, want)):
            # blocked: some resource it uses is full in the cluster or at a max of it or an ancestor
            full = set()
            for q in core.queues[leaf].ancestors_and_self():
                limit = cap if q.parent is None else q.max
                if limit is not None:
                    full |= {j for j, (a, m) in enumerate(zip(t[q.path].pooled_allocation, limit))
                             if a >= m * (1 - 1e-6) - 1e-6}
            assert any(want[j] > 0 for j in full), (leaf, alloc, want)
