"""The mutual handshake that opens every bridge connection, before py4j's own authentication.

py4j's authentication has the client send the token in clear as its first line, so whatever holds
the bridge port (a squatter, if `yarn-drf serve` could not bind it) would learn the token and get
every request. Here each side proves it holds the token without sending it, the service first:

    shim    -> service   "yarn-drf-bridge/1 " N_shim "\\n"             N_shim: 32 hex digits, fresh
    service -> shim      N_service " " MAC("service", N_shim, N_service) "\\n"
    shim    -> service   MAC("shim", N_service, N_shim) "\\n"

where MAC(role, a, b) = hex(HMAC-SHA256(token, "yarn-drf " role "|" a "|" b)). The shim sends
nothing else (no token, no request) until the service's MAC checks; the service answers nothing
else until the shim's does. Fresh nonces on both sides make a recorded exchange useless, and the
role in the MAC keeps one side's proof from serving as the other's. Then py4j's protocol starts,
with its auth command first. The Java side is org.yarndrf.shim.bridge.VerifiedSockets.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable

HELLO = re.compile(rb"yarn-drf-bridge/1 ([0-9a-f]{32})")
LINE_LIMIT = 128  # the longest handshake line is 97 bytes


class HandshakeError(Exception):
    """The peer did not complete the handshake; the message says what it did instead."""


def mac(token: bytes, role: bytes, first: bytes, second: bytes) -> bytes:
    return hmac.new(token, b"yarn-drf " + role + b"|" + first + b"|" + second, hashlib.sha256).hexdigest().encode()


def answer(read_line: Callable[[int], bytes], send: Callable[[bytes], object], token: bytes) -> None:
    """The service's side. `read_line(limit)` returns one line without its newline (it raises on EOF
    or timeout). Raises HandshakeError unless the peer proves it holds `token`."""
    hello = HELLO.fullmatch(read_line(LINE_LIMIT))
    if hello is None:
        raise HandshakeError("did not open with the yarn-drf handshake (not the shim, or a shim of another version)")
    shim_nonce, own_nonce = hello.group(1), secrets.token_hex(16).encode()
    send(own_nonce + b" " + mac(token, b"service", shim_nonce, own_nonce) + b"\n")
    if not hmac.compare_digest(read_line(LINE_LIMIT), mac(token, b"shim", own_nonce, shim_nonce)):
        raise HandshakeError("did not prove it holds the bridge token")
