"""`yarn-drf status`, `why` and `reload` against a running core's status server."""
from __future__ import annotations

import io
import re
import socket

from rich.console import Console

from tests.ops.conftest import QUEUES
from yarn_bridge.cli import build_parser, main


def run(argv: list[str]) -> tuple[int, str]:
    args = build_parser().parse_args(argv)
    out = io.StringIO()
    code = args.func(args, console=Console(file=out, width=200, color_system=None, highlight=False))
    return code, out.getvalue()


def load(ops):
    with ops.lock:
        for app, queue in (("a-etl", "root.prod.etl"), ("a-batch", "root.batch")):
            ops.core.submit_app(app, "alice", queue)
            ops.core.update_request(app, 1, {"vcores": 1, "memory-mb": 2048}, 20)
    ops.settle()


def row(text: str, name: str) -> str:
    return next(line for line in text.splitlines() if re.search(rf"│\s*{name}\s", line))


def test_status_table(ops):
    load(ops)
    code, text = run(["status", "--url", ops.url])
    assert code == 0
    assert "cluster memory-mb 32768, vcores 16, gpu-mem 8000" in text
    assert "config version 1" in text and "bridge connected" in text
    etl, batch = row(text, "etl"), row(text, "batch")
    assert "75.0%" in etl and "memory-mb" in etl and "1/0" in etl
    assert "25.0%" in batch and "max vcores 4" in batch
    # usage bars of 20 cells: 15 filled for etl, 5 for batch, then the target marker
    assert "█" * 15 + "|" in etl
    assert "█" * 5 + "|" in batch
    assert "apps<=1" in row(text, "adhoc")
    assert row(text, "  prod").split("│")[2].strip() == "2"  # weight column


def test_status_shows_the_pooled_target_beside_the_reachable_one_where_they_differ(ops):
    # ml's tasks need 4 vcores and 3000 gpu-mem, which only n2 has: in whole containers ml settles
    # at 2 tasks (gpu-mem 6000 of 8000, 75%), all of n2's vcores, where the pool would give it 60%
    with ops.lock:
        ops.core.submit_app("g", "alice", "root.prod.ml")
        ops.core.update_request("g", 1, {"vcores": 4, "memory-mb": 1024, "gpu-mem": 3000}, 10)
        ops.core.submit_app("c", "alice", "root.prod.etl")
        ops.core.update_request("c", 1, {"vcores": 1, "memory-mb": 1024}, 40)
    code, text = run(["status", "--url", ops.url])
    queues = {q["name"]: q for q in ops.get("/v1/queues")["queues"]}
    ml = queues["root.prod.ml"]
    assert ml["target_share"] != ml["pooled_target_share"]
    assert f"{ml['target_share']:.1%} (pooled {ml['pooled_target_share']:.1%})" in row(text, "ml")


def test_status_shows_draining_queue(ops):
    load(ops)
    ops.queues_file.write_text(QUEUES.replace("      batch:\n        max: {vcores: 4}\n", ""))
    assert run(["reload", "--url", ops.url])[0] == 0
    code, text = run(["status", "--url", ops.url])
    assert "draining" in row(text, "batch")
    assert "active" in row(text, "etl")


def test_why(ops):
    load(ops)
    code, text = run(["why", "a-batch", "--url", ops.url])
    assert code == 0
    assert "app a-batch of alice in queue root.batch: running, 4 container(s)" in text
    assert "queue root.batch: dominant share 25.0%, target 25.0%" in text
    assert "priority 1, allocation 0: 16 x <memory-mb 2048, vcores 1>" in text
    assert "[queue-at-max] queue root.batch is at its max: vcores 4 used of max 4, needs 1 more" in text


def test_why_unknown_app(ops):
    code, text = run(["why", "application_1_0042", "--url", ops.url])
    assert code == 1 and "unknown app 'application_1_0042'" in text


def test_reload_ok_and_refused(ops):
    ops.queues_file.write_text(QUEUES.replace("weight: 2", "weight: 4"))
    code, text = run(["reload", "--url", ops.url])
    assert code == 0
    assert "configuration version 2" in text and "~ root.prod: weight 2 -> 4" in text
    ops.queues_file.write_text("queues:\n  root:\n    children:\n      a: {wieght: 2}\n")
    code, text = run(["reload", "--url", ops.url])
    assert code == 1
    assert "refused" in text and "(version 2) stays" in text
    assert "queues.root.children.a.wieght: unknown field (did you mean 'weight'?)" in text


def test_unreachable_server_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connection refused
        for cmd in (["status"], ["why", "x"], ["reload"]):
            code, text = run([*cmd, "--url", f"http://127.0.0.1:{port}"])
            assert code == 2 and "cannot reach the yarn-drf status server" in text


def test_console_script_entry(ops, capsys):
    load(ops)
    assert main(["status", "--url", ops.url]) == 0  # an 80-column terminal
    out = capsys.readouterr().out
    assert "etl" in out and "batch" in out and "75.0%" in out


def test_status_watch_refreshes_until_interrupted(ops, monkeypatch):
    load(ops)
    frames = []

    def sleep(seconds):  # the operator presses Ctrl-C during the second wait
        frames.append(seconds)
        if len(frames) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr("yarn_bridge.ops_cli.time.sleep", sleep)
    code, text = run(["status", "--url", ops.url, "--watch", "0.5"])
    assert code == 0 and frames == [0.5, 0.5]
    assert "etl" in text and "75.0%" in text
