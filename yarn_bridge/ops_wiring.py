"""Starts the operations parts of a CoreService: its status server and the queue-file watcher.

The service itself records its metrics (given to it when it is built) and owns the one `Reloader`
that `yarn rmadmin -refreshQueues` goes through; the status server's POST /v1/reload and the file
watcher are two more triggers of that same reloader. Nothing here wraps or replaces the service.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from yarn_bridge.reload import FileWatcher
from yarn_bridge.service import CoreService
from yarn_bridge.status import DEFAULT_STATUS_PORT, LOOPBACK, StatusServer


@dataclass
class Ops:
    server: StatusServer
    watcher: FileWatcher | None

    def stop(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()
        self.server.stop()


def attach_ops(service: CoreService, port: int = DEFAULT_STATUS_PORT, host: str = LOOPBACK,
               watch_interval: float | None = 2.0, token: str | None = None,
               connected: Callable[[], bool] | None = None) -> Ops:
    """Starts the status server over `service` (read-only unless `token` is given: then POST
    /v1/reload needs it) and, unless `watch_interval` is None, the file watcher.

    `connected` says whether the shim has a bridge connection open (the gateway knows); without it
    the status server judges by the age of the last call, which an idle cluster lets grow."""
    if service.metrics is None:
        raise ValueError("attach_ops needs a CoreService built with metrics")

    def health() -> dict:
        out = {"service_counters": dict(service.counters), "epoch": service.epoch,
               "config_warnings": list(service.config_warnings)}
        if connected is not None:
            out["bridge_connected"] = connected()
        return out

    server = StatusServer(lambda: service.core, service.lock, health, host=host, port=port,
                          metrics=service.metrics, reloader=service.reloader, token=token).start()
    watcher = FileWatcher(service.reloader, watch_interval).start() if watch_interval else None
    return Ops(server, watcher)
