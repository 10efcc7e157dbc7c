"""The core service: one SchedulerCore behind one lock, driven by bridge messages.

Java stays the source of truth. A "snapshot" rebuilds a fresh core from YARN's full state; a
"heartbeat" applies the batched deltas in order and returns the node's assignments. A delta
that cannot be applied is logged and counted, never raised: the rest of the batch still runs.
"""
from __future__ import annotations

import logging
import os
import threading
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from scheduler import QueueConfig, SchedulerCore, load_config
from yarn_bridge import protocol
from yarn_bridge.reload import Reloader

log = logging.getLogger("yarn_bridge.service")


class CoreService:
    def __init__(self, queues_path: str | Path, policy: str = "drf",
                 loader: Callable[[str | Path], QueueConfig] = load_config) -> None:
        self.queues_path = Path(queues_path)
        self.policy = policy
        self._load = loader
        self.config = loader(self.queues_path)  # raises ConfigError: the service does not start
        self.core = SchedulerCore(self.config, policy=policy)
        self.lock = threading.Lock()
        self.counters: Counter[str] = Counter()
        self.epoch: int | None = None  # of the snapshot the core was rebuilt from; None: none yet
        # the shim's own measure of its previous heartbeat call, as the RM saw it (for metrics)
        self.last_rtt_ms: float | None = None
        # the configuration whose queue list Java has: a reload by any path (file watch, HTTP,
        # -refreshQueues) changes the core's, and the next heartbeat reply carries the new list
        self._queues_sent: QueueConfig | None = None
        self._handlers = {kind: getattr(self, "_" + kind) for kind in protocol.REQUEST_TYPES}
        # every reload (-refreshQueues here, HTTP and the file watcher through ops_wiring) goes through it
        self.reloader = Reloader(lambda: self.core, self.lock, self.queues_path, loader=loader,
                                 on_applied=self._adopt)

    # ------------------------------------------------------------------ entry point

    def handle(self, text: str) -> str:
        """One request in, one reply out; never raises."""
        try:
            msg = protocol.decode_request(text)
        except protocol.ProtocolError as exc:
            self.counters["bad_requests"] += 1
            log.warning("bad request: %s", exc)
            return protocol.error(str(exc))
        with self.lock:
            kind, epoch = msg["type"], msg.get("epoch")
            self.counters[kind] += 1
            if kind == "snapshot":
                if self.epoch is not None and (epoch or 0) < self.epoch:
                    self.counters["stale_requests"] += 1
                    return protocol.error(f"snapshot: epoch {epoch!r} is older than {self.epoch}")
            elif kind != "status" and epoch != self.epoch:
                # A late request from before the last snapshot, or no snapshot yet: applying it
                # would corrupt the rebuilt state. Java resynchronises on this error.
                self.counters["stale_requests"] += 1
                return protocol.error(f"{kind}: epoch {epoch!r} is not the current epoch {self.epoch!r}; "
                                      "send a snapshot")
            try:
                return self._handlers[kind](msg)
            except (KeyError, TypeError, ValueError) as exc:
                self.counters["bad_requests"] += 1
                log.warning("cannot handle %s request: %r", kind, exc)
                return protocol.error(f"{kind}: {exc!r}")

    # ------------------------------------------------------------------ requests

    def _snapshot(self, msg: dict) -> str:
        types = [t for t in msg.get("resources") or () if isinstance(t, str)] or None
        core = SchedulerCore(self.config, resource_types=types, policy=self.policy)
        for n in msg.get("nodes", ()):
            core.add_node(n["node"], n["capacity"], n.get("rack") or "/default-rack")
        for a in msg.get("apps", ()):
            placed = core.submit_app(a["app"], a["user"], a.get("queue"), a.get("groups") or ())
            if not placed.accepted or placed.queue != a.get("queue"):
                # YARN already runs it; the core's view differs (config changed since). Logged.
                self.counters["snapshot_app_mismatch"] += 1
                log.warning("snapshot: app %s runs in %s but the core places it: %s",
                            a["app"], a.get("queue"), placed)
        with core.batch():
            self._apply_started(core, msg.get("containers") or [])
            self._apply_asks(core, msg)
        self.core = core
        self.epoch = msg.get("epoch")
        log.info("resynchronised from a snapshot: %d nodes, %d apps, %d containers, %d asks",
                 len(msg.get("nodes", ())), len(msg.get("apps", ())), len(msg.get("containers", ())),
                 len(msg.get("asks", ())))
        return protocol.reply(queues=self.queue_list())

    def _heartbeat(self, msg: dict) -> str:
        self.last_rtt_ms = msg.get("rtt_ms")
        self._apply(msg)
        node = msg["node"]
        assignments = self.core.on_heartbeat(node)
        queues = self.queue_list() if self.core.config is not self._queues_sent else None
        return protocol.heartbeat_reply(msg["seq"], queues, [
            {"assignment_id": a.assignment_id, "app": a.app_id, "node": a.node_id, "queue": a.queue,
             "priority": a.priority, "allocation_id": a.allocation_id, "resources": a.resources}
            for a in assignments])

    def _events(self, msg: dict) -> str:
        self._apply(msg)
        return protocol.reply()

    def _submit(self, msg: dict) -> str:
        placed = self.core.submit_app(msg["app"], msg["user"], msg.get("queue") or None,
                                      msg.get("groups") or ())
        return protocol.reply(accepted=placed.accepted, queue=placed.queue, reason=placed.reason,
                              queues=self.queue_list())

    def _reload(self, msg: dict) -> str:
        """`yarn rmadmin -refreshQueues`: the validated reload of the file this service runs, never another."""
        asked, running = msg.get("path"), self.reloader.path
        if asked is not None and not isinstance(asked, str):
            return protocol.error(f"reload: path must be a string, got {asked!r}")
        if asked and os.path.realpath(asked) != os.path.realpath(running):
            return protocol.reply(accepted=False, errors=[
                f"{asked} is not the queue file this service runs ({running}): `yarn-drf serve` reads only the "
                "file it was started with. To use another file, restart it with --queues naming that file "
                "(in child mode: set yarn-drf.queues.file and restart the ResourceManager)"])
        try:
            result = self.reloader.apply(trigger="refreshQueues")
        except Exception as exc:  # noqa: BLE001 (the py4j entry point never raises into the RM)
            log.exception("reload of %s failed", running)
            return protocol.error(f"reload: {exc!r}")
        if not result.accepted:
            return protocol.reply(accepted=False, errors=result.errors)
        return protocol.reply(accepted=True, changes=result.changes, queues=self.queue_list())

    def _adopt(self, config: QueueConfig, path: Path) -> None:
        self.config, self.queues_path = config, path  # a resync rebuilds the core from these

    def _status(self, msg: dict) -> str:
        return protocol.reply(core=self.core.snapshot(), service=dict(self.counters))

    # ------------------------------------------------------------------ deltas

    def _apply(self, msg: dict) -> None:
        """A heartbeat's or events request's changes, in the order Java collects them: app and
        node events, containers started, containers finished, then asks."""
        core = self.core
        deltas, started, finished = msg.get("deltas"), msg.get("started"), msg.get("finished")
        if deltas or started or finished:  # most heartbeats carry only ask counts: no batch to open
            with core.batch():
                if deltas:
                    self._apply_each(core, deltas)
                if started:
                    self._apply_started(core, started)
                if finished:
                    self._apply_finished(core, finished)
        self._apply_asks(core, msg)

    def _apply_each(self, core: SchedulerCore, deltas) -> None:
        for d in deltas:
            op = d.get("op") if isinstance(d, dict) else None
            try:
                if op == "assignment_refused":
                    core.assignment_refused(d["assignment_id"], d.get("reason", ""))
                elif op == "node_added":
                    core.add_node(d["node"], d["capacity"], d.get("rack") or "/default-rack")
                elif op == "node_updated":
                    core.update_node(d["node"], d["capacity"])
                elif op == "node_removed":
                    core.remove_node(d["node"])
                elif op == "app_added":
                    core.submit_app(d["app"], d["user"], d.get("queue"), d.get("groups") or ())
                elif op == "app_removed":
                    core.remove_app(d["app"])
                elif op == "attempt_added":
                    core.reset_requests(d["app"])
                else:
                    raise ValueError(f"unknown op {op!r} (known: {', '.join(protocol.DELTA_OPS)})")
                self.counters["deltas"] += 1
            except (KeyError, TypeError, ValueError) as exc:
                self.counters["bad_deltas"] += 1
                log.warning("ignored delta %r: %r", d, exc)

    def _apply_started(self, core: SchedulerCore, rows) -> None:
        """Rows of protocol.CONTAINER_FIELDS, then the amounts in the core's resource order."""
        if type(rows) is not list:
            raise ValueError(f"started containers must be a list of rows, got {rows!r:.80}")
        fields = len(protocol.CONTAINER_FIELDS)
        width = fields + len(core.types.names)
        bad = 0
        for row in rows:
            if type(row) is not list or len(row) != width:
                bad += 1
                log.warning("ignored container row %r: a started container is [%s, then one amount for "
                            "each of %s]", row, ", ".join(protocol.CONTAINER_FIELDS), ", ".join(core.types.names))
                continue
            cid, app, node, priority, allocation_id, assignment_id = row[:fields]
            if not (type(cid) is type(app) is type(node) is str and type(priority) is type(allocation_id) is int
                    and (assignment_id is None or type(assignment_id) is str)):
                bad += 1
                log.warning("ignored container row %r: container, app and node must be strings, priority and "
                            "allocation_id integers, assignment_id a string or null", row)
                continue
            core.container_started(cid, app, node, tuple(row[fields:]), priority=priority,
                                   allocation_id=allocation_id, assignment_id=assignment_id)
        self._count_deltas(len(rows), bad)

    def _apply_finished(self, core: SchedulerCore, pairs) -> None:
        """Flat container, state pairs."""
        if type(pairs) is not list or len(pairs) % 2:
            raise ValueError(f"finished must be a list of container, state pairs, got {pairs!r:.80}")
        bad = 0
        it = iter(pairs)
        for cid, state in zip(it, it):
            if type(cid) is not str or type(state) is not str:
                bad += 1
                log.warning("ignored finished container %r in state %r: both must be strings", cid, state)
                continue
            core.container_finished(cid, state)
        self._count_deltas(len(pairs) // 2, bad)

    def _count_deltas(self, seen: int, bad: int) -> None:
        if bad:
            self.counters["bad_deltas"] += bad
        self.counters["deltas"] += seen - bad

    def _apply_asks(self, core: SchedulerCore, msg: dict) -> None:
        """The request's asks, after its deltas (Java collects them last): "asks" in full
        (protocol.ASK_FIELDS, then the amounts), then "counts", flat id, count pairs for asks sent
        before. A request names each ask once, so the two may go in this order; counts are most
        of a heartbeat, so they go to the core in one call."""
        bad = 0
        full = msg.get("asks", ())
        for a in full:
            try:
                self._full_ask(core, a)
            except (KeyError, TypeError, ValueError) as exc:
                bad += 1
                log.warning("ignored ask %r: %r", a, exc)
        counts = msg.get("counts", ())
        if type(counts) not in (list, tuple) or len(counts) % 2:
            raise ValueError(f"counts must be a list of id, count pairs, got {counts!r:.80}")
        pairs = iter(counts)
        bad += core.update_counts(zip(pairs, pairs))
        self._count_deltas(len(full) + len(counts) // 2, bad)

    @staticmethod
    def _full_ask(core: SchedulerCore, a: list) -> None:
        fields = len(protocol.ASK_FIELDS)
        if not isinstance(a, list) or len(a) != fields + len(core.types.names):
            raise ValueError(f"an ask is [{', '.join(protocol.ASK_FIELDS)}, then one amount for each of "
                             f"{', '.join(core.types.names)}]")
        ask_id, count, app, priority, allocation_id, location, relax = a[:fields]
        if type(ask_id) is not int or type(priority) is not int or type(allocation_id) is not int \
                or not isinstance(location, str):
            raise ValueError("id, priority and allocation_id must be integers and location a string")
        # The amounts are in the snapshot's resource order, which is the core's: a vector as is.
        core.update_request(app, priority, tuple(a[fields:]), count, allocation_id=allocation_id,
                            location=location, relax_locality=relax is True, ask_id=ask_id)

    # ------------------------------------------------------------------ the queue tree for Java

    def queue_list(self) -> list[dict[str, Any]]:
        """Every queue, parents first, with what Java needs for getQueueInfo, ACLs and limits.
        Every caller sends it to Java, so it also records that Java has this configuration."""
        self._queues_sent = self.core.config
        out = []
        for path in sorted(self.core.queues, key=lambda p: (p.count("."), p)):
            q = self.core.queues[path]
            spec = q.spec
            out.append({
                "name": path, "leaf": q.is_leaf, "weight": spec.weight, "max": dict(spec.max),
                "max_fraction": spec.max_fraction, "submit_acl": spec.submit_acl.text,
                "admin_acl": spec.admin_acl.text, "draining": bool(q.draining),
            })
        return out
