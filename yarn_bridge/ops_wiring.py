"""Attaches the operations parts (metrics, the one reload path, status server, file watcher) to a CoreService.

`attach_ops(service, port)` is all `yarn-drf serve` needs: it wraps the service's `handle` (the
py4j entry point) so that every bridge request is measured, and so that `yarn rmadmin
-refreshQueues` (a "reload" request) goes through the same validated `Reloader` as `yarn-drf
reload` and a change of the queue file. The wrapper reads no request it does not need to: it
counts heartbeats, assignments and refusals from the core's own counters around the call.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from scheduler.bounded_yaml import clip
from yarn_bridge import protocol
from yarn_bridge.metrics import Metrics
from yarn_bridge.reload import FileWatcher, Reloader
from yarn_bridge.status import DEFAULT_STATUS_PORT, LOOPBACK, StatusServer

log = logging.getLogger("yarn_bridge.ops")

@dataclass
class Ops:
    metrics: Metrics
    reloader: Reloader
    server: StatusServer
    watcher: FileWatcher | None

    def stop(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        self.server.stop()


def attach_ops(service: Any, port: int = DEFAULT_STATUS_PORT, host: str = LOOPBACK,
               watch_interval: float | None = 2.0) -> Ops:
    """Instruments `service`, routes its reloads through one Reloader and starts the status server.

    `service` is a CoreService: it has `core`, `lock`, `config`, `queues_path`, `counters`,
    `handle(text) -> text` and `queue_list()`. `watch_interval=None` turns the file watcher off.
    """
    metrics = Metrics(lambda: service.core, service.lock)

    def applied(config, path) -> None:
        service.config, service.queues_path = config, path  # a resync rebuilds the core from these

    reloader = Reloader(lambda: service.core, service.lock, service.queues_path, loader=service._load,
                        metrics=metrics, on_applied=applied)
    _instrument(service, metrics, reloader)
    server = StatusServer(lambda: service.core, service.lock, lambda: _health(service), host=host, port=port,
                          metrics=metrics, reloader=reloader).start()
    watcher = FileWatcher(reloader, watch_interval).start() if watch_interval else None
    return Ops(metrics, reloader, server, watcher)


def _health(service: Any) -> dict:
    return {"service_counters": dict(service.counters), "epoch": getattr(service, "epoch", None)}


def _instrument(service: Any, metrics: Metrics, reloader: Reloader) -> None:
    inner = service.handle
    # One request at a time through the wrapper, so the counter deltas around a call are its own.
    # The service serialises on its core lock anyway; this adds only the (small) decode time.
    mutex = threading.Lock()

    def handle(text: str) -> str:
        with mutex:
            return measured(text)

    def measured(text: str) -> str:
        msg = _peek(text)
        if msg is not None and msg.get("type") == "reload":
            return _reload(service, reloader, msg)
        core = service.core
        counters = core.counters
        before = (counters["heartbeats"], counters["assignments"], counters["refused"])
        start = time.perf_counter()
        reply = inner(text)
        elapsed = time.perf_counter() - start
        if service.core is not core:
            metrics.resync()
            return reply
        beats, assigned, refused = (counters["heartbeats"] - before[0], counters["assignments"] - before[1],
                                    counters["refused"] - before[2])
        if refused > 0:
            metrics.refused.inc(refused)
        if beats > 0:
            rtt = getattr(service, "last_rtt_ms", None)
            metrics.heartbeat(elapsed, max(assigned, 0),
                              rtt / 1000 if type(rtt) in (int, float) and rtt >= 0 else None)
        return reply

    service.handle = handle


def _peek(text: str) -> dict | None:
    """Parses only the requests the wrapper acts on itself: reloads. Heartbeats are parsed once, by
    the service."""
    if '"reload"' not in text:
        return None
    try:
        msg = json.loads(text)
    except (TypeError, ValueError):
        return None  # the service answers it with its own error
    return msg if isinstance(msg, dict) and msg.get("v") == protocol.VERSION else None


def _reload(service: Any, reloader: Reloader, msg: dict) -> str:
    """`yarn rmadmin -refreshQueues`: the validated reload, answered in the service's reply format."""
    path = msg.get("path") or None
    if path is not None and not isinstance(path, str):
        return protocol.error(f"reload: path must be a string, got {clip(path)}")
    with service.lock:
        service.counters["reload"] += 1
        try:
            result = reloader.apply(path, trigger="refreshQueues")
        except Exception as exc:  # noqa: BLE001 (the py4j entry point never raises into the RM)
            log.exception("reload of %s failed", path or reloader.path)
            return protocol.error(f"reload: {type(exc).__name__}: {clip(str(exc))}")
        if not result.accepted:
            return protocol.reply(accepted=False, errors=result.errors)
        return protocol.reply(accepted=True, changes=result.changes, queues=service.queue_list())
