"""`yarn-drf serve`: the scheduling core as a service for the ResourceManager's Java shim.

Normally the shim starts it as a child process (see BRIDGE.md); it can also be started by hand
and the shim configured with yarn-drf.serve.mode=external.
"""
from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path

from scheduler import ConfigError
from yarn_bridge.gateway import LOOPBACK, start_gateway
from yarn_bridge.ops_wiring import attach_ops
from yarn_bridge.service import CoreService

log = logging.getLogger("yarn_bridge.serve")
DEFAULT_PORT = 25334


def register(subparsers) -> None:
    p = subparsers.add_parser("serve", help="run the scheduling core for the ResourceManager's shim (py4j)",
                              description=__doc__)
    p.add_argument("--queues", required=True, help="queue configuration YAML")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"loopback port to listen on (default {DEFAULT_PORT})")
    p.add_argument("--token-file", required=True,
                   help="file holding the py4j auth token the shim must present")
    p.add_argument("--policy", default="drf", help="fairness policy of the core (default drf)")
    p.add_argument("--status-port", type=int, default=0,
                   help="serve status, why-pending, reload and Prometheus metrics on http://127.0.0.1:PORT/ "
                        "(default off; the status CLI expects 25335)")
    p.add_argument("--queues-watch-s", type=float, default=2.0,
                   help="with --status-port: reload the queue file when it changes, polled every S seconds "
                        "(0 turns it off; default 2)")
    p.add_argument("--parent-pid", type=int, default=0,
                   help="exit when this process (the ResourceManager) is gone")
    p.set_defaults(func=run)


def _read_token(path: str) -> str:
    try:
        token = Path(path).read_text().strip()
    except OSError as exc:
        raise SystemExit(f"yarn-drf serve: cannot read --token-file {path}: {exc.strerror}")
    if not token:
        raise SystemExit(f"yarn-drf serve: --token-file {path} is empty")
    return token


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


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)  # it logs every call at INFO
    token = _read_token(args.token_file)
    try:
        service = CoreService(args.queues, policy=args.policy)
    except ConfigError as exc:
        print(f"yarn-drf serve: invalid queue configuration {args.queues}:", file=sys.stderr)
        for err in exc.errors:
            print(f"  {err}", file=sys.stderr)
        return 2
    if args.status_port:
        attach_ops(service, port=args.status_port, watch_interval=args.queues_watch_s or None)
    gateway = start_gateway(service, args.port, token)
    if args.parent_pid:
        threading.Thread(target=_watch_parent, args=(args.parent_pid,), daemon=True).start()
    log.info("yarn-drf serve: listening on %s:%d (queues %s, policy %s)", LOOPBACK, args.port,
             args.queues, args.policy)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    log.info("yarn-drf serve: stopping %s", dict(service.counters))
    gateway.shutdown()
    return 0
