"""The py4j side of the bridge: a loopback py4j server whose entry point the Java shim calls.

Every connection is admitted before py4j speaks: the mutual handshake (handshake.py: each side
proves it holds the token, the service first, nothing secret on the wire), then py4j's auth command,
both within HANDSHAKE_TIMEOUT_S; at most MAX_PENDING connections may be in that stage at once. A
connection that fails is closed, counted by reason and logged (at most once per LOG_EVERY_S per
reason, so a flood cannot fill the log). Admitted connections are the shim's long-lived ones: they
have no idle timeout unless `idle_timeout` is given.

Only `CoreEndpoint.call(String) -> String` is callable: any other object id, method name (dunder or
not) or argument list gets py4j's error reply, and py4j's garbage-collect command removes nothing,
so the entry point cannot be replaced or dropped by a peer. Accepted sockets get TCP_NODELAY: py4j
never sets it, and without it any reply of 8 KB or more stalls ~44 ms.

The core never calls into Java, so the token never leaves this process except in the two handshakes
of a connection the shim opened. py4j's own shutdown would first connect to the Java side's server
(port 25333 unless configured) and authenticate there with the token; the shim runs no such server
(`autoStartJavaServer(false)`), so whoever listened on that port would receive the token. The
gateway here stops only its own server, and its client refuses to open any connection at all.

Each connection is a `_LeanConnection`: py4j's own command loop spends about 8 µs of Python per call
(decoding every line through its compatibility helpers, formatting a log line that is then dropped,
converting arguments generically), as much as the core spends deciding. The lean loop reads the same
wire format and answers with py4j's replies.
"""
from __future__ import annotations

import errno
import hmac
import logging
import math
import socket
import threading
import time
import traceback
from collections import Counter
from threading import Thread

from py4j import protocol as proto
from py4j.clientserver import (SHUTDOWN_FINALIZER_WORKER, ClientServer, ClientServerConnection, JavaClient,
                               JavaParameters, PythonParameters, PythonServer)
from py4j.java_gateway import set_reuse_address
from py4j.protocol import Py4JError, escape_new_line, get_command_part, unescape_new_line

from yarn_bridge import handshake
from yarn_bridge.service import CoreService

log = logging.getLogger("yarn_bridge.gateway")
LOOPBACK = "127.0.0.1"
HANDSHAKE_TIMEOUT_S = 5.0
MAX_PENDING = 32
LOG_EVERY_S = 10.0
AUTH_LINE_LIMIT = 4096
ENTRY_POINT = proto.ENTRY_POINT_OBJECT_ID
CALL = "call"


class PortInUse(Exception):
    """The bridge port is held by another process."""


class Endpoint:
    """What Java sees as org.yarndrf.shim.bridge.CoreEndpoint."""

    def __init__(self, service: CoreService) -> None:
        self.service = service

    def call(self, message: str) -> str:
        return self.service.handle(message)

    class Java:
        implements = ["org.yarndrf.shim.bridge.CoreEndpoint"]


class Admission:
    """What every connection of one server must pass, and the count of those that did not."""

    def __init__(self, token: str, handshake_timeout: float, idle_timeout: float | None, max_pending: int) -> None:
        self.token = token.encode("utf-8")
        self.handshake_timeout = handshake_timeout
        self.idle_timeout = idle_timeout
        self.max_pending = max_pending
        self.refused: Counter[str] = Counter()
        self.admitted = 0  # connections open past the handshake (the shim keeps its own open)
        self._pending = threading.BoundedSemaphore(max_pending)
        self._lock = threading.Lock()
        self._logged_at: dict[str, float] = {}

    def connected(self) -> bool:
        """Whether a peer that proved it holds the token has a connection open."""
        return self.admitted > 0

    def opened(self, change: int) -> None:
        with self._lock:
            self.admitted += change

    def enter(self) -> bool:
        return self._pending.acquire(blocking=False)

    def leave(self) -> None:
        self._pending.release()

    def refuse(self, reason: str, peer: str, detail: str) -> None:
        with self._lock:
            self.refused[reason] += 1
            count, now = self.refused[reason], time.monotonic()
            if now - self._logged_at.get(reason, -math.inf) < LOG_EVERY_S:
                return
            self._logged_at[reason] = now
        log.warning("bridge: closed a connection from %s: %s [%s: %d so far]", peer, detail, reason, count)


class _LeanConnection(ClientServerConnection):
    """py4j's server-side connection: admission first, then a shorter command loop with py4j's answers."""

    holds_slot = False  # set at accept: whether this connection got one of the places in the handshake

    def wait_for_commands(self):
        admission: Admission = self.python_server.admission
        sock = self.socket  # the server's shutdown may clear self.socket under us at any time
        if sock is None:
            if self.holds_slot:
                admission.leave()
            return
        if not self.holds_slot:
            admission.refuse("pending", _peer(sock), f"{admission.max_pending} connections are already in the handshake")
            self.close(reset=True)
            return
        try:
            admitted = self._try_admit(sock, admission)
        finally:
            admission.leave()
        try:
            if admitted:
                sock.settimeout(admission.idle_timeout)
        except OSError:
            admitted = False  # closed by a shutdown
        if not admitted:
            self.close(reset=True)
            return
        admission.opened(1)
        try:
            self._serve_commands()
        finally:
            admission.opened(-1)

    def _try_admit(self, sock: socket.socket, admission: Admission) -> bool:
        peer = _peer(sock)
        try:
            self._admit(sock, admission)
            return True
        except handshake.HandshakeError as exc:
            admission.refuse("handshake", peer, str(exc))
        except _AuthFailed:
            admission.refuse("auth", peer, "passed the handshake but sent a wrong py4j auth token")
        except socket.timeout:
            admission.refuse("timeout", peer, f"did not complete the handshake within {admission.handshake_timeout:g} s")
        except (OSError, EOFError) as exc:
            admission.refuse("closed", peer, f"connection lost during the handshake ({exc or type(exc).__name__})")
        return False

    @staticmethod
    def _admit(sock: socket.socket, admission: Admission) -> None:
        deadline = time.monotonic() + admission.handshake_timeout

        def read_line(limit: int) -> bytes:
            return _read_line(sock, limit, deadline)

        handshake.answer(read_line, sock.sendall, admission.token)
        # py4j's own auth command follows ("A", the token, "e"); the peer is the shim by now.
        command, token, end = read_line(8), read_line(AUTH_LINE_LIMIT), read_line(8)
        if command != b"A" or end != b"e" or not hmac.compare_digest(token, admission.token):
            sock.sendall(proto.ERROR_RETURN_MESSAGE.encode("utf-8"))
            raise _AuthFailed()
        sock.sendall(proto.OUTPUT_VOID_COMMAND.encode("utf-8"))

    def _serve_commands(self) -> None:
        sock = self.socket
        readline, sendall = self.stream.readline, sock.sendall
        reset = False
        try:
            while True:
                command = readline()[:-1]
                obj_id = readline()[:-1].decode("utf-8")
                if not obj_id.strip():
                    break  # the peer closed (EOF) or sent an empty command: py4j stops here too
                if command == b"c":
                    sendall(self._call_proxy(obj_id, self.stream).encode("utf-8"))
                elif command == b"g":
                    readline()
                    # Acknowledged, nothing removed: the entry point is the only object, and it stays.
                    sendall(proto.SUCCESS_RETURN_MESSAGE.encode("utf-8"))
                else:
                    log.error("py4j: unknown command %r", command)
                    sendall(proto.ERROR_RETURN_MESSAGE.encode("utf-8"))
        except socket.timeout:
            reset = True
        except (OSError, EOFError) as exc:  # the peer went away mid-command or mid-reply: its own business
            log.info("py4j: connection from %s ended early (%s)", _peer(sock), exc or type(exc).__name__)
        except Exception:  # noqa: BLE001 (a broken peer ends its connection, never the server)
            log.info("py4j: connection ended", exc_info=True)
        self.close(reset)

    def close(self, reset: bool = False) -> None:
        """py4j closes the stream first, which waits for the stream's lock, held by this connection's
        thread for as long as it waits for the peer's next command (the shim's connections idle
        between heartbeats): the server's shutdown hung until the shim's next call, or forever.
        Shutting the socket down first ends that wait at once."""
        sock = self.socket
        if sock is not None and not reset:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by the peer
        super().close(reset)

    def _call_proxy(self, obj_id, input):
        method = _part(input)
        args = []
        part = _part(input)
        while part != proto.END:
            args.append(part)
            part = _part(input)
        if obj_id != ENTRY_POINT or method != CALL or len(args) != 1 or args[0][:1] != proto.STRING_TYPE:
            log.warning("py4j: refused a call of %.40r.%.40r with %d argument(s)", obj_id, method, len(args))
            return _error(f"only CoreEndpoint.call(String) is callable, not {obj_id[:40]}.{method[:40]} "
                          f"with {len(args)} argument(s)")
        message = args[0][1:]
        try:
            value = self.pool.dict[ENTRY_POINT].call(unescape_new_line(message) if "\\" in message else message)
            return "!ys" + escape_new_line(value) + "\n"
        except Exception:  # noqa: BLE001 (py4j's contract: the error goes back to Java)
            log.exception("py4j: call failed")
            return _error(traceback.format_exc())


class _AuthFailed(Exception):
    pass


def _part(input) -> str:
    line = input.readline()
    if not line:
        raise EOFError("the peer closed in the middle of a command")
    return line[:-1].decode("utf-8")


def _error(text: str) -> str:
    return proto.RETURN_MESSAGE + proto.ERROR + get_command_part(text, None)


def _read_line(sock: socket.socket, limit: int, deadline: float) -> bytes:
    """One line from the raw socket, without its newline, by `deadline` however slowly the bytes
    come. Byte by byte, so nothing meant for py4j's buffered stream is read ahead."""
    line = bytearray()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout("handshake deadline")
        sock.settimeout(remaining)
        byte = sock.recv(1)
        if not byte:
            raise EOFError("the peer closed the connection")
        if byte == b"\n":
            return bytes(line)
        line += byte
        if len(line) > limit:
            raise handshake.HandshakeError(f"sent a line longer than {limit} bytes during the handshake")


def _peer(sock: socket.socket) -> str:
    try:
        host, port = sock.getpeername()[:2]
        return f"{host}:{port}"
    except OSError:
        return "a closed socket"


class _Listener(socket.socket):
    """The bridge's listening socket. py4j's accept loop listens again with a backlog of 5: a burst
    of more connections than that (a flood of silent ones) left the next connect, the shim's too,
    waiting a second or more for the kernel to retry it instead of being admitted or refused."""

    __slots__ = ()

    def listen(self, backlog: int = MAX_PENDING) -> None:
        super().listen(max(backlog, MAX_PENDING))


class _AdmittingPythonServer(PythonServer):
    def start(self):
        # py4j's start() with the bind failure told apart: a taken port is the operator's to fix.
        self.server_socket = _Listener(socket.AF_INET, socket.SOCK_STREAM)
        set_reuse_address(self.server_socket)
        try:
            self.server_socket.bind((self.address, self.port))
        except OSError as exc:
            self.server_socket.close()
            if exc.errno == errno.EADDRINUSE:
                raise PortInUse(f"{self.address}:{self.port} is already in use by another process") from None
            raise
        self._listening_address, self._listening_port = self.server_socket.getsockname()[:2]
        # Listening here (py4j listens again in its thread) makes the port ready on return.
        self.server_socket.listen(MAX_PENDING)
        self.thread = Thread(target=self.run, daemon=self.python_parameters.daemonize)
        self.thread.start()

    def _create_connection(self, sock, stream):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = _LeanConnection(self.java_parameters, self.python_parameters, self.gateway_property,
                                     self.gateway_client, python_server=self)
        connection.init_socket_from_python_server(sock, stream)
        connection.holds_slot = self.admission.enter()
        return connection


class _NoCallsToJava(JavaClient):
    """py4j's client towards the Java side, which this core never calls: a connection would begin
    with py4j's auth command, the token in clear, to whatever listens on the Java port."""

    def _create_new_connection(self):
        raise Py4JError("the yarn-drf core makes no calls into Java")


class _AdmittingClientServer(ClientServer):
    def __init__(self, admission: Admission, **kwargs) -> None:
        self._admission = admission
        super().__init__(**kwargs)

    def _create_gateway_client(self):
        return _NoCallsToJava(self.java_parameters, self.python_parameters,
                              finalizer_deque=self._create_finalizer_worker())

    def shutdown(self, raise_exception: bool = False) -> None:
        """Stops listening and closes the shim's connections. py4j's shutdown would first ask the
        Java side's server to stop, over a new connection: none is opened (the module's docstring)."""
        self._gateway_client.finalizer_deque.appendleft(SHUTDOWN_FINALIZER_WORKER)
        self.shutdown_callback_server(raise_exception)

    def _create_callback_server(self, callback_server_parameters):
        server = _AdmittingPythonServer(self._gateway_client, self.java_parameters, self.python_parameters,
                                        self.gateway_property)
        server.admission = self._admission
        return server

    @property
    def admission(self) -> Admission:
        return self._admission


def start_gateway(service: CoreService, port: int, token: str, *, handshake_timeout: float = HANDSHAKE_TIMEOUT_S,
                  idle_timeout: float | None = None, max_pending: int = MAX_PENDING) -> ClientServer:
    """Starts listening on 127.0.0.1:port. Every connection must complete the handshake and py4j's
    auth with `token` within `handshake_timeout` seconds. Raises PortInUse if the port is taken."""
    if not token:
        raise ValueError("the py4j auth token must not be empty")
    return _AdmittingClientServer(
        Admission(token, handshake_timeout, idle_timeout, max_pending),
        java_parameters=JavaParameters(address=LOOPBACK, auth_token=token, auto_convert=False,
                                       eager_load=False),
        python_parameters=PythonParameters(address=LOOPBACK, port=port, auth_token=token,
                                           daemonize=True, daemonize_connections=True),
        python_server_entry_point=Endpoint(service),
    )
