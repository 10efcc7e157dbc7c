"""The Python side of the bridge: bridge messages in, the real core's decisions out."""
from __future__ import annotations

import json

from tests.bridge.messages import NODE, ask, call, schedule, snapshot, started, submit
from yarn_bridge import protocol
from yarn_bridge.service import CoreService


def test_snapshot_then_schedule_calls_place_assign_and_follow_yarn(queues_file):
    svc = CoreService(queues_file)
    reply = snapshot(svc)
    assert reply["ok"] and [q["name"] for q in reply["queues"]][0] == "root"
    placed = call(svc, type="schedule", epoch=5, seq=1, nodes=[["n1:1", 8192, 8, 8192]],
                  submissions=[{"app": "app_1", "user": "alice", "queue": "cpu", "groups": []}])
    assert placed["seq"] == 1 and placed["assignments"] == []
    assert placed["placements"] == [{"app": "app_1", "accepted": True, "queue": "root.cpu", "reason": ""}]
    first = schedule(svc, seq=2, asks=[ask(1, "app_1", 3)])
    assert first["seq"] == 2
    assert len(first["assignments"]) == 3
    a1, a2, a3 = first["assignments"]
    assert a1["app"] == "app_1" and a1["node"] == "n1:1" and a1["resources"]["vcores"] == 1
    # YARN applied two, refused one; then one container finished.
    second = schedule(svc, seq=3,
                      deltas=[{"op": "assignment_refused", "assignment_id": a3["assignment_id"],
                               "reason": "does not fit"}],
                      started=[started("c_1", "app_1", a1["assignment_id"]), started("c_2", "app_1", a2["assignment_id"])],
                      finished=["c_1", "completed"])
    assert second["ok"]
    assert set(svc.core.containers) >= {"c_2"} and "c_1" not in svc.core.containers
    # The refused ask came back and was assigned again; exactly one container (c_2) still runs.
    state = svc.core.snapshot()
    assert state["apps"]["app_1"]["containers"] == 1 + len(second["assignments"])
    assert state["queues"]["root.cpu"]["usage"]["vcores"] == 1 + len(second["assignments"])


def test_a_call_decides_for_every_node_it_lists_and_only_those(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc, nodes=[{"node": f"n{i}:1", "capacity": NODE, "rack": "/r1"} for i in range(4)])
    submit(svc, "app_1", "alice", "cpu")
    reply = schedule(svc, seq=2, nodes=["n0:1", "n2:1", "n3:1"], asks=[ask(1, "app_1", 100)])
    by_node = {}
    for a in reply["assignments"]:
        by_node[a["node"]] = by_node.get(a["node"], 0) + 1
    assert by_node == {"n0:1": 8, "n2:1": 8, "n3:1": 8}, "8 vcores each; n1:1 was not offered"
    assert svc.counters["nodes_offered"] == 3 and svc.counters["free_mismatches"] == 0


def test_a_node_whose_free_room_differs_from_the_cores_is_counted_and_logged_with_both_figures(queues_file, caplog):
    svc = CoreService(queues_file)
    snapshot(svc)
    reply = call(svc, type="schedule", epoch=5, seq=1, nodes=[["n1:1", 1024, 1, 0]])
    assert reply["ok"] and svc.counters["free_mismatches"] == 1
    [warning] = [r.getMessage() for r in caplog.records if "differs" in r.getMessage()]
    assert "YARN <memory-mb 1024, vcores 1, gpu-mem 0>" in warning
    assert "the core <memory-mb 8192, vcores 8, gpu-mem 8192>" in warning
    call(svc, type="schedule", epoch=5, seq=2, nodes=[["n1:1", 1024, 1, 0]])
    assert svc.counters["free_mismatches"] == 2
    assert len([r for r in caplog.records if "differs" in r.getMessage()]) == 1, "logged when it starts to differ"


def test_a_node_with_less_room_in_yarn_than_in_the_core_is_decided_for_with_yarns_room(queues_file):
    """YARN keeps a killed or released container's room until its NodeManager reports it gone
    (never, for a container of an attempt that failed while the RM was down): the core's larger
    figure would only place containers YARN refuses, and waiting would starve the node."""
    svc = CoreService(queues_file)
    snapshot(svc)
    submit(svc, "app_1", "alice", "cpu")
    short = call(svc, type="schedule", epoch=5, seq=2, nodes=[["n1:1", 2048, 2, 8192]], asks=[ask(1, "app_1", 100)])
    assert short["ok"] and len(short["assignments"]) == 2, "2 vcores free in YARN: 2 of 1 vcore"
    assert svc.core.snapshot()["queues"]["root.cpu"]["usage"]["vcores"] == 2, "the held room is no one's usage"
    assert svc.core.nodes["n1:1"].allocated[1] == 2, "and is not left on the node after the call"
    agreed = schedule(svc, seq=3, started=[started(f"c_{i}", "app_1", a["assignment_id"])
                                           for i, a in enumerate(short["assignments"])])
    assert len(agreed["assignments"]) == 6, "once YARN has the core's room, the other 6 vcores"


def test_a_node_with_more_room_in_yarn_than_in_the_core_is_decided_by_the_cores(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc, containers=[started("c_0", "app_0", memory=4096, vcores=4)],
             apps=[{"app": "app_0", "user": "alice", "queue": "cpu"}])
    submit(svc, "app_1", "alice", "cpu")
    reply = call(svc, type="schedule", epoch=5, seq=2, nodes=[["n1:1", 8192, 8, 8192]], asks=[ask(1, "app_1", 100)])
    assert len(reply["assignments"]) == 4, "the 4 vcores the core has free, not YARN's 8"


def test_placement_refusal_carries_the_acl_reason(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc)
    placed = submit(svc, "app_2", "bob", "restricted", groups=["staff"])
    assert not placed["accepted"] and placed["queue"] is None
    assert "may not submit to queue 'root.restricted'" in placed["reason"]


def test_requests_of_another_epoch_are_refused_so_late_ones_cannot_touch_a_resynced_core(queues_file):
    svc = CoreService(queues_file)
    early = schedule(svc, epoch=1)
    assert not early["ok"] and "send a snapshot" in early["error"]
    snapshot(svc, epoch=7)
    late = schedule(svc, epoch=6, seq=2, asks=[ask(1, "app_9", 1)])
    assert not late["ok"]
    older = snapshot(svc, epoch=6)
    assert not older["ok"]
    assert svc.counters["stale_requests"] == 3
    assert schedule(svc, epoch=7, seq=3)["ok"]


def test_snapshot_rebuilds_apps_containers_and_asks(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc, apps=[{"app": "app_1", "user": "alice", "queue": "root.mem", "groups": []}],
             containers=[started("c_1", "app_1", memory=2048)],
             asks=[ask(1, "app_1", 2)])
    core = svc.core.snapshot()
    assert core["apps"]["app_1"]["containers"] == 1 and core["apps"]["app_1"]["pending"] == 2
    assert core["queues"]["root.mem"]["usage"]["memory-mb"] == 2048
    assert svc.core.counters["apps_recovered_misplaced"] == 0, "alice may submit to root.mem: nothing to count"


def test_bad_requests_and_bad_deltas_are_answered_and_counted_never_raised(queues_file):
    svc = CoreService(queues_file)
    for text in ("not json", "[1]", json.dumps({"v": protocol.VERSION - 1, "type": "schedule"}),
                 json.dumps({"v": protocol.VERSION, "type": "dance"}),
                 json.dumps({"v": protocol.VERSION, "type": "heartbeat", "epoch": 5})):
        reply = json.loads(svc.handle(text))
        assert reply["v"] == protocol.VERSION and reply["ok"] is False and reply["error"]
    assert svc.counters["bad_requests"] == 5
    snapshot(svc)
    submit(svc, "app_1", "alice", "cpu")
    reply = call(svc, type="schedule", epoch=5, seq=2, nodes=[["n1:1", 8192, 8, 8192], ["n2:1"], "n3:1"],
                 deltas=[{"op": "teleport"}, {"op": "app_removed"}],
                 asks=[[1], ask(2, "app_1", 1)[:-1], [[3], 1], "ask", ask(4, "app_1", 1)], counts=[[4], 2],
                 submissions=[{"app": "app_2", "user": 7}, "app_3"])
    assert reply["ok"] and len(reply["assignments"]) == 1, "the good ask still applies"
    assert reply["placements"] == [{"app": "app_2", "accepted": False, "queue": None,
                                     "reason": "malformed submission: user must be a string, got 7"}]
    assert svc.counters["bad_deltas"] == 11
    no_seq = call(svc, type="schedule", epoch=5, nodes=[])
    assert not no_seq["ok"] and "seq" in no_seq["error"]


def test_reload_refuses_a_bad_file_whole_and_keeps_the_old_queues(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc)
    good = queues_file.read_text()
    queues_file.write_text(good.replace("weight: 2", "weight: -2"))
    bad = call(svc, type="reload", epoch=5)
    assert bad["ok"] and bad["accepted"] is False
    assert any("queues.root.children.mem.weight" in e for e in bad["errors"]), bad["errors"]
    assert submit(svc, "a1", "u", "mem")["accepted"]
    queues_file.write_text(good.replace("      batch:", "      extra:\n        weight: 3\n      batch:"))
    ok = call(svc, type="reload", epoch=5)
    assert ok["accepted"] and "root.extra" in [q["name"] for q in ok["queues"]]


def test_count_only_asks_change_the_asks_sent_in_full(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc, apps=[{"app": "app_1", "user": "alice", "queue": "root.mem", "groups": []}],
             asks=[ask(10, "app_1", 2, memory=2048)])
    assert schedule(svc, nodes=(), counts=[10, 5])["ok"]
    assert svc.core.snapshot()["apps"]["app_1"]["pending"] == 5
    reply = schedule(svc, seq=2, counts=[10, 1, 99, 3, 10, "x"])
    [a] = reply["assignments"]
    assert a["resources"] == {"memory-mb": 2048, "vcores": 1, "gpu-mem": 0}
    assert svc.counters["bad_deltas"] == 2  # unknown id 99, count "x"
    odd = schedule(svc, seq=3, nodes=(), counts=[10])
    assert not odd["ok"] and "pairs" in odd["error"]
    # An id from before a snapshot means nothing to the rebuilt core: counted, not applied.
    snapshot(svc, epoch=6, apps=[{"app": "app_1", "user": "alice", "queue": "root.mem", "groups": []}])
    schedule(svc, epoch=6, nodes=(), counts=[10, 4])
    assert svc.core.counters["ignored_events"] == 1
    assert svc.core.snapshot()["apps"]["app_1"]["pending"] == 0


def test_container_rows_apply_after_app_events_and_bad_rows_are_counted_not_applied(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc)
    # An app recovered after an RM restart: its app event and its containers come in one request.
    # The app is added first, then its containers start; one started and finished in the same
    # interval leaves nothing behind.
    reply = schedule(svc, nodes=(),
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
    odd = schedule(svc, nodes=(), finished=["c_1"])
    assert not odd["ok"] and "pairs" in odd["error"] and "c_1" in svc.core.containers
    not_rows = schedule(svc, nodes=(), started={"c_7": "app_1"})
    assert not not_rows["ok"] and "list of rows" in not_rows["error"]


def test_a_call_assigns_at_most_its_bound_and_the_next_call_goes_on_with_its_nodes(queues_file):
    """The nodes of a heartbeat are offered once: the calls after one that stopped at its bound
    list no node, and still go on with the nodes it did not finish."""
    svc = CoreService(queues_file, max_assignments_per_call=3)
    nodes = [{"node": f"n{i}:1", "capacity": NODE, "rack": "/r1"} for i in range(2)]
    assert snapshot(svc, nodes=nodes, apps=[{"app": "app_1", "user": "alice", "queue": "root.cpu", "groups": []}])["ok"]
    ids = [n["node"] for n in nodes]
    first = schedule(svc, nodes=ids, asks=[ask(1, "app_1", 7)])["assignments"]
    second = schedule(svc, seq=2, nodes=())["assignments"]
    third = schedule(svc, seq=3, nodes=())["assignments"]
    assert [len(first), len(second), len(third)] == [3, 3, 1]
    assert len({a["assignment_id"] for a in first + second + third}) == 7


def test_a_reply_says_how_many_nodes_the_core_goes_on_with_and_a_node_listed_again_counts_once(queues_file):
    """The shim lists only as many new nodes as make up its bound with the nodes the core goes on
    with (NodeOffers): the 10,000-node driver listed ~500 a call to place 64 containers on 4."""
    svc = CoreService(queues_file, max_assignments_per_call=3)
    nodes = [{"node": f"n{i}:1", "capacity": NODE, "rack": "/r1"} for i in range(4)]
    assert snapshot(svc, nodes=nodes, apps=[{"app": "app_1", "user": "alice", "queue": "root.cpu", "groups": []}])["ok"]
    replies = [schedule(svc, nodes=[n["node"] for n in nodes], asks=[ask(1, "app_1", 20)])]
    replies.append(schedule(svc, nodes=["n3:1", "n1:1"]))  # heartbeated again while carried: no new turn
    while replies[-1].get("carried"):
        replies.append(schedule(svc, nodes=()))
    # 8 containers fill a node: n0 takes three calls, n1 three, n2 the last two; then nothing waits
    assert [r.get("carried") for r in replies] == [4, 4, 3, 3, 3, 2, None]
    assert [a["node"] for r in replies for a in r["assignments"]] == ["n0:1"] * 8 + ["n1:1"] * 8 + ["n2:1"] * 4


def test_a_node_ask_names_a_host_and_its_container_goes_to_that_hosts_nodemanager_in_the_call(queues_file):
    """The shim sends an AM's node asks as YARN has them, by host (ResourceRequest's resource
    name), and lists nodes by id (host:port): the core matches them, and takes the node-local one
    of the call's nodes even when another comes first in the call."""
    svc = CoreService(queues_file)
    snapshot(svc, nodes=[{"node": "h1:45454", "capacity": NODE, "rack": "/r1"},
                         {"node": "h2:45454", "capacity": NODE, "rack": "/r2"}])
    submit(svc, "app_1", "alice", "cpu")
    located = [[1, 1, "app_1", 1, 0, "h2", True, 1024, 1, 0], [2, 1, "app_1", 1, 0, "/r2", True, 1024, 1, 0],
               [3, 1, "app_1", 1, 0, "*", True, 1024, 1, 0]]
    reply = schedule(svc, seq=2, nodes=["h1:45454", "h2:45454"], asks=located)
    assert [a["node"] for a in reply["assignments"]] == ["h2:45454"]
    # its node full, the next one waits (1 s by default) rather than take h1 at once
    full = [[4, 1, "app_1", 2, 0, "h2", True, 8192, 7, 0], [5, 1, "app_1", 2, 0, "/r2", True, 8192, 7, 0],
            [6, 1, "app_1", 2, 0, "*", True, 8192, 7, 0]]
    assert [a["node"] for a in schedule(svc, seq=3, nodes=["h1:45454", "h2:45454"], asks=full)["assignments"]] == []
