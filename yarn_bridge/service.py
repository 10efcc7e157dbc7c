"""The core service: one SchedulerCore behind one lock, driven by bridge messages.

Java stays the source of truth. A "snapshot" rebuilds a fresh core from YARN's full state, each
app in the queue YARN runs it in; a "schedule" applies the changes since the last call in order,
places the apps submitted meanwhile, and decides at once for every node listed (each with room
for some outstanding ask). A change that cannot be applied is logged and counted, never raised:
the rest of the request still runs.
Each schedule call is applied once: the shim answers a timeout by sending the same request
again, which gets the reply the first attempt got (docs/bridge.md, "Retries").
The core's preemption round runs in a schedule call once a round is due (every
`preemption_interval_s`, or at a starvation timeout); its plan goes back in the reply for the
shim to tell AMs and kill, with the time the next round or kill is due (`call_in_ms`), and the
core's preemption state whenever it changed: the shim keeps the latest where the next active RM
reads it and gives it back with every snapshot, from which the rebuilt core goes on.
Nothing raises out of `handle`, the py4j entry point; the metrics are recorded here, as it runs.
"""
from __future__ import annotations

import gc
import logging
import math
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from scheduler import ConfigError, QueueConfig, SchedulerCore, load_config
from scheduler.config import CREATED
from scheduler.echo import brief
from scheduler.explain import am_share
from scheduler.model import Placement
from scheduler.preemption import PreemptionPlan
from scheduler.preemption_state import SavedState
from scheduler.resources import Vector, fits
from yarn_bridge import contract_tables as tables
from yarn_bridge import protocol
from yarn_bridge.holds import HoldsTold
from yarn_bridge.reload import Reloader

if TYPE_CHECKING:  # prometheus_client is imported only by a service with a status server
    from yarn_bridge.metrics import Metrics

log = logging.getLogger("yarn_bridge.service")
# A snapshot is applied in parts of this many items, between which an older snapshot gives way
# to a newer one that has arrived meanwhile.
SNAPSHOT_PART = 4096
# Seconds between preemption rounds: its timeouts and grace are seconds long, and a round walks
# the tree, so not every call pays for one.
PREEMPTION_INTERVAL_S = 1.0
# Seconds between recomputing every app's headroom: each container placed or ended moves it, and
# recomputing it for every app at every call makes a call's cost grow with the apps, not with what
# it decides. AMs read it at their allocate heartbeat (a second in MapReduce), so it goes out at
# most this often, and at once for an app not yet told.
HEADROOM_INTERVAL_S = 0.5
# At most this many assignments per schedule call (`serve --max-assignments-per-call`). A call's
# decisions are made with the asks of its collection and committed a call's time later: the asks
# that arrive meanwhile (a queue below the others asking again) wait for the next call, so a long
# call hands out containers that the fair order of the moment would give elsewhere. Short calls
# keep that window short: on the SLS trace at 1,000 nodes, 64 a call cut the DRF violations from
# 112 to 15 per 1,000 containers at the same containers/s (benchmarks/RESULTS.md). The nodes a
# call did not finish go first in the next, which the shim makes at once (the containers
# committed are changes).
MAX_ASSIGNMENTS_PER_CALL = 64


class _Superseded(Exception):
    """A snapshot abandoned because a newer one arrived while it was being applied."""


def _parts(items: list) -> Iterator[list]:
    for start in range(0, len(items), SNAPSHOT_PART):
        yield items[start:start + SNAPSHOT_PART]


class CoreService:
    """`metrics`, when given, records every call (and its collector reads this service's core);
    the one `reloader` serves every reload trigger: -refreshQueues here, the status server's
    POST /v1/reload and the file watcher (ops_wiring). `clock` is the cores' (monotonic seconds):
    preemption's timeouts, grace and rounds run on it; `wall_clock` (seconds since 1970) is what
    the preemption state goes out and comes back in, since the next core may run elsewhere."""

    def __init__(self, queues_path: str | Path, policy: str = "drf",
                 loader: Callable[[str | Path], QueueConfig] = load_config, *,
                 metrics: Metrics | None = None, node_choice: str = "each-node",
                 clock: Callable[[], float] = time.monotonic, wall_clock: Callable[[], float] = time.time,
                 preemption_interval_s: float = PREEMPTION_INTERVAL_S,
                 headroom_interval_s: float = HEADROOM_INTERVAL_S,
                 max_assignments_per_call: int = MAX_ASSIGNMENTS_PER_CALL) -> None:
        self.queues_path = Path(queues_path)
        self.policy = policy
        self.node_choice = node_choice
        self.clock = clock
        self.wall_clock = wall_clock
        self.preemption_interval_s = preemption_interval_s
        self.headroom_interval_s = headroom_interval_s
        self.max_assignments_per_call = max_assignments_per_call
        self._next_headroom = float("-inf")
        self._headroom_owed = False  # a call changed usage before the interval let every app be told
        self._next_round = float("-inf")
        self.config = loader(self.queues_path)  # raises ConfigError: the service does not start
        self.core = SchedulerCore(self.config, policy=policy, node_choice=node_choice, clock=clock)
        self.lock = threading.Lock()
        self.counters: Counter[str] = Counter()
        self.epoch: int | None = None  # of the snapshot the core was rebuilt from; None: none yet
        # settings of the queue file the last snapshot's cluster could not honour (for /v1/health)
        self.config_warnings: list[str] = []
        # The newest snapshot epoch seen, announced before the lock is taken: an older snapshot
        # still being built (its caller timed out) gives up, and none older is ever applied.
        self._newest = -1
        self._announce = threading.Lock()
        # what Java's queue list was made from (the core and its config): a reload by any trigger
        # changes the core's config, a placement may create a queue (SchedulerCore.take_built), and
        # the next schedule reply then carries the new list; `_listed` is that list
        self._tree_sent: tuple[SchedulerCore, QueueConfig] | None = None
        self._listed: list[dict[str, Any] | str] = []  # (a created leaf's path: _grown)
        self._listed_at: dict[str, int] = {}  # queue -> its entry's index in `_listed`
        # What Java was last told of each app: its headroom, and why its AM waits ("" for not
        # waiting) for the apps with an AM ask pending; both start afresh with every snapshot.
        self._headroom_sent: dict[str, tuple] = {}
        self._am_told: dict[str, str] = {}
        self._drifted: set[str] = set()  # nodes whose free room differed at the last call
        # The preemption state Java has (from a reply, or given back with the last snapshot): a
        # reply carries the core's only when it differs.
        self._state_sent = SavedState()
        self._holds = HoldsTold()  # the core's holds as Java has them (as reserved containers)
        # The last schedule call applied: (epoch, seq, request text, reply). A shim whose call timed
        # out asks again with the same request, which gets this reply instead of being applied twice.
        self._last_call: tuple[int, int, str, str] | None = None
        self.metrics = metrics
        if metrics is not None:
            metrics.follow(lambda: self.core, self.lock)
        self.reloader = Reloader(lambda: self.core, self.lock, self.queues_path, loader=loader, metrics=metrics,
                                 on_applied=self._adopt)
        self._handlers = {"snapshot": self._snapshot, "move": self._move}
        self._on_delta = self._delta_handlers()

    # ------------------------------------------------------------------ entry point

    def handle(self, text: str) -> str:
        """One request in, one reply out; never raises."""
        try:
            msg = protocol.decode_request(text)
        except protocol.ProtocolError as exc:
            self.counters["bad_requests"] += 1
            log.warning("bad request: %s", exc)
            return protocol.error(str(exc))
        kind, epoch = msg.type, msg.epoch
        if kind == "snapshot":
            with self._announce:
                self._newest = max(self._newest, epoch)
        # a reload reads and validates its file before the lock is taken; what it returns runs under it
        handler = (self._reload(msg) if kind == "reload" else partial(self._schedule_once, text=text)
                   if kind == "schedule" else self._handlers[kind])
        with self.lock:
            self.counters[kind] += 1
            if kind == "snapshot":
                if epoch < self._newest:
                    self.counters["stale_requests"] += 1
                    return protocol.error(f"snapshot: epoch {epoch} is older than snapshot {self._newest}")
            elif epoch != self.epoch:
                # A late request from before the last snapshot, or no snapshot yet: applying it
                # would corrupt the rebuilt state. Java resynchronises on this error.
                self.counters["stale_requests"] += 1
                return protocol.error(f"{kind}: epoch {epoch} is not the current epoch {self.epoch}; "
                                      "send a snapshot")
            try:
                with _collector_paused():
                    return handler(msg)
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

    def _schedule_once(self, msg: tables.Schedule, text: str) -> str:
        """Applies a schedule call once: the request of the last call again (the shim's retry after
        a timeout, or its first attempt reaching the lock after the retry) gets the reply that call
        got and changes nothing; an older seq of this epoch, or the last seq with other changes, is
        refused (the shim resynchronises), since applying it would apply its changes twice or out of
        order."""
        epoch, seq = msg.epoch, msg.seq
        last = self._last_call
        if last is not None and last[0] == epoch and seq <= last[1]:
            if seq == last[1] and text == last[2]:
                self.counters["repeated_calls"] += 1
                return last[3]
            self.counters["stale_requests"] += 1
            return protocol.error(f"schedule: seq {seq} is not after seq {last[1]}, the last one applied in epoch "
                                  f"{epoch}" + (" (with other changes)" if seq == last[1] else "") + "; send a snapshot")
        reply = self._schedule(msg)
        self._last_call = (epoch, seq, text, reply)
        return reply

    def _snapshot(self, msg: tables.Snapshot) -> str:
        epoch = msg.epoch
        try:
            config, self.config_warnings = self.config.for_cluster(tuple(msg.resources or ()) or
                                                                   self.config.resource_types())
            for warning in self.config_warnings:
                log.warning("queue configuration %s: %s", self.config.source, warning)
            core = SchedulerCore(config, resource_types=msg.resources or None, policy=self.policy,
                                 node_choice=self.node_choice, clock=self.clock)
        except (ConfigError, ValueError) as exc:
            self.counters["bad_requests"] += 1
            return protocol.error(f"snapshot: resources {brief(msg.resources)}: {exc}")
        nodes, apps = msg.nodes or [], msg.apps or []
        rows, asks = msg.containers or [], msg.asks or []
        with core.batch():
            if msg.labels:
                core.set_labels(msg.labels)
            for part in _parts(nodes):
                self._check_newest(epoch)
                for n in part:
                    self._apply_item(core, n, "node", self._add_node)
            for part in _parts(apps):
                self._check_newest(epoch)
                for a in part:
                    self._apply_item(core, a, "app", self._recover_app)
            for part in _parts(rows):
                self._check_newest(epoch)
                self._apply_started(core, part)
            am_asks = _ids(msg.am_asks)
            for part in _parts(asks):
                self._check_newest(epoch)
                self._apply_asks(core, part, (), am_asks)
            self._apply_asks(core, (), msg.counts or (), am_asks)
        self._check_newest(epoch)
        core.preemption.carry(self.core.preemption)
        self._state_sent = self._restore(core, msg.preemption_state)
        self._holds = HoldsTold()  # Java drops its reserved containers when it sends a snapshot
        self.core, self.epoch, self._last_call = core, epoch, None
        # Java keeps the AM diagnostics it has; the headrooms all go again with the next call.
        self._headroom_sent = {}
        self._am_told = {app: text for app, text in self._am_told.items() if app in core.apps}
        if self.metrics is not None:
            self.metrics.resync()
        log.info("resynchronised from snapshot %d: %d nodes, %d apps, %d containers, %d asks", epoch,
                 len(nodes), len(apps), len(rows), len(asks))
        return protocol.snapshot_reply(self.queue_list())

    def _restore(self, core: SchedulerCore, record: Any) -> SavedState:
        """The preemption state a snapshot gives back, taken into the rebuilt core (what it names
        and YARN has again now at once, the rest as it comes back); a record that is not one, or
        a bad item in it, is logged and counted, and the core goes on without it."""
        if record is None:
            return SavedState()
        now = self.clock()
        state, problems = protocol.saved_state(record, self.wall_clock() - now)
        for problem in problems:
            self.counters["bad_deltas"] += 1
            log.warning("ignored preemption state %s", problem)
        core.preemption.restore(state, now)
        if state.marks or state.leaves:
            log.info("preemption state given back: %d mark(s), %d queue clock(s); %d mark(s) taken back at once, "
                     "the rest as YARN recovers them", len(state.marks), len(state.leaves),
                     len(core.preemption.marks))
        return state

    def _check_newest(self, epoch: int) -> None:
        if self._newest > epoch:
            raise _Superseded(f"snapshot {epoch}: abandoned for the newer snapshot {self._newest}")

    def _schedule(self, msg: tables.Schedule) -> str:
        """The changes since the last call, then the submissions (placed with those changes
        known), then one decision for every node listed."""
        start = time.perf_counter()
        core = self.core
        refused = core.counters["refused"]
        self._apply(core, msg)
        placements = [p for p in map(self._place, msg.submissions or ()) if p is not None]
        now = self.clock()
        plan = self._preemption_round(core, now)  # before deciding: it holds nodes for starved queues
        nodes, held = self._nodes_with_room(core, msg.nodes or ())
        assignments = core.on_nodes(nodes, limit=self.max_assignments_per_call, held=held)
        built = core.take_built()
        tree, grown = self._tree_changes(core, built)
        built_entries, created = grown or ((), None)
        holds, holds_ended = self._holds.changes(core.hold_changes)
        changed = bool(assignments or msg.deltas or msg.started or msg.finished
                       or len(self._headroom_sent) != len(core.apps))
        self._headroom_owed |= changed
        reply = protocol.schedule_reply(msg.seq, [protocol.assignment(a) for a in assignments], placements, tree,
                                        self._headroom_changes(core, now) if self._headroom_owed else [],
                                        self._am_diagnostic_changes(core) if self._am_told else [],
                                        plan, now, self._call_in_ms(core, now), self._state_change(core, plan, now),
                                        built_entries, created, holds, holds_ended, core.carried)
        self.counters["nodes_offered"] += len(nodes)
        if self.metrics is not None:
            rtt = msg.rtt_ms
            self.metrics.schedule(time.perf_counter() - start, len(assignments), nodes=len(nodes),
                                  heartbeats=msg.heartbeats or 0, refused=core.counters["refused"] - refused,
                                  round_trip_seconds=None if rtt is None else rtt / 1000)
        return reply

    def _preemption_round(self, core: SchedulerCore, now: float) -> PreemptionPlan | None:
        """The core's preemption round if one is due, else the kills whose grace is over and the
        restored marks to tell again (None if neither). Rounds keep to a grid of
        `preemption_interval_s`: a round that comes late does not push the next one later. A
        round is also due when a leaf's starvation timeout runs out (its marks do not wait for
        the grid, which starts anew from it), and a kill does not wait for the next round. The
        reply asks the shim for a call at the next of those times (_call_in_ms), so they come on
        time without a change in YARN."""
        interval = self.preemption_interval_s
        if now >= self._next_round or now >= core.preemption.next_starved:
            late = now - self._next_round
            self._next_round = now + interval if late == math.inf or late < 0 else now + interval - late % interval
            plan = core.preemption_round(now)
        else:
            core.preemption.take_back(now)  # restored marks are told again as soon as YARN shows them
            if now < core.preemption.next_kill and not core.preemption.retold:
                return None
            plan = core.preemption.kills(now)
        if self.metrics is not None and (plan.mark or plan.kill):
            self.metrics.preemption(plan, now)
        return plan

    def _state_change(self, core: SchedulerCore, plan: PreemptionPlan | None, now: float) -> dict | None:
        """The core's preemption state for the reply, if it changed since Java last had it. Only
        a plan changes it (its rounds and kills are where marks and clocks move, and restored
        items come back or expire)."""
        if plan is None:
            return None
        state = core.preemption.saved()
        if state == self._state_sent:
            return None
        self._state_sent = state
        return protocol.preemption_state(state, self.wall_clock() - now)

    def _call_in_ms(self, core: SchedulerCore, now: float) -> int | None:
        """Milliseconds until preemption has something to do without a change in YARN: the next
        kill, the next leaf's starvation timeout, the next round while a leaf starves (more marks
        to make), the end of the headroom interval while a change is owed to the AMs; None if
        nothing is timed."""
        timers = core.preemption
        due = min(timers.next_kill, timers.next_starved, self._next_round if timers.restoring else math.inf,
                  self._next_headroom if self._headroom_owed else math.inf)
        return None if due == math.inf else max(0, math.ceil(round((due - now) * 1000, 3)))  # (not a float's 4700.000001)

    def _headroom_changes(self, core: SchedulerCore, now: float) -> list[list[Any]]:
        """[app, its headroom's amounts] for each app whose headroom differs from what Java was
        last told (MapReduce's AM ramps its reducers down by it); apps gone are forgotten. Only
        after a call that changed usage, capacity or the apps: nothing else moves a headroom; for
        every app once per HEADROOM_INTERVAL_S, in between for the apps not told yet. A change
        made inside the interval is owed until it ends: the reply asks for a call then. A
        headroom is the same for the apps of one leaf (the limits it takes are the cluster's, the
        leaf's and its ancestors'), so it is computed once per queue."""
        sent, rows = self._headroom_sent, []
        every = now >= self._next_headroom
        if every:
            self._next_headroom = now + self.headroom_interval_s
            self._headroom_owed = False
        elif len(sent) == len(core.apps):
            return rows
        known: dict = {}
        for app_id, app in core.apps.items():
            if not every and app_id in sent:
                continue
            amounts = core.queue_headroom(app.queue, known)
            if sent.get(app_id) != amounts:
                sent[app_id] = amounts
                rows.append([app_id, *amounts])
        if len(sent) > len(core.apps):
            for app_id in [a for a in sent if a not in core.apps]:
                del sent[app_id]
        return rows

    def _am_diagnostic_changes(self, core: SchedulerCore) -> list[list[str]]:
        """[app, why its AM waits] for each app with an AM ask pending whose reason changed: the
        queue's max-am-share text (explain.am_share), or "" once it no longer waits on it. An app
        leaves the watch once its AM ask is served or withdrawn."""
        told, out = self._am_told, []
        for app_id, before in list(told.items()):
            app = core.apps.get(app_id)
            pending = [r for r in app.requests.values() if r.am and r.count > 0] if app is not None else []
            reasons = am_share(core, app.queue, pending[0]) if pending and app is not None else []
            now = reasons[0]["message"] if reasons else ""
            if now != before:
                out.append([app_id, now])
            if pending:
                told[app_id] = now
            else:
                del told[app_id]
        return out

    def _place(self, submission: Any) -> dict[str, Any] | None:
        """Places one submitted app: the placement for the reply (None for one without an app id)."""
        s, problem = protocol.decode_item(submission, protocol.ITEMS["submission"])
        if problem:
            self._bad("submission", submission, problem)
            app = submission.get("app") if type(submission) is dict else None
            return protocol.placement(app, Placement(False, None, f"malformed submission: {problem}")) \
                if type(app) is str else None
        placed = self.core.submit_app(s.app, s.user, s.queue or None, tuple(s.groups or ()),
                                      priority=s.priority or 0, label=s.label or None)
        return protocol.placement(s.app, placed)

    def _nodes_with_room(self, core: SchedulerCore, rows: list) -> tuple[list[str], dict[str, Vector]]:
        """The nodes to decide for, and the room YARN holds on some of them beyond the core's
        usage. Their free room as YARN has it equals the core's once the request's changes are
        applied (both are taken at once under the scheduler's lock), but for one gap: a container
        YARN killed or its AM released is finished for the core at once, while YARN keeps its room
        on the node until the NodeManager reports it gone (YARN-4148), a heartbeat or two later,
        or never if the node does not report it (a container of an attempt that failed while the
        RM was down). So where YARN has less room than the core, the call decides for the node with
        YARN's room: the core's figure would place containers YARN refuses, call after call (issue
        15: thousands after one batch of kills), and skipping the node would starve it. Where YARN
        has more, the core's figure decides (it never places more than YARN has). Either way the
        node is counted, and logged with both figures when it starts to differ."""
        names, sub, known = core.types.names, core.types.sub, core.find_node
        ids, drifted, held = [], {}, {}
        for row in rows:
            parsed = protocol.node_row(row, names)
            if isinstance(parsed, str):
                self._bad("node with room", row, parsed)
                continue
            node_id, free = parsed
            node = known(node_id)
            if node is not None:
                ours = sub(node.capacity, node.allocated)
                if free != ours:
                    drifted[node_id] = (free, ours)
                    if not fits(ours, free):
                        held[node_id] = tuple(max(0, o - f) for o, f in zip(ours, free))
            ids.append(node_id)
        self.counters["free_mismatches"] += len(drifted)
        new = [n for n in drifted if n not in self._drifted]
        self._drifted = set(drifted)
        if new:
            free, ours = drifted[new[0]]
            log.warning("YARN's free room differs from the core's on %d node(s), e.g. %s: YARN %s, the core %s%s",
                        len(new), brief(new[0]), core.types.format(free), core.types.format(ours),
                        "" if fits(ours, free) else " (decided for with YARN's room until they agree)")
        return ids, held

    def _reload(self, msg: tables.Reload) -> Callable[[tables.Reload], str]:
        """`yarn rmadmin -refreshQueues`: the validated reload of the file this service runs, never another.
        The file is read and validated here, before the service's lock is taken (a big or broken file
        must not hold up scheduling calls); what is returned installs it, under the lock."""
        asked, running = msg.path, self.reloader.path  # protocol checked: a string or absent
        if asked and not _same_file(asked, running):
            refused = protocol.reload_refused([
                f"{asked} is not the queue file this service runs ({running}): `yarn-drf serve` reads only the "
                "file it was started with. To use another file, restart it with --queues naming that file "
                "(in child mode: set yarn-drf.queues.file and restart the ResourceManager)"])
            return lambda _msg: refused
        checked = self.reloader.check(trigger="refreshQueues")

        def install(_msg: tables.Reload) -> str:
            try:
                result = self.reloader.install(checked)
            except Exception as exc:  # noqa: BLE001 (the py4j entry point never raises into the RM)
                log.exception("reload of %s failed", running)
                return protocol.error(f"reload: {exc!r}")
            if not result.accepted:
                return protocol.reload_refused(result.errors)
            return protocol.reload_applied(result.changes, self.queue_list())
        return install

    def _move(self, msg: tables.Move) -> str:
        """`yarn application -movetoqueue`: the core moves the app (its usage with it) or says why not.
        The target is checked for the app's user, as its submission was; YARN has checked the
        caller's right to modify the app and to submit to the target."""
        placed = self.core.move_app(msg.app, msg.queue, msg.user, tuple(msg.groups or ()))
        if placed.accepted:
            self._headroom_sent.pop(msg.app, None)  # the next call tells every app its headroom
        return protocol.move_reply(placed)

    def _adopt(self, config: QueueConfig, path: Path) -> None:
        self.config, self.queues_path = config, path  # a resync rebuilds the core from these

    # ------------------------------------------------------------------ changes

    def _apply(self, core: SchedulerCore, msg: tables.Schedule) -> None:
        """A schedule's changes, in the order Java collects them: app and node events, containers
        started, containers finished, then asks."""
        deltas, started, finished = msg.deltas, msg.started, msg.finished
        asks, counts = msg.asks or (), msg.counts or ()
        if not (deltas or started or finished or asks):  # most calls: ask counts alone, no batch
            self._apply_asks(core, (), counts, frozenset())
            return
        with core.batch():
            if deltas:
                self._apply_each(core, deltas)
            if started:
                self._apply_started(core, started)
            if finished:
                self._apply_finished(core, finished)
            self._apply_asks(core, asks, counts, _ids(msg.am_asks))

    def _apply_each(self, core: SchedulerCore, deltas: list) -> None:
        """Each delta decoded into its op's typed item and applied by its op's handler
        (`_on_delta`); one that is malformed, or that the core refuses, is logged and skipped."""
        handlers = self._on_delta
        for d in deltas:
            op = d.get("op") if type(d) is dict else None
            form = protocol.DELTAS.get(op) if type(op) is str else None
            if form is None:
                self._bad("delta", d, f"unknown op {brief(op)} (known: {', '.join(protocol.DELTA_OPS)})")
                continue
            item, problem = protocol.decode_item(d, form)
            if problem:
                self._bad(f"{op} delta", d, problem)
                continue
            if handlers[op](core, item) is not False:
                self.counters["deltas"] += 1

    def _delta_handlers(self) -> dict[str, Callable[[SchedulerCore, Any], bool | None]]:
        """The handler of each delta op of the spec: it applies the op's typed item, and returns
        False when the core refused it (not counted as applied)."""
        return {
            "node_added": self._add_node,
            "node_updated": self._update_node,
            "node_removed": lambda core, d: core.remove_node(d.node),
            "app_added": self._recover_app,  # after an RM restart: an app YARN recovered, in its queue
            "app_removed": self._remove_app,
            "attempt_added": self._reset_attempt,
            "assignment_refused": lambda core, d: core.assignment_refused(d.assignment_id, d.reason or ""),
            "blacklist": lambda core, d: core.set_blacklist(d.app, d.places),
            "app_priority": lambda core, d: core.update_app_priority(d.app, d.priority),
            "labels": lambda core, d: core.set_labels(d.labels),
            "node_label": lambda core, d: core.set_node_label(d.node, d.label),
        }

    def _remove_app(self, core: SchedulerCore, d: tables.AppRemoved) -> None:
        core.remove_app(d.app)
        self._headroom_sent.pop(d.app, None)

    def _reset_attempt(self, core: SchedulerCore, d: tables.AttemptAdded) -> None:
        """attempt_added: the new attempt starts with no headroom in YARN."""
        core.reset_requests(d.app)
        self._headroom_sent.pop(d.app, None)

    def _add_node(self, core: SchedulerCore, n: tables.Node) -> None:
        """A snapshot's node, or a node_added delta."""
        core.add_node(n.node, n.capacity, n.rack or "/default-rack", self._cards(core, n.node, n.capacity, n.cards),
                      label=n.label or "")

    def _update_node(self, core: SchedulerCore, d: tables.NodeUpdated) -> None:
        """A node_updated delta: with "cards", the node's cards change too ([]: it has none now);
        without, they stay while their sum is still its gpu-mem."""
        node = core.find_node(d.node)
        if d.cards is None or node is None:
            core.update_node(d.node, d.capacity)
        else:
            core.add_node(node.id, d.capacity, node.rack, self._cards(core, d.node, d.capacity, d.cards),
                          label=node.partition)

    def _cards(self, core: SchedulerCore, node: str, capacity: dict, cards: Any) -> list[int] | None:
        """A node's cards, or None when it has none, or they cannot be its cards: then the node
        comes in without them (gpu-mem one node total, as for a node that declares none), logged,
        rather than not at all."""
        if cards is None or cards == []:
            return None
        problem = core.cards_problem(capacity, cards)
        if problem:
            self._bad(f"cards of node {brief(node)}", cards, f"{problem}; the node is taken without cards")
            return None
        return cards

    def _recover_app(self, core: SchedulerCore, a: tables.App) -> bool:
        """A snapshot's app, or an app_added delta: an app YARN runs, taken into its queue as is
        (False: the core refused it)."""
        placed = core.recover_app(a.app, a.user, a.queue, tuple(a.groups or ()), priority=a.priority or 0)
        if not placed.accepted:
            self._bad("recovered app", a._asdict(), placed.reason)
            return False
        if a.blacklist:
            core.set_blacklist(a.app, a.blacklist)
        return True

    def _apply_item(self, core: SchedulerCore, obj: Any, kind: str,
                    apply: Callable[[SchedulerCore, Any], bool | None]) -> None:
        """A snapshot's node or app: decoded into its typed item and applied; counted as a delta."""
        item, problem = protocol.decode_item(obj, protocol.ITEMS[kind])
        if problem:
            self._bad(f"snapshot {kind}", obj, problem)
        elif apply(core, item) is not False:
            self.counters["deltas"] += 1

    def _bad(self, what: str, item: Any, problem: str) -> None:
        self.counters["bad_deltas"] += 1
        log.warning("ignored %s %s: %s", what, brief(item), problem)

    def _apply_started(self, core: SchedulerCore, rows: list) -> None:
        names = core.types.names
        bad = 0
        for row in rows:
            parsed = protocol.started_row(row, names)
            if type(parsed) is str:
                bad += 1
                log.warning("ignored container row %s: %s", brief(row), parsed)
                continue
            cid, app, node, priority, allocation_id, assignment_id, amounts, cards = parsed
            problem = core.container_started(cid, app, node, amounts, priority=priority,
                                             allocation_id=allocation_id, assignment_id=assignment_id, cards=cards)
            if problem:  # counted all the same: it runs, on cards the core chooses by its rule
                bad += 1
                log.warning("container %s on node %s: its cards %s %s; counted where the core's rule places it",
                            cid, node, brief(cards), problem)
        self._count_deltas(len(rows), bad)

    def _apply_finished(self, core: SchedulerCore, pairs: list) -> None:
        """Flat container, state pairs (an even number: checked with the request)."""
        bad = 0
        it = iter(pairs)
        for cid, state in zip(it, it):
            problem = protocol.finished_pair(cid, state)
            if problem:
                bad += 1
                log.warning("ignored finished %s", problem)
                continue
            core.container_finished(cid, state)
        self._count_deltas(len(pairs) // 2, bad)

    def _count_deltas(self, seen: int, bad: int) -> None:
        if bad:
            self.counters["bad_deltas"] += bad
        self.counters["deltas"] += seen - bad

    def _apply_asks(self, core: SchedulerCore, full: list | tuple, counts: list | tuple,
                    am_asks: frozenset[int]) -> None:
        """A request's asks, after its deltas (Java collects them last): `full` asks, then
        `counts`, flat id, count pairs (an even number: checked with the request) for asks sent
        before. A request names each ask once, so the two may go in this order; counts are most
        of a call, so they go to the core in one call. An ask in full is an AM ask exactly when
        its id is in `am_asks`; its app is then watched for the AM diagnostic."""
        names = core.types.names
        bad = 0
        for a in full:
            parsed = protocol.ask_row(a, names)
            if type(parsed) is str:
                bad += 1
                log.warning("ignored ask %s: %s", brief(a), parsed)
                continue
            ask_id, count, app, priority, allocation_id, location, relax, amounts, label = parsed
            # the amounts are in the snapshot's resource order, which is the core's: a vector as is
            am = ask_id in am_asks
            core.update_request(app, priority, amounts, count, allocation_id=allocation_id, location=location,
                                relax_locality=relax, ask_id=ask_id, am=am, label=label)
            if am and count and app in core.apps:
                self._am_told.setdefault(app, "")
        pairs = iter(counts)
        bad += core.update_counts(zip(pairs, pairs))
        self._count_deltas(len(full) + len(counts) // 2, bad)

    # ------------------------------------------------------------------ the queue tree for Java

    def queue_list(self, built: list[str] | None = None) -> list[dict[str, Any]]:
        """Every queue, parents first. Every caller sends it to Java, so it also records that
        Java has this tree. `built`: what the caller took from the core (SchedulerCore.take_built)
        since the list was last sent."""
        core = self.core
        built = core.take_built() if built is None else built
        if self._tree_sent == (core, core.config):
            self._grown(built)
            listed = self._listed
            for at, entry in enumerate(listed):
                if isinstance(entry, str):
                    listed[at] = protocol.queue_entry(entry, core.queues[entry])
        else:
            ordered = sorted(core.queues, key=lambda p: (p.count("."), p))
            self._listed = [protocol.queue_entry(path, core.queues[path]) for path in ordered]
            self._listed_at = {path: i for i, path in enumerate(ordered)}
            self._tree_sent = (core, core.config)
        return self._listed  # type: ignore[return-value]  # (no path left unmade)

    def _tree_changes(self, core: SchedulerCore, built: list[str]
                      ) -> tuple[list | None, tuple[list[dict[str, Any]], dict[str, list[str]]] | None]:
        """What a schedule reply tells Java of the tree: ("queues", the whole list) after a
        reload or resync Java has not had, else the changes (_grown) when placement or a
        recovered app built queues; (None, None) when nothing changed."""
        if self._tree_sent != (core, core.config):
            return self.queue_list(built), None
        return None, (self._grown(built) if built else None)

    def _grown(self, built: list[str]) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
        """Between reloads and resyncs the core only builds queues (placement creates them, a
        recovered app re-creates its own), each after its parent: the list Java holds takes the
        new entries, a queue built again at its own path (a draining one re-created) has its entry
        replaced, and a leaf a new queue went under has its own made again (it is a parent now);
        the others stay as they were sent. Returns the entries added or replaced, parents first
        ("queues_built"), and, by parent, the names of the new leaves of the created spec
        ("queues_created": the shim makes their entries from their parent's, so the reply and the
        list carry a name instead, the path standing in the list for the entry until a whole
        list is sent)."""
        core, listed, where = self.core, self._listed, self._listed_at
        changed: dict[int, str] = {}
        for path in built:
            at = where.get(path)
            if at is None:
                at = where[path] = len(listed)
                listed.append(path)
            changed[at] = path
            above = where[path.rsplit(".", 1)[0]]  # (root's is root)
            entry = listed[above]
            if isinstance(entry, str) or entry["leaf"]:  # (a path stands for a created leaf's entry)
                changed[above] = entry if isinstance(entry, str) else entry["name"]
        entries: list[dict[str, Any]] = []
        created: dict[str, list[str]] = {}
        for at in sorted(changed):
            path = changed[at]
            q = core.queues[path]
            if q.spec is CREATED and q.is_leaf and not q.draining:
                listed[at] = path
                parent, _, name = path.rpartition(".")
                names = created.get(parent)
                if names is None:
                    names = created[parent] = []
                names.append(name)
            else:
                listed[at] = entry = protocol.queue_entry(path, q)
                entries.append(entry)
        if built:
            log.info("built %d queue(s) (placement rules with create: true, or recovered apps), from %s",
                     len(built), built[0])
        return entries, created


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the length of one call. A call that creates
    thousands of queues allocates a few hundred thousand objects that all live on, and the
    collector went over the whole heap each time it had grown by a quarter: 10,000 new users took
    0.65 s of CPU with it, 0.30 s without. Reference counting still frees at once; what the
    collector has to look at is looked at once, after the call."""
    if not gc.isenabled():  # (a caller that manages the collector itself)
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _same_file(asked: str, running: Path) -> bool:
    try:
        return os.path.realpath(asked) == os.path.realpath(running)
    except ValueError:  # (a NUL in the path names no file)
        return False


def _ids(items: Any) -> frozenset[int]:
    """The integers of a request's id list (the envelope check made it a list); others are not ids."""
    return frozenset(x for x in items if type(x) is int) if items else frozenset()
