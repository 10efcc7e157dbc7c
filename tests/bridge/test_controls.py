"""An app's controls over the bridge (protocol version 6): AM asks held to max-am-share with the
reason sent back for the app's diagnostics, per-app headroom in the schedule reply, the AM's
blacklist reaching the core, and application priority at submission and updated."""
from __future__ import annotations

import pytest

from tests.bridge.messages import NODE, ask, call, room, started
from yarn_bridge import protocol
from yarn_bridge.service import CoreService

QUEUES = """
resources: [memory-mb, vcores, gpu-mem]
placement: [{rule: specified}]   # every app here names its queue
queues:
  root:
    children:
      small:
        max: {memory-mb: 4096, vcores: 4}
        max-am-share: 0.25
        submit-acl: "*"
      big:
        submit-acl: "*"
      line:
        order: fifo
        submit-acl: "*"
"""
NODES = ("n1:1", "n2:1")


class Clock:
    """The service's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def svc(tmp_path, clock) -> CoreService:
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    service = CoreService(path, clock=clock)
    reply = call(service, type="snapshot", epoch=5, resources=["memory-mb", "vcores", "gpu-mem"],
                 nodes=[{"node": n, "capacity": NODE, "rack": f"/r{i}"} for i, n in enumerate(NODES)])
    assert reply["ok"], reply
    return service


def schedule(svc: CoreService, seq: int, **changes) -> dict:
    reply = call(svc, type="schedule", epoch=5, seq=seq, nodes=room(svc, NODES), **changes)
    assert reply["ok"], reply
    return reply


def admit(svc: CoreService, seq: int, *apps: tuple[str, str]) -> dict:
    return schedule(svc, seq, submissions=[{"app": a, "user": "alice", "queue": q, "groups": []} for a, q in apps])


def am_ask(ask_id: int, app: str, memory: int = 1024) -> list:
    """The AM ask YARN makes for an attempt: priority 0, one container."""
    return [ask_id, 1, app, 0, 0, "*", True, memory, 1, 0]


def test_an_am_beyond_the_queues_max_am_share_waits_and_the_reply_says_why_until_it_may_start(svc):
    admit(svc, 1, ("app_1", "small"), ("app_2", "small"))
    first = schedule(svc, 2, asks=[am_ask(1, "app_1")], am_asks=[1])
    [am1] = first["assignments"]
    assert am1["app"] == "app_1" and "am_diagnostics" not in first
    schedule(svc, 3, started=[["c1_01_000001", "app_1", am1["node"], 0, 0, am1["assignment_id"], 1024, 1, 0]])
    # 1024 MiB of AMs is the share (0.25 of the max's 4096): app_2's AM waits, and says so once.
    held = schedule(svc, 4, asks=[am_ask(2, "app_2")], am_asks=[2])
    assert held["assignments"] == []
    [[app, why]] = held["am_diagnostics"]
    assert app == "app_2" and "AM share of root.small reached" in why and "max-am-share 0.25" in why
    assert "am_diagnostics" not in schedule(svc, 5, counts=[2, 1]), "an unchanged reason is not sent again"
    # app_1's AM finishes: app_2's AM starts, and its diagnostic is cleared in the same reply.
    freed = schedule(svc, 6, finished=["c1_01_000001", "completed"])
    assert [a["app"] for a in freed["assignments"]] == ["app_2"]
    assert freed["am_diagnostics"] == [["app_2", ""]]


def test_a_task_ask_not_named_in_am_asks_is_not_held_by_the_am_share(svc):
    admit(svc, 1, ("app_1", "small"), ("app_2", "small"))
    schedule(svc, 2, asks=[am_ask(1, "app_1")], am_asks=[1])
    # The same shape at priority 0 from an AM that runs: a task, however many AMs the queue has.
    reply = schedule(svc, 3, asks=[am_ask(2, "app_2")], am_asks=[])
    assert [a["app"] for a in reply["assignments"]] == ["app_2"]
    assert svc.core.apps["app_2"].requests[(0, 0)].am is False


def oracle_headroom(svc: CoreService, app_id: str) -> list[int]:
    """What the app could still get, recomputed from the containers: the cluster's free room,
    and for an app of root.small what its max leaves."""
    core = svc.core
    used = [0, 0, 0]
    queue_used = [0, 0, 0]
    for c in core.containers.values():
        used = [u + r for u, r in zip(used, c.resources)]
        if c.app.queue.path == core.apps[app_id].queue.path:
            queue_used = [u + r for u, r in zip(queue_used, c.resources)]
    room_left = [2 * NODE[t] - u for t, u in zip(("memory-mb", "vcores", "gpu-mem"), used)]
    if core.apps[app_id].queue.path == "root.small":
        room_left = [min(r, m - u) for r, m, u in zip(room_left, (4096, 4, 1 << 62), queue_used)]
    return [max(0, r) for r in room_left]


def test_headroom_goes_to_each_app_when_it_changes_and_is_its_queues_remaining_max(svc, clock):
    admit(svc, 1, ("app_s", "small"), ("app_b", "big"))
    told: dict[str, list[int]] = {}
    seq = 2
    for asks in ([ask(1, "app_s", 3), ask(2, "app_b", 2)], [], [ask(3, "app_b", 5, memory=2048)]):
        clock.now += svc.headroom_interval_s
        reply = schedule(svc, seq, asks=asks)
        seq += 1
        for app, *amounts in reply.get("headroom", []):
            told[app] = amounts
        for app in ("app_s", "app_b"):
            assert told[app] == oracle_headroom(svc, app), (app, seq)
    assert told["app_s"] == [4096 - 3 * 1024, 1, told["app_b"][2]], "small is at 3 of its 4 vcores"
    clock.now += svc.headroom_interval_s
    quiet = schedule(svc, seq)
    assert "headroom" not in quiet, "no usage changed: no headroom sent"
    again = schedule(svc, seq + 1, deltas=[{"op": "attempt_added", "app": "app_s"}])
    assert [row[0] for row in again["headroom"]] == ["app_s"], "a new attempt is told its headroom"


def test_headroom_is_recomputed_for_every_app_at_most_once_an_interval_and_at_once_for_a_new_app(svc, clock):
    first = admit(svc, 1, ("app_s", "small"), ("app_b", "big"))
    assert {row[0] for row in first["headroom"]} == {"app_s", "app_b"}
    clock.now += svc.headroom_interval_s / 2
    busy = schedule(svc, 3, asks=[ask(2, "app_b", 4)])
    assert busy["assignments"] and "headroom" not in busy, "usage moved within the interval: not yet"
    new = admit(svc, 4, ("app_n", "big"))
    assert [row[0] for row in new.get("headroom", [])] == ["app_n"], "a new app is told at once, alone"
    clock.now += svc.headroom_interval_s
    due = schedule(svc, 6, asks=[ask(4, "app_s", 1)])
    told = {app: amounts for app, *amounts in due["headroom"]}
    assert told.keys() >= {"app_s", "app_b"}
    for app, amounts in told.items():
        assert amounts == oracle_headroom(svc, app), app


def test_a_change_made_inside_the_interval_is_told_at_its_end_by_a_call_the_reply_asks_for(svc, clock):
    admit(svc, 1, ("app_s", "small"), ("app_b", "big"))
    clock.now += svc.headroom_interval_s / 4
    busy = schedule(svc, 3, asks=[ask(2, "app_s", 2)])
    assert busy["assignments"] and "headroom" not in busy
    assert 0 < busy["call_in_ms"] <= svc.headroom_interval_s * 1000 * 3 / 4, "a call is asked for at the end"
    clock.now += svc.headroom_interval_s
    quiet = schedule(svc, 4)  # nothing changed in this call: the change of the last one is still owed
    told = {app: amounts for app, *amounts in quiet.get("headroom", [])}
    assert told.get("app_s") == oracle_headroom(svc, "app_s")
    assert "call_in_ms" not in schedule(svc, 5), "nothing owed: no call asked for"


def test_an_apps_blacklist_keeps_the_core_off_those_nodes_and_racks_until_removed(svc):
    admit(svc, 1, ("app_1", "big"))
    reply = schedule(svc, 2, deltas=[{"op": "blacklist", "app": "app_1", "places": ["n1:1"]}],
                     asks=[ask(1, "app_1", 12)])
    assert len(reply["assignments"]) == 8 and {a["node"] for a in reply["assignments"]} == {"n2:1"}
    racked = schedule(svc, 3, deltas=[{"op": "blacklist", "app": "app_1", "places": ["/r1"]}])
    assert {a["node"] for a in racked["assignments"]} == {"n1:1"}, "n1:1 is back; rack /r1 (n2:1) is out"


def test_a_snapshots_app_keeps_its_blacklist(tmp_path):
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    svc = CoreService(path)
    call(svc, type="snapshot", epoch=5, resources=["memory-mb", "vcores", "gpu-mem"],
         nodes=[{"node": n, "capacity": NODE, "rack": "/r"} for n in NODES],
         apps=[{"app": "app_1", "user": "alice", "queue": "root.big", "groups": [], "blacklist": ["n2:1"]}],
         asks=[ask(1, "app_1", 4)], am_asks=[])
    reply = schedule(svc, 1)
    assert [a["node"] for a in reply["assignments"]] == ["n1:1"] * 4


def test_a_malformed_blacklist_delta_is_skipped_and_the_rest_applies(svc):
    admit(svc, 1, ("app_1", "big"))
    reply = schedule(svc, 2, deltas=[{"op": "blacklist", "app": "app_1", "places": "n1:1"}],
                     asks=[ask(1, "app_1", 1)], am_asks=["x", 7])
    assert len(reply["assignments"]) == 1 and svc.counters["bad_deltas"] == 1
    assert svc.core.apps["app_1"].blacklist == frozenset()


def test_an_updated_priority_orders_a_fifo_leaf_from_the_next_decision(svc):
    admit(svc, 1, ("app_1", "line"), ("app_2", "line"))
    schedule(svc, 2, deltas=[{"op": "app_priority", "app": "app_2", "priority": 5}])
    reply = schedule(svc, 3, asks=[ask(1, "app_1", 20), ask(2, "app_2", 20)])
    assert {a["app"] for a in reply["assignments"]} == {"app_2"} and len(reply["assignments"]) == 16
    assert svc.core.apps["app_2"].priority == 5


def test_a_submissions_priority_goes_ahead_of_earlier_apps_of_a_fifo_leaf(svc):
    admit(svc, 1, ("app_1", "line"))
    placed = call(svc, type="schedule", epoch=5, seq=2,
                  submissions=[{"app": "app_2", "user": "bob", "queue": "line", "groups": [], "priority": 3}])
    assert placed["placements"][0]["accepted"]
    reply = schedule(svc, 3, asks=[ask(1, "app_1", 20), ask(2, "app_2", 20)])
    assert {a["app"] for a in reply["assignments"]} == {"app_2"}


def move(svc: CoreService, app: str, queue: str, user: str = "alice") -> dict:
    reply = call(svc, type="move", epoch=5, app=app, queue=queue, user=user, groups=[])
    assert reply["ok"], reply
    return reply


def test_a_move_takes_the_apps_usage_along_or_is_refused_with_the_targets_limit(svc):
    admit(svc, 1, ("app_1", "big"))
    reply = schedule(svc, 2, asks=[ask(1, "app_1", 5)])
    schedule(svc, 3, started=[started(f"c{i}", "app_1", a["assignment_id"], node=a["node"])
                              for i, a in enumerate(reply["assignments"])])
    refused = move(svc, "app_1", "small")
    assert not refused["accepted"] and "root.small would go over its max" in refused["reason"]
    assert "vcores 0 used + 5 of the app > max 4" in refused["reason"]
    schedule(svc, 4, finished=["c0", "completed", "c1", "completed"])
    moved = move(svc, "app_1", "small")
    assert moved == {"v": protocol.VERSION, "ok": True, "accepted": True, "queue": "root.small", "reason": ""}
    queues = svc.core.snapshot()["queues"]
    assert queues["root.small"]["usage"]["vcores"] == 3 and queues["root.big"]["usage"]["vcores"] == 0
    told = {row[0]: row[1:] for row in schedule(svc, 5)["headroom"]}
    assert told["app_1"][:2] == [4096 - 3 * 1024, 1], "its headroom is now small's remaining max"
