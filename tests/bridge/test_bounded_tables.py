"""What anyone who can reach the status server sends must not grow what it keeps: the dashboard
serves a fixed list of files, and any other /ui/ path is a 404 that leaves nothing behind. No token
is needed for /ui/ (and an <img> tag of another local page carries no Origin header), so an
unbounded cache keyed by the path grew the process by megabytes per thousand requests."""
from __future__ import annotations

import socket
import tracemalloc
from pathlib import Path

from tests.bridge.test_serve_stop import start_serve
from tests.secret_files import secret_file
from yarn_bridge import ui

PATHS = 10_000
PATH_CHARS = 4_000  # long paths, as the audit sent: each kept one would cost its length at least
WARM_UP = 500
FLAT_MB = 8  # well under what keeping the 10,000 paths would take (40 MB of names alone)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


def get_404(port: int, path: str) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as http:
        http.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        status = http.recv(64)
        assert status.startswith(b"HTTP/1.0 404"), status
        while http.recv(65536):
            pass


def distinct_path(i: int) -> str:
    return f"/ui/{i:06d}-" + "x" * PATH_CHARS


def test_unknown_dashboard_names_are_not_kept():
    assert ui.asset("app.js") is not None
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(PATHS):
            assert ui.asset(distinct_path(i)[len("/ui/"):]) is None
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 1 << 20, f"{kept} bytes kept after {PATHS} unknown names"


def test_ten_thousand_distinct_ui_paths_leave_the_status_servers_memory_flat(tmp_path, queues_file):
    token = secret_file(tmp_path / "token", "bounded-tables-token")
    proc, ports = start_serve(tmp_path, queues_file, token, None, "--status-port", "0")
    try:
        port = ports["status.port"]
        for i in range(WARM_UP):  # the server's threads and buffers reach their steady size
            get_404(port, distinct_path(PATHS + i))
        before = rss_mb(proc.pid)
        for i in range(PATHS):
            get_404(port, distinct_path(i))
        grown = rss_mb(proc.pid) - before
        assert grown < FLAT_MB, f"RSS grew {grown:.1f} MB over {PATHS} distinct /ui/ paths ({before:.1f} MB before)"
        print(f"RSS {before:.1f} MB before, grew {grown:.1f} MB over {PATHS} distinct paths of {PATH_CHARS} chars")
    finally:
        proc.kill()
        proc.wait()
