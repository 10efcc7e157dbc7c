"""The py4j side of the bridge: a loopback py4j server whose entry point the Java shim calls.

Java connects as a py4j client, authenticates with the shared token and calls
`CoreEndpoint.call(String) -> String` once per heartbeat. Accepted sockets get TCP_NODELAY:
py4j never sets it, and without it any reply of 8 KB or more stalls ~44 ms.

Each accepted connection is a `_LeanConnection`: py4j's own command loop spends about 8 µs of
Python per call (decoding every line through its compatibility helpers, formatting a log line that
is then dropped, converting arguments generically), as much as the core spends deciding. The lean
loop reads the same wire format and keeps py4j's authentication, converters and error replies.
"""
from __future__ import annotations

import logging
import socket
import traceback

from py4j import protocol as proto
from py4j.clientserver import (ClientServer, ClientServerConnection, JavaParameters, PythonParameters,
                               PythonServer)
from py4j.java_gateway import Py4JAuthenticationError, _garbage_collect_proxy, do_client_auth
from py4j.protocol import escape_new_line, get_command_part, get_return_value, unescape_new_line

from yarn_bridge.service import CoreService

log = logging.getLogger("yarn_bridge.gateway")
LOOPBACK = "127.0.0.1"


class Endpoint:
    """What Java sees as org.yarndrf.shim.bridge.CoreEndpoint."""

    def __init__(self, service: CoreService) -> None:
        self.service = service

    def call(self, message: str) -> str:
        return self.service.handle(message)

    class Java:
        implements = ["org.yarndrf.shim.bridge.CoreEndpoint"]


class _LeanConnection(ClientServerConnection):
    """py4j's server-side connection with a shorter loop; same protocol, same answers."""

    def wait_for_commands(self):
        readline, sendall = self.stream.readline, self.socket.sendall
        reset = False
        try:
            token = self.python_parameters.auth_token
            if token is not None:  # raises unless the first command is the right token
                do_client_auth(readline()[:-1].decode("utf-8"), self.stream, self.socket, token)
            while True:
                command = readline()[:-1]
                obj_id = readline()[:-1].decode("utf-8")
                if not obj_id.strip():
                    break  # the peer closed (EOF) or sent an empty command: py4j stops here too
                if command == b"c":
                    sendall(self._call_proxy(obj_id, self.stream).encode("utf-8"))
                elif command == b"g":
                    readline()
                    _garbage_collect_proxy(self.pool, obj_id)
                    sendall(proto.SUCCESS_RETURN_MESSAGE.encode("utf-8"))
                else:
                    log.error("py4j: unknown command %r", command)
                    sendall(proto.ERROR_RETURN_MESSAGE.encode("utf-8"))
        except Py4JAuthenticationError:
            reset = True
            log.error("py4j: a connection failed authentication")
        except socket.timeout:
            reset = True
        except Exception:  # noqa: BLE001 (a broken peer ends its connection, never the server)
            log.info("py4j: connection ended", exc_info=True)
        self.close(reset)

    def _call_proxy(self, obj_id, input):
        target = self.pool.dict.get(obj_id)
        if target is None:
            return proto.RETURN_MESSAGE + proto.ERROR + get_command_part("Object ID unknown", self.pool)
        try:
            method = input.readline()[:-1].decode("utf-8")
            params = []
            part = input.readline()[:-1].decode("utf-8")
            while part != proto.END:
                if part[:1] == proto.STRING_TYPE:  # the shim's one argument: no generic conversion
                    params.append(unescape_new_line(part[1:]) if "\\" in part else part[1:])
                else:
                    params.append(get_return_value(proto.SUCCESS + part, self.java_client))
                part = input.readline()[:-1].decode("utf-8")
            value = getattr(target, method)(*params)
            if isinstance(value, str):
                return "!ys" + escape_new_line(value) + "\n"
            return proto.RETURN_MESSAGE + proto.SUCCESS + get_command_part(value, self.pool)
        except Exception:  # noqa: BLE001 (py4j's contract: the error goes back to Java)
            log.exception("py4j: call %s failed", obj_id)
            return proto.RETURN_MESSAGE + proto.ERROR + get_command_part(traceback.format_exc(), self.pool)


class _NoDelayPythonServer(PythonServer):
    def start(self):
        super().start()
        # py4j calls listen() in its accept thread, so a connection right after start() could be
        # refused; listening here (again, harmlessly) makes the port ready when start() returns.
        self.server_socket.listen(5)

    def _create_connection(self, sock, stream):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = _LeanConnection(self.java_parameters, self.python_parameters, self.gateway_property,
                                     self.gateway_client, python_server=self)
        connection.init_socket_from_python_server(sock, stream)
        return connection


class _NoDelayClientServer(ClientServer):
    def _create_callback_server(self, callback_server_parameters):
        return _NoDelayPythonServer(self._gateway_client, self.java_parameters, self.python_parameters,
                                    self.gateway_property)


def start_gateway(service: CoreService, port: int, token: str) -> ClientServer:
    """Starts listening on 127.0.0.1:port; requires `token` from every connection."""
    if not token:
        raise ValueError("the py4j auth token must not be empty")
    return _NoDelayClientServer(
        java_parameters=JavaParameters(address=LOOPBACK, auth_token=token, auto_convert=False,
                                       eager_load=False),
        python_parameters=PythonParameters(address=LOOPBACK, port=port, auth_token=token,
                                           daemonize=True, daemonize_connections=True),
        python_server_entry_point=Endpoint(service),
    )
