"""Preemption across a ResourceManager restart or failover, through the bridge (issue 27, item 4):
each schedule reply whose preemption state changed carries it ("preemption_state", wall-clock
milliseconds), the shim keeps the latest and gives it back with the next RM's first snapshot, and
a fresh service (a new process, its own monotonic clock) goes on from it: the starved queue is
still starved, a mark is told again with what is left of its grace and killed at the deadline
first given, a mark the old RM killed is never killed again. A record that is not one is ignored,
never fatal."""
from __future__ import annotations

import json
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.preemption_state import MAX_SAVED_MARKS, SavedLeaf, SavedMark, SavedState
from tests.bridge.invariants import check_accounting
from tests.bridge.messages import TYPES, call, started
from tests.bridge.test_preemption_service import A_CONTAINERS, NODE, QUEUES
from yarn_bridge import protocol
from yarn_bridge.service import CoreService

B_ASK = [1, 4, "app_b", 1, 0, "*", True, 1024, 1, 0]
WALL_0 = 1_700_000_000  # the wall clock when each story starts


class Host:
    """One RM host's clocks: the service's monotonic clock starts anywhere (`base`), the wall
    clock is the cluster's (NTP), as `at` sets both."""

    def __init__(self, base: float) -> None:
        self.base = base
        self.t = 0.0

    def mono(self) -> float:
        return self.base + self.t

    def wall(self) -> float:
        return WALL_0 + self.t


def service(tmp_path, host: Host) -> CoreService:
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    return CoreService(path, clock=host.mono, wall_clock=host.wall)


def snapshot(svc: CoreService, epoch: int, containers=tuple(A_CONTAINERS), asks=(B_ASK,), state=None) -> dict:
    extra = {} if state is None else {"preemption_state": state}
    reply = call(svc, type="snapshot", epoch=epoch, resources=TYPES,
                 nodes=[{"node": "n1:1", "capacity": NODE, "rack": "/r1"}],
                 apps=[{"app": "app_a", "user": "u", "queue": "root.a"}, {"app": "app_b", "user": "u", "queue": "root.b"}],
                 containers=[started(c, "app_a") for c in containers], asks=list(asks), **extra)
    assert reply["ok"], reply
    return reply


class Shim:
    """What the shim does with the replies: keeps the latest preemption state."""

    def __init__(self) -> None:
        self.state: dict | None = None

    def at(self, svc: CoreService, host: Host, t: float, seq: int, **changes) -> dict:
        host.t = t
        reply = call(svc, type="schedule", epoch=svc.epoch, seq=seq, **changes)
        assert reply["ok"], reply
        self.state = reply.get("preemption_state", self.state)
        return reply


def ids(reply: dict, field: str) -> list[str]:
    return sorted(v["container"] for v in reply.get(field, ()))


def old_rm(tmp_path, shim: Shim, *times: float) -> list[dict]:
    """The old RM's core on its own host: a fills the node, b asks from 0 (below its target: it
    starves at 5, and two of a's containers are marked at 5.5, killed at 8.5); its replies at
    `times`."""
    host = Host(base=100.0)
    old = service(tmp_path, host)
    snapshot(old, epoch=5)
    return [shim.at(old, host, t, seq + 1) for seq, t in enumerate(times)]


def new_rm(tmp_path, t: float, containers=tuple(A_CONTAINERS), asks=(B_ASK,),
           state=None) -> tuple[CoreService, Host]:
    """The new RM's core, a new process on another host (its monotonic clock has nothing to do
    with the old one's), `t` seconds into the story: its first snapshot."""
    host = Host(base=7.0)
    host.t = t
    new = service(tmp_path, host)
    snapshot(new, epoch=6, containers=containers, asks=asks, state=state)
    return new, host


def old_rm_marks(tmp_path, shim: Shim) -> list[str]:
    """The old RM up to the marks at 5.5: the containers told."""
    told = ids(old_rm(tmp_path, shim, 0, 5.5)[-1], "preempt")
    assert len(told) == 2 and shim.state["marks"] and shim.state["leaves"][0]["starved"] == "fair-share"
    return told


def test_a_new_rm_tells_the_marks_again_with_the_grace_left_and_kills_at_the_first_deadline_once(tmp_path):
    shim = Shim()
    told = old_rm_marks(tmp_path, shim)
    new, host = new_rm(tmp_path, 6.0, containers=(), asks=(), state=shim.state)  # failover: nothing recovered yet
    assert not new.core.preemption.marks and len(new.core.preemption.awaiting_marks) == 2
    waiting = shim.at(new, host, 6.3, 1, started=[started(c, "app_a") for c in A_CONTAINERS])
    assert "preempt" not in waiting, "b's AM has not asked again: the marks wait"
    assert all("waiting_until_ms" in m for m in shim.state["marks"]), "the saved state says they wait"
    again = shim.at(new, host, 7.0, 2, asks=[B_ASK])
    assert ids(again, "preempt") == told and {v["kill_in_ms"] for v in again["preempt"]} == {1500}
    assert "kill" not in shim.at(new, host, 8.4, 3)
    assert new.core.preemption.queues["root.b"].starved == "fair-share", "still starved: its clock not restarted"
    killed = shim.at(new, host, 8.5, 4)
    assert ids(killed, "kill") == told and "preempt" not in killed
    gone = [x for c in told for x in (c, "preempted")]
    after = shim.at(new, host, 8.7, 5, finished=gone, nodes=[["n1:1", 2048, 2, 0]])
    assert [a["app"] for a in after["assignments"]] == ["app_b", "app_b"], "b reaches its target"
    for i, t in enumerate((9.5, 12, 20)):
        assert "kill" not in shim.at(new, host, t, 6 + i)
    assert new.core.preemption.counters["killed"] == 2 and new.core.preemption.counters["marked"] == 0
    check_accounting(new.core)


def test_a_kill_the_old_rm_made_is_never_made_again_and_one_it_did_not_make_is_made_at_once(tmp_path):
    """The old RM killed the two at 8.5 and died at 8.6: the state it saved still lists them
    (their containers had not ended yet). One kill reached its NodeManager (the container is gone
    from the new RM), the other did not (the NodeManager still runs it)."""
    shim = Shim()
    killed = ids(old_rm(tmp_path, shim, 0, 5.5, 8.5)[-1], "kill")
    assert len(killed) == 2 and len(shim.state["marks"]) == 2
    reached, missed = killed
    new, host = new_rm(tmp_path, 9.0, containers=[c for c in A_CONTAINERS if c != reached], state=shim.state)
    first = shim.at(new, host, 9.1, 1)
    assert ids(first, "kill") == [missed] and "preempt" not in first
    for i, t in enumerate((9.5, 10, 15, 80)):
        assert "kill" not in shim.at(new, host, t, 2 + i)
    assert not new.core.preemption.awaiting_marks, "the mark of the gone container was dropped after the window"
    assert all(m["container"] != reached for m in shim.state["marks"])


def test_a_starved_queue_keeps_its_clock_across_a_restart_before_anything_was_marked(tmp_path):
    shim = Shim()
    old_rm(tmp_path, shim, 0, 3)
    new, host = new_rm(tmp_path, 3.5, state=shim.state)
    assert "preempt" not in shim.at(new, host, 4, 1)
    assert len(shim.at(new, host, 5.0, 2)["preempt"]) == 2, "starved at 5 s, from the old RM's clock, not at 8.5"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=8), st.text(min_size=1, max_size=8),
                          st.integers(-(2 ** 63), 2 ** 63 - 1), st.integers(-(2 ** 63), 2 ** 63 - 1),
                          st.sampled_from(["fair-share", "min-share"]), st.integers(0, 10 ** 9),
                          st.integers(0, 10 ** 6), st.none() | st.integers(0, 10 ** 6)), max_size=5),
       st.lists(st.tuples(st.text(min_size=1, max_size=8), st.none() | st.integers(0, 10 ** 9),
                          st.integers(0, 10 ** 9), st.none() | st.sampled_from(["fair-share", "min-share"])),
                max_size=5),
       st.floats(-1e6, 1e6))
def test_the_wire_record_reads_back_as_the_state_written_to_the_millisecond(marks, leaves, base):
    """protocol.preemption_state then protocol.saved_state: the same marks and clocks, each time
    within half a millisecond, on a core clock with any offset to the wall clock."""
    offset = WALL_0 - base
    state = SavedState(
        tuple(SavedMark(c, n, "app", (p, a), r, base + at / 1000, base + (at + grace) / 1000,
                        None if w is None else base + w / 1000) for c, n, p, a, r, at, grace, w in marks),
        tuple(SavedLeaf(q, None if f is None else base + f / 1000, base + m / 1000, s) for q, f, m, s in leaves))
    record = json.loads(json.dumps(protocol.preemption_state(state, offset)))
    back, problems = protocol.saved_state(record, offset)
    assert not problems
    assert [(m.container_id, m.node_id, m.app_id, m.key, m.reason) for m in back.marks] == \
        [(m.container_id, m.node_id, m.app_id, m.key, m.reason) for m in state.marks]
    for got, was in zip(back.marks + back.leaves, state.marks + state.leaves):
        times = ("marked_at", "deadline", "waiting_until") if isinstance(was, SavedMark) else \
            ("below_fair_since", "below_min_since", "waiting_until")
        for name in times:
            g, w = getattr(got, name), getattr(was, name)
            assert (g is None) == (w is None) and (w is None or abs(g - w) <= 0.0005 + 1e-6), (name, g, w)


GOOD_MARK = {"container": A_CONTAINERS[1], "node": "n1:1", "app": "app_b", "priority": 1, "allocation_id": 0,
             "reason": "fair-share", "marked_at_ms": WALL_0 * 1000 + 5500, "deadline_ms": WALL_0 * 1000 + 8500}


@pytest.mark.parametrize("record, taken, problem", [
    ("not a record", 0, "is not an object"),
    ([GOOD_MARK], 0, "is not an object"),
    ({"v": 2, "marks": [GOOD_MARK]}, 0, "has version 2, this service reads version 1"),
    ({"marks": [GOOD_MARK]}, 0, "has version None"),
    ({"v": 1, "marks": {"0": GOOD_MARK}}, 0, "marks must be a list"),
    ({"v": 1, "marks": [GOOD_MARK, {**GOOD_MARK, "container": 5}]}, 1, "container must be a non-empty string"),
    ({"v": 1, "marks": [{**GOOD_MARK, "reason": "spite"}, GOOD_MARK]}, 1, "reason must be 'fair-share' or"),
    ({"v": 1, "marks": [{**GOOD_MARK, "deadline_ms": 2 ** 60}]}, 0, "deadline_ms must be milliseconds since 1970"),
    ({"v": 1, "marks": [{**GOOD_MARK, "marked_at_ms": 1.5}]}, 0, "marked_at_ms must be milliseconds"),
    ({"v": 1, "marks": [{**GOOD_MARK, "deadline_ms": 1}]}, 0, "marked_at_ms is after deadline_ms"),
    ({"v": 1, "marks": [{**GOOD_MARK, "priority": 2 ** 63}]}, 0, "priority must be an integer (a Java long)"),
    ({"v": 1, "marks": [GOOD_MARK] * (MAX_SAVED_MARKS + 5)}, 1, f"more than the {MAX_SAVED_MARKS} a record holds"),
    ({"v": 1, "leaves": [{"queue": "root.b"}]}, 0, "has no clock"),
    ({"v": 1, "leaves": [{"queue": "root.b", "below_fair_since_ms": -3}]}, 0, "below_fair_since_ms must be"),
    ({"v": 1, "marks": [GOOD_MARK], "leaves": "root.b"}, 1, "leaves must be a list"),
])
def test_a_record_that_is_not_one_is_ignored_item_by_item_and_the_snapshot_still_applies(tmp_path, caplog, record,
                                                                                         taken, problem):
    host = Host(base=0.0)
    host.t = 6.0
    svc = service(tmp_path, host)
    with caplog.at_level(logging.WARNING, logger="yarn_bridge.service"):
        reply = snapshot(svc, epoch=6, state=record)
    assert reply["ok"] and svc.counters["internal_errors"] == 0
    assert len(svc.core.preemption.marks) == taken
    assert svc.counters["bad_deltas"] >= 1
    assert any("ignored preemption state" in r.getMessage() and problem in r.getMessage() for r in caplog.records), \
        [r.getMessage() for r in caplog.records]
    assert len(svc.core.containers) == 4, "YARN's state applies whatever the record"
    check_accounting(svc.core)
