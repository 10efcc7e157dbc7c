"""`yarn-drf serve` as a process of its own, started the way the shim starts it: on port 0, with a
port file that says which ports it got. For the tests of the real process (its start, its stop)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.waits import wait_for

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
    wait_for(lambda: port_file.exists() or proc.poll() is not None, "a port file or the process's exit",
             budget_s=budget_s, poll_s=0.02)
    return proc, read_ports(port_file) if port_file.exists() else {}
