"""Preemption through the bridge (issue 15, item 4's service side): the core's rounds run on a
timer in schedule calls, their plan rides on the reply ("preempt", then "kill" once the grace is
over), each container is told once and killed once, and a resync (a snapshot rebuilding the core
from YARN's state and the preemption state the shim kept from the replies) neither restarts a
grace or a starvation clock, nor kills anything twice."""
from __future__ import annotations

import json
import weakref

import pytest

from tests.bridge.messages import TYPES, call, started
from yarn_bridge import protocol
from yarn_bridge.metrics import Metrics
from yarn_bridge.service import CoreService

QUEUES = """\
preemption: {enabled: true, fair-share-timeout-s: 5, min-share-timeout-s: 5, grace-s: 3, max-per-round: '100%'}
reservation: {starvation-timeout-s: null}
queues:
  root:
    submit-acl: "*"
    children:
      a: {submit-acl: "*"}
      b: {submit-acl: "*"}
"""
NODE = {"memory-mb": 4096, "vcores": 4, "gpu-mem": 0}
A_CONTAINERS = [f"container_1_0001_01_00000{i}" for i in range(1, 5)]


class Clock:
    """The core's clock, set by each test; `wall` runs with it, as the host's clocks run together."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def wall(self) -> float:
        return 1_700_000_000 + self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def svc(tmp_path, clock) -> CoreService:
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    service = CoreService(path, clock=clock, wall_clock=clock.wall, metrics=Metrics(clock=clock))
    resync(service, epoch=5)
    return service


# What the shim keeps of each service's replies: the latest preemption state, given back with
# every snapshot.
KEPT: weakref.WeakKeyDictionary[CoreService, dict] = weakref.WeakKeyDictionary()


def resync(svc: CoreService, epoch: int, live=tuple(A_CONTAINERS)) -> dict:
    """A snapshot as the shim takes it: queue a's app runs `live` (all four fill the one node),
    queue b's app asks for four; the preemption state the shim has goes with it."""
    state = {"preemption_state": KEPT[svc]} if svc in KEPT else {}
    reply = call(svc, type="snapshot", epoch=epoch, resources=TYPES,
                 nodes=[{"node": "n1:1", "capacity": NODE, "rack": "/r1"}],
                 apps=[{"app": "app_a", "user": "u", "queue": "root.a"}, {"app": "app_b", "user": "u", "queue": "root.b"}],
                 containers=[started(c, "app_a") for c in live],
                 asks=[[1, 4, "app_b", 1, 0, "*", True, 1024, 1, 0]], **state)
    assert reply["ok"], reply
    return reply


def schedule(svc: CoreService, seq: int, **changes) -> dict:
    reply = call(svc, type="schedule", epoch=svc.epoch, seq=seq, **changes)
    assert reply["ok"], reply
    if "preemption_state" in reply:
        KEPT[svc] = reply["preemption_state"]
    return reply


def at(clock: Clock, svc: CoreService, t: float, seq: int, **changes) -> dict:
    """A schedule call `t` seconds after the start."""
    clock.now = 100.0 + t
    return schedule(svc, seq, **changes)


def containers(reply: dict, field: str) -> list[str]:
    return sorted(v["container"] for v in reply.get(field, ()))


def starve_b(svc: CoreService, clock: Clock) -> list[str]:
    """b below its target from 0, starved at 5: the containers the round at 5.5 marks."""
    at(clock, svc, 0, 1)
    told = containers(at(clock, svc, 5.5, 2), "preempt")
    assert len(told) == 2
    return told


def test_a_starved_queue_gets_its_victims_told_after_the_timeout_and_killed_after_the_grace(svc, clock):
    assert "preempt" not in at(clock, svc, 0, 1) and "preempt" not in at(clock, svc, 4, 2)
    told = at(clock, svc, 5.5, 3)
    assert len(told["preempt"]) == 2 and "kill" not in told  # b's target is half the node
    for v in told["preempt"]:
        assert list(v) == list(protocol.PREEMPTION_FIELDS)
        assert (v["app"], v["queue"], v["for_queue"], v["reason"], v["kill_in_ms"]) == \
            ("app_a", "root.a", "root.b", "fair-share", 3000)
    assert "preempt" not in at(clock, svc, 7, 4), "an AM is told once"
    assert "kill" not in at(clock, svc, 8, 5), "not before the grace is over"
    killed = at(clock, svc, 9, 6)
    assert containers(killed, "kill") == containers(told, "preempt") and "preempt" not in killed
    assert all(v["kill_in_ms"] == 0 for v in killed["kill"])
    # YARN ends them as PREEMPTED; the room goes to b, and nothing is killed again
    gone = [x for c in containers(killed, "kill") for x in (c, "preempted")]
    after = at(clock, svc, 9.5, 7, finished=gone, nodes=[["n1:1", 2048, 2, 0]])
    assert [a["app"] for a in after["assignments"]] == ["app_b", "app_b"]
    assert "kill" not in after and "preempt" not in after
    assert "kill" not in at(clock, svc, 20, 8) and svc.core.preemption.counters["killed"] == 2
    sample = svc.metrics.registry.get_sample_value
    assert sample("yarn_drf_preemptions_total", {"action": "marked"}) == 2
    assert sample("yarn_drf_preemptions_total", {"action": "killed"}) == 2
    assert sample("yarn_drf_preempted_work_seconds_total") == pytest.approx(2 * 9.0)  # started at 0, killed at 9


def test_rounds_run_at_most_once_per_interval_however_often_the_shim_calls(svc, clock):
    for i, t in enumerate((0, 0.2, 0.5, 0.9, 1.0, 1.5, 2.1)):
        at(clock, svc, t, i + 1)
    assert svc.core.preemption.counters["rounds"] == 3  # at 0, 1.0 and 2.1


def test_rounds_keep_to_their_grid_when_the_calls_come_late(svc, clock):
    """Calls about a second apart, some a little late: a late round does not push the next one
    a second past itself, so no second goes without its round."""
    for i, t in enumerate((0, 1.05, 1.98, 2.02, 3.01)):
        at(clock, svc, t, i + 1)
    assert svc.core.preemption.counters["rounds"] == 4  # at 0, 1.05, 2.02 and 3.01


def test_a_kill_comes_with_the_first_call_after_the_grace_not_the_next_round(svc, clock):
    told = starve_b(svc, clock)  # marked at 5.5, killed from 8.5 on; rounds due at 6, 7, 8, 9
    assert "kill" not in at(clock, svc, 8, 3)
    rounds = svc.core.preemption.counters["rounds"]
    killed = at(clock, svc, 8.6, 4)
    assert containers(killed, "kill") == told and "preempt" not in killed
    assert svc.core.preemption.counters["rounds"] == rounds, "a kill between rounds, not a round"
    assert "kill" not in at(clock, svc, 9, 5) and svc.core.preemption.counters["killed"] == 2


def test_the_reply_asks_for_a_call_when_the_next_starvation_round_or_kill_is_due(svc, clock):
    """b below its target since 0 starves at 5; marked at 5.5 (grace 3: killed at 8.5), with
    rounds due each second while it starves; once restored nothing is timed."""
    assert at(clock, svc, 0.3, 1)["call_in_ms"] == 4700  # its timeout, not the round at 1.3
    assert at(clock, svc, 5.5, 2)["call_in_ms"] == 800  # the next round, on the grid (6.3)
    assert at(clock, svc, 8.3, 3)["call_in_ms"] == 200  # the kill at 8.5, before the round at 9.3
    killed = at(clock, svc, 8.5, 4)
    assert len(killed["kill"]) == 2 and killed["call_in_ms"] == 800
    gone = [x for c in containers(killed, "kill") for x in (c, "preempted")]
    at(clock, svc, 8.6, 5, finished=gone, nodes=[["n1:1", 2048, 2, 0]])
    assert "call_in_ms" not in at(clock, svc, 9.3, 6), "b holds its target: nothing is timed"


def test_a_round_comes_when_a_starvation_timeout_runs_out_not_at_the_next_grid_second(svc, clock):
    for seq, t in enumerate((0.3, 1.3, 2.3, 3.3, 4.3)):  # rounds on the grid; b below since 0
        assert "preempt" not in at(clock, svc, t, seq + 1)
    assert len(at(clock, svc, 5.0, 6)["preempt"]) == 2  # starved at 5: the round then, not at 5.3
    rounds = svc.core.preemption.counters["rounds"]
    at(clock, svc, 5.3, 7)
    at(clock, svc, 5.9, 8)
    assert svc.core.preemption.counters["rounds"] == rounds, "the grid starts anew from that round"
    at(clock, svc, 6.0, 9)
    assert svc.core.preemption.counters["rounds"] == rounds + 1


def test_a_resync_keeps_the_grace_it_gave_and_tells_it_again_unchanged(svc, clock):
    """The AM hears of its marks again from the rebuilt core (a new RM would not have told it),
    with what is left of the grace it was given, and once."""
    told = starve_b(svc, clock)
    clock.now = 100 + 6
    resync(svc, epoch=6)
    again = at(clock, svc, 7, 1)
    assert containers(again, "preempt") == told and {v["kill_in_ms"] for v in again["preempt"]} == {1500}
    assert "preempt" not in at(clock, svc, 8, 2)
    assert containers(at(clock, svc, 9, 3), "kill") == told  # the first round past 5.5 + 3, as before the resync
    assert svc.core.nodes["n1:1"].reserved is not None, "the node stays held for b"
    assert svc.core.preemption.counters["marked"] == 2, "told again, not marked again"


def test_a_resync_keeps_a_queues_starvation_clock(svc, clock):
    at(clock, svc, 0, 1)
    clock.now = 100 + 3
    resync(svc, epoch=6)
    assert "preempt" in at(clock, svc, 5.5, 1), "starved since 0, not since the resync at 3"


def test_after_a_resync_a_kill_that_reached_yarn_is_never_repeated(svc, clock):
    starve_b(svc, clock)
    killed = containers(at(clock, svc, 9, 3), "kill")
    assert len(killed) == 2
    clock.now = 100 + 9.2
    resync(svc, epoch=6, live=[c for c in A_CONTAINERS if c not in killed])
    for i, t in enumerate((10, 12, 20, 40)):
        assert "kill" not in at(clock, svc, t, i + 1)
    assert svc.core.preemption.counters["killed"] == 2


def test_after_a_resync_a_kill_yarn_never_saw_is_sent_again_once(svc, clock):
    """The reply carrying the kill was lost (the call timed out): the snapshot that follows still
    has the containers running, so the kill is due again, once."""
    starve_b(svc, clock)
    lost = containers(at(clock, svc, 9, 3), "kill")
    assert len(lost) == 2
    clock.now = 100 + 9.2
    resync(svc, epoch=6)
    again = at(clock, svc, 10, 1)
    assert containers(again, "kill") == lost
    assert "kill" not in at(clock, svc, 11, 2) and svc.core.preemption.counters["killed"] == 2


def test_replies_without_preemption_carry_no_preemption_fields(svc, clock):
    reply = json.loads(svc.handle(json.dumps({"v": protocol.VERSION, "type": "schedule", "epoch": svc.epoch,
                                              "seq": 9})))
    assert reply["ok"] and not {"preempt", "kill"} & set(reply)


def test_after_a_kill_the_core_assigns_no_more_than_the_room_yarn_has_released(tmp_path, clock):
    """YARN keeps a killed container's room on its node until the NodeManager reports the
    container gone (SchedulerNode.releaseContainer waits for the node), while the shim tells the
    core it finished at once. Meanwhile a node listed for a smaller ask must not be decided by the
    core's larger figure: every container beyond YARN's room would come back refused, call after
    call, until the NodeManager's heartbeat (issue 15: thousands on one node in 2 s)."""
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    svc = CoreService(path, clock=clock)
    am, t1, t2 = (f"container_1_0001_01_00000{i}" for i in (1, 2, 3))
    reply = call(svc, type="snapshot", epoch=5, resources=TYPES,
                 nodes=[{"node": "n1:1", "capacity": {"memory-mb": 6144, "vcores": 6, "gpu-mem": 0}, "rack": "/r1"}],
                 apps=[{"app": "app_a", "user": "u", "queue": "root.a"}, {"app": "app_b", "user": "u", "queue": "root.b"},
                       {"app": "app_c", "user": "u", "queue": "root.a"}],
                 containers=[started(am, "app_a"), started(t1, "app_a", memory=2048, vcores=2),
                             started(t2, "app_a", memory=2048, vcores=2)],  # a 1 GB hole left
                 asks=[[1, 2, "app_b", 1, 0, "*", True, 2048, 2, 0]])
    assert reply["ok"], reply
    at(clock, svc, 0, 1)
    [victim] = containers(at(clock, svc, 5.5, 2), "preempt")  # b's half of the node: one 2 GB task
    assert containers(at(clock, svc, 8.5, 3), "kill") == [victim]
    # The shim's next call: the kill as finished, YARN's room still the hole (listed for c's
    # new 1 GB ask), the core's the hole and the victim's.
    yarn_free = [1024, 1, 0]
    early = at(clock, svc, 8.6, 4, finished=[victim, "preempted"], nodes=[["n1:1", *yarn_free]],
               asks=[[2, 1, "app_c", 1, 0, "*", True, 1024, 1, 0]])
    placed = [sum(a["resources"][t] for a in early["assignments"]) for t in TYPES]
    assert all(p <= f for p, f in zip(placed, yarn_free)), f"placed {placed} on a node YARN has {yarn_free} free on"
    # The NodeManager reports the kill: YARN's room is the core's, and b gets its container.
    later = at(clock, svc, 9.5, 5, nodes=[["n1:1", *(f - p for f, p in zip([3072, 3, 0], placed))]])
    assert "app_b" in [a["app"] for a in early["assignments"] + later["assignments"]]
