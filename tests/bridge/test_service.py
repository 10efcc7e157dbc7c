"""The Python side of the bridge: bridge messages in, the real core's decisions out."""
from __future__ import annotations

import json

from yarn_bridge import protocol
from yarn_bridge.service import CoreService

TYPES = ["memory-mb", "vcores", "gpu-mem"]
NODE = {"memory-mb": 8192, "vcores": 8, "gpu-mem": 8192}


def call(svc: CoreService, **msg) -> dict:
    return json.loads(svc.handle(json.dumps({"v": protocol.VERSION, **msg})))


def snapshot(svc: CoreService, epoch: int = 5, **state) -> dict:
    return call(svc, type="snapshot", epoch=epoch, resources=TYPES,
                nodes=state.get("nodes", [{"node": "n1:1", "capacity": NODE, "rack": "/r1"}]),
                apps=state.get("apps", []), containers=state.get("containers", []), asks=state.get("asks", []))


def ask(ask_id: int, app: str, count: int, memory: int = 1024, vcores: int = 1, gpu: int = 0) -> list:
    """An ask in full: id, count, app, priority, allocation id, location, relax, amounts in TYPES order."""
    return [ask_id, count, app, 1, 0, "*", True, memory, vcores, gpu]


def started(container: str, app: str, assignment_id: str | None = None, memory: int = 1024, vcores: int = 1,
            gpu: int = 0, node: str = "n1:1") -> list:
    """A started container: container, app, node, priority, allocation id, assignment id, amounts."""
    return [container, app, node, 1, 0, assignment_id, memory, vcores, gpu]


def test_snapshot_then_heartbeats_assign_and_follow_yarn(queues_file):
    svc = CoreService(queues_file)
    reply = snapshot(svc)
    assert reply["ok"] and [q["name"] for q in reply["queues"]][0] == "root"
    placed = call(svc, type="submit", epoch=5, app="app_1", user="alice", queue="cpu", groups=[])
    assert placed["accepted"] and placed["queue"] == "root.cpu"
    hb = call(svc, type="heartbeat", epoch=5, seq=1, node="n1:1", free=NODE, deltas=[], asks=[ask(1, "app_1", 3)])
    assert hb["seq"] == 1
    assert len(hb["assignments"]) == 3
    a1, a2, a3 = hb["assignments"]
    assert a1["app"] == "app_1" and a1["node"] == "n1:1" and a1["resources"]["vcores"] == 1
    # YARN applied two, refused one; then one container finished.
    hb2 = call(svc, type="heartbeat", epoch=5, seq=2, node="n1:1", free=NODE,
               deltas=[{"op": "assignment_refused", "assignment_id": a3["assignment_id"], "reason": "does not fit"}],
               started=[started("c_1", "app_1", a1["assignment_id"]), started("c_2", "app_1", a2["assignment_id"])],
               finished=["c_1", "completed"])
    assert hb2["ok"]
    assert set(svc.core.containers) >= {"c_2"} and "c_1" not in svc.core.containers
    # The refused ask came back and was assigned again; exactly one container (c_2) still runs.
    state = call(svc, type="status")["core"]
    assert state["apps"]["app_1"]["containers"] == 1 + len(hb2["assignments"])
    assert state["queues"]["root.cpu"]["usage"]["vcores"] == 1 + len(hb2["assignments"])


def test_placement_refusal_carries_the_acl_reason(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc)
    placed = call(svc, type="submit", epoch=5, app="app_2", user="bob", queue="restricted", groups=["staff"])
    assert placed["ok"] and not placed["accepted"]
    assert "may not submit to queue 'root.restricted'" in placed["reason"]


def test_requests_of_another_epoch_are_refused_so_late_ones_cannot_touch_a_resynced_core(queues_file):
    svc = CoreService(queues_file)
    early = call(svc, type="heartbeat", epoch=1, seq=1, node="n1:1", free=NODE, deltas=[])
    assert not early["ok"] and "send a snapshot" in early["error"]
    snapshot(svc, epoch=7)
    late = call(svc, type="heartbeat", epoch=6, seq=2, node="n1:1", free=NODE, deltas=[], asks=[ask(1, "app_9", 1)])
    assert not late["ok"]
    older = snapshot(svc, epoch=6)
    assert not older["ok"]
    assert svc.counters["stale_requests"] == 3
    assert call(svc, type="heartbeat", epoch=7, seq=3, node="n1:1", free=NODE, deltas=[])["ok"]


def test_snapshot_rebuilds_apps_containers_and_asks(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc, apps=[{"app": "app_1", "user": "alice", "queue": "root.mem", "groups": []}],
             containers=[started("c_1", "app_1", memory=2048)],
             asks=[ask(1, "app_1", 2)])
    core = call(svc, type="status")["core"]
    assert core["apps"]["app_1"]["containers"] == 1 and core["apps"]["app_1"]["pending"] == 2
    assert core["queues"]["root.mem"]["usage"]["memory-mb"] == 2048
    assert svc.core.counters["apps_recovered_misplaced"] == 0, "alice may submit to root.mem: nothing to count"


def test_bad_requests_and_bad_deltas_are_answered_and_counted_never_raised(queues_file):
    svc = CoreService(queues_file)
    for text in ("not json", "[1]", json.dumps({"v": protocol.VERSION - 1, "type": "heartbeat"}),
                 json.dumps({"v": protocol.VERSION, "type": "dance"})):
        reply = json.loads(svc.handle(text))
        assert reply["v"] == protocol.VERSION and reply["ok"] is False and reply["error"]
    assert svc.counters["bad_requests"] == 4
    snapshot(svc)
    call(svc, type="submit", epoch=5, app="app_1", user="alice", queue="cpu", groups=[])
    hb = call(svc, type="heartbeat", epoch=5, seq=1, node="n1:1", free=NODE,
              deltas=[{"op": "teleport"}, {"op": "app_removed"}],
              asks=[[1], ask(2, "app_1", 1)[:-1], [[3], 1], "ask", ask(4, "app_1", 1)], counts=[[4], 2])
    assert hb["ok"] and len(hb["assignments"]) == 1, "the good ask still applies"
    assert svc.counters["bad_deltas"] == 7
    missing_node = call(svc, type="heartbeat", epoch=5, seq=2, free=NODE, deltas=[])
    assert not missing_node["ok"] and "node" in missing_node["error"]


def test_reload_refuses_a_bad_file_whole_and_keeps_the_old_queues(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc)
    good = queues_file.read_text()
    queues_file.write_text(good.replace("weight: 2", "weight: -2"))
    bad = call(svc, type="reload", epoch=5)
    assert bad["ok"] and bad["accepted"] is False
    assert any("queues.root.children.mem.weight" in e for e in bad["errors"]), bad["errors"]
    assert call(svc, type="submit", epoch=5, app="a1", user="u", queue="mem", groups=[])["accepted"]
    queues_file.write_text(good.replace("      batch:", "      extra:\n        weight: 3\n      batch:"))
    ok = call(svc, type="reload", epoch=5)
    assert ok["accepted"] and "root.extra" in [q["name"] for q in ok["queues"]]


def test_count_only_asks_change_the_asks_sent_in_full(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc, apps=[{"app": "app_1", "user": "alice", "queue": "root.mem", "groups": []}],
             asks=[ask(10, "app_1", 2, memory=2048)])
    assert call(svc, type="events", epoch=5, deltas=[], counts=[10, 5])["ok"]
    assert svc.core.snapshot()["apps"]["app_1"]["pending"] == 5
    hb = call(svc, type="heartbeat", epoch=5, seq=1, node="n1:1", free=NODE, deltas=[], counts=[10, 1, 99, 3, 10, "x"])
    [a] = hb["assignments"]
    assert a["resources"] == {"memory-mb": 2048, "vcores": 1, "gpu-mem": 0}
    assert svc.counters["bad_deltas"] == 2  # unknown id 99, count "x"
    odd = call(svc, type="events", epoch=5, deltas=[], counts=[10])
    assert not odd["ok"] and "pairs" in odd["error"]
    # An id from before a snapshot means nothing to the rebuilt core: counted, not applied.
    snapshot(svc, epoch=6, apps=[{"app": "app_1", "user": "alice", "queue": "root.mem", "groups": []}])
    call(svc, type="events", epoch=6, deltas=[], counts=[10, 4])
    assert svc.core.counters["ignored_events"] == 1
    assert svc.core.snapshot()["apps"]["app_1"]["pending"] == 0


def test_container_rows_apply_after_app_events_and_bad_rows_are_counted_not_applied(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc)
    # An app recovered after an RM restart: its app event and its containers come in one request.
    # The app is added first, then its containers start; one started and finished in the same
    # interval leaves nothing behind.
    reply = call(svc, type="events", epoch=5,
                 deltas=[{"op": "app_added", "app": "app_1", "user": "alice", "queue": "root.mem", "groups": []}],
                 started=[started("c_1", "app_1", memory=2048), started("c_2", "app_1"),
                          started("c_3", "app_1", gpu="lots"), started("c_4", "app_1")[:-1],
                          ["c_5", "app_1", "n1:1", "1", 0, None, 1, 1, 0], "c_6"],
                 finished=["c_2", "completed", "c_1", 7, "c_9", "killed"])
    assert reply["ok"]
    assert sorted(svc.core.containers) == ["c_1"]
    assert svc.core.snapshot()["queues"]["root.mem"]["usage"]["memory-mb"] == 2048
    # c_3's amount: refused by the core; c_4 short, c_5's priority a string, "c_6" no row; c_1's state 7
    assert svc.counters["bad_deltas"] == 4 and svc.core.counters["ignored_events"] == 1
    odd = call(svc, type="events", epoch=5, finished=["c_1"])
    assert not odd["ok"] and "pairs" in odd["error"] and "c_1" in svc.core.containers
    not_rows = call(svc, type="events", epoch=5, started={"c_7": "app_1"})
    assert not not_rows["ok"] and "list of rows" in not_rows["error"]
