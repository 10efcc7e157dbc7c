"""`yarn-drf serve` as a process of its own, started the way the shim starts it: on port 0, with a
port file that says which ports it got. For the tests of the real process (its start, its stop)."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SERVE = (sys.executable, "-m", "yarn_bridge.cli", "serve")


def read_ports(path: Path) -> dict[str, int]:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if line)
    return {key: int(value) for key, value in pairs}


def start(port_file: Path, *args: str, command: tuple[str, ...] = SERVE,
          budget_s: float = 120) -> tuple[subprocess.Popen, dict[str, int]]:
    """`command *args` with `port_file`; (process, ports) once it listens, or (process, {}) when it
    exited first (its stderr, piped, says why)."""
    port_file.unlink(missing_ok=True)
    proc = subprocess.Popen([*command, *args, "--port-file", str(port_file)], cwd=REPO, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + budget_s
    while not port_file.exists() and proc.poll() is None:
        assert time.monotonic() < deadline, f"no port file within {budget_s:g} s"
        time.sleep(0.02)
    return proc, read_ports(port_file) if port_file.exists() else {}
