"""Preemption across a restart of the core or of the ResourceManager (issue 27, item 4): a new core
restores the state an old one saved (Preemptor.saved -> Preemptor.restore), taking back each item
as YARN's recovered state shows it again.

The property test plays random clusters: queue a fills the nodes, later queues arrive and starve,
rounds mark and kill; at a random moment the state is saved and a new core is built from what a
restarted RM would recover (some containers gone, including some the old core had just killed,
some apps gone, requests asked again or not, some of it only after the first snapshot, at a later
time). An oracle written here from the rules says what must come back:

- a mark is taken back exactly when its container runs again on its node and the app it makes
  room for has its request again; nothing taken back names a container the new core lacks;
- it keeps its deadline, and the new RM's first plan tells its AM again exactly when that
  deadline is still ahead (a kill that comes back due is killed, not told);
- over the old and the new core together, no container is killed twice: a kill that reached YARN
  (its container is gone) is never repeated, one that did not is done again, once;
- a leaf's starvation clock comes back when its demand does, as it was;
- whatever has not come back RESTORE_WINDOW_S after the restore is dropped.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler import SchedulerCore, parse_config
from scheduler.preemption_state import RESTORE_WINDOW_S, SavedLeaf, SavedMark, SavedState
from tests.bridge.invariants import check_accounting
from tests.core.helpers import make_core

TASK = {"vcores": 1, "memory-mb": 1024}
NODE = {"vcores": 4, "memory-mb": 4096}


def config(grace: int) -> str:
    return (f"preemption: {{enabled: true, fair-share-timeout-s: 5, min-share-timeout-s: 5, grace-s: {grace}, "
            "max-per-round: '100%'}\n"
            "reservation: {starvation-timeout-s: null}\n"
            "queues: {root: {children: {a: {}, b: {}, c: {weight: 2}}}}\n")


@st.composite
def cases(draw):
    return {
        "nodes": draw(st.integers(1, 3)),
        "grace": draw(st.sampled_from([3, 10])),
        "late": draw(st.lists(st.sampled_from(["b", "c"]), min_size=1, max_size=2, unique=True)),
        "asks": draw(st.integers(1, 8)),
        "saved_at": draw(st.integers(16, 26)),  # after the late queues starve (arrive at 10, 5 s timeout)
        "down_s": draw(st.sampled_from([0.5, 2.0, 5.0, 30.0])),  # from the save to the new RM's snapshot
        "later_s": draw(st.sampled_from([1.0, 4.0, RESTORE_WINDOW_S + 1])),  # then the rest comes back
        "seed": draw(st.integers(0, 2 ** 16)),
    }


class OldCluster:
    """The old RM's core, driven as the bridge drives it: a round, kills applied by YARN (unless
    the kill is lost with the RM), then every node heartbeats, each second."""

    def __init__(self, case: dict) -> None:
        self.core = make_core(config(case["grace"]), {f"n{i}:1": dict(NODE) for i in range(case["nodes"])})
        self.killed: set[str] = set()  # kills YARN carried out
        self.unconfirmed: set[str] = set()  # kills of the last round, still to reach YARN

    def run(self, case: dict) -> None:
        core = self.core
        core.submit_app("A", "u", "root.a", now=0)
        core.update_request("A", 1, TASK, 4 * case["nodes"] * 2, now=0)
        self.step(0.0, heartbeat=True)
        for q in case["late"]:
            core.submit_app(q.upper(), "u", f"root.{q}", now=10)
            core.update_request(q.upper(), 1, TASK, case["asks"], now=10)
        t = 10.0
        while t < case["saved_at"]:
            self.step(t)
            t += 1.0
        # The last round before the save: its kills may or may not reach YARN before the RM dies.
        plan = core.preemption_round(float(case["saved_at"]))
        self.unconfirmed = {v.container_id for v in plan.kill}

    def step(self, now: float, heartbeat: bool = True) -> None:
        core = self.core
        for v in core.preemption_round(now).kill:
            self.killed.add(v.container_id)
            core.container_finished(v.container_id, "preempted")
        if heartbeat:
            for node_id in list(core.nodes):
                for a in core.on_heartbeat(node_id, now=now):
                    core.container_started(f"c{a.assignment_id}", a.app_id, a.node_id, a.resources,
                                           priority=a.priority, assignment_id=a.assignment_id)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), data=st.data())
def test_a_new_core_takes_back_exactly_what_still_holds_with_its_deadlines_and_kills_nothing_twice(case, data):
    old = OldCluster(case)
    old.run(case)
    saved = old.core.preemption.saved()
    now = case["saved_at"] + case["down_s"]

    # What the restarted RM recovers. Kills of the last round reached YARN or not; other
    # containers may be gone too (finished meanwhile); apps may be gone; AMs ask again or not.
    reached = {cid for cid in sorted(old.unconfirmed) if data.draw(st.booleans(), label=f"kill of {cid} reached")}
    containers = [c for cid, c in old.core.containers.items() if cid not in reached]
    gone = set(data.draw(st.lists(st.sampled_from([c.id for c in containers]), max_size=3, unique=True),
                         label="containers gone") if containers else [])
    apps = sorted(old.core.apps)
    apps_gone = set(data.draw(st.lists(st.sampled_from([a for a in apps if a != "A"]), max_size=1, unique=True),
                              label="apps gone"))
    asks_back = {a: data.draw(st.sampled_from(["now", "later", "never"]), label=f"{a} asks") for a in apps}
    containers_later = set(data.draw(st.lists(st.sampled_from([c.id for c in containers] or ["-"]), max_size=4,
                                              unique=True), label="containers registered later"))

    new = SchedulerCore(parse_config(config(case["grace"])), clock=lambda: now)
    for node_id, node in old.core.nodes.items():
        new.add_node(node_id, dict(zip(new.types.names, node.capacity)))
    for app_id in apps:
        if app_id not in apps_gone:
            new.recover_app(app_id, "u", old.core.apps[app_id].queue.path)

    def recover(which: str) -> None:
        for c in containers:
            if c.id not in gone and c.app.id not in apps_gone and (c.id in containers_later) == (which == "later"):
                new.container_started(c.id, c.app.id, c.node.id, dict(zip(new.types.names, c.resources)),
                                      priority=c.key[0], allocation_id=c.key[1])
        for app_id in apps:
            if app_id not in apps_gone and asks_back[app_id] == which:
                for key, req in old.core.apps[app_id].requests.items():
                    new.update_request(app_id, key[0], dict(zip(new.types.names, req.capability)),
                                       max(req.count, 1), allocation_id=key[1], now=now)

    def holding() -> set[str]:
        """The saved marks whose container runs on its node and whose request's app asks for it."""
        return {m.container_id for m in saved.marks
                if (c := new.containers.get(m.container_id)) is not None and c.node.id == m.node_id
                and (app := new.apps.get(m.app_id)) is not None and m.key in app.requests}

    recover("now")
    at_once = holding()
    new.preemption.restore(saved, now)
    assert set(new.preemption.marks) == at_once, "taken back at once: exactly what YARN has again"
    assert all(cid in new.containers for cid in new.preemption.marks), "nothing restored names a gone container"
    check_accounting(new)
    later = now + case["later_s"]
    recover("later")
    in_time = later < now + RESTORE_WINDOW_S
    back = at_once | (holding() if in_time else set())
    plan = new.preemption_round(later)
    check_accounting(new)

    by_id = {m.container_id: m for m in saved.marks}
    assert new.preemption.counters["restored"] == len(back), f"the oracle takes back {sorted(back)}"
    for cid in back:
        mark = new.preemption.marks.get(cid)
        if mark is not None:  # (the round may have let it off: its room no longer needed)
            assert (mark.victim.marked_at, mark.victim.deadline) == (by_id[cid].marked_at, by_id[cid].deadline)
    killed_now = {v.container_id for v in plan.kill}
    still = {cid for cid in back if cid in new.preemption.marks and not new.preemption.marks[cid].killed}
    ahead = {cid for cid in back if by_id[cid].deadline > (now if cid in at_once else later)}
    assert {v.container_id for v in plan.retold} == still & ahead, "told again: the marks back whose deadline is ahead"
    assert not killed_now & (old.killed | reached), "a kill that reached YARN is never made again"
    assert killed_now <= set(new.containers)
    due = {cid for cid in back if by_id[cid].deadline <= later and cid in new.preemption.marks}
    assert due <= killed_now, "a mark taken back past its deadline is killed at once"
    assert all(new.preemption.counters[k] >= 0 for k in new.preemption.counters)

    # The clocks: a leaf that has demand again goes on from its saved clock.
    for leaf in saved.leaves:
        state = new.preemption.queues.get(leaf.path)
        if state is not None and state.below_fair_since is not None and in_time:
            assert state.below_fair_since == leaf.below_fair_since, leaf
    if not in_time:
        assert not new.preemption.awaiting_marks and not new.preemption.awaiting_leaves, "dropped after the window"


def test_a_mark_waits_for_its_container_and_request_then_comes_back_with_its_deadline_and_is_told_again():
    core = make_core(config(10), {"n0:1": dict(NODE)})
    for app, queue in (("A", "root.a"), ("B", "root.b")):
        core.recover_app(app, "u", queue)
    saved = SavedState((SavedMark("cA_1", "n0:1", "B", (1, 0), "fair-share", 95.0, 105.0),),
                       (SavedLeaf("root.b", 90.0, None, "fair-share"),))
    core.preemption.restore(saved, 100.0)
    assert not core.preemption.marks and "cA_1" in core.preemption.awaiting_marks
    core.container_started("cA_1", "A", "n0:1", {"vcores": 4, "memory-mb": 4096}, priority=1)
    assert not core.preemption_round(101.0).retold, "its request is not back yet"
    core.update_request("B", 1, TASK, 1, now=101.5)
    plan = core.preemption_round(102.0)
    [told] = plan.retold
    assert (told.container_id, told.marked_at, told.deadline, told.for_queue) == ("cA_1", 95.0, 105.0, "root.b")
    assert not plan.mark, "told again, not marked again"
    assert core.preemption.queues["root.b"].below_fair_since == 90.0 and core.preemption.queues["root.b"].starved
    assert core.nodes["n0:1"].reserved is core.apps["B"].requests[(1, 0)], "its node is held for the request again"
    assert [v.container_id for v in core.preemption_round(105.0).kill] == ["cA_1"]


def test_a_saved_deadline_or_clock_from_the_future_is_no_later_than_a_fresh_one_would_be():
    core = make_core(config(10), {"n0:1": dict(NODE)})
    for app, queue in (("A", "root.a"), ("B", "root.b")):
        core.recover_app(app, "u", queue)
    core.container_started("cA_1", "A", "n0:1", {"vcores": 4, "memory-mb": 4096}, priority=1)
    core.update_request("B", 1, TASK, 1, now=0)
    core.preemption.restore(SavedState((SavedMark("cA_1", "n0:1", "B", (1, 0), "fair-share", 9e9, 9e9),),
                                       (SavedLeaf("root.b", 9e9, None, None),)), 100.0)
    victim = core.preemption.marks["cA_1"].victim
    assert (victim.marked_at, victim.deadline) == (100.0, 110.0)
    core.preemption_round(100.5)
    assert core.preemption.queues["root.b"].below_fair_since == 100.0


def test_nothing_is_restored_with_preemption_off_and_no_mark_in_observe_only():
    saved = SavedState((SavedMark("cA_1", "n0:1", "B", (1, 0), "fair-share", 95.0, 105.0),),
                       (SavedLeaf("root.b", 90.0, None, None),))
    for section, marks, leaves in (("enabled: false", 0, 0), ("enabled: true, observe-only: true", 0, 1)):
        core = make_core(f"preemption: {{{section}}}\nqueues: {{root: {{children: {{a: {{}}, b: {{}}}}}}}}\n",
                         {"n0:1": dict(NODE)})
        core.preemption.restore(saved, 100.0)
        assert (len(core.preemption.awaiting_marks), len(core.preemption.awaiting_leaves)) == (marks, leaves)
