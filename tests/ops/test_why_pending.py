"""Every kind of why-pending reason, read from /v1/apps/{id} of a running core."""
from __future__ import annotations


def reasons(ops, app_id: str, priority: int = 1) -> dict[str, dict]:
    doc = ops.get(f"/v1/apps/{app_id}")
    req = next(r for r in doc["requests"] if r["priority"] == priority)
    assert req["pending"] > 0
    return {r["code"]: r for r in req["reasons"]}


def submit(ops, app_id: str, queue: str, shape: dict, count: int, **kwargs) -> None:
    with ops.lock:
        placed = ops.core.submit_app(app_id, "alice", queue)
        assert placed.accepted, placed
        ops.core.update_request(app_id, 1, shape, count, **kwargs)


def test_max_running_apps_reached(ops):
    submit(ops, "first", "root.adhoc", {"vcores": 1}, 1)
    submit(ops, "second", "root.adhoc", {"vcores": 1}, 1)
    why = reasons(ops, "second")
    assert list(why) == ["max-running-apps"]
    assert why["max-running-apps"]["queue"] == "root.adhoc"
    assert "max-running-apps reached in root.adhoc (1 of 1 running)" in why["max-running-apps"]["message"]
    assert ops.get("/v1/apps/second")["runnable"] is False
    assert "max-running-apps" not in reasons(ops, "first")


def test_queue_at_max_names_the_queue_and_resource(ops):
    submit(ops, "b1", "root.batch", {"vcores": 2, "memory-mb": 1024}, 3)
    assert len(ops.settle()) == 2  # max vcores 4
    why = reasons(ops, "b1")
    assert why["queue-at-max"]["queue"] == "root.batch"
    assert why["queue-at-max"]["resources"] == ["vcores"]
    assert "vcores 4 used of max 4, needs 2 more" in why["queue-at-max"]["message"]
    assert "ready" not in why  # the nodes have room, but the queue may not take it


def test_too_large_for_any_node(ops):
    submit(ops, "big", "root.prod.etl", {"vcores": 4, "memory-mb": 8192, "gpu-mem": 12000}, 1)
    why = reasons(ops, "big")
    assert why["too-large"]["resources"] == ["gpu-mem"]
    assert "gpu-mem needs 12000, the largest capacity on any node is 8000 (n2)" in why["too-large"]["message"]


def test_no_node_has_room_names_the_resource_and_largest_free(ops):
    submit(ops, "g1", "root.prod.etl", {"vcores": 1, "memory-mb": 1024, "gpu-mem": 6000}, 1)
    assert len(ops.settle()) == 1
    submit(ops, "g2", "root.prod.etl", {"vcores": 4, "memory-mb": 8192, "gpu-mem": 4000}, 1)
    why = reasons(ops, "g2")
    room = why["no-node-room"]
    assert room["resources"] == ["gpu-mem"]
    assert room["largest_free"]["gpu-mem"] == 2000
    assert ("no node has room for <memory-mb 8192, vcores 4, gpu-mem 4000>: gpu-mem needs 4000, the largest "
            "free on any node is 2000 (n2)") in room["message"]


def test_room_split_over_nodes_names_the_nearest_node(ops):
    # n1: 2 vcores free (memory plenty); n2: memory 1024 free (vcores plenty): each resource is free
    # somewhere, no node has both.
    submit(ops, "f1", "root.prod.etl", {"vcores": 6, "memory-mb": 1024}, 1, location="n1", relax_locality=False)
    submit(ops, "f2", "root.prod.ml", {"vcores": 1, "memory-mb": 15360}, 1, location="n2", relax_locality=False)
    with ops.lock:
        ops.core.update_request("f1", 1, {"vcores": 6, "memory-mb": 1024}, 1, location="*", relax_locality=False)
        ops.core.update_request("f2", 1, {"vcores": 1, "memory-mb": 15360}, 1, location="*", relax_locality=False)
    assert len(ops.settle()) == 2
    submit(ops, "f3", "root.adhoc", {"vcores": 4, "memory-mb": 4096}, 1)
    room = reasons(ops, "f3")["no-node-room"]
    assert "each resource is free somewhere" in room["message"]
    assert room["largest_free"] == {"memory-mb": 15360, "vcores": 7, "gpu-mem": 8000}


def test_waiting_behind_a_reservation_and_holding_it(ops):
    # g1 (batch) holds gpu 6000 of n2; "big" (prod.ml) needs gpu 8000, so it never fits now. Its
    # queue is first in fair order (lowest share) from n2's next heartbeat on; after the starvation
    # timeout, n2's heartbeat reserves n2 for "big". "small" (batch) fits n2's free room, but n2 is
    # reserved.
    submit(ops, "g1", "root.batch", {"vcores": 1, "memory-mb": 1024, "gpu-mem": 6000}, 1)
    assert len(ops.settle()) == 1
    submit(ops, "big", "root.prod.ml", {"vcores": 1, "memory-mb": 1024, "gpu-mem": 8000}, 1)
    assert "not first in fair order (first: none yet)" in reasons(ops, "big")["starvation"]["message"]
    assert ops.heartbeat("n2") == []
    assert "has been first in fair order for 0 s" in reasons(ops, "big")["starvation"]["message"]
    ops.clock.now += 31
    assert ops.heartbeat("n2") == []
    submit(ops, "small", "root.batch", {"vcores": 1, "memory-mb": 512, "gpu-mem": 1000}, 1)
    assert ops.get("/v1/nodes")["nodes"][1]["reservation"]["app"] == "big"
    why_big = reasons(ops, "big")
    assert why_big["holds-reservation"]["node"] == "n2"
    assert "gpu-mem 2000 free of 8000" in why_big["holds-reservation"]["message"]
    why = reasons(ops, "small")
    assert list(why) == ["behind-reservation"]
    assert why["behind-reservation"]["nodes"] == ["n2"]
    assert "reserved for other requests: n2 (for app big" in why["behind-reservation"]["message"]
    assert ops.queue("root.prod.ml")["reservations"] == 1
    assert ops.queue("root.prod")["reservations"] == 1
    assert ops.queue("root.batch")["reservations"] == 0


def test_locality_nowhere_in_the_cluster(ops):
    submit(ops, "loc", "root.prod.etl", {"vcores": 1}, 1, location="ghost-node", relax_locality=False)
    with ops.lock:
        ops.core.update_request("loc", 1, {"vcores": 1}, 1, location="*", relax_locality=False)
    why = reasons(ops, "loc")
    assert list(why) == ["locality"]
    assert "ghost-node" in why["locality"]["message"]


def test_locality_excludes_the_nodes_with_room(ops):
    # only n1 allowed, n1 has no gpu: too large there, while n2 would have room.
    submit(ops, "loc", "root.prod.etl", {"vcores": 1, "gpu-mem": 100}, 1, location="/r1")
    with ops.lock:
        ops.core.update_request("loc", 1, {"vcores": 1, "gpu-mem": 100}, 1, location="*", relax_locality=False)
    why = reasons(ops, "loc")
    assert why["too-large"]["resources"] == ["gpu-mem"]
    assert "relax-locality is off" in why["locality"]["message"]


def test_locality_delay_says_what_it_waits_for_and_how_long_is_left(ops):
    # n1 (its node) is full; n2, on another rack, has room it does not take for the delays (1 s + 1 s)
    submit(ops, "fill", "root.prod.etl", {"vcores": 8, "memory-mb": 1024}, 1, location="n1", relax_locality=False)
    with ops.lock:
        ops.core.update_request("fill", 1, {"vcores": 8, "memory-mb": 1024}, 1, location="*", relax_locality=False)
    assert len(ops.settle()) == 1
    submit(ops, "loc", "root.prod.etl", {"vcores": 1, "memory-mb": 1024}, 1, location="n1")
    with ops.lock:
        ops.core.update_request("loc", 1, {"vcores": 1, "memory-mb": 1024}, 1, location="/r1")
        ops.core.update_request("loc", 1, {"vcores": 1, "memory-mb": 1024}, 1)
    assert ops.heartbeat("n2") == []  # passed over: its clock starts now
    ops.clock.now += 0.25
    why = reasons(ops, "loc")
    assert list(why) == ["locality-delay"]
    wait = why["locality-delay"]
    assert (wait["level"], wait["rack_local_in_s"], wait["any_node_in_s"]) == ("node-local", 0.75, 1.75)
    assert "waits for a node-local slot (nodes n1; racks /r1)" in wait["message"]
    ops.clock.now += 2
    assert list(reasons(ops, "loc")) == ["ready"]
    assert [a.node_id for a in ops.heartbeat("n2")] == ["n2"]


def test_blacklisted_nodes(ops):
    submit(ops, "bl", "root.prod.etl", {"vcores": 1, "gpu-mem": 100}, 1)
    with ops.lock:
        ops.core.set_blacklist("bl", ["n2"])
    assert ops.settle() == []
    why = reasons(ops, "bl")
    assert why["blacklist"]["nodes"] == ["n2"]
    assert "too-large" in why


def test_ready_when_it_fits(ops):
    submit(ops, "r", "root.prod.etl", {"vcores": 1, "memory-mb": 1024}, 2)
    why = reasons(ops, "r")
    assert list(why) == ["ready"]
    assert why["ready"]["nodes"] == ["n1", "n2"]
    doc = ops.get("/v1/apps/r")
    assert doc["queue"] == "root.prod.etl" and doc["requests"][0]["pending"] == 2
    ops.settle()
    assert all(r["pending"] == 0 and "reasons" not in r for r in ops.get("/v1/apps/r")["requests"])


def test_no_nodes(ops):
    with ops.lock:
        for node in list(ops.core.nodes):
            ops.core.remove_node(node)
    submit(ops, "lonely", "root.prod.etl", {"vcores": 1}, 1)
    assert list(reasons(ops, "lonely")) == ["no-nodes"]


def test_unknown_app_is_404(ops):
    assert "unknown app" in ops.get("/v1/apps/application_0_0001", status=404)["error"]
