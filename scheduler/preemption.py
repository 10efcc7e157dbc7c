"""Preemption toward the DRF targets: which running containers to take back, from whom, for whom.

The core runs it per round (SchedulerCore.preemption_round(now), on the caller's timer: the
simulator every heartbeat interval, the bridge every second or so), never per heartbeat, so the
decision path pays nothing for it. A round:

1. forgets marks whose container has ended (its AM gave it back within the grace: nothing to
   kill); holds each node with marks left for their request (again, if it served one container
   and more are coming), or cancels its marks when the room is no longer wanted (the request
   went away or asks for fewer, room came free on its own or the leaf got room elsewhere so that
   it would pass its target, another request took the node);
2. returns for killing the marks whose grace is over;
3. measures every leaf with fitting demand against its target: starved when below `threshold` x
   its target for `fair-share-timeout-s`, or below its `min` for `min-share-timeout-s`; once
   starved, it stays so until it reaches its target (it is restored to the target, not to the
   threshold); a leaf the last round did not see has been below since its demand came;
4. for each starved leaf (below min first, then the furthest below its target), one container
   of its request at a time, picks the fewest victims whose release makes room on one node for
   it, on the node where they cost least (AMs last, less important first, then the least work
   lost: the youngest containers anywhere, not the first nodes'), marks them (grace-s from now)
   and holds the node for that request (a core reservation), so the room goes to the starved
   leaf and not to whoever heartbeats next.

Between rounds the caller may ask for the kills whose grace is over (Preemptor.kills, once
`next_kill` has passed), so a kill need not wait for the next round; and it may run a round as
soon as a leaf's timeout runs out (`next_starved`), so marks need not wait for its timer.

The target is the pooled H-DRF target (scheduler.targets, the fluid fill of the demand), as a
dominant share. It depends on the demand alone (usage plus what runnable apps ask for; a
preempted task asked for again leaves it unchanged), not on where containers run, so taking a
container never moves the targets the next round measures by. The reachable target is a replay
from the live placement: it moves as containers move, and its churn (no reservations) never
opens room for a request larger than the containers it would replace, so a starved queue asking
for big containers on nodes full of small ones would never have a target to be restored to.
Where node boundaries make the pooled target unreachable, the node-by-node rule may find no
victims (not even by the whole-container rule below): the queue shows as starved and nothing is
killed.

Victims converge: a container is taken only if its queue, and each of its ancestors below the one
it shares with the starved leaf, stays at or above its target after losing it and everything
already marked (an AM counts as its whole app: YARN ends an attempt's containers with its AM);
only where no node has such victims for a container of the request, one that goes below its
target by less than one of its containers, once, and stays above `threshold` x its target and
its `min` (whole containers against pooled targets: _may_lose);
the starved leaf and its ancestors (below the same one) stay at or below their targets after
gaining the request and every held node's; AM containers only when no other container will do; among the others higher priority numbers (YARN: less important) and younger
containers first; never more containers for a
leaf than it asks for; at most `max-per-round` of the cluster (dominant share) per round; never a
container of a queue with `preemptable: false` on itself or an ancestor.

A mark is told once (PreemptionPlan.mark) and killed once (PreemptionPlan.kill); `planned` lists
every outstanding mark each round, so repeating them to an AM is idempotent by container id.
With `observe-only: true` rounds compute and report the plan (`planned`) but mark, hold and kill
nothing.

A core that replaces another (a resync, a restarted service, a restarted or failed-over
ResourceManager) goes on from the other's state (`saved`, then `restore`: scheduler.preemption_state):
each mark is taken back once its container runs again on its node and its request's app asks
again, with the deadline it was given (one whose deadline passed meanwhile is killed at once);
its AM is told again by the new RM (PreemptionPlan.retold), never with a fresh grace. Each leaf's
clocks are taken back once it has demand again, so a starved queue does not wait its timeout
over.
"""
from __future__ import annotations

import heapq
import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from scheduler.config import QueueConfig
from scheduler.model import App, Container, Node, Queue, Request, apps_in_order, is_am
from scheduler.pooled import ShareSource, pooled_shares
from scheduler.preemption_state import RESTORE_WINDOW_S, SavedLeaf, SavedMark, SavedState, bounded
from scheduler.queue_limits import am_room, within_max
from scheduler.resources import Vector, dominant_share, fits, vadd, vsub


class PlannedCore(ShareSource, Protocol):
    """What the planner reads and calls of the core it plans for (scheduler.core.PlannedCore):
    public state and two public calls, so this module needs nothing of the core's own."""

    config: QueueConfig
    apps: dict[str, App]
    nodes: dict[str, Node]
    containers: dict[str, Container]
    queues: dict[str, Queue]
    hold_changes: set[Node]

    def is_placeable(self, shape: Vector) -> bool: ...

    def unreserve(self, node: Node) -> None: ...

log = logging.getLogger("yarn_drf.preemption")

_EPS = 1e-9
FAIR, MIN = "fair-share", "min-share"
REPORTED_VICTIMS = 10  # per queue, in status pages (the counts are always whole)


@dataclass(frozen=True)
class Victim:
    """A container marked for preemption, as the bridge puts it on the wire."""

    container_id: str
    app_id: str
    node_id: str
    queue: str  # the victim's queue
    for_queue: str  # the starved leaf its room goes to
    reason: str  # "fair-share" or "min-share": how the leaf starved
    resources: dict[str, int]
    am: bool
    started: float  # the container's start, on the core's clock (the work a kill loses runs from it)
    marked_at: float
    deadline: float  # killed then unless released earlier


@dataclass(frozen=True)
class PreemptionPlan:
    """One round's result. `mark`: newly marked, tell their AMs now; `kill`: the grace is over,
    kill now with exit status PREEMPTED (each container appears here once); `planned`: every
    outstanding mark (observe-only: what would be marked now; mark and kill stay empty);
    `retold`: marks a core before this one made, taken back (restore), whose AM a new RM must
    tell again, with the deadline they had."""

    mark: tuple[Victim, ...] = ()
    kill: tuple[Victim, ...] = ()
    planned: tuple[Victim, ...] = ()
    observe_only: bool = False
    retold: tuple[Victim, ...] = ()


@dataclass
class Starvation:
    """A leaf's preemption state, as status pages show it."""

    share: float
    target: float
    below_fair_since: float | None = None
    below_min_since: float | None = None
    starved: str | None = None  # FAIR or MIN once its timeout has passed

    @property
    def since(self) -> float | None:
        times = [t for t in (self.below_min_since, self.below_fair_since) if t is not None]
        return min(times) if times else None


@dataclass
class _Mark:
    victim: Victim
    request: Request
    node: Node
    killed: bool = False
    lost_s: float = 0.0  # container-seconds of work its kill ended (0 until killed)


@dataclass
class _Hold:
    """A node held (reserved) for a starved request while its victims drain: `containers` of it."""

    request: Request
    containers: int


@dataclass
class _Round:
    """What a plan has taken and given so far: outstanding marks and holds, plus this round's."""

    lost: dict[str, Vector] = field(default_factory=dict)  # queue path -> marked resources below it
    gained: dict[str, Vector] = field(default_factory=dict)  # queue path -> held requests below it
    taken: Vector = ()  # marked in this round, for max-per-round
    asked: dict[Request, int] = field(default_factory=dict)  # request -> containers of it held for
    held: dict[Node, int] = field(default_factory=dict)  # node -> containers held on it
    marked: set[str] = field(default_factory=set)  # containers marked this round


class Preemptor:
    """The planner and its state; one per core (SchedulerCore.preemption_round)."""

    def __init__(self, core: PlannedCore) -> None:
        self.core = core
        self.marks: dict[str, _Mark] = {}
        self.holds: dict[Node, _Hold] = {}  # nodes held while their victims drain
        self.queues: dict[str, Starvation] = {}  # leaves with fitting demand, at the last round
        self.observed: tuple[Victim, ...] = ()  # observe-only: the last round's plan
        self.counters = dict.fromkeys(("rounds", "marked", "killed", "released", "cancelled", "restored",
                                       "restore_dropped"), 0)
        self.killed_seconds = 0.0  # container-seconds of work the kills ended
        self.last_round: float | None = None
        self.next_kill = float("inf")  # the earliest deadline of a mark not yet killed
        # Set by each round: the earliest time a leaf below its target starves (its timeout runs
        # out), and whether a leaf starves now (rounds go on marking until it is restored). With
        # next_kill they tell a caller on a timer when the next call can do something.
        self.next_starved = float("inf")
        self.restoring = False
        # Restored from a core before this one (restore), waiting for what they name to be back.
        self.awaiting_marks: dict[str, SavedMark] = {}
        self.awaiting_leaves: dict[str, SavedLeaf] = {}
        self.retold: list[Victim] = []  # restored marks whose AM the next plan tells again

    def round(self, now: float) -> PreemptionPlan:
        spec = self.core.config.preemption
        if not spec.enabled:
            self._drop_all()
            self.queues, self.observed, self.awaiting_leaves = {}, (), {}
            self.next_starved, self.restoring = float("inf"), False
            return PreemptionPlan()
        self.counters["rounds"] += 1
        self.take_back(now)
        goals = pooled_shares(self.core)  # the demand's alone: settling the marks does not move them
        self._settle(now, goals)
        kill = self._due(now)
        starved = self._watch(now, goals)
        if spec.observe_only:
            self._drop_all()
            self.observed = self._plan(starved, goals, now, commit=False)
            return PreemptionPlan(planned=self.observed, observe_only=True)
        self.observed = ()
        mark = self._plan(starved, goals, now, commit=True)
        self.last_round = now
        return self._plan_of(mark, kill)

    def kills(self, now: float) -> PreemptionPlan:
        """Between rounds, once a mark's grace is over (now >= next_kill): the marks a round
        would kill now, after settling them as a round does (one whose container ended, or whose
        room is no longer needed, is not killed). Marks nothing, so max-per-round still bounds
        each round; the caller need not wait for the next round to kill."""
        if not self.core.config.preemption.enabled or self.core.config.preemption.observe_only:
            return PreemptionPlan()
        self._settle(now, pooled_shares(self.core))
        return self._plan_of((), self._due(now))

    def _plan_of(self, mark: tuple[Victim, ...], kill: tuple[Victim, ...]) -> PreemptionPlan:
        self._set_next_kill()
        # Told again only while still marked: the same round may have let one off or killed it.
        retold = tuple(v for v in self.retold if (m := self.marks.get(v.container_id)) is not None and not m.killed)
        self.retold = []
        return PreemptionPlan(mark=mark, kill=kill, planned=tuple(m.victim for m in self.marks.values()),
                              retold=retold)

    def _set_next_kill(self) -> None:
        self.next_kill = min((m.victim.deadline for m in self.marks.values() if not m.killed), default=float("inf"))

    def carry(self, old: Preemptor) -> None:
        """After a resync in the same process (this core rebuilt from YARN's snapshot, `old` the
        core it replaces): what the saved state does not hold. Containers keep their start
        (victim order, work lost), the counters and the round timers go on. The marks and clocks
        come back through `restore`, from the state the shim saved, as after an RM restart. A
        kill the old core counted whose container still runs never reached YARN (the shim commits
        a kill before it takes the next snapshot): it is uncounted, and restore makes it again."""
        for cid, c in self.core.containers.items():
            was = old.core.containers.get(cid)
            if was is not None and was.node.id == c.node.id:
                c.started = was.started
        self.counters = dict(old.counters)
        self.killed_seconds = old.killed_seconds
        for cid, mark in old.marks.items():
            if mark.killed and cid in self.core.containers:
                self.counters["killed"] -= 1
                self.killed_seconds -= mark.lost_s
        self.last_round, self.next_starved, self.restoring = old.last_round, old.next_starved, old.restoring

    # ------------------------------------------------------------------ across restarts

    def saved(self) -> SavedState:
        """What the next core needs to go on from here (scheduler.preemption_state): every mark
        (a killed one too, until its container ends: if the kill never reached its NodeManager,
        the next core kills it at once), the clocks of every leaf below its target, and what was
        restored and still waits."""
        marks = [SavedMark(cid, m.node.id, m.request.app.id, m.request.key, m.victim.reason, m.victim.marked_at,
                           m.victim.deadline) for cid, m in self.marks.items()]
        marks += self.awaiting_marks.values()
        leaves = [SavedLeaf(path, s.below_fair_since, s.below_min_since, s.starved)
                  for path, s in self.queues.items() if s.since is not None]
        leaves += (leaf for path, leaf in self.awaiting_leaves.items() if path not in self.queues)
        return bounded(marks, leaves)

    def restore(self, saved: SavedState, now: float) -> None:
        """Goes on from a core before this one (its `saved`, now on this core's clock). Nothing
        of it is taken blindly: a mark comes back once its container runs on its node again and
        its request's app asks for that request again (a new RM learns both only after its first
        snapshot: NodeManagers register again, AMs resync), a leaf's clocks once it has demand
        again; each waits for that at most until its `waiting_until`, and no time later than a
        fresh mark or clock would have now (a record from a skewed or hostile clock cannot hold a
        node for longer than one grace). With preemption off nothing is restored; observe-only
        restores the clocks, not the marks (it marks nothing)."""
        spec = self.core.config.preemption
        if not spec.enabled:
            if saved.marks or saved.leaves:
                log.info("preemption is off: the saved marks (%d) and queue clocks (%d) are dropped",
                         len(saved.marks), len(saved.leaves))
            return
        if spec.observe_only and saved.marks:
            log.info("preemption is observe-only: the saved marks (%d) are dropped", len(saved.marks))
        latest = now + RESTORE_WINDOW_S
        for m in () if spec.observe_only else saved.marks:
            if m.container_id not in self.marks:
                self.awaiting_marks[m.container_id] = SavedMark(
                    m.container_id, m.node_id, m.app_id, m.key, m.reason, min(m.marked_at, now),
                    min(m.deadline, now + spec.grace_s), _until(m.waiting_until, latest))
        for leaf in saved.leaves:
            if leaf.path not in self.queues:
                self.awaiting_leaves[leaf.path] = SavedLeaf(
                    leaf.path, _not_after(leaf.below_fair_since, now), _not_after(leaf.below_min_since, now),
                    leaf.starved, _until(leaf.waiting_until, latest))
        self.take_back(now)

    def take_back(self, now: float) -> None:
        """Restored items whose time is up are dropped; then the restored marks whose container
        runs again on its node, for a request its app has again, become marks (their node held
        for the request, their AM told again unless the deadline has passed: then the next plan
        kills them). Rounds do it first; a caller may do it between rounds, so a mark comes back
        as soon as YARN shows it (nothing to do while nothing waits). (Leaves are taken back
        where their clocks are read: _watch.)"""
        if not (self.awaiting_marks or self.awaiting_leaves):
            return
        core = self.core
        expired = [cid for cid, m in self.awaiting_marks.items() if _past(m.waiting_until, now)]
        for cid in expired:
            del self.awaiting_marks[cid]
        gone = [path for path, leaf in self.awaiting_leaves.items() if _past(leaf.waiting_until, now)]
        for path in gone:
            del self.awaiting_leaves[path]
        self.counters["restore_dropped"] += len(expired) + len(gone)
        for cid, saved in list(self.awaiting_marks.items()):
            c = core.containers.get(cid)
            app = core.apps.get(saved.app_id)
            req = app.requests.get(saved.key) if app is not None else None
            if c is None or app is None or req is None:
                continue  # not back yet
            del self.awaiting_marks[cid]
            node = c.node
            if node.id != saved.node_id or (node.reserved is not None and node.reserved is not req) \
                    or c.app.queue is app.queue or not _preemptable(c.app.queue):
                # not the mark it was (a record from elsewhere), or its node now serves another request
                self.counters["restore_dropped"] += 1
                continue
            victim = Victim(cid, c.app.id, node.id, c.app.queue.path, app.queue.path, saved.reason,
                            core.types.to_dict(c.resources), is_am(c), c.started, saved.marked_at, saved.deadline)
            self.marks[cid] = _Mark(victim, req, node)
            self.counters["restored"] += 1
            if node not in self.holds:
                node.reserved = req
                core.hold_changes.add(node)
                if req.reserved_node is None:
                    req.reserved_node = node
                self.holds[node] = _Hold(req, 1)  # the round's settling sizes it to the room
            if saved.deadline > now + _EPS:
                self.retold.append(victim)
        self._set_next_kill()

    def report(self, now: float) -> dict:
        """The state as plain data for status pages: settings, counters, and per queue (those with
        something to say) whether it starves and since when, its target, and the containers
        marked (observe-only: planned) from it and for it, at and below it."""
        spec = self.core.config.preemption
        victims = self.observed or tuple(m.victim for m in self.marks.values())
        queues: dict[str, dict] = {}

        def entry(path: str) -> dict:
            return queues.setdefault(path, {"starved": None, "starved_for_s": None, "below_target_for_s": None,
                                            "share": None, "target_share": None, "victims": 0, "incoming": 0,
                                            "planned": []})

        for path, state in self.queues.items():
            e = entry(path)
            since = state.since
            e.update(starved=state.starved, share=round(state.share, 6), target_share=round(state.target, 6),
                     below_target_for_s=None if since is None else round(now - since, 3))
            e["starved_for_s"] = e["below_target_for_s"] if state.starved else None
        for v in victims:
            for path in _paths_up(v.queue):
                entry(path)["victims"] += 1
            for path in _paths_up(v.for_queue):
                entry(path)["incoming"] += 1
            planned = entry(v.queue)["planned"]
            if len(planned) < REPORTED_VICTIMS:
                planned.append({"container": v.container_id, "app": v.app_id, "node": v.node_id,
                                "for_queue": v.for_queue, "reason": v.reason, "am": v.am,
                                "kill_in_s": round(v.deadline - now, 3)})
        return {"enabled": spec.enabled, "observe_only": spec.observe_only, "counters": dict(self.counters),
                "work_lost_container_s": round(self.killed_seconds, 3), "queues": queues,
                "restoring": {"marks": len(self.awaiting_marks), "queues": len(self.awaiting_leaves)}}

    # ------------------------------------------------------------------ the marks' lifecycle

    def _settle(self, now: float, goals: dict[str, float]) -> None:
        """Forgets ended containers; keeps each node with marks held for their request (again,
        if its reservation served one container and more are coming) for as many containers as
        the room will hold once its victims are gone and the request still wants (_trim), or
        cancels its marks when that room is no longer wanted (the request went away or was
        served elsewhere, room came free on its own, another took the node)."""
        containers = self.core.containers
        for cid, mark in list(self.marks.items()):
            c = containers.get(cid)
            if c is None or c.node is not mark.node:
                del self.marks[cid]
                if not mark.killed:
                    self.counters["released"] += 1
        draining = {m.node for m in self.marks.values()}
        for node in list(self.holds):
            hold = self.holds[node]
            req = hold.request
            wanted = node in draining and self.core.nodes.get(node.id) is node and _live(self.core, req)
            hold.containers = self._fitting(node, req, frozenset()) if wanted else 0
            if hold.containers and node.reserved is None:
                node.reserved = req  # it served one container; the node stays held for the rest
                self.core.hold_changes.add(node)
            if not hold.containers or node.reserved is not req:
                del self.holds[node]
        self._trim(now, goals)
        for cid, mark in list(self.marks.items()):
            hold = self.holds.get(mark.node)
            if not mark.killed and (hold is None or hold.request is not mark.request):
                del self.marks[cid]
                self.counters["cancelled"] += 1

    def _trim(self, now: float, goals: dict[str, float]) -> None:
        """Lets off the marks not yet killed whose room is no longer needed: per request, the
        containers its held nodes will hold count only as far as it still asks for them and its
        leaf stays at or below its target with them (usage counts what it got elsewhere since);
        of those, the room its held nodes have without the waiting marks (come free since, or a
        kill is done) counts first, the rest is left to the marks of the cheapest nodes (_cost);
        on each node the most protected victims are let off first. A node left with nothing to
        hold is let go."""
        cap = self.core.capacity
        by_request: dict[Request, list[Node]] = {}
        for node, hold in self.holds.items():
            by_request.setdefault(hold.request, []).append(node)
        waiting: dict[Node, list[Container]] = {}
        for cid, mark in self.marks.items():
            if not mark.killed:
                waiting.setdefault(mark.node, []).append(self.core.containers[cid])
        gained: dict[str, Vector] = {}
        for req, nodes in by_request.items():
            leaf = req.app.queue
            wanted, held = 0, min(req.count, sum(self.holds[n].containers for n in nodes))
            while wanted < held and _may_gain([leaf], req.capability, gained, goals, cap):
                wanted += 1
                _add_up(gained, [leaf], req.capability)
            free = {n: self._fitting(n, req, (), exclude=waiting.get(n, ())) for n in nodes}
            wanted -= sum(free.values())
            for node in sorted((n for n in nodes if n in waiting), key=lambda n: _cost(waiting[n], now, self.core.containers)):
                hold = self.holds[node]
                need = min(hold.containers, free[node] + max(0, wanted))
                wanted -= need - free[node]
                let_off: list[Container] = []
                for c in sorted(waiting[node], key=_victim_order, reverse=True):
                    if self._fitting(node, req, (), exclude=[*let_off, c]) >= need:
                        let_off.append(c)
                        del self.marks[c.id]
                        self.counters["cancelled"] += 1
                hold.containers = need
                if not need:
                    del self.holds[node]
                    if node.reserved is req:
                        self._let_go(node)

    def _let_go(self, node: Node) -> None:
        """Ends the node's hold for its request (which may have other nodes held for it)."""
        req = node.reserved
        if req is not None and req.reserved_node is node:
            self.core.unreserve(node)
        node.reserved = None
        self.core.hold_changes.add(node)

    def _fitting(self, node: Node, req: Request, marked: Iterable[str], gone: Iterable[Container] = (),
                 exclude: Iterable[Container] = ()) -> int:
        """How many containers of `req` fit on `node` once its marked containers (and `marked`,
        and `gone`) are released; on a node with GPU cards by the card rule, so a victim whose
        memory is on another card than the request could use makes no room (scheduler.cards)."""
        marked = set(marked)
        kept = {c.id for c in exclude}
        released = [c for c in _on(node, self.core.containers)
                    if (c.id in self.marks or c.id in marked) and c.id not in kept]
        released += [c for c in gone if c.id not in self.marks and c.id not in marked]
        room = vsub(node.capacity, node.allocated)
        for c in released:
            room = vadd(room, c.resources)
        n = _count_fitting(req.capability, room)
        cards = node.cards
        if cards is None or not n:
            return n
        i = cards.index
        return min(n, cards.count_fitting(req.capability[i], [(c.cards, c.resources[i]) for c in released]))

    def _due(self, now: float) -> tuple[Victim, ...]:
        due = []
        for mark in self.marks.values():
            if not mark.killed and now >= mark.victim.deadline - _EPS:
                mark.killed = True
                mark.lost_s = max(0.0, now - mark.victim.started)
                due.append(mark.victim)
                self.counters["killed"] += 1
                self.killed_seconds += mark.lost_s
        if due:
            log.info("preemption: killing %d container(s): %s", len(due), ", ".join(v.container_id for v in due))
        return tuple(due)

    def _drop_all(self) -> None:
        """Cancels every mark not yet killed, lets every held node go, and forgets what was
        restored and still waits."""
        for node, hold in self.holds.items():
            if node.reserved is hold.request:
                self.core.unreserve(node)
        self.holds.clear()
        self.awaiting_marks.clear()
        self.retold = []
        self.counters["cancelled"] += sum(not m.killed for m in self.marks.values())
        self.marks = {cid: m for cid, m in self.marks.items() if m.killed}
        self.next_kill = float("inf")

    # ------------------------------------------------------------------ who starves

    def _watch(self, now: float, goals: dict[str, float]) -> list[Queue]:
        """Updates each leaf's starvation clocks; the starved leaves, most starved first."""
        spec = self.core.config.preemption
        cap = self.core.capacity
        seen: dict[str, Starvation] = {}
        ranked = []
        self.next_starved = float("inf")
        for q in self.core.queues.values():
            goal = goals.get(q.path)
            if not q.is_leaf or goal is None:
                continue
            requests = _fitting_requests(self.core, q)
            if not requests:
                continue
            share = dominant_share(q.usage, cap)
            was = self.queues.get(q.path) or self._restored_clock(q.path, now)
            state = Starvation(share, goal)
            # A leaf the last round did not see (it had no demand there) has been below since its
            # demand came, not since this round: the clocks do not lose up to a round to the timer.
            began = now if was is not None else max(min(r.since for r in requests), -math.inf if self.last_round is None else self.last_round)
            if share < spec.threshold * goal - _EPS:
                state.below_fair_since = was.below_fair_since if was and was.below_fair_since is not None else began
            if _below_min(q, q.usage):
                state.below_min_since = was.below_min_since if was and was.below_min_since is not None else began
            min_at = math.inf if state.below_min_since is None else state.below_min_since + spec.min_share_timeout_s
            fair_at = math.inf if state.below_fair_since is None else state.below_fair_since + spec.fair_share_timeout_s
            if now >= min_at - _EPS:
                state.starved = MIN
            elif now >= fair_at - _EPS:
                state.starved = FAIR
            elif was is not None and was.starved and share < goal - _EPS:
                # restored to its target, not just past the threshold (or its min)
                state.starved, state.below_fair_since = was.starved, was.since
            seen[q.path] = state
            if state.starved and not (was is not None and was.starved):
                log.info("preemption: %s starved (%s): share %.6f, target %.6f, below since %.3f",
                         q.path, state.starved, share, goal, state.since)
            if state.starved:
                ranked.append((state.starved != MIN, share / goal if goal else 0.0,
                               q.path, q))
            else:
                self.next_starved = min(self.next_starved, min_at, fair_at)
        self.queues = seen
        self.restoring = bool(ranked)
        return [q for *_, q in sorted(ranked)]

    def _restored_clock(self, path: str, now: float) -> Starvation | None:
        """A leaf's clocks from a core before this one, taken back now that it has demand again."""
        leaf = self.awaiting_leaves.pop(path, None)
        if leaf is None:
            return None
        state = Starvation(0.0, 0.0, leaf.below_fair_since, leaf.below_min_since, leaf.starved)
        since = now if state.since is None else state.since
        log.info("preemption: %s goes on%s from before: below its target for %.1f s", path,
                 f" starving ({leaf.starved})" if leaf.starved else "", now - since)
        return state

    # ------------------------------------------------------------------ the plan

    def _plan(self, starved: list[Queue], goals: dict[str, float], now: float, commit: bool) -> tuple[Victim, ...]:
        core = self.core
        acc = self._in_flight()
        new: list[Victim] = []
        budget = core.config.preemption.max_per_round
        for leaf, with_am in [(leaf, False) for leaf in starved] + [(leaf, True) for leaf in starved]:
            reason = self.queues[leaf.path].starved  # (AMs only once no other container will do)
            for req in _fitting_requests(core, leaf):
                if dominant_share(acc.taken, core.capacity) >= budget - _EPS:
                    return self._planned(new, commit)
                for node, victims in self._fill(req, acc, goals, with_am, now).items():
                    new.extend(self._take(node, req, victims, reason, acc, now, commit))
        return self._planned(new, commit)

    @staticmethod
    def _planned(new: list[Victim], commit: bool) -> tuple[Victim, ...]:
        if new:
            log.info("preemption: %s %d container(s): %s", "marked" if commit else "would mark", len(new),
                     ", ".join(f"{v.container_id} ({v.queue} -> {v.for_queue})" for v in new))
        return tuple(new)

    def _in_flight(self) -> _Round:
        """What is on its way: marked containers (lost to their queues) and held nodes, plus
        nodes reserved for a request that fits there now (served at their next heartbeat)."""
        core = self.core
        acc = _Round(taken=core.types.zero)
        for cid, mark in self.marks.items():
            c = core.containers[cid]
            _add_up(acc.lost, _below_common(c.app.queue, mark.request.app.queue), _loss(c))
        for node, hold in self.holds.items():
            acc.held[node] = hold.containers
        for node in core.nodes.values():
            req = node.reserved
            if req is not None and node not in self.holds and fits(req.capability, _free_now(node)):
                # all it has room for: after a kill its room is several containers, not one
                acc.held[node] = max(1, min(req.count, self._fitting(node, req, ())))
        for node, held in acc.held.items():
            req = node.reserved
            _add_up(acc.gained, req.app.queue.ancestors_and_self(), tuple(v * held for v in req.capability))
            acc.asked[req] = acc.asked.get(req, 0) + held
        return acc

    def _nodes_for(self, req: Request) -> list[Node]:
        """Nodes that could hold `req` and are not held for another request, in the core's order."""
        app = req.app
        out = []
        for node in self.core.nodes.values():
            if node.reserved is not None and node.reserved is not req:
                continue
            if app.blacklist and (node.id in app.blacklist or node.rack in app.blacklist):
                continue
            if req.allows(node) and node.holds(req.capability):
                out.append(node)
        return out

    def _fill(self, req: Request, acc: _Round, goals: dict[str, float], with_am: bool,
              now: float) -> dict[Node, list[Container]]:
        """Victims for as many more containers of `req` as the rules allow, one container's room
        at a time (each by _victims), each time on the node whose next victims cost the least
        (_cost: AMs last, less important first, then the least work lost), not in node order:
        the youngest containers anywhere go before older ones. Then, per node, only the victims
        without which fewer containers would fit there. Counted in `acc` as they are taken (and
        uncounted if let off)."""
        core = self.core
        leaf = req.app.queue
        picked: dict[Node, list[Container]] = {}
        # The strict rule first; the whole-container rule (_may_lose) only for the containers of
        # `req` for which no node has victims by the strict rule.
        for whole in (None, core.config.preemption.threshold):
            self._pick(req, acc, goals, with_am, now, whole, picked)
        # One container at a time can leave a remainder that a later victim completes: a victim
        # whose room the others' remainders make up is let off (the most protected first).
        for node, victims in picked.items():
            need = acc.held.get(node, 0)
            for c in sorted(victims, key=_victim_order, reverse=True):
                if self._fitting(node, req, acc.marked - {c.id}) >= need:
                    victims.remove(c)
                    self._count(acc, c, leaf, vsub)
        return {node: victims for node, victims in picked.items() if victims}

    def _pick(self, req: Request, acc: _Round, goals: dict[str, float], with_am: bool, now: float,
              whole: float | None, picked: dict[Node, list[Container]]) -> None:
        """_fill's loop under one victim rule (`whole`: see _may_lose), adding to `picked`."""
        core = self.core
        leaf, cap, budget = req.app.queue, core.capacity, core.config.preemption.max_per_round

        def wanted() -> bool:
            return acc.asked.get(req, 0) < req.count and dominant_share(acc.taken, cap) < budget - _EPS \
                and _may_gain([leaf], req.capability, acc.gained, goals, cap)

        if not wanted():
            return
        # Each node by a bound of what its victims cost (the cheapest container it could give),
        # its victims worked out when it comes first.
        queue = [(bound, i, node) for i, node in enumerate(self._nodes_for(req))
                 if (bound := self._cheapest(node, leaf, with_am, now)) is not None]
        heapq.heapify(queue)
        while queue and wanted():
            order, i, node = heapq.heappop(queue)
            victims = self._victims(node, req, acc, goals, with_am, whole)
            if victims is None:
                continue
            cost = _cost(victims, now, core.containers)
            if cost > order:  # more than its bound (or than last time): back in line by what it is
                heapq.heappush(queue, (cost, i, node))
                continue
            if dominant_share(vadd(acc.taken, _total(victims, core.types.zero)), cap) > budget + _EPS:
                continue  # too much for this round; a smaller set elsewhere may still do
            for c in victims:
                self._count(acc, c, leaf, vadd)
            picked.setdefault(node, []).extend(victims)
            acc.asked[req] = acc.asked.get(req, 0) + 1
            acc.held[node] = acc.held.get(node, 0) + 1
            _add_up(acc.gained, leaf.ancestors_and_self(), req.capability)
            heapq.heappush(queue, (order, i, node))

    def _cheapest(self, node: Node, leaf: Queue, with_am: bool, now: float) -> tuple | None:
        """The least _cost of one container on `node` another queue could give up, before the
        targets are asked (None: none): at most what any set of victims there costs."""
        containers = self.core.containers
        costs = [_cost((c,), now, containers) for c in _on(node, containers)
                 if c.app.queue is not leaf and c.id not in self.marks and (with_am or not is_am(c))]
        return min(costs, default=None)

    @staticmethod
    def _count(acc: _Round, c: Container, leaf: Queue, change) -> None:
        """Counts `c` as taken for `leaf` this round (change: vadd), or no longer (vsub)."""
        chain = _below_common(c.app.queue, leaf)
        for a in chain:
            acc.lost[a.path] = change(acc.lost.get(a.path, tuple(0 for _ in c.resources)), _loss(c))
        acc.taken = change(acc.taken, _loss(c))
        (acc.marked.add if change is vadd else acc.marked.discard)(c.id)

    def _victims(self, node: Node, req: Request, acc: _Round, goals: dict[str, float],
                 with_am: bool, whole: float | None) -> list[Container] | None:
        """The fewest containers on `node` whose release makes room for one more container of
        `req` (beyond those it is held for), by the victim order, each allowed by the targets
        (by the rule `whole` names: _may_lose); None if no such set exists (nothing is taken)."""
        core = self.core
        held = acc.held.get(node, 0)
        if self._fitting(node, req, acc.marked) > held:
            return None  # the room is there: the decision gives it, no kill needed
        leaf, cap = req.app.queue, core.capacity
        candidates = sorted((c for c in _on(node, core.containers)
                             if c.id not in self.marks and c.id not in acc.marked and (with_am or not is_am(c))),
                            key=_victim_order)
        taken: list[Container] = []
        for c in candidates:
            q = c.app.queue
            if q is leaf or not _preemptable(q) or not _may_lose(q, leaf, _loss(c), acc.lost, goals, cap, whole) \
                    or not _may_gain(_below_common(leaf, q), req.capability, acc.gained, goals, cap):
                continue
            taken.append(c)
            if self._fitting(node, req, acc.marked, taken) > held:
                break
        else:
            return None
        # The first ones in the order may have been too small to matter once later ones came.
        for c in reversed(taken[:-1]):
            if self._fitting(node, req, acc.marked, [t for t in taken if t is not c]) > held:
                taken.remove(c)
        lost = dict(acc.lost)
        for c in taken:  # each was allowed alone; together, too?
            if not _may_lose(c.app.queue, leaf, _loss(c), lost, goals, cap, whole):
                return None
            _add_up(lost, _below_common(c.app.queue, leaf), _loss(c))
        return taken

    def _take(self, node: Node, req: Request, victims: list[Container], reason: str, acc: _Round, now: float,
              commit: bool) -> list[Victim]:
        """The victims as plan items; with `commit`, marked, and the node held for `req`."""
        core = self.core
        leaf = req.app.queue
        deadline = now + core.config.preemption.grace_s
        out = [Victim(c.id, c.app.id, node.id, c.app.queue.path, leaf.path, reason, core.types.to_dict(c.resources),
                      is_am(c), c.started, now, deadline) for c in victims]
        if commit:
            for c, v in zip(victims, out):
                self.marks[c.id] = _Mark(v, req, node)
            self.counters["marked"] += len(out)
            node.reserved = req  # the core's reservation: nothing else starts here until req fits
            core.hold_changes.add(node)
            if req.reserved_node is None:
                req.reserved_node = node
            self.holds[node] = _Hold(req, acc.held[node])
        return out


# ---------------------------------------------------------------------------- the rules


def _until(saved: float | None, latest: float) -> float:
    return latest if saved is None else min(saved, latest)


def _not_after(t: float | None, now: float) -> float | None:
    return None if t is None else min(t, now)


def _past(until: float | None, now: float) -> bool:
    return until is not None and now >= until


def _live(core: PlannedCore, req: Request) -> bool:
    """The request still asks for containers of a runnable app the core has."""
    app = req.app
    return bool(req.count) and core.apps.get(app.id) is app and app.runnable and app.requests.get(req.key) is req


def _fitting_requests(core: PlannedCore, leaf: Queue) -> list[Request]:
    """The leaf's pending requests that fit some node within its (and its parents') max, and AMs
    within its max-am-share, in the order the decision serves them (apps by key, requests by key)."""
    return [req for app in apps_in_order(leaf) if app.runnable for req in app.pending
            if core.is_placeable(req.capability) and within_max(req.capability, leaf)
            and (not req.am or am_room(leaf, req.capability))]


def _victim_order(c: Container) -> tuple:
    """AM containers last; then YARN's less important (higher priority number); younger first."""
    priority = c.key[0] if c.key else 0
    return is_am(c), -priority, -c.started, c.id


def _cost(victims: Iterable[Container], now: float, containers: dict[str, Container]) -> tuple:
    """What taking `victims` together costs, to choose between nodes: an AM among them, then the
    most important priority among them (as in _victim_order), then the work their kills lose (an
    AM's: its app's containers' too)."""
    protected = max((is_am(c), -(c.key[0] if c.key else 0)) for c in victims)
    lost = 0.0
    for c in victims:
        for x in map(containers.get, c.app.containers) if is_am(c) else (c,):
            lost += 0.0 if x is None else now - x.started
    return protected, lost


def _loss(c: Container) -> Vector:
    """What taking `c` takes from its queue: an AM takes its app's containers with it (YARN ends
    an attempt's containers with its AM, unless the app keeps them across attempts, which the
    core is not told), so an AM is taken only if its queue can lose the whole app."""
    return c.app.usage if is_am(c) else c.resources


def _preemptable(q: Queue) -> bool:
    return all(a.spec.preemptable for a in q.ancestors_and_self())


def _below_common(q: Queue, other: Queue) -> list[Queue]:
    """q and its ancestors below the lowest queue it shares with `other`."""
    shared = set(other.ancestors_and_self())
    return [a for a in q.ancestors_and_self() if a not in shared]


def _may_lose(q: Queue, leaf: Queue, amount: Vector, lost: dict[str, Vector], goals: dict[str, float],
              cap: Vector, whole: float | None) -> bool:
    """Whether q may lose `amount` (one victim) on top of what is marked already. Never below the
    `min` of q or of any of those ancestors. Strict rule
    (`whole` None): q and its ancestors below the queue shared with `leaf` stay at or above their
    targets. Whole-container rule (`whole`: the threshold; used only for a container of a
    request no node has strict victims for): each of them that goes below its target was at or
    above it before this loss, and stays not starved: at or above `whole` x its target and not
    below its `min`.

    Why: targets are pooled (fluid) shares and containers are whole. A queue holding the cluster
    in 2 GB tasks, with a pooled target 1 GB short of all of it, could lose no task by the strict
    rule, so a late queue asking only for a 1 GB AM would wait for ever where no node has a 1 GB
    hole. By the second rule a queue goes below its target by less than one of its containers
    (it was at its target before) and only once (below it, it may lose nothing more); not
    starved, it never preempts back, so there are no cycles."""
    for a in _below_common(q, leaf):
        goal = goals.get(a.path)
        if goal is None:
            return False
        before = vsub(a.usage, lost[a.path]) if a.path in lost else a.usage
        after = vsub(before, amount)
        share = dominant_share(after, cap)
        if _below_min(a, after):
            return False  # (even at its target: a target from other demand may sit below the min)
        if share >= goal - _EPS:
            continue
        if whole is None or dominant_share(before, cap) < goal - _EPS or share < whole * goal - _EPS:
            return False
    return True


def _may_gain(queues: list[Queue], amount: Vector, gained: dict[str, Vector], goals: dict[str, float],
              cap: Vector) -> bool:
    """Each of `queues` stays at or below its target after gaining `amount` on top of the held requests."""
    for a in queues:
        after = vadd(a.usage, amount)
        if a.path in gained:
            after = vadd(after, gained[a.path])
        goal = goals.get(a.path)
        if goal is None or dominant_share(after, cap) > goal + _EPS:
            return False
    return True


def _below_min(q: Queue, usage: Vector) -> bool:
    """Below its `min` (dominant: no resource at its min), as a queue starves by min-share-timeout-s."""
    return q.min_inv is not None and max(u * i for u, i in zip(usage, q.min_inv)) < 1.0


def _add_up(totals: dict[str, Vector], queues: Iterable[Queue], amount: Vector) -> None:
    for a in queues:
        known = totals.get(a.path)
        totals[a.path] = amount if known is None else vadd(known, amount)


def _paths_up(path: str) -> list[str]:
    """path and its ancestors' paths, up to root."""
    parts = path.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


def _free_now(node: Node) -> Vector:
    """The node's free room as the core's fit tests see it (with cards: what one container can get)."""
    free = vsub(node.capacity, node.allocated)
    return free if node.cards is None else node.cards.room(free)


def _count_fitting(shape: Vector, room: Vector) -> int:
    """How many containers of `shape` fit in `room`."""
    if not fits(tuple(0 for _ in room), room):
        return 0
    return min((r // s for r, s in zip(room, shape) if s), default=0)


def _total(containers: list[Container], zero: Vector) -> Vector:
    total = zero
    for c in containers:
        total = vadd(total, _loss(c))
    return total


def _on(node: Node, containers: dict[str, Container]) -> list[Container]:
    """The node's containers this core counts: a node of a non-exclusive partition may also run
    containers the default partition's core counts (scheduler.partitions), not this one's to take."""
    return [containers[cid] for cid in node.containers if cid in containers]
