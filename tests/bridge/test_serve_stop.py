"""How `yarn-drf serve` stops: the bridge token never leaves the process (py4j's own shutdown would
connect to the Java side's callback port, 25333 unless configured, and send `A\\n<token>` to whoever
listens there), SIGTERM ends it promptly with the shim connected, and a client that goes away early
leaves one log line, not a traceback.

Waits poll for their condition with generous budgets (the machine may be loaded); none asserts a
wall-clock time. A stop that hangs fails on the budget: before the fix it hung until the shim's
next call, which never comes here."""
from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests
from py4j.protocol import escape_new_line, unescape_new_line

from tests import serve_process
from tests.bridge.shim_client import ShimClient
from tests.secret_files import secret_file
from tests.waits import wait_for

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = REPO / "tests" / "bridge" / "contract" / "snapshot.request.json"
PY4J_JAVA_PORT = 25333  # py4j's default port of the Java side's server
EXIT_BUDGET_S = 30.0  # a stop that takes longer hangs (it used to wait for the shim's next call)

# `yarn-drf serve` with py4j's Java-side port set to argv[1]: the port an operator could configure.
WITH_JAVA_PORT = """\
import functools, sys
import yarn_bridge.gateway as gateway
gateway.JavaParameters = functools.partial(gateway.JavaParameters, port=int(sys.argv.pop(1)))
from yarn_bridge.cli import main
sys.exit(main(sys.argv[1:]))
"""


class Listener:
    """Listens where py4j's shutdown would connect; counts connections and whether `token` came.
    What others send is looked at for the token and dropped (other processes on a shared machine
    may connect to 25333; their bytes are none of this test's business)."""

    def __init__(self, port: int, token: str) -> None:
        self.token = token.encode()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.token_seen = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        seen = b""
        with conn:
            try:
                while chunk := conn.recv(4096):
                    seen = (seen + chunk)[-4 * len(self.token):]
                    self.token_seen = self.token_seen or self.token in seen
            except OSError:
                pass

    def close(self) -> None:
        self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept (a plain close leaves the port listening)
        self.sock.close()


@pytest.fixture
def token(tmp_path) -> tuple[Path, str]:
    value = f"stop-test-token-{time.monotonic_ns()}"  # unique: another process's token never matches
    return secret_file(tmp_path / "token", value), value


def start_serve(tmp_path: Path, queues_file: Path, token_file: Path, java_port: int | None,
                *extra: str) -> tuple[subprocess.Popen, dict[str, int]]:
    """`yarn-drf serve` on free ports; (process, ports) once it listens (None ports if it exited)."""
    command = serve_process.SERVE if java_port is None else \
        (sys.executable, "-c", WITH_JAVA_PORT, str(java_port), "serve")
    return serve_process.start(tmp_path / "ports", "--queues", str(queues_file), "--token-file", str(token_file),
                               "--port", "0", *extra, command=command)


def stopped(proc: subprocess.Popen) -> str:
    """Waits for the process to exit; its stderr."""
    try:
        _, err = proc.communicate(timeout=EXIT_BUDGET_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"yarn-drf serve still running {EXIT_BUDGET_S:g} s after the stop:\n{err}")
    return err


class Stderr:
    """A process's stderr, read in a thread as it comes (a read blocks), so a test can wait for a
    line before it acts; once the process has exited, all of it."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc, self.lines = proc, []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line)

    def wait_for_line(self, text: str, budget_s: float = 120) -> None:
        """Until a line holds `text`; each new line gives it `budget_s` more."""
        wait_for(lambda: any(text in line for line in self.lines), f"{text!r} in the log", budget_s=budget_s,
                 progress=lambda: len(self.lines), poll_s=0.05, describe=lambda: "".join(self.lines))

    def after_exit(self) -> str:
        try:
            self.proc.wait(timeout=EXIT_BUDGET_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail(f"yarn-drf serve still running {EXIT_BUDGET_S:g} s after the stop:\n" + "".join(self.lines))
        self._reader.join(timeout=30)
        return "".join(self.lines)


def snapshot() -> str:
    return json.dumps(json.loads(SNAPSHOT.read_text())["examples"][0]["message"])


def settle(proc: subprocess.Popen) -> None:
    """py4j's shutdown connected and sent before the process exited: once it has, what was sent has
    arrived when the listener's readers get a moment."""
    assert proc.returncode is not None
    time.sleep(0.5)


STOPS = {
    "SIGTERM": signal.SIGTERM,
    "SIGINT": signal.SIGINT,
}


@pytest.mark.parametrize("stop", [*STOPS, "taken status port"])
def test_a_stop_sends_nothing_to_a_configured_java_port(tmp_path, queues_file, token, stop):
    token_file, value = token
    listener = Listener(0, value)
    try:
        if stop == "taken status port":
            with socket.socket() as squatter:
                squatter.bind(("127.0.0.1", 0))
                squatter.listen()
                proc, ports = start_serve(tmp_path, queues_file, token_file, listener.port,
                                          "--status-port", str(squatter.getsockname()[1]))
                err = stopped(proc)
            assert proc.returncode == 4, err
        else:
            proc, ports = start_serve(tmp_path, queues_file, token_file, listener.port)
            ShimClient(ports["bridge.port"], value).open().call(snapshot())  # a shim was there
            proc.send_signal(STOPS[stop])
            err = stopped(proc)
            assert proc.returncode == 0, err
        settle(proc)
        assert not listener.token_seen, "the bridge token was sent to the Java-side port"
        assert listener.connections == 0, f"{listener.connections} connection(s) to the Java-side port"
    finally:
        listener.close()


@pytest.mark.parametrize("stop", [*STOPS, "taken status port"])
def test_a_stop_sends_no_token_to_py4js_default_java_port(tmp_path, queues_file, token, stop):
    """The same on 25333 itself, where a local user would listen. On a shared machine other processes
    may connect there too, so only this service's (unique) token is looked for; the connection count
    is the configured-port test's."""
    token_file, value = token
    try:
        listener = Listener(PY4J_JAVA_PORT, value)
    except OSError as exc:
        pytest.skip(f"127.0.0.1:{PY4J_JAVA_PORT} is held by another process on this machine ({exc}); "
                    "test_a_stop_sends_nothing_to_a_configured_java_port covers the same on a free port")
    try:
        if stop == "taken status port":
            with socket.socket() as squatter:
                squatter.bind(("127.0.0.1", 0))
                squatter.listen()
                proc, _ = start_serve(tmp_path, queues_file, token_file, None,
                                      "--status-port", str(squatter.getsockname()[1]))
                stopped(proc)
        else:
            proc, ports = start_serve(tmp_path, queues_file, token_file, None)
            ShimClient(ports["bridge.port"], value).open().call(snapshot())
            proc.send_signal(STOPS[stop])
            stopped(proc)
        settle(proc)
        assert not listener.token_seen, f"the bridge token was sent to 127.0.0.1:{PY4J_JAVA_PORT}"
    finally:
        listener.close()


def test_sigterm_with_the_shim_connected_and_idle_ends_the_service(tmp_path, queues_file, token):
    """The shim keeps its connection open between heartbeats; the stop must not wait for its next call."""
    token_file, value = token
    proc, ports = start_serve(tmp_path, queues_file, token_file, None)
    shim = ShimClient(ports["bridge.port"], value, timeout=EXIT_BUDGET_S).open()
    assert json.loads(shim.call(snapshot()))["ok"]
    time.sleep(0.5)  # idle, as between heartbeats: the service's reader waits for the next command
    proc.send_signal(signal.SIGTERM)
    err = stopped(proc)
    assert proc.returncode == 0, err
    assert shim.closed_by_peer(), "the service exited without closing the shim's connection"


def test_a_call_in_flight_at_sigterm_is_answered_whole_or_not_at_all(tmp_path, queues_file, token):
    token_file, value = token
    proc, ports = start_serve(tmp_path, queues_file, token_file, None)
    shim = ShimClient(ports["bridge.port"], value, timeout=EXIT_BUDGET_S).open()
    shim.send(f"c\nt\ncall\ns{escape_new_line(snapshot())}\ne\n")
    proc.send_signal(signal.SIGTERM)
    reply = shim.reply()
    stopped(proc)
    assert reply == "" or (reply.startswith("!ys") and json.loads(unescape_new_line(reply[3:-1]))["ok"]), reply[:200]


def test_clients_that_leave_early_leave_no_traceback(tmp_path, queues_file, token):
    """A shim connection dropped in the middle of a command, and a status client that resets its
    connection before reading the reply, are logged in one line each."""
    token_file, value = token
    proc, ports = start_serve(tmp_path, queues_file, token_file, None, "--status-port", "0")
    shim = ShimClient(ports["bridge.port"], value).open()
    shim.call(snapshot())
    shim.send("c\nt\ncall\n")  # half a command
    shim.close()
    for _ in range(20):
        with socket.create_connection(("127.0.0.1", ports["status.port"])) as http:
            http.sendall(f"GET /v1/queues HTTP/1.1\r\nHost: 127.0.0.1:{ports['status.port']}\r\n\r\n".encode())
            http.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # reset
    health = requests.get(f"http://127.0.0.1:{ports['status.port']}/v1/health", timeout=30)
    assert health.status_code == 200, "the status server survives"
    # (the connection's thread notices the close when it next runs: on a busy machine that may be
    # after a stop sent at once, so the test waits for its line first)
    log = Stderr(proc)
    log.wait_for_line("ended early")
    proc.send_signal(signal.SIGTERM)
    err = log.after_exit()
    assert "ended early" in err and "left before its reply" in err, err
    assert "Traceback" not in err, err
