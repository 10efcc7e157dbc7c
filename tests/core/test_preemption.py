"""Preemption toward the DRF targets (issue 15): configuration, starvation clocks, the victim
rules, the mark -> kill lifecycle and observe-only. Property tests are in test_preemption_properties."""
from __future__ import annotations

import pytest

from scheduler import ConfigError, parse_config
from scheduler.config import PreemptionSpec
from tests.core.helpers import LongTasks, make_core

NODE = {"vcores": 4, "memory-mb": 4096}
TASK = {"vcores": 1, "memory-mb": 1024}


SETTINGS = {"enabled": "true", "fair-share-timeout-s": "5", "min-share-timeout-s": "2", "grace-s": "3",
            "max-per-round": "'50%'"}


def cluster(preemption: str = "", queues: str = "a: {}\n      b: {}", nodes: int = 2, node=NODE) -> LongTasks:
    """Preemption on with short clocks; `preemption`: 'key: value, ...' overriding them."""
    settings = dict(SETTINGS, **dict(kv.split(": ") for kv in preemption.split(", ") if kv))
    yaml = ("preemption: {" + ", ".join(f"{k}: {v}" for k, v in settings.items()) + "}\n"
            "reservation: {starvation-timeout-s: null}\n"
            f"queues:\n  root:\n    children:\n      {queues}\n")
    return LongTasks(make_core(yaml, {f"n{i}": dict(node) for i in range(nodes)}, clock=lambda: 0.0))


def a_fills_then_b_arrives(sim: LongTasks, b_at: float = 10.0) -> None:
    sim.ask("A", "root.a", TASK, 100)
    sim.run(0, 3)
    sim.ask("B", "root.b", TASK, 100, now=b_at)


def usage(sim: LongTasks, path: str) -> int:
    core = sim.core
    return core.queues[path].usage[core.types.index["vcores"]]


# ---------------------------------------------------------------- configuration

def test_the_preemption_section_has_the_issues_keys_and_defaults():
    config = parse_config("queues: {root: {children: {a: {}}}}")
    assert config.preemption == PreemptionSpec(enabled=False, observe_only=False, fair_share_timeout_s=30,
                                               min_share_timeout_s=15, threshold=0.8, grace_s=15, max_per_round=0.1)
    config = parse_config("preemption: {enabled: true, observe-only: true, fair-share-timeout-s: 30, "
                          "min-share-timeout-s: 15, threshold: 0.5, grace-s: 0, max-per-round: '2.5%'}\n"
                          "queues: {root: {children: {a: {preemptable: false}}}}")
    assert config.preemption == PreemptionSpec(True, True, 30, 15, 0.5, 0, 0.025)
    assert config.queues()["root.a"].preemptable is False


@pytest.mark.parametrize("section, error", [
    ("{enabled: yes please}", "preemption.enabled: must be true or false, got 'yes please' (line 1)"),
    ("{threshold: 0}", "preemption.threshold: must be > 0, got 0 (line 1)"),
    ("{threshold: 1.5}", "preemption.threshold: must be at most 1, got 1.5 (line 1)"),
    ("{grace-s: -1}", "preemption.grace-s: must be >= 0, got -1 (line 1)"),
    ("{max-per-round: 10}", "preemption.max-per-round: must be a string, got 10 (line 1)"),
    ("{max-per-round: ten}", "preemption.max-per-round: must be a percentage of the cluster like '10%', got 'ten'"),
    ("{max-per-round: '0%'}", "preemption.max-per-round: percentage must be in (0, 100], got '0%' (line 1)"),
    ("{fair-share-timeout: 3}", "preemption.fair-share-timeout: unknown field (did you mean 'fair-share-timeout-s'?)"),
    ("{min-share-timeout-s: .inf}", "preemption.min-share-timeout-s: must be a finite number"),
])
def test_a_wrong_preemption_setting_is_refused_with_its_field_path(section, error):
    with pytest.raises(ConfigError) as err:
        parse_config(f"preemption: {section}\nqueues: {{root: {{children: {{a: {{}}}}}}}}")
    assert any(e.startswith(error) for e in err.value.errors), err.value.errors


def test_preemptable_must_be_a_boolean():
    with pytest.raises(ConfigError) as err:
        parse_config("queues:\n  root:\n    children:\n      a: {preemptable: 0}\n")
    assert err.value.errors == ["queues.root.children.a.preemptable: must be true or false, got 0 (line 4)"]


# ---------------------------------------------------------------- starvation and the lifecycle

def test_a_late_queue_gets_its_fair_share_back_from_a_queue_holding_the_cluster():
    sim = cluster()
    a_fills_then_b_arrives(sim)
    sim.run(10, 40)
    assert usage(sim, "root.a") == usage(sim, "root.b") == 4  # the target: half each
    assert len(sim.killed) == 4 and {v.queue for v in sim.killed} == {"root.a"}
    assert {v.for_queue for v in sim.killed} == {"root.b"} and {v.reason for v in sim.killed} == {"fair-share"}
    sim.run(40, 80)
    assert len(sim.killed) == 4 and not sim.marked(since=40), "preemption went on once the shares were fair"


def test_nothing_is_marked_before_the_fair_share_timeout_and_nothing_killed_before_the_grace():
    sim = cluster()
    a_fills_then_b_arrives(sim)
    sim.run(10, 30)
    first_mark = min(t for t, plan in sim.plans if plan.mark)
    first_kill = min(t for t, plan in sim.plans if plan.kill)
    assert first_mark == 15  # b below 0.8 x its target since 10, timeout 5 s
    assert first_kill == 18  # grace 3 s
    assert all(v.deadline == v.marked_at + 3 for v in sim.killed)


def test_a_queues_starvation_clock_starts_when_its_demand_came_not_at_the_next_round():
    """Rounds come when the caller's timer says (here a little irregularly): b asks at 10, the
    round at 10.7 is the first to see it, and the one at 15.2 finds it starved (5 s timeout)."""
    sim = cluster()
    sim.ask("A", "root.a", TASK, 100)
    sim.run(0, 3)
    sim.core.preemption_round(9.6)
    sim.ask("B", "root.b", TASK, 100, now=10)
    assert not sim.core.preemption_round(10.7).mark
    assert sim.core.preemption.queues["root.b"].below_fair_since == 10
    assert len(sim.core.preemption_round(15.2).mark) == 4


def test_a_queue_below_its_min_starves_after_the_min_share_timeout():
    sim = cluster(queues="a: {}\n      b: {min: {vcores: 2}}", preemption="fair-share-timeout-s: 1000")
    a_fills_then_b_arrives(sim)
    sim.run(10, 30)
    assert min(t for t, plan in sim.plans if plan.mark) == 12
    assert {v.reason for v in sim.killed} == {"min-share"}
    assert usage(sim, "root.b") == 4  # restored to its target, not just to its min


def test_a_container_released_within_the_grace_is_not_killed():
    sim = cluster()
    a_fills_then_b_arrives(sim)
    sim.run(10, 16)
    marked = sim.marked()
    assert len(marked) == 4  # half the cluster: b's target, within max-per-round
    sim.core.container_finished(marked[0].container_id, "released")  # its AM gave it back
    sim.run(16, 19)
    assert [v.container_id for v in sim.killed] == [v.container_id for v in marked[1:]]
    assert sim.core.preemption.counters["released"] == 1


def test_recomputing_the_plan_keeps_each_mark_once_with_its_first_deadline():
    sim = cluster()
    a_fills_then_b_arrives(sim)
    sim.run(10, 18)
    planned = [plan.planned for t, plan in sim.plans if 15 <= t < 18]
    assert planned[0] == planned[1] == planned[2] and len(planned[0]) == 4
    assert [v.container_id for v in sim.marked()] == [v.container_id for v in planned[0]]  # told once
    assert {v.deadline for v in planned[0]} == {18}


def test_a_mark_whose_room_came_free_elsewhere_is_let_off_before_its_kill():
    """b is marked its whole target (4 containers); then one of a's unmarked tasks ends on its
    own and b takes that room: one mark less is needed. Killing it would push b past its target
    and a below its own, and a would then preempt b back."""
    sim = cluster()
    a_fills_then_b_arrives(sim)
    sim.run(10, 16)
    marked = {v.container_id for v in sim.marked()}
    assert len(marked) == 4
    ended = next(c for c in sorted(sim.core.apps["A"].containers) if c not in marked)
    sim.core.container_finished(ended, "completed")
    sim.run(16, 60)
    assert len(sim.killed) == 3 and sim.core.preemption.counters["cancelled"] == 1
    assert usage(sim, "root.a") == usage(sim, "root.b") == 4
    assert not sim.marked(since=17), "no preemption back and forth"


def test_marks_beyond_what_the_starved_request_still_asks_for_are_let_off():
    sim = cluster()
    a_fills_then_b_arrives(sim)
    sim.run(10, 16)
    assert len(sim.marked()) == 4
    sim.core.update_request("B", 1, TASK, 2, now=16)  # its AM wants two tasks now, not 100
    sim.run(16, 40)
    assert len(sim.killed) == 2 and sim.core.preemption.counters["cancelled"] == 2
    assert usage(sim, "root.b") == 2 and usage(sim, "root.a") == 6
    assert all(n.reserved is None for n in sim.core.nodes.values())


def test_observe_only_reports_the_plan_and_preempts_nothing():
    sim = cluster(preemption="observe-only: true")
    a_fills_then_b_arrives(sim)
    sim.run(10, 40)
    plan = sim.plans[-1][1]
    assert plan.observe_only and not plan.mark and not plan.kill
    assert len(plan.planned) == 4 and {v.for_queue for v in plan.planned} == {"root.b"}
    assert not sim.killed and usage(sim, "root.b") == 0
    assert all(n.reserved is None for n in sim.core.nodes.values())


def test_a_preempted_node_is_held_for_the_starved_queue_while_its_victims_drain():
    sim = cluster()
    a_fills_then_b_arrives(sim)
    sim.run(10, 16)
    held = {n.id: n.reserved.app.id for n in sim.core.nodes.values() if n.reserved is not None}
    assert held == {v.node_id: "B" for v in sim.marked()}
    sim.core.update_request("A", 1, TASK, 100, now=16)  # a asks on; its share is above b's anyway
    got = sim.step(18)  # the kills, then the heartbeats
    assert sorted(a.app_id for a in got) == ["B"] * 4


def test_a_queue_not_preemptable_is_never_a_victim_nor_is_any_queue_below_it():
    sim = cluster(queues="p: {preemptable: false, children: {a: {preemptable: true}}}\n      b: {}")
    sim.ask("A", "root.p.a", TASK, 100)
    sim.run(0, 3)
    sim.ask("B", "root.b", TASK, 100, now=10)
    sim.run(10, 40)
    assert not sim.marked() and usage(sim, "root.p.a") == 8
    assert sim.core.preemption.queues["root.b"].starved == "fair-share"  # it starves, nobody can help


def test_a_queue_not_preemptable_may_still_receive_preempted_room():
    sim = cluster(queues="a: {}\n      b: {preemptable: false}")
    a_fills_then_b_arrives(sim)
    sim.run(10, 40)
    assert usage(sim, "root.b") == 4 and len(sim.killed) == 4


def test_am_containers_go_last_and_younger_containers_first():
    sim = cluster(nodes=1, preemption="max-per-round: '25%'")
    sim.ask("A", "root.a", TASK, 1)
    sim.run(0, 1)
    am = next(iter(sim.core.apps["A"].containers))
    sim.core.mark_am(am)
    for t in range(1, 4):  # one container a second: each younger than the one before
        sim.ask("A", "root.a", TASK, 1, now=t, priority=2)
        sim.run(t, t + 1)
    ages = sorted(sim.core.apps["A"].containers - {am}, key=lambda c: sim.core.containers[c].started)
    sim.ask("B", "root.b", TASK, 100, now=10)
    sim.run(10, 30)
    assert [v.container_id for v in sim.killed] == [ages[-1], ages[-2]]
    assert am in sim.core.containers


def test_the_youngest_containers_go_first_whatever_node_they_hold():
    """n0, first in node order, holds a's tasks started at 0; n1 a's tasks started at 5: b's
    two tasks get their room on n1, and the kills lose 2 x 10 container-seconds, not 2 x 15."""
    sim = cluster(queues="a: {weight: 3}\n      b: {}")
    sim.ask("A", "root.a", TASK, 8)
    sim.core.on_heartbeat("n0", now=0)
    sim.core.on_heartbeat("n1", now=5)
    young = {c.id for c in sim.core.containers.values() if c.node.id == "n1"}
    assert len(young) == 4 and len(sim.core.containers) == 8
    sim.ask("B", "root.b", TASK, 100, now=10)
    sim.run(10, 40)
    assert len(sim.killed) == 2 and {v.container_id for v in sim.killed} <= young
    assert usage(sim, "root.b") == 2 and sim.core.preemption.killed_seconds == 2 * (18 - 5)


def test_an_am_is_not_taken_when_its_queue_cannot_lose_its_whole_app():
    """a's app holds the node: its AM and a 3-vcore task. b asks for one vcore (its AM): a's
    target is three quarters, so the task cannot go (a would keep a quarter, below 0.8 x its
    target even by whole containers), and the AM's own vcore could, but YARN ends the app's task
    with its AM: a would keep nothing. Nothing is taken; b starves."""
    sim = cluster(nodes=1, preemption="max-per-round: '100%'")
    sim.ask("A", "root.a", TASK, 1)
    sim.run(0, 1)
    am = next(iter(sim.core.apps["A"].containers))
    sim.core.mark_am(am)
    sim.ask("A", "root.a", {"vcores": 3, "memory-mb": 1024}, 1, now=1, priority=2)
    sim.run(1, 2)
    sim.ask("B", "root.b", TASK, 1, now=10)
    sim.run(10, 40)
    assert sim.marked() == [] and am in sim.core.containers and len(sim.core.containers) == 2
    assert sim.core.preemption.queues["root.b"].starved == "fair-share"


BIG = {"vcores": 2, "memory-mb": 2048}


def test_a_late_queues_am_gets_room_where_no_node_has_a_hole_for_it():
    """a holds both nodes: its two AMs side by side on n0 with one 2-vcore task, two tasks on n1;
    no node has the 1 vcore b's AM asks for. b's target is that AM (1/8), a's the rest (7/8):
    a task would take a to 6/8, below its target, and an AM its whole app. By whole containers
    (at its target before, above 0.8 x it after) one task goes; a is not starved then, so
    nothing comes back."""
    sim = cluster(preemption="max-per-round: '100%'")
    core = sim.core
    for app in ("A1", "A2"):
        assert core.submit_app(app, "u", "root.a").accepted
        core.update_request(app, 1, BIG, 10)  # a asks for more than it holds
    core.container_started("container_1_0001_01_000001", "A1", "n0", TASK)
    core.container_started("container_1_0002_01_000001", "A2", "n0", TASK)
    for i, node in ((2, "n0"), (3, "n1"), (4, "n1")):
        core.container_started(f"container_1_0001_01_00000{i}", "A1", node, BIG, priority=1)
    assert all(n.allocated == n.capacity for n in core.nodes.values())
    assert core.submit_app("B", "u", "root.b", now=10).accepted
    core.update_request("B", 0, TASK, 1, am=True, now=10)
    sim.run(10, 60)
    assert [v.container_id for v in sim.killed] in (["container_1_0001_01_000002"], ["container_1_0001_01_000003"],
                                                    ["container_1_0001_01_000004"])
    assert usage(sim, "root.b") == 1 and usage(sim, "root.a") == 6
    assert sim.core.preemption.queues.get("root.a") is None or not sim.core.preemption.queues["root.a"].starved
    assert not sim.marked(since=20), "no preemption back"


def test_the_whole_container_rule_is_used_only_where_no_node_has_victims_by_the_strict_rule():
    """n1 holds four of a's 1-vcore tasks, old and important; n0 two 2-vcore ones, younger and
    less important, so cheaper by the victim order. b asks for one vcore: its target is 1/8. A
    1-vcore task keeps a at its target (7/8); a 2-vcore one would take it below: the old small
    task goes."""
    sim = cluster(preemption="max-per-round: '100%'")
    sim.ask("A", "root.a", TASK, 4)
    sim.core.on_heartbeat("n1", now=0)
    sim.ask("A", "root.a", BIG, 2, now=5, priority=2)
    sim.core.on_heartbeat("n0", now=5)
    assert all(n.allocated == n.capacity for n in sim.core.nodes.values())
    sim.ask("B", "root.b", TASK, 1, now=10)
    sim.run(10, 40)
    assert [v.node_id for v in sim.killed] == ["n1"] and usage(sim, "root.a") == 7 and usage(sim, "root.b") == 1


def test_a_node_whose_victims_are_killed_counts_all_the_room_they_left_for_the_starved_queue():
    """Both of b's containers come from n0 (a's younger tasks). Right after the kills, before n0
    is served, the round counts n0's room for both: nothing more is marked on n1 (where a could
    still give one by whole containers) only to be let off once b holds its two."""
    sim = cluster()
    sim.ask("A", "root.a", TASK, 4)
    sim.core.on_heartbeat("n1", now=0)
    sim.ask("A", "root.a", TASK, 4, now=5)
    sim.core.on_heartbeat("n0", now=5)
    sim.ask("B", "root.b", TASK, 2, now=10)
    sim.run(10, 18)
    assert [v.node_id for v in sim.marked()] == ["n0", "n0"]
    plan = sim.core.preemption_round(18)
    assert len(plan.kill) == 2
    for v in plan.kill:
        sim.core.container_finished(v.container_id, "preempted")
    assert not sim.core.preemption_round(18.5).mark
    sim.run(19, 40)
    assert usage(sim, "root.b") == 2 and not sim.marked(since=18)


def test_less_important_containers_go_first():
    sim = cluster(nodes=1, preemption="max-per-round: '25%'")
    sim.ask("A", "root.a", TASK, 2, priority=5)
    sim.run(0, 1)
    sim.ask("A", "root.a", TASK, 2, priority=20, now=1)  # YARN: a higher number is less important
    sim.run(1, 2)
    sim.ask("B", "root.b", TASK, 100, now=10)
    sim.run(10, 30)
    assert [sim.core.apps["A"].requests[(20, 0)].count, sim.core.apps["A"].requests[(5, 0)].count] == [2, 0]


def test_no_container_is_taken_where_its_release_cannot_make_room():
    """n0 holds one of a's tasks beside c's 3 vcores, which cannot be preempted: freeing a's there
    leaves 1 vcore, too little for b's 2-vcore task, so only a container on n1 is taken."""
    sim = cluster(queues="a: {max: {vcores: 4}}\n      b: {}\n      c: {preemptable: false}")
    sim.ask("C", "root.c", {"vcores": 3, "memory-mb": 1024}, 1)
    sim.core.on_heartbeat("n0", now=0)
    sim.ask("A", "root.a", TASK, 100)
    sim.run(0, 3)
    sim.ask("B", "root.b", {"vcores": 2, "memory-mb": 1024}, 1, now=10)
    sim.run(10, 30)
    assert [v.node_id for v in sim.killed] == ["n1"]
    assert usage(sim, "root.b") == 2 and usage(sim, "root.a") == 3


def test_a_round_takes_at_most_max_per_round_of_the_cluster():
    sim = cluster(nodes=8, preemption="max-per-round: '10%'")  # 3.2 of 32 vcores: 3 one-vcore tasks
    a_fills_then_b_arrives(sim)
    sim.run(10, 60)
    per_round = [len(plan.mark) for _, plan in sim.plans if plan.mark]
    assert max(per_round) == 3 and usage(sim, "root.b") == 16


def test_the_victim_queue_keeps_its_target_and_the_starved_queue_does_not_pass_its_own():
    """Weights 3:1: b's target is a quarter; a keeps three quarters."""
    sim = cluster(queues="a: {weight: 3}\n      b: {}")
    a_fills_then_b_arrives(sim)
    sim.run(10, 60)
    assert (usage(sim, "root.a"), usage(sim, "root.b")) == (6, 2)
    assert len(sim.killed) == 2


def test_turning_preemption_off_cancels_the_marks_and_lets_the_nodes_go():
    sim = cluster()
    a_fills_then_b_arrives(sim)
    sim.run(10, 16)
    assert sim.core.preemption.marks
    sim.core.reload(parse_config("queues: {root: {children: {a: {}, b: {}}}}"))
    sim.run(16, 30)
    assert not sim.killed and not sim.core.preemption.marks
    assert all(n.reserved is None for n in sim.core.nodes.values())


def test_only_the_victims_needed_for_the_room_are_taken():
    """n0 holds a's old 3-vcore task and a younger 1-vcore one; younger goes first, but b's 3-vcore
    request needs the old one's room, and with it the young one is not needed."""
    sim = cluster(queues="a: {}\n      b: {weight: 3}", nodes=1, preemption="max-per-round: '100%'")
    sim.ask("A", "root.a", {"vcores": 3, "memory-mb": 1024}, 1)
    sim.core.on_heartbeat("n0", now=0)
    sim.ask("A", "root.a", TASK, 5, now=1, priority=2)
    sim.run(1, 3)
    old = next(c for c in sim.core.apps["A"].containers if sim.core.containers[c].resources[sim.core.types.index["vcores"]] == 3)
    sim.ask("B", "root.b", {"vcores": 3, "memory-mb": 1024}, 1, now=10)
    sim.run(10, 30)
    assert [v.container_id for v in sim.killed] == [old]
    assert usage(sim, "root.b") == 3


def test_on_a_node_with_gpu_cards_the_victim_frees_a_card_that_then_holds_the_request():
    """Four 8 GiB cards hold a's 6 GiB tasks on cards 0-2 and a 4 GiB one on card 3: 10 GiB free
    in all, but no card has the 6 GiB b asks for. The node total says the room is there and no
    kill is needed, so b would wait for ever; by the cards, the 4 GiB task must go (its card then
    holds b's task), and one victim is all the targets allow."""
    yaml = ("resources: [vcores, memory-mb, gpu-mem]\n"
            "preemption: {" + ", ".join(f"{k}: {v}" for k, v in SETTINGS.items()) + "}\n"
            "reservation: {starvation-timeout-s: null}\n"
            "queues:\n  root:\n    children:\n      a: {}\n      b: {}\n")
    core = make_core(yaml, {}, clock=lambda: 0.0)
    core.add_node("g0", {"vcores": 16, "memory-mb": 16384, "gpu-mem": 4 * 8192}, cards=[8192] * 4)
    sim = LongTasks(core)
    sim.ask("A", "root.a", {"vcores": 1, "memory-mb": 1024, "gpu-mem": 6144}, 3)
    sim.run(0, 2)
    sim.ask("A", "root.a", {"vcores": 1, "memory-mb": 1024, "gpu-mem": 4096}, 1, priority=2)
    sim.run(2, 4)
    gpu = core.types.index["gpu-mem"]
    small = [c for c in core.containers.values() if c.resources[gpu] == 4096]
    assert len(small) == 1 and small[0].cards == (3,) and core.nodes["g0"].cards.free == [2048, 2048, 2048, 4096]
    sim.ask("B", "root.b", {"vcores": 1, "memory-mb": 1024, "gpu-mem": 6144}, 100, now=10)
    sim.run(10, 40)
    assert [v.container_id for v in sim.killed] == [small[0].id]
    assert core.queues["root.b"].usage[gpu] == 6144 and core.queues["root.a"].usage[gpu] == 3 * 6144


def test_nothing_is_preempted_for_an_am_its_queues_max_am_share_holds_back():
    sim = cluster(queues="a: {max-am-share: 0.1}\n      b: {}")
    sim.ask("B", "root.b", TASK, 100)
    sim.core.submit_app("A1", "u", "root.a")
    sim.core.container_started("container_1_0001_01_000001", "A1", "n0", TASK)  # a's one AM, counted
    sim.core.submit_app("A2", "u", "root.a")
    sim.core.update_request("A2", 0, TASK, 1, am=True)  # 2 of 8 vcores > 0.1: it waits
    sim.run(0, 20)
    assert sim.marked() == [] and sim.killed == []
    sim.core.update_request("A1", 1, TASK, 2)  # a task of A1 is not held back: b gives room for it
    sim.run(20, 40)
    assert sim.marked()
