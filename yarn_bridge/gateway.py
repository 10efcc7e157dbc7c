"""The py4j side of the bridge: a loopback py4j server whose entry point the Java shim calls.

Java connects as a py4j client, authenticates with the shared token and calls
`CoreEndpoint.call(String) -> String` once per heartbeat. Accepted sockets get TCP_NODELAY:
py4j never sets it, and without it any reply of 8 KB or more stalls ~44 ms.
"""
from __future__ import annotations

import logging
import socket

from py4j.clientserver import ClientServer, JavaParameters, PythonParameters, PythonServer

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


class _NoDelayPythonServer(PythonServer):
    def start(self):
        super().start()
        # py4j calls listen() in its accept thread, so a connection right after start() could be
        # refused; listening here (again, harmlessly) makes the port ready when start() returns.
        self.server_socket.listen(5)

    def _create_connection(self, sock, stream):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return super()._create_connection(sock, stream)


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
