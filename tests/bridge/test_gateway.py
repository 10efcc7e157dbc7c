"""`yarn-drf serve`'s py4j server, spoken to in py4j's own wire protocol as the Java shim does:
loopback only, auth token required, TCP_NODELAY on accepted sockets."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest
from py4j.protocol import escape_new_line, unescape_new_line

from yarn_bridge import protocol
from yarn_bridge.gateway import start_gateway
from yarn_bridge.service import CoreService


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Py4jClient:
    """The minimum of py4j's Java-side client: authenticate, call the entry point."""

    def __init__(self, port: int, token: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.stream = self.sock.makefile("rb")
        self.sock.sendall(f"A\n{token}\ne\n".encode())
        self.auth_reply = self.stream.readline().decode()

    def call(self, message: str) -> str:
        self.sock.sendall(f"c\nt\ncall\ns{escape_new_line(message)}\ne\n".encode())
        line = self.stream.readline().decode()[:-1]
        assert line.startswith("!ys"), line
        return unescape_new_line(line[3:])

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def gateway(queues_file):
    port, token = free_port(), "s3cret-token"
    service = CoreService(queues_file)
    gw = start_gateway(service, port, token)
    yield gw, port, token
    gw.shutdown()


def test_a_client_with_the_token_gets_replies(gateway):
    gw, port, token = gateway
    client = Py4jClient(port, token)
    assert client.auth_reply.startswith("!yv")
    reply = json.loads(client.call(json.dumps({"v": protocol.VERSION, "type": "status"})))
    assert reply["ok"] and "core" in reply
    big = json.loads(client.call(json.dumps({"v": protocol.VERSION, "type": "status", "pad": "x" * 20000})))
    assert big["ok"], "messages over 8 KB pass too"
    client.close()


def test_a_client_without_the_right_token_is_refused(gateway):
    gw, port, token = gateway
    client = Py4jClient(port, "wrong")
    assert client.auth_reply.startswith("!x")
    with pytest.raises((OSError, AssertionError)):
        client.call(json.dumps({"v": protocol.VERSION, "type": "status"}))
        client.call(json.dumps({"v": protocol.VERSION, "type": "status"}))


def test_accepted_sockets_have_tcp_nodelay_and_listen_on_loopback_only(gateway):
    gw, port, token = gateway
    client = Py4jClient(port, token)
    client.call(json.dumps({"v": protocol.VERSION, "type": "status"}))
    server = gw._callback_server
    assert server.server_socket.getsockname()[0] == "127.0.0.1"
    conns = list(server.connections)
    assert conns and all(c.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for c in conns)
    client.close()


def test_an_empty_token_is_refused():
    with pytest.raises(ValueError):
        start_gateway(None, free_port(), "")


def test_serve_refuses_an_invalid_queue_file_naming_the_field(tmp_path, queues_file):
    queues_file.write_text(queues_file.read_text().replace("weight: 2", "weight: -2"))
    token = tmp_path / "token"
    token.write_text("t")
    run = subprocess.run([sys.executable, "-m", "yarn_bridge.cli", "serve", "--queues", str(queues_file),
                          "--port", str(free_port()), "--token-file", str(token)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "queues.root.children.mem.weight" in run.stderr


def test_serve_exits_when_its_parent_is_gone(tmp_path, queues_file):
    token = tmp_path / "token"
    token.write_text("t")
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    child = subprocess.Popen([sys.executable, "-m", "yarn_bridge.cli", "serve", "--queues", str(queues_file),
                              "--port", str(free_port()), "--token-file", str(token),
                              "--parent-pid", str(parent.pid)])
    try:
        time.sleep(1)
        assert child.poll() is None
        parent.kill()
        parent.wait()
        assert child.wait(timeout=20) == 0
    finally:
        for p in (parent, child):
            if p.poll() is None:
                p.kill()


def run_connection(connection_class, commands: bytes, service: CoreService, token: str | None) -> bytes:
    """Feeds py4j commands to one server-side connection, as they arrive from Java; returns its answers."""
    import io

    from py4j.clientserver import JavaParameters, PythonParameters
    from py4j.java_gateway import GatewayProperty, PythonProxyPool

    from yarn_bridge.gateway import Endpoint

    class Recorder:
        def __init__(self) -> None:
            self.out = b""

        def sendall(self, data: bytes) -> None:
            self.out += data

        def close(self) -> None:
            pass

        def shutdown(self, how) -> None:
            pass

        def setsockopt(self, *option) -> None:
            pass

    pool = PythonProxyPool()
    pool.dict["t"] = Endpoint(service)
    conn = connection_class(JavaParameters(), PythonParameters(auth_token=token), GatewayProperty(False, pool), None)
    sock = Recorder()
    conn.socket, conn.stream = sock, io.BufferedReader(io.BytesIO(commands))
    conn.wait_for_commands()
    return sock.out


def test_the_lean_connection_answers_exactly_as_py4j_does(queues_file):
    """The same command stream through py4j's own connection and through ours: same bytes out,
    for plain and escaped strings, non-string arguments, unknown objects and a GC command."""
    from py4j.clientserver import ClientServerConnection

    from yarn_bridge.gateway import _LeanConnection

    def call(arg: str) -> str:
        return f"c\nt\ncall\n{arg}\ne\n"

    status = json.dumps({"v": protocol.VERSION, "type": "status"})
    odd = json.dumps({"v": protocol.VERSION, "type": "da\nn\\ce"})  # a newline and a backslash, echoed in the error
    commands = "".join([
        "A\ntok\ne\n",
        call("s" + escape_new_line(status)),
        call("s" + escape_new_line(odd)),
        call("i5"),  # not a string: py4j converts it, the service answers that it wants one
        "g\nnobody\ne\n",
        "c\nnobody\ncall\nsx\ne\n",  # unknown object id (py4j then reads the rest as commands)
    ]).encode()
    ours = run_connection(_LeanConnection, commands, CoreService(queues_file), "tok")
    theirs = run_connection(ClientServerConnection, commands, CoreService(queues_file), "tok")
    assert ours == theirs
    answers = ours.decode().split("\n")
    assert answers[0].startswith("!yv")  # authenticated
    assert json.loads(unescape_new_line(answers[1][3:]))["ok"] is True
    assert "'da\\nn\\\\ce'" in json.loads(unescape_new_line(answers[2][3:]))["error"]  # intact both ways
    assert "not a string" in unescape_new_line(answers[3][3:])
    assert answers[4] == "!y" and answers[5].startswith("!x")  # GC acknowledged; unknown object refused
    refused = run_connection(_LeanConnection, b"A\nwrong\ne\n" + call("sx").encode(), CoreService(queues_file), "tok")
    assert refused.startswith(b"!x") and b"!y" not in refused
