"""The operator's HTTP endpoint of the scheduler service (127.0.0.1 by default).

GET  /v1/queues       the queue tree: weights, limits, usage, dominant share vs its reachable and pooled targets
GET  /v1/apps         every app, one line each
GET  /v1/apps/{id}    an app's requests and, for each pending one, why it is not running now
GET  /v1/nodes        per node capacity, allocated, free and reservation
GET  /v1/health       bridge connected, last heartbeat age, configuration version
GET  /metrics         Prometheus text format
POST /v1/reload       re-reads the queue file through the one validated reload (loopback clients only)

Every read takes the service lock for as long as it reads the core and no longer; JSON is encoded
after the lock is released. A failing request answers 500 with the error and never stops the server.
"""
from __future__ import annotations

import ipaddress
import json
import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

from scheduler import SchedulerCore
from scheduler.explain import TargetInput, queue_figures, why_pending
from yarn_bridge.metrics import CONTENT_TYPE, Metrics

log = logging.getLogger("yarn_bridge.status")
LOOPBACK = "127.0.0.1"
DEFAULT_STATUS_PORT = 25335
STALE_AFTER_S = 10.0
ENDPOINTS = ["/v1/queues", "/v1/apps", "/v1/apps/{id}", "/v1/nodes", "/v1/health", "/metrics", "POST /v1/reload"]  # no heartbeat for this long: the bridge is reported disconnected


class StatusServer:
    def __init__(self, get_core: Callable[[], SchedulerCore], lock: Any,
                 health: Callable[[], dict] | None = None, host: str = LOOPBACK, port: int = DEFAULT_STATUS_PORT,
                 *, metrics: Metrics | None = None, reloader: Any = None) -> None:
        self.get_core = get_core
        self.lock = lock
        self.health_info = health
        self.metrics = metrics
        self.reloader = reloader
        self.httpd = ThreadingHTTPServer((host, port), _handler(self))
        self.httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def url(self) -> str:
        host = self.httpd.server_address[0]
        return f"http://{host}:{self.port}"

    def start(self) -> StatusServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="status-http", daemon=True)
        self._thread.start()
        log.info("status server on %s (/v1/queues, /v1/apps/ID, /v1/nodes, /v1/health, /metrics)", self.url)
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # ------------------------------------------------------------------ documents

    def queues(self) -> dict:
        with self.lock:
            core = self.get_core()
            types, cap = core.types, core.capacity
            figures = queue_figures(core)
            fill = TargetInput(core)
            tree = [(q.path, q.parent.path if q.parent else None, [c.path for c in q.children.values()],
                     q.spec, q.max, q.is_leaf, q.draining, q.dynamic) for q in _walk(core.root)]
        goals = fill.compute()  # outside the lock: heartbeats do not wait for it
        out = []
        for path, parent, children, spec, limit, leaf, draining, dynamic in tree:
            f, goal = figures[path], goals[path]
            out.append({
                "name": path, "parent": parent, "children": children, "leaf": leaf,
                "state": "draining" if draining else "active", "draining": draining, "dynamic": dynamic,
                "weight": spec.weight, "min": dict(spec.min),
                "max": types.to_dict(limit) if limit is not None else None,
                "max_running_apps": spec.max_running_apps,
                "usage": types.to_dict(f.usage),
                "dominant_share": round(f.dominant_share, 6), "dominant_resource": f.dominant_resource,
                "weighted_share": round(f.weighted_share, 6),
                "target_share": round(goal.dominant_share, 6),
                "target_weighted_share": round(goal.weighted_share, 6),
                "target": {n: round(v, 3) for n, v in zip(types.names, goal.allocation)},
                "pooled_target_share": round(goal.pooled_dominant_share, 6),
                "pooled_target": {n: round(v, 3) for n, v in zip(types.names, goal.pooled_allocation)},
                "demand": types.to_dict(goal.demand),
                "pending": types.to_dict(f.pending),
                "running_apps": f.running_apps, "waiting_apps": f.waiting_apps,
                "reservations": f.reservations,
            })
        return {"resource_types": list(types.names), "capacity": types.to_dict(cap), "queues": out}

    def snapshot(self) -> dict:
        """The core's raw snapshot (what `/` served before the /v1 endpoints)."""
        with self.lock:
            return self.get_core().snapshot()

    def apps(self) -> dict:
        with self.lock:
            snap = self.get_core().snapshot()
        return {"apps": [{"id": app_id, **info} for app_id, info in sorted(snap["apps"].items())]}

    def app(self, app_id: str) -> dict | None:
        with self.lock:
            return why_pending(self.get_core(), app_id)

    def nodes(self) -> dict:
        with self.lock:
            core = self.get_core()
            types = core.types
            nodes = []
            for n in sorted(core.nodes.values(), key=lambda n: n.id):
                res = n.reserved
                nodes.append({
                    "id": n.id, "rack": n.rack,
                    "capacity": types.to_dict(n.capacity), "allocated": types.to_dict(n.allocated),
                    "free": {k: c - a for k, c, a in zip(types.names, n.capacity, n.allocated)},
                    "containers": len(n.containers),
                    "reservation": None if res is None else {
                        "app": res.app.id, "queue": res.app.queue.path, "priority": res.key[0],
                        "allocation_id": res.key[1], "resources": types.to_dict(res.capability)},
                })
        return {"resource_types": list(types.names), "nodes": nodes}

    def health(self) -> dict:
        with self.lock:
            core = self.get_core()
            counts = {"nodes": len(core.nodes), "apps": len(core.apps), "containers": len(core.containers)}
            counters = dict(core.counters)
        age = self.metrics.heartbeat_age() if self.metrics is not None else None
        out: dict[str, Any] = {
            "bridge_connected": age is not None and age < STALE_AFTER_S,
            "last_heartbeat_age_s": None if age is None else round(age, 3),
            "config": self.reloader.info() if self.reloader is not None else None,
            **counts, "core_counters": counters,
        }
        if self.health_info is not None:
            out.update(self.health_info())
        out["status"] = "ok" if out["bridge_connected"] else "bridge-disconnected"
        return out

    def reload(self) -> tuple[int, dict]:
        result = self.reloader.reload(trigger="yarn-drf reload")
        return (200 if result.accepted else 422), result.to_dict()


def _walk(q):
    yield q
    for child in q.children.values():
        yield from _walk(child)


def _handler(server: StatusServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "yarn-drf-status"

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            self._serve(self._get)

        def do_POST(self) -> None:  # noqa: N802
            self._serve(self._post)

        def _get(self) -> tuple[int, Any]:
            path = urlsplit(self.path).path.rstrip("/") or "/"
            if path == "/metrics":
                if server.metrics is None:
                    return 404, {"error": "metrics are not enabled on this server"}
                return 200, server.metrics.exposition()
            if path == "/v1/queues":
                return 200, server.queues()
            if path == "/v1/apps":
                return 200, server.apps()
            if path.startswith("/v1/apps/"):
                app_id = unquote(path[len("/v1/apps/"):])
                doc = server.app(app_id)
                return (200, doc) if doc is not None else (404, {"error": f"unknown app {app_id!r}"})
            if path == "/v1/nodes":
                return 200, server.nodes()
            if path == "/v1/health":
                return 200, server.health()
            if path == "/":
                return 200, {"endpoints": ENDPOINTS, "core": server.snapshot()}
            return 404, {"error": f"no such endpoint {path!r}"}

        def _post(self) -> tuple[int, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(min(length, 1 << 16))  # no parameters: the body is read and ignored
            path = urlsplit(self.path).path.rstrip("/")
            if path != "/v1/reload":
                return 404, {"error": f"no such endpoint {path!r}"}
            if server.reloader is None:
                return 404, {"error": "reload is not enabled on this server"}
            if not ipaddress.ip_address(self.client_address[0]).is_loopback:
                return 403, {"error": "reload is only accepted from the local host"}
            return server.reload()

        def _serve(self, route) -> None:
            try:
                status, body = route()
            except Exception as exc:  # noqa: BLE001 (a bad request must never stop the server)
                log.exception("status request %s %s failed", self.command, self.path)
                status, body = 500, {"error": f"{type(exc).__name__}: {exc}"}
            if isinstance(body, bytes):
                data, ctype = body, CONTENT_TYPE
            else:
                data, ctype = json.dumps(body).encode(), "application/json"
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, fmt: str, *args) -> None:
            log.debug("status %s - %s", self.address_string(), fmt % args)

    return Handler
