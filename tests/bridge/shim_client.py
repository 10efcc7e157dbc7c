"""The Java shim's end of one bridge connection, written from docs/bridge.md (not from gateway.py): the
mutual handshake, py4j's auth command, then py4j calls. Tests and the port probe use it to speak to
`yarn-drf serve` as the shim does, and to misbehave in the ways an attacker would."""
from __future__ import annotations

import hashlib
import hmac
import secrets
import socket

from py4j.protocol import escape_new_line, unescape_new_line


def mac(token: str, role: str, first: str, second: str) -> str:
    return hmac.new(token.encode(), f"yarn-drf {role}|{first}|{second}".encode(), hashlib.sha256).hexdigest()


class NotVerified(Exception):
    """The listener did not prove it holds the token."""


class ShimClient:
    def __init__(self, port: int, token: str, timeout: float = 5.0) -> None:
        self.token = token
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.stream = self.sock.makefile("rb")
        self.auth_reply = ""

    def hello(self) -> tuple[str, str, str]:
        """Sends the opening line; returns (own nonce, the service's nonce, the service's proof)."""
        nonce = secrets.token_hex(16)
        self.sock.sendall(f"yarn-drf-bridge/1 {nonce}\n".encode())
        theirs, _, proof = self.stream.readline().decode().strip().partition(" ")
        return nonce, theirs, proof

    def open(self, auth_token: str | None = None) -> ShimClient:
        """The handshake, checking the service's proof before anything else is sent, then py4j's auth
        with `auth_token` (default: the token)."""
        nonce, theirs, proof = self.hello()
        if not hmac.compare_digest(proof, mac(self.token, "service", nonce, theirs)):
            raise NotVerified(f"service proof {proof!r}")
        self.send(mac(self.token, "shim", theirs, nonce) + "\n")
        self.send(f"A\n{auth_token or self.token}\ne\n")
        self.auth_reply = self.stream.readline().decode()
        return self

    def send(self, text: str) -> None:
        self.sock.sendall(text.encode())

    def reply(self) -> str:
        return self.stream.readline().decode()

    def command(self, text: str) -> str:
        self.send(text)
        return self.reply()

    def call(self, message: str) -> str:
        line = self.command(f"c\nt\ncall\ns{escape_new_line(message)}\ne\n")[:-1]
        assert line.startswith("!ys"), line
        return unescape_new_line(line[3:])

    def closed_by_peer(self) -> bool:
        return closed_by_peer(self.sock)

    def close(self) -> None:
        self.stream.close()  # (the socket's file stays open while its makefile() stream is)
        self.sock.close()


def closed_by_peer(sock: socket.socket) -> bool:
    """True if the other end has closed the connection (EOF or reset) before sending anything more."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
