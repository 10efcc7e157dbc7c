"""Run a child process in its own network namespace with only a loopback interface.

SLS starts a full ResourceManager (RPC servers, web UI) and its own metrics web server, which
binds every interface. Inside a fresh network namespace "every interface" is a private loopback:
nothing is reachable from outside, and runs never collide with other RMs on this machine's ports.
"""
from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1


class NetnsUnavailable(RuntimeError):
    """Creating a network namespace needs root (CAP_SYS_ADMIN)."""


def enter_private_loopback() -> None:
    """Moves the calling process into a new network namespace and brings its `lo` up."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise NetnsUnavailable(f"unshare(CLONE_NEWNET) failed: {os.strerror(err)} "
                               "(the SLS benchmark needs root to isolate its servers)")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sh14x", b"lo", 0)
        flags = struct.unpack("16sh14x", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, ifreq))[1]
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sh14x", b"lo", flags | IFF_UP))


def available() -> bool:
    """True if this process may create network namespaces (checked in a throwaway child)."""
    pid = os.fork()
    if pid == 0:
        try:
            enter_private_loopback()
            os._exit(0)
        except Exception:  # noqa: BLE001 - any failure means "not available"
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0
