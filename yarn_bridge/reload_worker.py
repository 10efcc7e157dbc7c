"""A queue file's parse and validation in a process of its own, for reloads.

A reload's parse (a few MB of YAML, the schema, the semantic checks, a throwaway core) is CPU
work; in the service's process it held the interpreter (the GIL) away from the schedule calls
running meanwhile, which took 2-3 times as long while a big file was refused. Here it runs in one
worker process, started with `serve` (else at the first reload) and kept for the next. What comes back is the validated config, or the errors. The worker is bounded:
an address-space limit (a parse that needs more is refused as too big) and a time limit (a worker
that has not answered by then is killed); a worker that dies or is killed leaves the refusal with
the reason, and the next reload starts a new one.
"""
from __future__ import annotations

import resource
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from typing import Any

from yarn_bridge.validation import validate

# A parse of a file at the size limit takes about 2 s of CPU on the project's 2-vCPU VM; a worker
# still busy after this long is taken as hung.
TIMEOUT_S = 60.0
# The worker's address space: the interpreter and its modules take about 0.3 GB of it; a file
# whose parse needs more than the rest is refused, never swapping the service's host.
MEMORY_BYTES = 2 << 30

# The worker runs at the service's own priority. At nice 10 it starved whenever other processes kept
# the cores busy: its start and a small file's parse then took longer than the about one second the
# shim gives a reload (`yarn rmadmin -refreshQueues` failed "outcome unknown" under `stress-ng --cpu
# 4`); the calls do not wait for it either way, being in another process.

Outcome = tuple[Any, list[str]]  # (the validated QueueConfig, []) or (None, its errors)


class ParseWorker:
    """One worker process, started when first needed; one check at a time."""

    def __init__(self, timeout_s: float = TIMEOUT_S, memory_bytes: int = MEMORY_BYTES) -> None:
        self.timeout_s = timeout_s
        self.memory_bytes = memory_bytes
        self._lock = threading.Lock()
        self._process: Any = None
        self._connection: Connection | None = None

    def check(self, path: str, against: tuple[tuple[str, ...], str]) -> Outcome:
        """The file at `path` read and validated by the worker for the cluster's resource types and
        policy (`against`); a worker that hangs or dies is an error naming why, never a raise."""
        with self._lock:
            try:
                connection = self._started()
                connection.send((path, against))
                if not connection.poll(self.timeout_s):
                    self._stop()
                    return None, [f"(top level): the check did not finish within {self.timeout_s:g} s; "
                                  "its worker process was killed"]
                outcome: Outcome = connection.recv()
                return outcome
            except (EOFError, OSError):
                code = self._stop()
                return None, [f"(top level): the process checking the file ended (exit code {code}) "
                              "before it answered"]

    def start(self) -> None:
        """Starts the worker now rather than at the first reload (which then need not wait for its
        imports: the shim gives a reload about a second); returns at once."""
        with self._lock:
            self._started()

    @property
    def pid(self) -> int | None:
        """The worker's process id; None while none runs."""
        process = self._process
        return None if process is None else process.pid

    def stop(self) -> None:
        with self._lock:
            self._stop()

    def _started(self) -> Connection:
        if self._process is None or self._process.poll() is not None:
            self._stop()
            # A process of its own through the interpreter's command line, not multiprocessing's
            # spawn: that re-runs the service's main module (the console script, a benchmark) in it.
            ours, theirs = socket.socketpair()
            process = subprocess.Popen([sys.executable, "-m", __name__, str(theirs.fileno()), str(self.memory_bytes)],
                                       pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
            theirs.close()
            self._process, self._connection = process, Connection(ours.detach())
        assert self._connection is not None
        return self._connection

    def _stop(self) -> int | None:
        """Ends the worker (killed if still running); its exit code, None if there was none."""
        process, connection = self._process, self._connection
        self._process = self._connection = None
        if connection is not None:
            connection.close()
        if process is None:
            return None
        if process.poll() is None:
            process.kill()
        return process.wait()


def _serve(connection: Connection, memory_bytes: int) -> None:
    """The worker's loop: (path, against) in, Outcome out, until the service closes its end."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:  # (a service already limited keeps its limit: never raised)
        memory_bytes = min(memory_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, hard))
    while True:
        try:
            path, against = connection.recv()
        except EOFError:
            return
        connection.send(validate(path, against, memory_bound=True))


if __name__ == "__main__":
    _serve(Connection(int(sys.argv[1])), int(sys.argv[2]))
