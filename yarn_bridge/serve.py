"""`yarn-drf serve`: the scheduling core as a service for the ResourceManager's Java shim.

Normally the shim starts it as a child process (see docs/bridge.md); it can also be started by hand
and the shim configured with yarn-drf.serve.mode=external. Token files must be readable by their
owner only (`chmod 600`). Port 0 (bridge or status) takes any free loopback port; --port-file tells
whoever started it which ones it got. Exit status: 2 invalid queue file or arguments, 3 the bridge
port is taken, 4 the status port is taken.

What the first call needs is imported before listening; the status server's parts only with
--status-port: the shim waits for this process's first answer before its ResourceManager counts as
started (benchmarks/startup).
"""
from __future__ import annotations

import argparse
import errno
import logging
import os
import signal
import sys
import threading
import time

from collections.abc import Callable
from pathlib import Path

from py4j.clientserver import ClientServer

from scheduler import ConfigError
from scheduler.multinode import NODE_CHOICES
from yarn_bridge.gateway import LOOPBACK, PortInUse, start_gateway
from yarn_bridge.service import MAX_ASSIGNMENTS_PER_CALL, CoreService
from yarn_bridge.token_file import TokenFileError, read_token

log = logging.getLogger("yarn_bridge.serve")
DEFAULT_PORT = 25334
EXIT_BAD_INPUT, EXIT_BRIDGE_PORT_TAKEN, EXIT_STATUS_PORT_TAKEN = 2, 3, 4
STOP_WAIT_S = 1.0  # how long a stop lets a call in progress finish (the shim stops us on every RM stop)



def _positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value

def register(subparsers) -> None:
    p = subparsers.add_parser("serve", help="run the scheduling core for the ResourceManager's shim (py4j)",
                              description=__doc__)
    p.add_argument("--queues", required=True, help="queue configuration YAML")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"loopback port to listen on (default {DEFAULT_PORT}; 0: any free port, see --port-file)")
    p.add_argument("--port-file", type=Path, default=None,
                   help="once listening, write the ports it got here (bridge.port=N and status.port=N lines, "
                        "status.port=0 without a status server; replaced whole, mode 600)")
    p.add_argument("--token-file", required=True,
                   help="file holding the bridge token both sides prove they hold (mode 600, owned by this user)")
    p.add_argument("--policy", default="drf", help="fairness policy of the core (default drf)")
    p.add_argument("--node-choice", default="each-node", choices=list(NODE_CHOICES),
                   help="where a call's containers go among its nodes with room: each-node (node by node, in "
                        "turn; default) or best-fit (DRFH: the node whose free room has the request's shape; packs "
                        "tighter, less fair: benchmarks/core/node_choice_fairness.py)")
    p.add_argument("--max-assignments-per-call", type=_positive, default=MAX_ASSIGNMENTS_PER_CALL,
                   help=f"assignments one schedule call makes at most (default {MAX_ASSIGNMENTS_PER_CALL}); the "
                        "nodes it did not finish go first in the next call. Shorter calls see new asks sooner "
                        "(fairer: benchmarks/RESULTS.md); longer ones pay the call's fixed cost less often")
    p.add_argument("--status-port", type=int, default=None,
                   help="serve status, why-pending and Prometheus metrics on http://127.0.0.1:PORT/ "
                        "(default off; the status CLI expects 25335; 0: any free port, see --port-file)")
    p.add_argument("--status-token-file", default=None,
                   help="with --status-port: accept POST /v1/reload with this file's token (mode 600); "
                        "without it the status server is read-only")
    p.add_argument("--queues-watch-s", type=float, default=2.0,
                   help="with --status-port: reload the queue file when it changes, polled every S seconds "
                        "(0 turns it off; default 2)")
    p.add_argument("--parent-pid", type=int, default=0,
                   help="exit when this process (the ResourceManager) is gone")
    p.set_defaults(func=run)


def _watch_parent(pid: int) -> None:
    """The RM may die without stopping us (SIGKILL); then free the port for the next RM."""
    while True:
        time.sleep(0.5)
        if os.getppid() != pid:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                log.warning("parent process %d is gone; exiting", pid)
                os._exit(0)


def write_ports(path: Path, bridge_port: int, status_port: int) -> None:
    """The ports as `bridge.port=N` / `status.port=N` lines (a Java properties file), replacing the file
    whole: a reader sees the old file, none, or the new one, never a part."""
    part = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(f"bridge.port={bridge_port}\nstatus.port={status_port}\n")
    os.replace(part, path)


def _start_status_server(service: CoreService, args: argparse.Namespace, token: str | None,
                         connected: Callable[[], bool]) -> int | None:
    """The status server and file watcher over `service`; the port it listens on, None if it is taken."""
    from yarn_bridge.ops_wiring import attach_ops  # the HTTP server and the dashboard's files
    try:
        ops = attach_ops(service, port=args.status_port, watch_interval=args.queues_watch_s or None, token=token,
                         connected=connected)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        return None
    return ops.server.port


def _process_age_s() -> float | None:
    """Seconds since this process was started (Linux: /proc/self/stat, to the clock tick), or None
    where that is unknown: how long the interpreter and the imports took before `run`."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def run(args: argparse.Namespace) -> int:
    age, entered = _process_age_s(), time.monotonic()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)  # it logs every call at INFO
    status = args.status_port is not None
    if args.status_token_file and not status:
        print("yarn-drf serve: --status-token-file needs --status-port", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        token = read_token(args.token_file, "--token-file")
        status_token = read_token(args.status_token_file, "--status-token-file") if args.status_token_file else None
    except TokenFileError as exc:
        print(f"yarn-drf serve: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    metrics = None
    if status:
        from yarn_bridge.metrics import Metrics  # prometheus_client: only the status server reads it
        metrics = Metrics()
    try:
        service = CoreService(args.queues, policy=args.policy, node_choice=args.node_choice, metrics=metrics,
                              max_assignments_per_call=args.max_assignments_per_call)
    except ConfigError as exc:
        print(f"yarn-drf serve: invalid queue configuration {args.queues}:", file=sys.stderr)
        for err in exc.errors:
            print(f"  {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    parsed = time.monotonic()
    try:
        gateway = start_gateway(service, args.port, token)
    except PortInUse:
        print(f"yarn-drf serve: cannot listen on the bridge port {LOOPBACK}:{args.port}: another process holds it. "
              "The shim will not talk to it (it cannot prove it holds the token); stop it or choose another "
              "yarn-drf.bridge.port", file=sys.stderr)
        return EXIT_BRIDGE_PORT_TAKEN
    bridge_port, status_port = gateway.get_callback_server().get_listening_port(), 0
    if status:
        status_port = _start_status_server(service, args, status_token, gateway.admission.connected)
        if status_port is None:
            gateway.shutdown()
            print(f"yarn-drf serve: cannot listen on the status port {LOOPBACK}:{args.status_port}: another process "
                  "holds it", file=sys.stderr)
            return EXIT_STATUS_PORT_TAKEN
    service.reloader.worker.start()  # (its imports run at a low priority: the first snapshot goes first)
    if args.port_file:
        write_ports(args.port_file, bridge_port, status_port)
    if args.parent_pid:
        threading.Thread(target=_watch_parent, args=(args.parent_pid,), daemon=True).start()
    listening = time.monotonic()
    log.info("yarn-drf serve: listening on %s:%d (queues %s, policy %s, node choice %s) %s", LOOPBACK, bridge_port,
             args.queues, args.policy, args.node_choice, _start_took(age, entered, parsed, listening))
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    log.info("yarn-drf serve: stopping %s; bridge connections refused %s", dict(service.counters),
             dict(gateway.admission.refused))
    _stop(gateway, service)
    return 0


def _start_took(age: float | None, entered: float, parsed: float, listening: float) -> str:
    """Where the start's time went, for the operator whose ResourceManager waits for it."""
    parts = f"queue file and core {parsed - entered:.3f} s, listening {listening - parsed:.3f} s"
    if age is None:
        return f"({parts})"
    return f"{age + listening - entered:.3f} s after the process started (interpreter and imports {age:.3f} s, {parts})"


def _stop(gateway: ClientServer, service: CoreService) -> None:
    """Closes the bridge so that a call in progress is applied whole or not at all: it may finish for
    up to STOP_WAIT_S, then the connections close with the service's lock held, so no call starts
    applying after that. Its reply goes out whole, or the connection closes before the shim reads
    all of it; a call still running dies with the process. The shim resyncs the next core from a
    snapshot either way."""
    if not service.lock.acquire(timeout=STOP_WAIT_S):
        log.warning("yarn-drf serve: a call still running after %g s is dropped", STOP_WAIT_S)
    gateway.shutdown()  # the lock stays held: this process ends here
