"""Free TCP ports on 127.0.0.1 for the servers a test starts: never a fixed port, so runs side by
side on one machine do not collide."""
from __future__ import annotations

import socket


def free_ports(n: int) -> list[int]:
    """n distinct free ports (held open together, so they differ)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def free_port() -> int:
    return free_ports(1)[0]
