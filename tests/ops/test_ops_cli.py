"""`yarn-drf status`, `why` and `reload` against a running core's status server."""
from __future__ import annotations

import io
import re
import socket
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console

from tests.ops.conftest import QUEUES, running_ops
from tests.secret_files import secret_file
from yarn_bridge.cli import build_parser, main
from yarn_bridge.status import StatusServer


def run(argv: list[str], width: int = 200) -> tuple[int, str]:
    args = build_parser().parse_args(argv)
    out = io.StringIO()
    code = args.func(args, console=Console(file=out, width=width, color_system=None, highlight=False))
    return code, out.getvalue()


def load(ops):
    with ops.lock:
        for app, queue in (("a-etl", "root.prod.etl"), ("a-batch", "root.batch")):
            ops.core.submit_app(app, "alice", queue)
            ops.core.update_request(app, 1, {"vcores": 1, "memory-mb": 2048}, 20)
    ops.settle()


def row(text: str, name: str) -> str:
    """The status table's row of the queue named `name` (its last path part, indented by depth)."""
    return next(line for line in text.splitlines() if re.match(rf"\s*{name}\s", line))


def details(text: str, path: str) -> list[str]:
    """The lines about queue `path` below the table: what is pending, limits, state."""
    lines = text.splitlines()
    start = lines.index("pending and limits") + 1
    out = []
    for line in lines[start:]:
        if out and line[:1] != " ":
            break
        if out or line.rstrip() == path or line.startswith(path + " "):
            out.append(line.removeprefix(path).strip())
    return [line for line in out if line]


def test_status_table(ops):
    load(ops)
    code, text = run(["status", "--url", ops.url])
    assert code == 0
    assert "cluster memory-mb 32768, vcores 16, gpu-mem 8000" in text
    assert "config version 1" in text and "bridge connected" in text
    etl, batch = row(text, "etl"), row(text, "batch")
    assert "75.0%" in etl and "memory-mb" in etl and "1/0" in etl
    assert "25.0%" in batch and "max vcores 4" in details(text, "root.batch")
    # usage bars of 20 cells: 15 filled for etl, 5 for batch, then the target marker
    assert "█" * 15 + "|" in etl
    assert "█" * 5 + "|" in batch
    assert "max-running-apps 1" in details(text, "root.adhoc")
    # 20 asked each: etl runs 12 (75% of the memory), batch 4 (its max vcores)
    assert "pending memory-mb 16384, vcores 8" in details(text, "root.prod.etl")
    assert "pending memory-mb 32768, vcores 16" in details(text, "root.batch")
    assert row(text, "  prod").split()[1] == "2"  # weight column


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
    assert f"  {ml['target_share']:.1%}  " in row(text, "ml")
    assert f"pooled target {ml['pooled_target_share']:.1%}" in details(text, "root.prod.ml")


def test_status_shows_draining_queue(ops):
    load(ops)
    ops.queues_file.write_text(QUEUES.replace("      batch:\n        max: {vcores: 4}\n", ""))
    assert run(["reload", "--url", ops.url, "--token-file", str(ops.token_file)])[0] == 0
    code, text = run(["status", "--url", ops.url])
    assert row(text, "batch").split()[-1] == "draining"
    assert row(text, "etl").split()[-1] == "memory-mb"  # the state column is blank for an active queue


def test_why(ops):
    load(ops)
    code, text = run(["why", "a-batch", "--url", ops.url])
    assert code == 0
    assert "app a-batch of alice in queue root.batch\n  running, 4 container(s)" in text
    assert "  queue root.batch: dominant share 25.0%, target 25.0%" in text
    assert "priority 1: 16 x <memory-mb 2048, vcores 1>, waiting 0 s" in text
    assert "[queue-at-max] queue root.batch is at its max: vcores 4 used of max 4, needs 1 more" in text


def test_why_names_an_allocation_id_other_than_yarns_default_0(ops):
    load(ops)
    with ops.lock:
        ops.core.update_request("a-batch", 2, {"vcores": 1, "memory-mb": 1024}, 3, allocation_id=7)
    code, text = run(["why", "a-batch", "--url", ops.url])
    assert "priority 1: 16 x" in text and "priority 2, allocation 7: 3 x <memory-mb 1024, vcores 1>" in text


def test_why_unknown_app(ops):
    code, text = run(["why", "application_1_0042", "--url", ops.url])
    assert code == 1 and "unknown app 'application_1_0042'" in text


def test_reload_ok_and_refused(ops):
    ops.queues_file.write_text(QUEUES.replace("weight: 2", "weight: 4"))
    code, text = run(["reload", "--url", ops.url, "--token-file", str(ops.token_file)])
    assert code == 0
    assert "configuration version 2" in text and "~ root.prod: weight 2 -> 4" in text
    ops.queues_file.write_text("queues:\n  root:\n    children:\n      a: {wieght: 2}\n")
    code, text = run(["reload", "--url", ops.url, "--token-file", str(ops.token_file)])
    assert code == 1
    assert "refused" in text and "(version 2) stays" in text
    assert "queues.root.children.a.wieght: unknown field (did you mean 'weight'?)" in text


def test_reload_says_what_is_wrong_with_the_token(ops, tmp_path, monkeypatch):
    monkeypatch.delenv("YARN_DRF_STATUS_TOKEN_FILE", raising=False)
    code, text = run(["reload", "--url", ops.url])
    assert code == 2 and "no token was given: pass --token-file FILE or set YARN_DRF_STATUS_TOKEN_FILE" in text
    wrong = secret_file(tmp_path / "wrong", "not-the-token")
    code, text = run(["reload", "--url", ops.url, "--token-file", str(wrong)])
    assert code == 2 and "the token was refused" in text
    wrong.chmod(0o644)
    code, text = run(["reload", "--url", ops.url, "--token-file", str(wrong)])
    assert code == 2 and "readable or writable by other users" in text and "chmod 600" in text
    monkeypatch.setenv("YARN_DRF_STATUS_TOKEN_FILE", str(ops.token_file))
    assert run(["reload", "--url", ops.url])[0] == 0, "the token file from the environment"
    assert ops.reloader.version == 2


def test_reload_against_a_read_only_server_says_so(ops):
    server = StatusServer(lambda: ops.core, ops.lock, port=0, reloader=ops.reloader).start()
    try:
        code, text = run(["reload", "--url", server.url, "--token-file", str(ops.token_file)])
    finally:
        server.stop()
    assert code == 2 and "read-only" in text and "--status-token-file" in text


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
    real_sleep, this_thread = time.sleep, threading.current_thread()

    def sleep(seconds):  # the operator presses Ctrl-C during the second wait
        # The patch replaces the time module's sleep for every thread; a thread an earlier test left
        # running (a server's loop) must keep its own waits and not count as the CLI's frames.
        if threading.current_thread() is not this_thread:
            return real_sleep(seconds)
        frames.append(seconds)
        if len(frames) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr("yarn_bridge.ops_cli.time.sleep", sleep)
    code, text = run(["status", "--url", ops.url, "--watch", "0.5"])
    assert code == 0 and frames == [0.5, 0.5]
    assert "etl" in text and "75.0%" in text


# ---------------------------------------------------------------------------- layout at terminal widths

REPO = Path(__file__).resolve().parents[2]
SHAPES = {  # the Docker demo's three NodeManager shapes
    "nm-cpu:8041": ({"memory-mb": 32768, "vcores": 32, "gpu-mem": 0}, "/r1"),
    "nm-mem:8042": ({"memory-mb": 131072, "vcores": 8, "gpu-mem": 0}, "/r1"),
    "nm-gpu:8043": ({"memory-mb": 65536, "vcores": 16, "gpu-mem": 20480}, "/r2"),
}
APPS = [  # app, user, queue asked for, groups, container size, count
    ("etl-1", "alice", "etl", ["analysts"], {"vcores": 2, "memory-mb": 8192}, 30),
    ("adhoc-1", "bob", "adhoc", ["analysts"], {"vcores": 1, "memory-mb": 2048}, 6),
    ("train-1", "carol", "ml", ["ml-team"], {"vcores": 2, "memory-mb": 4096, "gpu-mem": 3000}, 12),
    ("report-1", "dave", "default", [], {"vcores": 4, "memory-mb": 4096}, 10),
    ("notebook-1", "erin", None, [], {"vcores": 1, "memory-mb": 1024}, 4),  # placed in root.users.erin
]
HEADERS = ["queue", "weight", "run/wait", "usage", "share", "target", "dominant"]
ROW = re.compile(r"(?P<name> *\S+) +(?P<weight>.*?) +(?P<run>\d+)/(?P<wait>\d+) +(?P<bar>[█·|]+) +"
                 r"(?P<share>\d+\.\d)% +(?P<target>\d+\.\d)% +(?P<dominant>\S+)(?: +(?P<state>.*?))? *")


@pytest.fixture
def busy(tmp_path):
    """conf/queues.yaml (nested queues, a per-resource weight, a user queue made at submission) on
    three node shapes, with apps in five queues."""
    queues_file = tmp_path / "queues.yaml"
    queues_file.write_text((REPO / "conf" / "queues.yaml").read_text())
    with running_ops(queues_file, SHAPES) as ops:
        submit(ops, APPS)
        yield ops


def submit(ops, apps) -> None:
    with ops.lock:
        for app, user, queue, groups, size, count in apps:
            assert ops.core.submit_app(app, user, queue, groups).accepted
            ops.core.update_request(app, 1, size, count)
    ops.settle()


def table_rows(text: str, width: int, headers: list[str] = HEADERS) -> dict[str, re.Match]:
    """Checks the table's shape (each header whole on one line, no line wider than the terminal)
    and returns each row parsed, by its indented name."""
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    head = next(i for i, line in enumerate(lines) if line.startswith("queue "))
    assert lines[head - 1].startswith("queues: dominant share vs target")
    assert lines[head].split() == headers
    assert set(lines[head + 1].strip()) == {"─"}
    rows = {}
    for line in lines[head + 2:]:
        if not line.strip():
            break
        if m := ROW.fullmatch(line):
            rows[m["name"]] = m
    return rows


def expected_name(queue: dict, queues: list[dict]) -> str:
    depth = queue["name"].count(".")
    return "  " * depth + queue["name"].rsplit(".", 1)[-1]


@pytest.mark.parametrize("width", [80, 120])
def test_status_is_legible_at_80_and_120_columns(busy, width):
    queues = busy.get("/v1/queues")["queues"]
    assert any(q["dominant_share"] > 0 for q in queues) and "root.users.erin" in {q["name"] for q in queues}
    code, text = run(["status", "--url", busy.url], width=width)
    assert code == 0
    rows = table_rows(text, width)
    assert len(rows) == len(queues)  # every queue has one whole row: nothing wrapped or cut
    for q in queues:
        r = rows[expected_name(q, queues)]
        assert float(r["share"]) / 100 == pytest.approx(q["dominant_share"], abs=5e-4)
        assert float(r["target"]) / 100 == pytest.approx(q["target_share"], abs=5e-4)
        assert (int(r["run"]), int(r["wait"])) == (q["running_apps"], q["waiting_apps"])
        assert r["dominant"] == (q["dominant_resource"] or "-")
        bar = r["bar"]
        assert len(bar) == 20 if width >= 120 else 10 <= len(bar) <= 20
        if q["target_share"] > 0:
            assert bar.index("|") == min(len(bar) - 1, round(q["target_share"] * len(bar)))
    assert rows["  analytics"]["weight"] == "2" and rows["    etl"]["weight"] == "3"
    assert rows["  ml"]["weight"] == "gpu-mem 2"  # {gpu-mem: 2, vcores: 1, memory-mb: 1}: the one not 1
    assert rows["root"]["weight"] == ""
    assert "types that do not weigh 1" in text


@pytest.mark.parametrize("width", [80, 120])
def test_status_lists_pending_and_limits_below_the_table_with_the_json_figures(busy, width):
    code, text = run(["status", "--url", busy.url], width=width)
    assert max(len(line) for line in text.splitlines()) <= width
    for q in busy.get("/v1/queues")["queues"]:
        lines = details(text, q["name"]) if any(q["pending"].values()) or q["min"] else []
        pending = next((line for line in lines if line.startswith("pending ")), None)
        if any(q["pending"].values()):
            listed = dict(pair.rsplit(" ", 1) for pair in pending.removeprefix("pending ").split(", "))
            assert {k: int(v) for k, v in listed.items()} == {k: v for k, v in q["pending"].items() if v}
        else:
            assert pending is None
    assert details(text, "root.analytics")[-2:] == [
        "min vcores 8, memory-mb 16384", "max memory-mb 262144, vcores 33, gpu-mem 0"]  # 60% of 56 vcores
    assert details(text, "root.analytics.adhoc") == ["max-running-apps 10"]


def test_status_at_80_columns_cuts_only_a_long_queue_name_and_moves_the_state_below(busy):
    submit(busy, [("long-1", "maximilian.featherstonehaugh", None, [], {"vcores": 1, "memory-mb": 1024}, 2)])
    busy.queues_file.write_text(re.sub(r"\n      ml:\n(        .*\n)+", "\n", busy.queues_file.read_text()))
    code, text = run(["reload", "--url", busy.url, "--token-file", str(busy.token_file)])
    assert code == 0 and "root.ml" in text  # ml still runs train-1: it drains
    queues = busy.get("/v1/queues")["queues"]

    code, text = run(["status", "--url", busy.url], width=80)
    rows = table_rows(text, 80)  # no state column: it would squeeze the bar below 10 cells
    assert len(rows) == len(queues)
    long_row = next(r for name, r in rows.items() if name.strip().startswith("maximi"))
    long_queue = next(q for q in queues if q["name"].endswith("featherstonehaugh"))
    assert long_row["name"].endswith("…") and long_row["share"] == f"{long_queue['dominant_share'] * 100:.1f}"
    assert rows["  ml"]["weight"] == "gpu-mem 2" and details(text, "root.ml")[0] == "draining"
    # the cluster is full: its two containers wait, listed below under the whole name
    assert details(text, "root.users.maximilian_dot_featherstonehaugh") == ["pending memory-mb 2048, vcores 2"]

    code, text = run(["status", "--url", busy.url], width=120)
    rows = table_rows(text, 120, HEADERS + ["state"])
    assert rows["  ml"]["state"] == "draining" and rows["    etl"]["state"] == ""
    assert any(name.strip() == "maximilian_dot_featherstonehaugh" for name in rows)


def test_why_at_80_columns_wraps_each_reason_under_its_own_text(busy):
    doc = busy.get("/v1/apps/train-1")
    reasons = [reason for r in doc["requests"] if r["pending"] for reason in r["reasons"]]
    assert any(len(reason["message"]) > 60 for reason in reasons)  # longer than the room beside its code
    code, text = run(["why", "train-1", "--url", busy.url], width=80)
    lines = [line.rstrip() for line in text.splitlines()]
    assert code == 0 and max(map(len, lines)) <= 80
    assert lines[0] == "app train-1 of carol in queue root.ml"
    for reason in reasons:
        first = next(i for i, line in enumerate(lines) if line.startswith(f"  [{reason['code']}] "))
        column = lines[first].index("] ") + 2
        while lines[first][column] == " ":
            column += 1
        message = [lines[first][column:]]
        for line in lines[first + 1:]:
            if not line.startswith(" " * column) or line[column] == " ":
                break
            message.append(line[column:])
        assert " ".join(message) == reason["message"]  # every continuation line starts at the text's column


@pytest.mark.parametrize("weight, shown", [
    ("{gpu-mem: 2}", "gpu-mem 2"),                               # unlisted types weigh 1
    ("{gpu-mem: 3, vcores: 3, memory-mb: 3}", "3"),              # the same for every type: one number
    ("{gpu-mem: 3, vcores: 3}", "vcores 3, gpu-mem 3"),          # ... but memory-mb weighs 1
    ("{gpu-mem: 2, vcores: 0.5, memory-mb: 1}", "vcores 0.5, gpu-mem 2"),
])
def test_status_shows_a_per_resource_weight_by_the_types_that_do_not_weigh_1(busy, weight, shown):
    config = busy.queues_file.read_text()
    assert "weight: {gpu-mem: 2, vcores: 1, memory-mb: 1}" in config
    busy.queues_file.write_text(config.replace("weight: {gpu-mem: 2, vcores: 1, memory-mb: 1}", f"weight: {weight}"))
    assert run(["reload", "--url", busy.url, "--token-file", str(busy.token_file)])[0] == 0
    code, text = run(["status", "--url", busy.url], width=80)
    assert table_rows(text, 80)["  ml"]["weight"] == shown
