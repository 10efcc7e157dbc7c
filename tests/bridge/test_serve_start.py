"""`yarn-drf serve` as the shim starts it: port 0 for any free loopback port, the port file that tells
the shim which ports it got (so two ResourceManagers on one host never collide), and a start that
imports only what the first call needs (the ResourceManager waits for that call)."""
from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests import serve_process
from tests.bridge.shim_client import ShimClient
from tests.secret_files import secret_file
from yarn_bridge.cli import COMMANDS, build_parser

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = REPO / "tests" / "bridge" / "contract" / "snapshot.request.json"
TOKEN = "serve-start-token"


@pytest.fixture
def start(tmp_path, queues_file):
    """Starts `yarn-drf serve` with a port file; returns (process, ports) once the file is there."""
    token = secret_file(tmp_path / "token", TOKEN)
    started = []

    def run(*extra: str) -> tuple[subprocess.Popen, dict[str, int]]:
        port_file = tmp_path / f"ports-{len(started)}"
        proc, ports = serve_process.start(port_file, "--queues", str(queues_file), "--token-file", str(token), *extra)
        started.append(proc)
        assert ports, f"exited with {proc.returncode}: {proc.stderr.read()}"
        assert stat.S_IMODE(port_file.stat().st_mode) == 0o600
        return proc, ports

    yield run
    for proc in started:
        proc.kill()
        proc.wait()


def snapshot() -> str:
    return json.dumps(json.loads(SNAPSHOT.read_text())["examples"][0]["message"])


def test_port_0_listens_on_a_free_port_that_the_port_file_names(start):
    _, ports = start("--port", "0")
    assert ports["bridge.port"] > 0 and ports["status.port"] == 0
    reply = json.loads(ShimClient(ports["bridge.port"], TOKEN).open().call(snapshot()))
    assert reply["ok"] and reply["queues"]


def test_two_services_on_port_0_get_different_ports(start):
    _, first = start("--port", "0", "--status-port", "0")
    _, second = start("--port", "0", "--status-port", "0")
    assert len({first["bridge.port"], second["bridge.port"], first["status.port"], second["status.port"]}) == 4


def test_status_port_0_serves_the_status_on_the_port_the_file_names(start):
    _, ports = start("--port", "0", "--status-port", "0")
    health = requests.get(f"http://127.0.0.1:{ports['status.port']}/v1/health", timeout=10).json()
    assert "service_counters" in health


def test_the_port_file_is_written_after_the_ports_listen(start):
    """The shim connects as soon as it reads the file: the port must already accept."""
    _, ports = start("--port", "0")
    ShimClient(ports["bridge.port"], TOKEN).sock.close()


def test_serve_imports_neither_the_status_server_nor_the_other_commands_libraries(tmp_path, queues_file):
    """What `yarn-drf serve` loads before it can answer, without --status-port: not the HTTP client and
    terminal tables of `yarn-drf status`, the simulator, nor the status server and its metrics."""
    probe = ("import sys, yarn_bridge.cli as cli, yarn_bridge.serve as s\n"
             "s.run = lambda args: print(' '.join(sorted(sys.modules)))\n"
             "cli.main(sys.argv[1:])\n")
    out = subprocess.run([sys.executable, "-c", probe, "serve", "--queues", str(queues_file), "--token-file", "t"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    loaded = set(out)
    for module in ("requests", "rich", "prometheus_client", "http.server", "scheduler.sim.cli",
                   "yarn_bridge.status", "yarn_bridge.ops_cli"):
        assert module not in loaded, f"{module} imported by `yarn-drf serve`"


def test_every_command_a_module_registers_is_listed_with_it():
    """The list lets a command import only its module; a command missing from it would still work
    through the full parser, but a listed name its module does not register would not."""
    for module, names in COMMANDS.items():
        subparsers = next(a for a in build_parser(names[0])._actions if a.dest == "command")
        assert set(subparsers.choices) == set(names), module
    full = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(full.choices) == {name for names in COMMANDS.values() for name in names}


def test_a_port_file_is_replaced_whole(tmp_path):
    from yarn_bridge.serve import write_ports

    target = tmp_path / "ports"
    target.write_text("bridge.port=1\nstatus.port=2\n")
    write_ports(target, 41000, 0)
    assert serve_process.read_ports(target) == {"bridge.port": 41000, "status.port": 0}
    assert os.listdir(tmp_path) == ["ports"], "no part file left behind"


def test_a_taken_status_port_exits_with_status_4_and_writes_no_port_file(tmp_path, queues_file):
    token = secret_file(tmp_path / "token", TOKEN)
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        run = subprocess.run([sys.executable, "-m", "yarn_bridge.cli", "serve", "--queues", str(queues_file),
                              "--token-file", str(token), "--port", "0", "--status-port", str(taken),
                              "--port-file", str(tmp_path / "ports")],
                             cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 4
    assert f"cannot listen on the status port 127.0.0.1:{taken}: another process holds it" in run.stderr
    assert not (tmp_path / "ports").exists(), "the shim must not connect to a service that is exiting"
