"""The operator's HTTP endpoint of the scheduler service (127.0.0.1 by default).

GET  /v1/queues       the queue tree: weights, limits, usage, dominant share vs its reachable and pooled targets,
                      preemption state (starved since, target, planned victims)
GET  /v1/apps         every app, one line each
GET  /v1/apps/{id}    an app's requests and, for each pending one, why it is not running now
GET  /v1/nodes        per node capacity, allocated, free and reservation
GET  /v1/demand       what the reachable target replays: nodes, running containers, runnable apps' asks
                      (a federation's policy merges every sub-cluster's: yarn_bridge.federation_policy)
GET  /v1/health       bridge connected, last schedule call's age, configuration version
GET  /metrics         Prometheus text format
POST /v1/reload       re-reads the queue file through the one validated reload (needs the token)
GET  /ui/             the operator's dashboard (yarn_bridge/ui): a page that polls the reads above

Every read takes the service lock for as long as it reads the core and no longer; JSON is encoded
after the lock is released. A failing request answers 500 with the error and never stops the server.

Who may ask: the server is read-only unless it was given a token; then POST /v1/reload needs
`Authorization: Bearer TOKEN`. Every request must name this server in its Host header (127.0.0.1,
localhost or [::1] with this port), so a web page whose DNS name was rebound to 127.0.0.1 gets
nothing, and a request with an Origin header other than this server's own is refused, so a page in
a browser cannot post to it either. A connection idle for REQUEST_TIMEOUT_S is dropped; at most
MAX_CONNECTIONS are served at once; a body over MAX_BODY bytes is refused.
"""
from __future__ import annotations

import hmac
import json
import logging
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

from scheduler import SchedulerCore
from scheduler.explain import TargetInput, queue_figures, why_pending
from scheduler.targets import ReplayInput
from yarn_bridge.metrics import CONTENT_TYPE, Metrics
from yarn_bridge.ui import Asset, asset

log = logging.getLogger("yarn_bridge.status")
LOOPBACK = "127.0.0.1"
DEFAULT_STATUS_PORT = 25335
# no schedule call for this long: the bridge is reported disconnected, unless the service knows
# better (`yarn-drf serve` reports its open bridge connections: an idle cluster makes no calls)
STALE_AFTER_S = 10.0
ENDPOINTS = ["/v1/queues", "/v1/apps", "/v1/apps/{id}", "/v1/nodes", "/v1/demand", "/v1/health", "/metrics",
             "POST /v1/reload", "/ui/"]
# The dashboard's files may load only from this server and may not be framed by another page.
UI_HEADERS = {"Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
              "X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}
REQUEST_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 32
MAX_BODY = 4096


class StatusServer:
    def __init__(self, get_core: Callable[[], SchedulerCore], lock: Any,
                 health: Callable[[], dict] | None = None, host: str = LOOPBACK, port: int = DEFAULT_STATUS_PORT,
                 *, metrics: Metrics | None = None, reloader: Any = None, token: str | None = None) -> None:
        self.get_core = get_core
        self.lock = lock
        self.health_info = health
        self.metrics = metrics
        self.reloader = reloader
        self.token = token.encode() if token else None
        self.httpd = _BoundedHTTPServer((host, port), _handler(self))
        bound = f"{self.httpd.server_address[0]}:{self.port}"
        self.hosts = {bound, f"127.0.0.1:{self.port}", f"localhost:{self.port}", f"[::1]:{self.port}"}
        self.origins = {f"http://{h}" for h in self.hosts}
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
        log.info("status server on %s (/v1/queues, /v1/apps/ID, /v1/nodes, /v1/health, /metrics); dashboard %s/ui/; %s",
                 self.url, self.url,
                 "POST /v1/reload with its token" if self.token else "read-only")
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
            preemption = core.preemption.report(core.clock())
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
                "preemption": preemption["queues"].get(path),
            })
        del preemption["queues"]
        return {"resource_types": list(types.names), "capacity": types.to_dict(cap), "queues": out,
                "preemption": preemption}

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

    def demand(self) -> dict:
        with self.lock:
            inp = ReplayInput(self.get_core())
        return inp.to_doc()

    def health(self) -> dict:
        with self.lock:
            core = self.get_core()
            counts = {"nodes": len(core.nodes), "apps": len(core.apps), "containers": len(core.containers)}
            counters = dict(core.counters)
        age = self.metrics.call_age() if self.metrics is not None else None
        out: dict[str, Any] = {
            "bridge_connected": age is not None and age < STALE_AFTER_S,
            "last_call_age_s": None if age is None else round(age, 3),
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


class _BoundedHTTPServer(ThreadingHTTPServer):
    """A thread per connection, up to MAX_CONNECTIONS at once; beyond that a connection is closed."""

    daemon_threads = True
    # socketserver's backlog of 5 left the connect after a burst of six waiting a second or more
    # for the kernel's retry instead of being served or closed at once.
    request_queue_size = MAX_CONNECTIONS

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def process_request(self, request, client_address) -> None:
        if not self._slots.acquire(blocking=False):
            log.warning("status server: %d connections open; closed one from %s", MAX_CONNECTIONS, client_address)
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request, client_address) -> None:
        """A client that closed before its reply was written (a closed tab, a cancelled curl) is its own
        business: one line, not socketserver's traceback on stderr."""
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError):
            log.info("status server: client %s:%d left before its reply (%s)", *client_address[:2],
                     type(exc).__name__)
            return
        super().handle_error(request, client_address)


def _handler(server: StatusServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "yarn-drf-status"
        timeout = REQUEST_TIMEOUT_S  # applied to the socket: an idle or slow client is dropped

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
            if path == "/v1/demand":
                return 200, server.demand()
            if path == "/v1/health":
                return 200, server.health()
            if path == "/":
                return 200, {"endpoints": ENDPOINTS, "core": server.snapshot()}
            if path == "/ui" or path.startswith("/ui/"):
                found = asset(path[len("/ui/"):])
                return (200, found) if found is not None else (404, {"error": f"no such dashboard file {path!r}"})
            return 404, {"error": f"no such endpoint {path!r}"}

        def _post(self) -> tuple[int, Any]:
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                return 400, {"error": "Content-Length is not a number"}
            if length > MAX_BODY:
                return 413, {"error": f"request body of {length} bytes; at most {MAX_BODY} are read"}
            if length > 0:
                self.rfile.read(length)  # no parameters: the body is read and ignored
            path = urlsplit(self.path).path.rstrip("/")
            if path != "/v1/reload":
                return 404, {"error": f"no such endpoint {path!r}"}
            if server.reloader is None:
                return 404, {"error": "reload is not enabled on this server"}
            if server.token is None:
                return 403, {"error": "this status server is read-only: start `yarn-drf serve` with "
                                      "--status-token-file FILE to accept POST /v1/reload with that token"}
            scheme, _, given = (self.headers.get("Authorization") or "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), server.token):
                return 401, {"error": "POST /v1/reload needs `Authorization: Bearer TOKEN` with the token of "
                                      "--status-token-file; it was missing or wrong"}
            return server.reload()

        def _foreign(self) -> str | None:
            """Why the request does not come to this server from itself, or None."""
            host = self.headers.get("Host")
            if host is None or host.lower() not in server.hosts:
                return (f"Host {host!r} is not this server (use http://127.0.0.1:{server.port}); refused so that "
                        "a web page whose name resolves to this host cannot read it")
            origin = self.headers.get("Origin")
            if origin is not None and origin.lower() not in server.origins:
                return f"cross-origin request from {origin!r} refused"
            return None

        def _serve(self, route) -> None:
            foreign = self._foreign()
            if foreign is not None:
                status, body = 403, {"error": foreign}
            else:
                try:
                    status, body = route()
                except Exception as exc:  # noqa: BLE001 (a bad request must never stop the server)
                    log.exception("status request %s %s failed", self.command, self.path)
                    status, body = 500, {"error": f"{type(exc).__name__}: {exc}"}
            extra: dict[str, str] = {}
            if isinstance(body, Asset):
                (data, ctype), extra = body, UI_HEADERS
            elif isinstance(body, bytes):
                data, ctype = body, CONTENT_TYPE
            else:
                data, ctype = json.dumps(body).encode(), "application/json"
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            if status == 401:
                self.send_header("WWW-Authenticate", 'Bearer realm="yarn-drf"')
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, fmt: str, *args) -> None:
            log.debug("status %s - %s", self.address_string(), fmt % args)

    return Handler
