"""Preemption as operators see it (issue 15, item 6): /v1/queues, why, status and /metrics, read
from a running core and the real status server while a plan is under way."""
from __future__ import annotations

import io

from rich.console import Console

from tests.ops.conftest import running_ops
from tests.ops.test_metrics import scrape
from yarn_bridge.ops_cli import StatusView, render_why

QUEUES = """\
preemption: {enabled: true, fair-share-timeout-s: 10, grace-s: 5, max-per-round: "50%"}
reservation: {starvation-timeout-s: null}
queues:
  root:
    children:
      a: {}
      b: {}
"""
NODES = {"n1": ({"memory-mb": 8192, "vcores": 4}, "/r1"), "n2": ({"memory-mb": 8192, "vcores": 4}, "/r1")}
TASK = {"vcores": 1, "memory-mb": 1024}


def a_fills_then_b_asks(ops) -> None:
    with ops.lock:
        ops.core.submit_app("A", "alice", "root.a")
        ops.core.update_request("A", 1, TASK, 100)
    ops.settle()
    with ops.lock:
        ops.core.submit_app("B", "bob", "root.b")
        ops.core.update_request("B", 1, TASK, 100)


def starve_b(tmp_path, rounds_after_timeout: int = 0):
    """a fills both nodes; b asks at t=1000 and is measured every second until the timeout (and
    `rounds_after_timeout` more rounds): the ops context, still open."""
    queues_file = tmp_path / "queues.yaml"
    queues_file.write_text(QUEUES)
    context = running_ops(queues_file, NODES)
    ops = context.__enter__()
    a_fills_then_b_asks(ops)
    for t in range(11 + rounds_after_timeout):
        ops.clock.now = 1000.0 + t
        with ops.lock:
            plan = ops.core.preemption_round()
        ops.metrics.preemption(plan, ops.clock.now)
    return context, ops


def test_queues_show_who_starves_since_when_and_the_planned_victims(tmp_path):
    context, ops = starve_b(tmp_path)
    try:
        doc = ops.get("/v1/queues")
        b = next(q for q in doc["queues"] if q["name"] == "root.b")["preemption"]
        a = next(q for q in doc["queues"] if q["name"] == "root.a")["preemption"]
        root = next(q for q in doc["queues"] if q["name"] == "root")["preemption"]
        assert b["starved"] == "fair-share" and b["starved_for_s"] == 10.0 and b["target_share"] == 0.5
        assert b["share"] == 0.0 and b["incoming"] == 4 and b["victims"] == 0
        assert a["starved"] is None and a["victims"] == 4 and len(a["planned"]) == 4
        assert {p["for_queue"] for p in a["planned"]} == {"root.b"} and {p["kill_in_s"] for p in a["planned"]} == {5.0}
        assert root["victims"] == root["incoming"] == 4
        assert doc["preemption"]["enabled"] and doc["preemption"]["counters"]["marked"] == 4
        assert ops.queue("root.b")["preemption"] is not None
    finally:
        context.__exit__(None, None, None)


def test_why_says_the_queue_has_starved_and_what_is_marked_for_it(tmp_path):
    context, ops = starve_b(tmp_path)
    try:
        doc = ops.get("/v1/apps/B")
        reasons = {r["code"]: r for r in doc["requests"][0]["reasons"]}
        assert reasons["preemption"]["starved"] == "fair-share" and reasons["preemption"]["incoming"] == 4
        assert "has starved (fair-share) for 10 s at share 0.0% of its target 50.0%; 4 container(s) are marked" \
            in reasons["preemption"]["message"]
        text = _render(render_why(doc))
        assert "[preemption]" in text and "4 container(s) are marked for it" in text
    finally:
        context.__exit__(None, None, None)


def test_why_counts_down_to_starvation_before_the_timeout(tmp_path):
    queues_file = tmp_path / "queues.yaml"
    queues_file.write_text(QUEUES)
    with running_ops(queues_file, NODES) as ops:
        a_fills_then_b_asks(ops)
        with ops.lock:
            ops.core.preemption_round()
            ops.clock.now += 4
            ops.core.preemption_round()
        message = {r["code"]: r for r in ops.get("/v1/apps/B")["requests"][0]["reasons"]}["preemption"]["message"]
        assert "is below 0.8 x its target 50.0% (share 0.0%) for 4 s; it starves after 10 s" in message


def test_status_lists_the_starved_queue_and_the_victims(tmp_path):
    context, ops = starve_b(tmp_path)
    try:
        _, health = ops.get("/v1/queues"), ops.get("/v1/health")
        text = _render(StatusView(ops.get("/v1/queues"), health))
        assert "starved 10s" in text and "4 incoming" in text and "4 to preempt" in text
    finally:
        context.__exit__(None, None, None)


def test_metrics_count_marks_kills_and_work_lost(tmp_path):
    context, ops = starve_b(tmp_path, rounds_after_timeout=5)  # the grace ends: the four are killed
    try:
        m = scrape(ops)
        assert m[("yarn_drf_preemptions_total", (("action", "marked"),))] == 4
        assert m[("yarn_drf_preemptions_total", (("action", "killed"),))] == 4
        assert m[("yarn_drf_preempted_work_seconds_total", ())] == 4 * 15.0  # started at 1000, killed at 1015
        assert m[("yarn_drf_queue_starved", (("queue", "root.b"),))] == 1
        assert m[("yarn_drf_queue_preemption_victims", (("queue", "root.a"),))] == 4
    finally:
        context.__exit__(None, None, None)


def _render(renderable) -> str:
    out = io.StringIO()
    Console(file=out, width=100, color_system=None).print(renderable)
    return out.getvalue()
