"""The messages that used to raise out of the service, each made into a test from its reproducer:
each now gets a reply saying what is wrong, and nothing out of range enters the core."""
from __future__ import annotations

import json
import threading
import time

from tests.bridge.invariants import check_accounting
from tests.bridge.messages import NODE, TYPES, ask, call, next_seq, schedule, snapshot, started
from tests.waits import wait_for
from yarn_bridge import protocol
from yarn_bridge.service import CoreService

APP = {"app": "app_1", "user": "alice", "queue": "root.mem", "groups": []}


def test_amounts_beyond_a_java_long_are_refused_and_later_calls_still_work(queues_file):
    svc = CoreService(queues_file)
    huge = {"memory-mb": 10 ** 309, "vcores": 8, "gpu-mem": 0}
    reply = snapshot(svc, nodes=[{"node": "n1:1", "capacity": NODE}, {"node": "n2:1", "capacity": huge}],
                     apps=[APP], containers=[started("c_1", "app_1", memory=2 ** 63)],
                     asks=[ask(1, "app_1", 1, memory=10 ** 309), ask(2, "app_1", 1, memory=2 ** 63 - 1)])
    assert reply["ok"]
    assert set(svc.core.nodes) == {"n1:1"} and not svc.core.containers
    assert [r.capability[0] for r in svc.core.apps["app_1"].pending] == [2 ** 63 - 1], "the largest long is an amount"
    for _ in range(3):  # used to raise on every call until the next snapshot
        assert schedule(svc, deltas=[{"op": "node_added", "node": "n3:1", "capacity": huge}])["ok"]
    huge_free = call(svc, type="schedule", epoch=5, seq=next_seq(svc), nodes=[["n1:1", 2 ** 63, 8, 0]])
    assert huge_free["ok"] and huge_free["assignments"] == [], "a free amount beyond a long: a bad row"
    assert "n3:1" not in svc.core.nodes and svc.counters["internal_errors"] == 0
    check_accounting(svc.core)


def test_non_string_names_are_refused_one_item_at_a_time_and_the_rest_of_the_batch_applies(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc, apps=[{"app": "app_0", "user": 7, "queue": "root.mem"}, APP])
    assert set(svc.core.apps) == {"app_1"}
    reply = schedule(svc, deltas=[{"op": "app_added", "app": "app_2", "user": ["bob"], "queue": "root.cpu"},
                                  {"op": "app_added", "app": "app_3", "user": "bob", "queue": {"q": 1}},
                                  {"op": "app_added", "app": "app_4", "user": "bob", "queue": "root.cpu"},
                                  {"op": "node_removed", "node": 5}],
                     asks=[ask(1, "app_4", 1)])
    assert reply["ok"] and len(reply["assignments"]) == 1, "the good delta and the ask after the bad ones apply"
    assert set(svc.core.apps) == {"app_1", "app_4"} and svc.counters["bad_deltas"] == 4
    placed = schedule(svc, nodes=(), submissions=[{"app": "app_5", "user": None, "queue": 3, "groups": []},
                                                  {"app": "app_6", "user": "bob", "queue": "cpu", "groups": [1]}])
    assert placed["ok"] and [p["accepted"] for p in placed["placements"]] == [False, False]
    assert "user must be a string" in placed["placements"][0]["reason"]
    assert "groups must be a list of strings" in placed["placements"][1]["reason"]
    assert set(svc.core.apps) == {"app_1", "app_4"}
    check_accounting(svc.core)


def test_json_nested_thousands_deep_gets_an_error_not_a_recursion(queues_file):
    svc = CoreService(queues_file)
    for text in ("[" * 2000 + "]" * 2000, '{"v": %d, "type": "schedule", "deltas": ' % protocol.VERSION + "[" * 100_000,
                 json.dumps({"v": protocol.VERSION, "type": "snapshot", "epoch": 1, "resources": TYPES,
                             "nodes": [{"node": "n", "capacity": {"memory-mb": _deep(900)}}]})):
        reply = json.loads(svc.handle(text))
        assert reply["v"] == protocol.VERSION and reply["ok"] in (True, False)
    assert "nested too deeply" in json.loads(svc.handle("[" * 2000 + "]" * 2000))["error"]
    assert not svc.core.nodes and svc.counters["internal_errors"] == 0


def _deep(n: int):
    value: object = 1
    for _ in range(n):
        value = [value]
    return value


def test_epochs_that_are_not_integers_or_too_far_ahead_are_refused_and_never_stored(queues_file):
    svc = CoreService(queues_file)
    for bad in ("5", 1e30, 5.0, True, -1, 2 ** 63, 10 ** 18):
        reply = snapshot(svc, epoch=bad)
        assert not reply["ok"] and "epoch" in reply["error"], bad
    for text in ('{"v": %d, "type": "snapshot", "epoch": Infinity, "resources": []}' % protocol.VERSION,
                 '{"v": %d, "type": "snapshot", "epoch": NaN, "resources": []}' % protocol.VERSION):
        assert not json.loads(svc.handle(text))["ok"]
    assert svc.epoch is None
    assert snapshot(svc, epoch=int(time.time() * 1000))["ok"], "a real epoch still works after all that"
    late = schedule(svc, epoch="5")
    assert not late["ok"] and "epoch must be an integer" in late["error"]


def test_an_older_snapshot_still_being_applied_gives_way_to_a_newer_one(queues_file):
    svc = CoreService(queues_file)
    nodes = [{"node": f"n{i}:1", "capacity": NODE} for i in range(100)]
    rows = [started(f"c_{i}", "app_1", memory=1, node=f"n{i % 100}:1") for i in range(150_000)]
    old = json.dumps({"v": protocol.VERSION, "type": "snapshot", "epoch": 5, "resources": TYPES, "nodes": nodes,
                      "apps": [APP], "containers": rows})
    replies = {}
    slow = threading.Thread(target=lambda: replies.setdefault("old", json.loads(svc.handle(old))))
    slow.start()
    wait_for(svc.lock.locked, "the old snapshot to be applied", budget_s=30, poll_s=0.001)
    replies["new"] = snapshot(svc, epoch=6, apps=[APP])
    slow.join()
    assert replies["new"]["ok"] and not replies["old"]["ok"], replies["old"]
    assert "abandoned for the newer snapshot 6" in replies["old"]["error"]
    assert svc.epoch == 6 and not svc.core.containers, "the newer state stands"
    assert not snapshot(svc, epoch=5)["ok"], "and the older cannot come back"
    assert svc.counters["superseded_snapshots"] == 1


def test_a_hostile_preemption_state_in_a_snapshot_is_ignored_and_yarns_state_still_applies(queues_file):
    """The state the shim gives back comes from a store others may write: deep, huge, out of range
    or of the wrong types, it changes nothing but is named in the log and counted."""
    svc = CoreService(queues_file)
    mark = {"container": "c_1", "node": "n1:1", "app": "app_1", "priority": 1, "allocation_id": 0,
            "reason": "fair-share", "marked_at_ms": 1, "deadline_ms": 2}
    for record in ({"v": 1, "marks": [_deep(900)]}, {"v": 1, "marks": [{**mark, "deadline_ms": 10 ** 309}]},
                   {"v": 1, "marks": [{**mark, "priority": -(2 ** 63) - 1}], "leaves": [{"queue": _deep(50)}]},
                   {"v": 1, "marks": [mark] * 100_000}, {"v": True}, {"v": 1.0, "marks": [mark]}):
        before = svc.counters["bad_deltas"]
        reply = snapshot(svc, apps=[APP], containers=[started("c_1", "app_1")], preemption_state=record)
        assert reply["ok"] and set(svc.core.containers) == {"c_1"}
        assert svc.counters["bad_deltas"] > before and svc.counters["internal_errors"] == 0
        assert not svc.core.preemption.marks
        check_accounting(svc.core)
