"""The core service: one SchedulerCore behind one lock, driven by bridge messages.

Java stays the source of truth. A "snapshot" rebuilds a fresh core from YARN's full state, each
app in the queue YARN runs it in; a "heartbeat" applies the batched deltas in order and returns
the node's assignments. A delta that cannot be applied is logged and counted, never raised: the
rest of the batch still runs. Nothing raises out of `handle`.
"""
from __future__ import annotations

import logging
import os
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Callable

from scheduler import ConfigError, QueueConfig, SchedulerCore, load_config
from scheduler.echo import brief
from yarn_bridge import protocol
from yarn_bridge.protocol import is_key, is_long
from yarn_bridge.reload import Reloader

log = logging.getLogger("yarn_bridge.service")
# A snapshot is applied in parts of this many items, between which an older snapshot gives way
# to a newer one that has arrived meanwhile.
SNAPSHOT_PART = 4096


class _Superseded(Exception):
    """A snapshot abandoned because a newer one arrived while it was being applied."""


def _parts(items: list) -> Iterator[list]:
    for start in range(0, len(items), SNAPSHOT_PART):
        yield items[start:start + SNAPSHOT_PART]


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
        # settings of the queue file the last snapshot's cluster could not honour (for /v1/health)
        self.config_warnings: list[str] = []
        # The newest snapshot epoch seen, announced before the lock is taken: an older snapshot
        # still being built (its caller timed out) gives up, and none older is ever applied.
        self._newest = -1
        self._announce = threading.Lock()
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
        kind, epoch = msg["type"], msg.get("epoch")
        if kind == "snapshot":
            with self._announce:
                self._newest = max(self._newest, epoch)
        with self.lock:
            self.counters[kind] += 1
            if kind == "snapshot":
                if epoch < self._newest:
                    self.counters["stale_requests"] += 1
                    return protocol.error(f"snapshot: epoch {epoch} is older than snapshot {self._newest}")
            elif kind != "status" and epoch != self.epoch:
                # A late request from before the last snapshot, or no snapshot yet: applying it
                # would corrupt the rebuilt state. Java resynchronises on this error.
                self.counters["stale_requests"] += 1
                return protocol.error(f"{kind}: epoch {epoch} is not the current epoch {self.epoch}; "
                                      "send a snapshot")
            try:
                return self._handlers[kind](msg)
            except _Superseded as exc:
                self.counters["superseded_snapshots"] += 1
                log.warning("%s", exc)
                return protocol.error(str(exc))
            except Exception as exc:  # noqa: BLE001 (a bug must not raise into py4j and the RM)
                # The request may have half-applied: the core is not YARN's state any more.
                self.counters["internal_errors"] += 1
                self.epoch = None
                log.exception("failed to handle a %s request; a snapshot must follow", kind)
                return protocol.error(f"{kind}: internal error {exc!r}; send a snapshot")

    # ------------------------------------------------------------------ requests

    def _snapshot(self, msg: dict) -> str:
        epoch = msg["epoch"]
        try:
            config, self.config_warnings = self.config.for_cluster(tuple(msg["resources"] or ()) or
                                                                   self.config.resource_types())
            for warning in self.config_warnings:
                log.warning("queue configuration %s: %s", self.config.source, warning)
            core = SchedulerCore(config, resource_types=msg["resources"] or None, policy=self.policy)
        except (ConfigError, ValueError) as exc:
            self.counters["bad_requests"] += 1
            return protocol.error(f"snapshot: resources {brief(msg['resources'])}: {exc}")
        nodes, apps = msg.get("nodes") or [], msg.get("apps") or []
        rows, asks = msg.get("containers") or [], msg.get("asks") or []
        with core.batch():
            for part in _parts(nodes):
                self._check_newest(epoch)
                for n in part:
                    self._apply_node(core, n)
            for part in _parts(apps):
                self._check_newest(epoch)
                for a in part:
                    self._recover_app(core, a, "snapshot")
            for part in _parts(rows):
                self._check_newest(epoch)
                self._apply_started(core, part)
            for part in _parts(asks):
                self._check_newest(epoch)
                self._apply_asks(core, part, ())
            self._apply_asks(core, (), msg.get("counts") or ())
        self._check_newest(epoch)
        self.core, self.epoch = core, epoch
        log.info("resynchronised from snapshot %d: %d nodes, %d apps, %d containers, %d asks", epoch,
                 len(nodes), len(apps), len(rows), len(asks))
        return protocol.reply(queues=self.queue_list())

    def _check_newest(self, epoch: int) -> None:
        if self._newest > epoch:
            raise _Superseded(f"snapshot {epoch}: abandoned for the newer snapshot {self._newest}")

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
                                      tuple(msg.get("groups") or ()))
        return protocol.reply(accepted=placed.accepted, queue=placed.queue, reason=placed.reason,
                              queues=self.queue_list())

    def _reload(self, msg: dict) -> str:
        """`yarn rmadmin -refreshQueues`: the validated reload of the file this service runs, never another."""
        asked, running = msg.get("path"), self.reloader.path  # protocol checked: a string or absent
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
        asks, counts = msg.get("asks") or (), msg.get("counts") or ()
        if not (deltas or started or finished or asks):  # most heartbeats: ask counts alone, no batch
            self._apply_asks(core, (), counts)
            return
        with core.batch():
            if deltas:
                self._apply_each(core, deltas)
            if started:
                self._apply_started(core, started)
            if finished:
                self._apply_finished(core, finished)
            self._apply_asks(core, asks, counts)

    def _apply_each(self, core: SchedulerCore, deltas: list) -> None:
        for d in deltas:
            op = d.get("op") if type(d) is dict else None
            if op == "node_added":
                self._apply_node(core, d)
                continue
            if op == "app_added":  # after an RM restart: an app YARN recovered, in its queue
                self._recover_app(core, d, "app_added")
                continue
            fields = protocol.DELTA_FIELDS.get(op) if type(op) is str else None
            problem = (protocol.check_fields(d, fields) if fields is not None else
                       f"unknown op {brief(op)} (known: {', '.join(protocol.DELTA_OPS)})")
            if problem:
                self._bad("delta", d, problem)
                continue
            if op == "assignment_refused":
                core.assignment_refused(d["assignment_id"], d.get("reason") or "")
            elif op == "node_updated":
                core.update_node(d["node"], d["capacity"])
            elif op == "node_removed":
                core.remove_node(d["node"])
            elif op == "app_removed":
                core.remove_app(d["app"])
            else:  # attempt_added
                core.reset_requests(d["app"])
            self.counters["deltas"] += 1

    def _apply_node(self, core: SchedulerCore, n: dict) -> None:
        """A snapshot's node, or a node_added delta."""
        problem = protocol.check_fields(n, protocol.NODE_FIELDS)
        if problem:
            self._bad("node", n, problem)
            return
        core.add_node(n["node"], n["capacity"], n.get("rack") or "/default-rack")
        self.counters["deltas"] += 1

    def _recover_app(self, core: SchedulerCore, a: dict, where: str) -> None:
        """A snapshot's app, or an app_added delta: an app YARN runs, taken into its queue as is."""
        problem = protocol.check_fields(a, protocol.APP_FIELDS)
        if problem:
            self._bad(f"{where} app", a, problem)
            return
        placed = core.recover_app(a["app"], a["user"], a["queue"], tuple(a.get("groups") or ()))
        if not placed.accepted:
            self._bad(f"{where} app", a, placed.reason)
            return
        self.counters["deltas"] += 1

    def _bad(self, what: str, item: Any, problem: str) -> None:
        self.counters["bad_deltas"] += 1
        log.warning("ignored %s %s: %s", what, brief(item), problem)

    def _apply_started(self, core: SchedulerCore, rows: list) -> None:
        """Rows of protocol.CONTAINER_FIELDS, then the amounts in the core's resource order."""
        fields = len(protocol.CONTAINER_FIELDS)
        width = fields + len(core.types.names)
        bad = 0
        for row in rows:
            if type(row) is not list or len(row) != width:
                bad += 1
                log.warning("ignored container row %s: a started container is [%s, then one amount for each "
                            "of %s]", brief(row), ", ".join(protocol.CONTAINER_FIELDS),
                            ", ".join(core.types.names))
                continue
            cid, app, node, priority, allocation_id, assignment_id = row[:fields]
            if not (type(cid) is type(app) is type(node) is str and is_key(priority) and is_key(allocation_id)
                    and (assignment_id is None or type(assignment_id) is str)):
                bad += 1
                log.warning("ignored container row %s: container, app and node must be strings, priority and "
                            "allocation_id integers (Java longs), assignment_id a string or null",
                            brief(row))
                continue
            core.container_started(cid, app, node, tuple(row[fields:]), priority=priority,
                                   allocation_id=allocation_id, assignment_id=assignment_id)
        self._count_deltas(len(rows), bad)

    def _apply_finished(self, core: SchedulerCore, pairs: list) -> None:
        """Flat container, state pairs (an even number: checked with the request)."""
        bad = 0
        it = iter(pairs)
        for cid, state in zip(it, it):
            if type(cid) is not str or type(state) is not str:
                bad += 1
                log.warning("ignored finished container %s in state %s: both must be strings",
                            brief(cid), brief(state))
                continue
            core.container_finished(cid, state)
        self._count_deltas(len(pairs) // 2, bad)

    def _count_deltas(self, seen: int, bad: int) -> None:
        if bad:
            self.counters["bad_deltas"] += bad
        self.counters["deltas"] += seen - bad

    def _apply_asks(self, core: SchedulerCore, full: list | tuple, counts: list | tuple) -> None:
        """A request's asks, after its deltas (Java collects them last): `full` asks
        (protocol.ASK_FIELDS, then the amounts), then `counts`, flat id, count pairs (an even
        number: checked with the request) for asks sent before. A request names each ask once, so
        the two may go in this order; counts are most of a heartbeat, so they go to the core in
        one call."""
        bad = 0
        for a in full:
            problem = self._full_ask(core, a)
            if problem:
                bad += 1
                log.warning("ignored ask %s: %s", brief(a), problem)
        pairs = iter(counts)
        bad += core.update_counts(zip(pairs, pairs))
        self._count_deltas(len(full) + len(counts) // 2, bad)

    @staticmethod
    def _full_ask(core: SchedulerCore, a: list) -> str:
        """Applies one ask in full; what is wrong with it, or "" (the core counts what it ignores)."""
        fields = len(protocol.ASK_FIELDS)
        if type(a) is not list or len(a) != fields + len(core.types.names):
            return (f"an ask is [{', '.join(protocol.ASK_FIELDS)}, then one amount for each of "
                    f"{', '.join(core.types.names)}]")
        ask_id, count, app, priority, allocation_id, location, relax = a[:fields]
        if not (is_long(ask_id) and type(app) is str and is_key(priority) and is_key(allocation_id)
                and type(location) is str and location):
            return ("id must be an integer from 0 to 2^63-1, app and location non-empty strings, priority and "
                    "allocation_id integers (Java longs)")
        # The amounts are in the snapshot's resource order, which is the core's: a vector as is.
        core.update_request(app, priority, tuple(a[fields:]), count, allocation_id=allocation_id,
                            location=location, relax_locality=relax is True, ask_id=ask_id)
        return ""

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
