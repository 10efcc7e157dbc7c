"""`yarn-drf serve`'s py4j server, spoken to as the Java shim does and as an attacker would: the mutual
handshake before anything else, loopback only, only CoreEndpoint.call reachable, idle and slow
connections closed, TCP_NODELAY on accepted sockets."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest
from py4j.protocol import escape_new_line, unescape_new_line

from tests.bridge.messages import ping
from tests.bridge.shim_client import NotVerified, ShimClient, closed_by_peer, mac
from tests.ports import free_port
from tests.secret_files import secret_file
from tests.waits import wait_for
from yarn_bridge import protocol
from yarn_bridge.gateway import PortInUse, start_gateway
from yarn_bridge.service import CoreService

TOKEN = "s3cret-token"


def counted(gw, reason: str) -> None:
    """Until the gateway has counted one refusal for `reason` (its thread counts once it closed)."""
    wait_for(lambda: gw.admission.refused[reason] == 1, f"one {reason} refusal counted", budget_s=10, poll_s=0.02,
             describe=lambda: f"refusals: {dict(gw.admission.refused)}")


@pytest.fixture
def gateway(queues_file):
    port = free_port()
    service = CoreService(queues_file)
    gw = start_gateway(service, port, TOKEN, handshake_timeout=0.5)
    yield gw, port, service
    gw.shutdown()


def test_a_client_with_the_token_gets_replies(gateway):
    gw, port, _ = gateway
    client = ShimClient(port, TOKEN).open()
    assert client.auth_reply.startswith("!yv")
    assert json.loads(client.call(ping()))["ok"]
    big = json.loads(client.call(ping(pad="x" * 20000)))
    assert big["ok"], "messages over 8 KB pass too"
    client.close()
    assert sum(gw.admission.refused.values()) == 0


def test_the_service_proves_itself_first_without_sending_the_token(gateway):
    gw, port, _ = gateway
    client = ShimClient(port, TOKEN)
    nonce, theirs, proof = client.hello()
    assert proof == mac(TOKEN, "service", nonce, theirs)
    assert TOKEN not in theirs + proof and len(theirs) == 32
    again = ShimClient(port, TOKEN)
    assert again.hello()[1] != theirs, "a fresh nonce per connection: a recorded answer cannot be replayed"
    for c in (client, again):
        c.close()


def test_a_client_with_another_token_learns_nothing_and_is_refused(gateway):
    gw, port, _ = gateway
    with pytest.raises(NotVerified):
        ShimClient(port, "wrong").open()  # the service's proof does not check against another token
    liar = ShimClient(port, "wrong")
    _, theirs, _ = liar.hello()
    liar.send(mac("wrong", "shim", theirs, "0" * 32) + "\n" + f"A\n{TOKEN}\ne\n")
    assert liar.closed_by_peer(), "a wrong proof ends the connection before py4j's auth is read"
    counted(gw, "handshake")


def test_the_py4j_token_alone_does_not_open_the_bridge(gateway):
    """A client of py4j's own protocol (the token first, in clear) gets no reply and is closed."""
    gw, port, _ = gateway
    client = ShimClient(port, TOKEN)
    client.send(f"A\n{TOKEN}\ne\n")
    assert client.closed_by_peer()
    counted(gw, "handshake")


def test_a_proven_client_with_a_wrong_py4j_token_is_refused(gateway):
    gw, port, _ = gateway
    client = ShimClient(port, TOKEN).open(auth_token="other")
    assert client.auth_reply.startswith("!x")
    assert client.closed_by_peer()
    counted(gw, "auth")


@pytest.mark.parametrize("command", [
    "c\nt\n__init__\nsreplaced\ne\n",  # the reported attack: the entry point's service replaced by a string
    "c\nt\n__setattr__\nsservice\nsx\ne\n",
    "c\nt\n__getattribute__\nsservice\ne\n",
    "c\nt\n__class__\ne\n",
    "c\nt\nJava\ne\n",
    "c\nt\ncall\ni5\ne\n",  # the one method, with an argument that is not a string
    "c\nt\ncall\nsa\nsb\ne\n",
    "c\nt\ncall\ne\n",
    "c\nj\ncall\nsx\ne\n",  # another object id
])
def test_only_core_endpoint_call_with_one_string_is_callable(gateway, command):
    gw, port, service = gateway
    client = ShimClient(port, TOKEN).open()
    answer = client.command(command)
    assert answer.startswith("!x") and "only CoreEndpoint.call(String) is callable" in unescape_new_line(answer)
    assert json.loads(client.call(ping()))["ok"], "the bridge still works on the same connection"
    assert ShimClient(port, TOKEN).open().call(ping()), "and on a new one"
    client.close()


def test_garbage_collecting_the_entry_point_removes_nothing(gateway):
    gw, port, _ = gateway
    client = ShimClient(port, TOKEN).open()
    assert client.command("g\nt\ne\n") == "!y\n"
    assert json.loads(client.call(ping()))["ok"]
    client.close()


def test_a_connection_that_sends_nothing_is_closed_after_the_handshake_timeout(gateway):
    gw, port, _ = gateway
    idle = socket.create_connection(("127.0.0.1", port), timeout=5)
    start = time.monotonic()
    assert closed_by_peer(idle)
    assert time.monotonic() - start < 4, "closed by the 0.5 s handshake timeout, not by the client's"
    counted(gw, "timeout")


def test_a_client_trickling_bytes_is_closed_at_the_handshake_deadline(gateway):
    gw, port, _ = gateway
    slow = socket.create_connection(("127.0.0.1", port), timeout=5)
    start = time.monotonic()
    with pytest.raises(OSError):
        for byte in b"yarn-drf-bridge/1 " + b"0" * 32:
            slow.sendall(bytes([byte]))  # one byte every 0.1 s: each read is quick, the whole is not
            time.sleep(0.1)
    assert time.monotonic() - start < 3
    counted(gw, "timeout")


def test_connections_beyond_the_pending_limit_are_closed_at_once_and_the_shim_gets_in_after(queues_file):
    port = free_port()
    gw = start_gateway(CoreService(queues_file), port, TOKEN, handshake_timeout=30, max_pending=3)
    try:
        idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(3)]
        extra = ShimClient(port, TOKEN)
        assert extra.closed_by_peer(), "closed at once, not after the 30 s handshake timeout"
        assert gw.admission.refused["pending"] == 1
        for s in idle:
            s.close()
        wait_for(lambda: _opens(port), "the shim admitted once the idle connections closed", budget_s=10, poll_s=0.02)
    finally:
        gw.shutdown()


def _opens(port: int) -> bool:
    try:
        return json.loads(ShimClient(port, TOKEN).open().call(ping()))["ok"]
    except OSError:
        return False


def test_an_idle_authenticated_connection_is_kept_unless_an_idle_timeout_is_set(queues_file):
    port = free_port()
    gw = start_gateway(CoreService(queues_file), port, TOKEN, handshake_timeout=0.3, idle_timeout=0.6)
    try:
        client = ShimClient(port, TOKEN).open()
        time.sleep(0.4)  # past the handshake timeout: admitted connections are not held to it
        assert json.loads(client.call(ping()))["ok"]
        assert client.closed_by_peer(), "closed after 0.6 s without a command"
    finally:
        gw.shutdown()


def test_accepted_sockets_have_tcp_nodelay_and_listen_on_loopback_only(gateway):
    gw, port, _ = gateway
    client = ShimClient(port, TOKEN).open()
    client.call(ping())
    server = gw._callback_server
    assert server.server_socket.getsockname()[0] == "127.0.0.1"
    conns = [c for c in server.connections if c.socket is not None]
    assert conns and all(c.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for c in conns)
    client.close()


def test_an_empty_token_is_refused():
    with pytest.raises(ValueError):
        start_gateway(None, free_port(), "")


def test_a_taken_port_is_reported_as_such(queues_file):
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        with pytest.raises(PortInUse, match=f"127.0.0.1:{squatter.getsockname()[1]} is already in use"):
            start_gateway(CoreService(queues_file), squatter.getsockname()[1], TOKEN)


def serve(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "yarn_bridge.cli", "serve", *args],
                          capture_output=True, text=True, timeout=60, **kwargs)


def test_serve_exits_with_status_3_naming_the_port_when_another_process_holds_it(tmp_path, queues_file):
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        run = serve("--queues", str(queues_file), "--port", str(port), "--token-file", str(secret_file(tmp_path / "t", TOKEN)))
    assert run.returncode == 3
    assert f"cannot listen on the bridge port 127.0.0.1:{port}: another process holds it" in run.stderr


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o620, 0o602])
def test_serve_refuses_a_token_file_others_can_read_or_write(tmp_path, queues_file, mode):
    token = secret_file(tmp_path / "token", TOKEN)
    token.chmod(mode)
    run = serve("--queues", str(queues_file), "--port", str(free_port()), "--token-file", str(token))
    assert run.returncode == 2
    assert f"--token-file {token} is readable or writable by other users (mode {mode:04o})" in run.stderr
    assert "chmod 600" in run.stderr


def test_serve_refuses_an_exposed_status_token_file(tmp_path, queues_file):
    status_token = secret_file(tmp_path / "status", TOKEN)
    status_token.chmod(0o604)
    run = serve("--queues", str(queues_file), "--port", str(free_port()), "--token-file",
                str(secret_file(tmp_path / "t", TOKEN)), "--status-port", str(free_port()),
                "--status-token-file", str(status_token))
    assert run.returncode == 2 and "--status-token-file" in run.stderr and "chmod 600" in run.stderr


def test_serve_refuses_an_invalid_queue_file_naming_the_field(tmp_path, queues_file):
    queues_file.write_text(queues_file.read_text().replace("weight: 2", "weight: -2"))
    run = serve("--queues", str(queues_file), "--port", str(free_port()), "--token-file",
                str(secret_file(tmp_path / "token", TOKEN)))
    assert run.returncode == 2
    assert "queues.root.children.mem.weight" in run.stderr


def test_serve_exits_when_its_parent_is_gone(tmp_path, queues_file):
    token = secret_file(tmp_path / "token", TOKEN)
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


def run_commands(connection_class, commands: bytes, service: CoreService) -> bytes:
    """Feeds py4j commands to one server-side connection after admission, as they arrive from Java;
    returns its answers."""
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
    conn = connection_class(JavaParameters(), PythonParameters(), GatewayProperty(False, pool), None)
    sock = Recorder()
    conn.socket, conn.stream = sock, io.BufferedReader(io.BytesIO(commands))
    if connection_class.__name__ == "_LeanConnection":
        conn._serve_commands()
    else:
        conn.wait_for_commands()
    return sock.out


def test_the_lean_command_loop_answers_the_shims_calls_exactly_as_py4j_does(queues_file):
    """The same command stream through py4j's own connection and through ours: same bytes out,
    for plain and escaped strings and a GC command."""
    from py4j.clientserver import ClientServerConnection

    from yarn_bridge.gateway import _LeanConnection

    def call(arg: str) -> str:
        return f"c\nt\ncall\n{arg}\ne\n"

    odd = json.dumps({"v": protocol.VERSION, "type": "da\nn\\ce"})  # a newline and a backslash, echoed in the error
    commands = "".join([
        call("s" + escape_new_line(ping())),
        call("s" + escape_new_line(odd)),
        "g\nnobody\ne\n",
    ]).encode()
    ours = run_commands(_LeanConnection, commands, CoreService(queues_file))
    theirs = run_commands(ClientServerConnection, commands, CoreService(queues_file))
    assert ours == theirs
    answers = ours.decode().split("\n")
    assert json.loads(unescape_new_line(answers[0][3:]))["ok"] is True
    assert "'da\\nn\\\\ce'" in json.loads(unescape_new_line(answers[1][3:]))["error"]  # intact both ways
    assert answers[2] == "!y"  # GC acknowledged
