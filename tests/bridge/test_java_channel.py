"""The shim's Java side of the bridge (Py4jChannel + CoreSession, the code the scheduler's
heartbeat runs) against a real `yarn-drf serve`: the handshake both ways, messages of any size, a
wrong token refused; and against a squatter on the port, which must learn neither the token nor any
request. Uses the benchmark driver class with a few calls."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from tests import serve_process
from tests.queues import QUEUES_FILE as QUEUES
from tests.secret_files import secret_file

pytestmark = pytest.mark.jvm

REPO = Path(__file__).resolve().parents[2]
SHIM = REPO / "java_shim" / "target"


def java(*args: str) -> subprocess.CompletedProcess:
    jar = next(p for p in SHIM.glob("yarn-drf-shim-*.jar") if not p.name.startswith("original-"))
    cp = os.pathsep.join([str(jar), str(SHIM / "test-classes"), (SHIM / "classpath.txt").read_text().strip()])
    return subprocess.run(["java", "-cp", cp, "org.yarndrf.shim.bench.BridgeBench", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def serve(tmp_path):
    if not (SHIM / "classpath.txt").exists():
        pytest.fail("java_shim is not built: run `make shim`")
    token = "java-side-token"
    proc, ports = serve_process.start(tmp_path / "ports", "--queues", str(QUEUES), "--port", "0",
                                      "--token-file", str(secret_file(tmp_path / "token", token)))
    assert ports, proc.stderr.read()
    yield ports["bridge.port"], token
    proc.terminate()
    proc.communicate(timeout=10)


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


def test_java_channel_with_a_wrong_token_learns_the_service_is_not_verified(serve):
    port, _ = serve
    run = java("py4j", str(port), "not-the-token", "1", "10", "0")
    assert run.returncode != 0 and "unverified=1" in run.stderr, "the service's proof does not check"


@pytest.mark.parametrize("answer,counted", [
    (b"", "timeouts=1"),  # silent: as a hung service is (the wait is the call's timeout)
    (b"!yv\n", "unverified=1"),  # py4j's "authenticated"
    (b"0" * 32 + b" " + b"0" * 64 + b"\n", "unverified=1"),  # a guessed proof
])
def test_a_squatter_on_the_port_gets_only_the_hello_from_the_java_channel(answer, counted):
    """What held the bridge port used to receive the token in clear, then every request."""
    if not (SHIM / "classpath.txt").exists():
        pytest.fail("java_shim is not built: run `make shim`")
    received: list[bytes] = []
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        squatter.settimeout(60)

        def serve_all() -> None:
            while True:
                try:
                    conn, _ = squatter.accept()
                except OSError:
                    return
                with conn:
                    conn.settimeout(30)  # longer than the channel waits: the channel gives up first
                    data = b""
                    try:
                        data += conn.recv(4096)
                        conn.sendall(answer)
                        while chunk := conn.recv(4096):
                            data += chunk
                    except OSError:
                        pass
                    received.append(data)

        threading.Thread(target=serve_all, daemon=True).start()
        run = java("py4j", str(squatter.getsockname()[1]), "the-real-token", "1", "10", "0")
    assert run.returncode != 0 and "snapshot refused" in run.stderr
    assert counted in run.stderr
    assert received, "the channel did connect"
    for data in received:
        assert re.fullmatch(rb"yarn-drf-bridge/1 [0-9a-f]{32}\n", data), data
