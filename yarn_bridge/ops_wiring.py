"""Attaches the operations parts (metrics, status server, file watcher) to a CoreService.

`attach_ops(service, port)` is all `yarn-drf serve` needs: it wraps the service's `handle` (the
py4j entry point) so that every bridge request is measured, and gives the status server and the
file watcher the service's own `Reloader`, the one `yarn rmadmin -refreshQueues` goes through. The
wrapper reads no request: it counts heartbeats, assignments and refusals from the core's own
counters around the call.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from yarn_bridge import protocol
from yarn_bridge.metrics import Metrics
from yarn_bridge.reload import FileWatcher, Reloader
from yarn_bridge.status import DEFAULT_STATUS_PORT, LOOPBACK, StatusServer


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
               watch_interval: float | None = 2.0, token: str | None = None) -> Ops:
    """Instruments `service` and starts the status server (read-only unless `token` is given: then
    POST /v1/reload needs it).

    `service` is a CoreService: it has `core`, `lock`, `counters`, `reloader` and `handle(text) -> text`.
    `watch_interval=None` turns the file watcher off.
    """
    metrics = Metrics(lambda: service.core, service.lock)
    reloader = service.reloader
    reloader.metrics = metrics
    _instrument(service, metrics)
    server = StatusServer(lambda: service.core, service.lock, lambda: _health(service), host=host, port=port,
                          metrics=metrics, reloader=reloader, token=token).start()
    watcher = FileWatcher(reloader, watch_interval).start() if watch_interval else None
    return Ops(metrics, reloader, server, watcher)


def _health(service: Any) -> dict:
    return {"service_counters": dict(service.counters), "epoch": getattr(service, "epoch", None),
            "config_warnings": list(getattr(service, "config_warnings", ()))}


def _instrument(service: Any, metrics: Metrics) -> None:
    inner = service.handle
    # One request at a time through the wrapper, so the counter deltas around a call are its own.
    # The service serialises on its core lock anyway; this adds only the (small) decode time.
    mutex = threading.Lock()

    def handle(text: str) -> str:
        if protocol.is_snapshot(text):
            # Not behind the mutex: a newer snapshot must reach the service while an older one is
            # still being applied (its caller timed out), which then gives way to it.
            core = service.core
            reply = inner(text)
            if service.core is not core:
                metrics.resync()
            return reply
        with mutex:
            return measured(text)

    def measured(text: str) -> str:
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
