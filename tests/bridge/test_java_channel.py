"""The shim's Java side of the bridge (Py4jChannel + CoreSession, the code the scheduler's
heartbeat runs) against a real `yarn-drf serve`: auth token required both ways, messages of any
size, a wrong token refused. Uses the benchmark driver class with a few calls."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHIM = REPO / "java_shim" / "target"
QUEUES = REPO / "tests" / "integration" / "queues.yaml"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def java(*args: str) -> subprocess.CompletedProcess:
    jar = next(p for p in SHIM.glob("yarn-drf-shim-*.jar") if not p.name.startswith("original-"))
    cp = os.pathsep.join([str(jar), str(SHIM / "test-classes"), (SHIM / "classpath.txt").read_text().strip()])
    return subprocess.run(["java", "-cp", cp, "org.yarndrf.shim.bench.BridgeBench", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def serve(tmp_path):
    if not (SHIM / "classpath.txt").exists():
        pytest.fail("java_shim is not built: run `make shim`")
    port, token = free_port(), "java-side-token"
    (tmp_path / "token").touch(mode=0o600)
    (tmp_path / "token").write_text(token)
    proc = subprocess.Popen([sys.executable, "-m", "yarn_bridge.cli", "serve", "--queues", str(QUEUES),
                             "--port", str(port), "--token-file", str(tmp_path / "token")], cwd=REPO)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    yield port, token
    proc.terminate()
    proc.wait(10)


@pytest.mark.parametrize("deltas,asks", [(1, "counts"), (50, "counts"), (250, "full"), (50, "containers")])
def test_java_channel_exchanges_heartbeats_with_the_real_service(serve, deltas, asks):
    port, token = serve
    run = java("py4j", str(port), token, str(deltas), "200", "20", asks)
    assert run.returncode == 0, run.stderr[-2000:]
    stats = json.loads(run.stdout.strip().splitlines()[-1])
    assert stats["calls"] == 200 and stats["asks"] == asks
    if asks == "full":
        assert stats["bytes"] > 8192, "large enough to stall without TCP_NODELAY"


def test_java_channel_with_a_wrong_token_gets_nothing(serve):
    port, _ = serve
    run = java("py4j", str(port), "not-the-token", "1", "10", "0")
    assert run.returncode != 0
    assert "snapshot refused" in run.stderr
