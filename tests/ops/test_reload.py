"""Reloads through the one validated path: valid, invalid, queue-removing (draining), file changes."""
from __future__ import annotations

import logging

import requests

from tests.ops.conftest import QUEUES
from tests.waits import wait_for
from yarn_bridge.reload import FileWatcher, Reloader


def post_reload(ops) -> tuple[int, dict]:
    r = ops.post_reload()
    return r.status_code, r.json()


def test_valid_reload_changes_weight_and_logs_a_diff(ops, caplog):
    ops.queues_file.write_text(QUEUES.replace("weight: 2", "weight: 3").replace(
        "      batch:\n", "      research: {}\n      batch:\n"))
    with caplog.at_level(logging.INFO, logger="yarn_bridge.reload"):
        code, doc = post_reload(ops)
    assert code == 200 and doc["accepted"] is True
    assert doc["version"] == 2 and doc["trigger"] == "yarn-drf reload"
    assert doc["changes"]["added"] == ["root.research"] and doc["changes"]["changed"] == ["root.prod"]
    assert "+ root.research (added)" in doc["diff"]
    assert "~ root.prod: weight 2 -> 3" in doc["diff"]
    assert "reloaded (trigger: yarn-drf reload), now version 2" in caplog.text
    assert "~ root.prod: weight 2 -> 3" in caplog.text
    assert ops.queue("root.prod")["weight"] == 3.0
    assert ops.get("/v1/health")["config"]["version"] == 2


def test_a_reload_that_changes_preemption_says_what_changed(ops):
    ops.queues_file.write_text(QUEUES.replace("queues:\n", "preemption: {enabled: true, max-per-round: '25%'}\n"
                                                          "queues:\n").replace("adhoc:\n", "adhoc:\n        preemptable: false\n"))
    code, doc = post_reload(ops)
    assert code == 200 and doc["accepted"] is True
    assert "~ preemption.enabled: false -> true" in doc["diff"]
    assert "~ preemption.max-per-round: 10% -> 25%" in doc["diff"]
    assert "~ root.adhoc: preemptable true -> false" in doc["diff"]
    assert ops.get("/v1/queues")["preemption"]["enabled"] is True


def test_a_reload_that_changes_locality_delays_says_so_and_the_queues_below_take_them(ops):
    ops.queues_file.write_text(QUEUES.replace("        weight: 2\n", "        weight: 2\n        node-locality-delay-s: 4\n")
                               .replace("          etl: {}", "          etl: {rack-locality-delay-s: 0.5}"))
    code, doc = post_reload(ops)
    assert code == 200 and doc["accepted"] is True
    assert "~ root.prod: node-locality-delay-s none -> 4" in doc["diff"]
    assert "~ root.prod.etl: rack-locality-delay-s none -> 0.5" in doc["diff"]
    assert ops.core.queues["root.prod.etl"].locality_delays == (4.0, 0.5)
    assert ops.core.queues["root.prod.ml"].locality_delays == (4.0, 1.0)


def test_weight_change_takes_effect_at_the_next_heartbeat(ops):
    # Two equal queues share one node 1:1; after a reload giving etl weight 3, the next heartbeats
    # fill the freed room 3:1.
    ops.queues_file.write_text(QUEUES.replace("          etl: {}", "          etl: {weight: 1}"))
    with ops.lock:
        for app, queue in (("e", "root.prod.etl"), ("m", "root.prod.ml")):
            ops.core.submit_app(app, "u", queue)
            ops.core.update_request(app, 1, {"vcores": 1, "memory-mb": 512}, 100)
        ops.core.remove_node("n2")
    ops.settle()
    assert ops.queue("root.prod.etl")["usage"]["vcores"] == 4 == ops.queue("root.prod.ml")["usage"]["vcores"]
    ops.queues_file.write_text(QUEUES.replace("          etl: {}", "          etl: {weight: 3}"))
    assert post_reload(ops)[0] == 200
    assert ops.queue("root.prod.etl")["target_share"] == ops.queue("root.prod.ml")["target_share"] * 3
    with ops.lock:
        for cid in sorted(ops.core.containers):
            ops.core.container_finished(cid)
    ops.settle()
    assert ops.queue("root.prod.etl")["usage"]["vcores"] == 6
    assert ops.queue("root.prod.ml")["usage"]["vcores"] == 2


def test_invalid_file_is_refused_with_every_error_and_the_old_config_stays(ops, caplog):
    ops.queues_file.write_text("""\
queues:
  root:
    children:
      a: {weight: -1}
      b: {max-running-apps: lots}
""")
    with caplog.at_level(logging.WARNING, logger="yarn_bridge.reload"):
        code, doc = post_reload(ops)
    assert code == 422 and doc["accepted"] is False and doc["version"] == 1
    assert len(doc["errors"]) == 2
    assert any("queues.root.children.a.weight: must be > 0" in e for e in doc["errors"])
    assert any("queues.root.children.b.max-running-apps" in e for e in doc["errors"])
    assert all(e.startswith(str(ops.queues_file)) for e in doc["errors"])
    assert "refused" in caplog.text and "the running configuration (version 1) stays" in caplog.text
    assert [q["name"] for q in ops.get("/v1/queues")["queues"]][:3] == ["root", "root.prod", "root.prod.etl"]
    health = ops.get("/v1/health")["config"]
    assert health["version"] == 1 and health["last_reload"]["accepted"] is False


def test_config_the_core_refuses_is_reported_too(ops):
    with ops.lock:
        ops.core.submit_app("x", "u", "root.batch")
    ops.queues_file.write_text(QUEUES.replace("        max: {vcores: 4}\n", "        children: {sub: {}}\n"))
    code, doc = post_reload(ops)
    assert code == 422
    assert doc["errors"] == [f"{ops.queues_file}: queues.root.batch: holds running apps and cannot become a "
                             "parent queue"]


def test_removing_a_busy_queue_keeps_it_draining_and_status_says_so(ops):
    with ops.lock:
        ops.core.submit_app("old", "u", "root.batch")
        ops.core.update_request("old", 1, {"vcores": 1, "memory-mb": 512}, 3)
    ops.settle()
    ops.queues_file.write_text(QUEUES.replace("      batch:\n        max: {vcores: 4}\n", ""))
    code, doc = post_reload(ops)
    assert code == 200
    assert doc["changes"]["draining"] == ["root.batch"]
    assert "- root.batch (removed; draining: 1 app(s) keep running, no new apps)" in doc["diff"]
    batch = ops.queue("root.batch")
    assert batch["state"] == "draining" and batch["draining"] is True
    assert batch["usage"]["vcores"] == 3 and batch["running_apps"] == 1
    assert ops.get("/v1/apps/old")["queue_draining"] is True
    with ops.lock:
        refused = ops.core.submit_app("new", "u", "root.batch")
    assert not refused.accepted
    # running apps finish; then a reload drops the empty queue
    with ops.lock:
        ops.core.remove_app("old")
    assert post_reload(ops)[0] == 200
    assert "root.batch" not in [q["name"] for q in ops.get("/v1/queues")["queues"]]


def test_file_watcher_reloads_a_changed_file_once_it_is_stable(ops):
    watcher = FileWatcher(ops.reloader, interval=0.05)
    assert watcher.check() is None
    ops.queues_file.write_text(QUEUES.replace("weight: 2", "weight: 5"))
    assert watcher.check() is None  # changed since the last poll: wait for it to be stable
    result = watcher.check()
    assert result is not None and result.accepted and result.trigger == "file change"
    assert ops.queue("root.prod")["weight"] == 5.0
    assert watcher.check() is None  # the same content is not applied twice


def test_file_watcher_does_not_retry_a_refused_file_until_it_changes(ops):
    watcher = FileWatcher(ops.reloader, interval=0.05)
    ops.queues_file.write_text("queues: {root: {children: {a: {order: random}}}}\n")
    watcher.check()
    result = watcher.check()
    assert result is not None and not result.accepted
    assert watcher.check() is None and watcher.check() is None
    assert ops.reloader.version == 1


def test_file_watcher_skips_what_another_trigger_applied(ops):
    watcher = FileWatcher(ops.reloader, interval=0.05)
    ops.queues_file.write_text(QUEUES.replace("weight: 2", "weight: 4"))
    assert post_reload(ops)[0] == 200
    assert watcher.check() is None and watcher.check() is None
    assert ops.reloader.version == 2


def test_file_watcher_thread_triggers_the_reload(ops):
    watcher = FileWatcher(ops.reloader, interval=0.05).start()
    try:
        ops.queues_file.write_text(QUEUES.replace("weight: 2", "weight: 7"))
        wait_for(lambda: ops.reloader.version != 1, "the watcher to reload the changed file", budget_s=30, poll_s=0.05)
    finally:
        watcher.stop()
    assert ops.reloader.version == 2
    assert ops.queue("root.prod")["weight"] == 7.0


def test_on_applied_hands_the_new_config_to_the_service(ops):
    seen = []
    reloader = Reloader(lambda: ops.core, ops.lock, ops.queues_file, on_applied=lambda c, p: seen.append((c, p)))
    ops.queues_file.write_text(QUEUES.replace("weight: 2", "weight: 6"))
    assert reloader.reload(trigger="refreshQueues").accepted
    assert seen[0][1] == ops.queues_file and seen[0][0].queues()["root.prod"].weight == 6.0


def test_reload_refused_from_a_non_loopback_server_without_reloader(ops):
    from yarn_bridge.status import StatusServer
    server = StatusServer(lambda: ops.core, ops.lock, port=0).start()
    try:
        r = requests.post(server.url + "/v1/reload", timeout=10)
    finally:
        server.stop()
    assert r.status_code == 404 and "not enabled" in r.json()["error"]
