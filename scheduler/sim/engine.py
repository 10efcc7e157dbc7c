"""The discrete-event simulator: the production SchedulerCore on a simulated clock.

It drives the core exactly as the ResourceManager bridge does: add_node, submit_app,
update_request with absolute outstanding counts, on_heartbeat(node, now) once per node
heartbeat, container_finished. Containers start on their node's heartbeat (the assignment id is
the container id); a finished container is reported on its node's first heartbeat at or after
its end, as a NodeManager reports it.

Heartbeats: node i beats at offset_i + k * H_i, its own phase and period (offset in [0, H) and
H_i within 1 % of H, both drawn from the seed), so nodes are staggered and their order drifts
as real NodeManagers' does: the node that first sees a new ask differs from one submit to the
next even when submits fall on whole seconds. While no app has an outstanding ask, a heartbeat cannot produce an assignment, so
the engine then only runs the heartbeats of nodes that have finished containers to report
(`skip_idle`); as soon as anything is outstanding every node beats again. Likewise, with
reservations off, a node whose free room fits none of the outstanding ask shapes, and that the
core holds no reservation on, would get nothing from the core: its heartbeat only reports
finished containers and the core is not called. A test checks that these shortcuts change no
result.
"""
from __future__ import annotations

import heapq
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from operator import le
from typing import Any

from scheduler import SchedulerCore
from scheduler.cards import GPU_MEM, Cards
from scheduler.config import QueueConfig
from scheduler.sim.formats import AppSpec, ClusterSpec, SimInputError
from scheduler.sim.policies import PolicySetup
from scheduler.sim.stats import LatencyHistogram
from scheduler.targets import TargetInput

_EPS = 1e-9
AM_PRIORITY = 0
DRIFT = 0.01  # a node's heartbeat period is within this fraction of the configured interval


@dataclass
class _App:
    spec: AppSpec
    queue: str                 # the queue results are reported under
    stage: int = -1            # -1: waiting for its AM; len(stages): done
    pending: int = 0           # outstanding asks of the current step
    priority: int = AM_PRIORITY
    ask: tuple[int, ...] = ()       # the ask over the real resource types
    core_ask: tuple[int, ...] = ()  # the ask as the core sees it (with policy extras)
    running: int = 0           # task containers of the current stage still running
    left: int = 0              # tasks of the current stage not yet finished
    am_container: str | None = None
    resume: int = 0            # the stage its AM starts (again, after a preempted AM: the one it was in)
    start: float | None = None
    finish: float | None = None


@dataclass
class _Container:
    app: _App
    node: int
    vector: tuple[int, ...]
    core_vector: tuple[int, ...]
    is_am: bool
    start: float


@dataclass
class Timeline:
    """State sampled every `interval` seconds of simulated time, for plots; each queue's targets
    (scheduler.targets: a replay, so costlier) every `target_interval` seconds."""

    interval: float
    target_interval: float | None = None
    times: list[float] = field(default_factory=list)
    shares: dict[str, list[float]] = field(default_factory=dict)
    utilization: dict[str, list[float]] = field(default_factory=dict)
    target_times: list[float] = field(default_factory=list)
    targets: dict[str, list[float]] = field(default_factory=dict)  # reachable dominant-share target
    pooled: dict[str, list[float]] = field(default_factory=dict)  # pooled dominant-share target


class Simulation:
    """One run of a workload on a cluster under one policy."""

    def __init__(self, setup: PolicySetup, label_config: QueueConfig, cluster: ClusterSpec,
                 apps: Sequence[AppSpec], *, heartbeat_s: float = 1.0, until: float | None = None,
                 seed: int = 0, skip_idle: bool = True, sample_s: float | None = None,
                 target_s: float | None = None, progress: Callable[[float], None] | None = None,
                 scales: dict[str, int] | None = None) -> None:
        if heartbeat_s <= 0:
            raise SimInputError([f"heartbeat interval must be > 0 s, got {heartbeat_s}"])
        self.setup = setup
        self.types = tuple(setup.resource_types)
        self.real_types = tuple(t for t in self.types if t not in setup.node_extra)
        self.heartbeat = heartbeat_s
        self.until = until
        self.skip_idle = skip_idle
        self.progress = progress
        self.scales = scales or {}  # types simulated in thousandths (scheduler.sim.units)
        self.now = 0.0
        self.core = SchedulerCore(setup.config, resource_types=list(self.types),
                                  policy=setup.core_policy, clock=lambda: self.now)
        # Apps are placed (and ACL-checked) by the configuration as written, so every policy
        # reports the same app under the same queue, even fifo whose core has a single queue.
        self.placer = (None if setup.submit_queue is None else
                       SchedulerCore(label_config, resource_types=list(self.types), policy="drf",
                                     clock=lambda: self.now))
        self.label_config = label_config
        self.cluster = cluster
        self.apps = list(apps)
        rng = random.Random(seed)
        self.node_names = [n.name for n in cluster.nodes]
        self.offsets = [rng.uniform(0.0, heartbeat_s) for _ in cluster.nodes]
        self.periods = [heartbeat_s * (1.0 + rng.uniform(-DRIFT, DRIFT)) for _ in cluster.nodes]
        self.beats: list[tuple[float, int, int]] = []  # (time, node, beat number): every node, while busy
        self.capacity = tuple(sum(n.resources.get(t, 0) for n in cluster.nodes) for t in self.real_types)
        self._check_fit()

        self.states: dict[str, _App] = {}
        self.submits: list[tuple[float, int, AppSpec]] = [(a.submit, i, a) for i, a in enumerate(self.apps)]
        heapq.heapify(self.submits)
        self.submit_seq = len(self.apps)
        self.copies: dict[str, int] = {}
        self.containers: dict[str, _Container] = {}
        self.node_finish: list[list[tuple[float, str]]] = [[] for _ in cluster.nodes]
        self.report_heap: list[tuple[float, int]] = []   # (report time, node), idle mode only
        self.running_tasks = 0
        self.last_beat = [-1.0] * len(cluster.nodes)
        self.node_free = [[{**n.resources, **setup.node_extra}.get(t, 0) for t in self.types]
                          for n in cluster.nodes]
        self.pending_shapes: Counter = Counter()   # core ask vector -> outstanding count
        self.pending_total = 0
        self.rejected: list[dict[str, Any]] = []
        self.queue_alloc: dict[str, list[int]] = {}
        self.queue_running: dict[str, int] = {}
        self.queue_tasks_done: dict[str, int] = {}
        self.alloc = [0] * len(self.real_types)
        self.area = [0.0] * len(self.real_types)
        self.area_t = 0.0
        self.latency = LatencyHistogram()
        self.counters = {"events": 0, "heartbeats": 0, "heartbeats_idle": 0, "heartbeats_full": 0,
                         "decisions": 0,
                         "assignments": 0, "containers_finished": 0, "excess_assignments": 0,
                         "submits": 0}
        # Targets need the queues the core decides by: not for policies that relabel them (fifo, slots).
        self.timeline = Timeline(sample_s, target_s if setup.submit_queue is None else None) if sample_s else None
        self.stalled = False
        # Preemption rounds (scheduler.preemption) every heartbeat interval, while anything is asked for.
        self.preempting = setup.config.preemption.enabled
        self.next_round = 0.0
        self.preemption = {"rounds": 0, "told": 0, "killed": 0, "work_lost_container_s": 0.0}
        for queue in label_config.queues().values():
            if queue.is_leaf:
                self._queue(queue.path)

    # ------------------------------------------------------------------ setup

    def _check_fit(self) -> None:
        """An ask no node can ever hold would wait forever: refuse it up front."""
        types = self.real_types
        nodes = []
        for n in self.cluster.nodes:
            vec = tuple(n.resources.get(t, 0) for t in types)
            cards = Cards(n.cards, types.index(GPU_MEM), vec) if n.cards and GPU_MEM in types else None
            nodes.append((vec, cards))
        errors = []
        for app in self.apps:
            asks = [("am", app.am)] if app.am else []
            asks += [(f"stages[{i}].resources", s.resources) for i, s in enumerate(app.stages)]
            for what, res in asks:
                vec = tuple(res.get(t, 0) for t in types)
                if not any(all(a <= c for a, c in zip(vec, node)) and (cards is None or cards.holds(vec))
                           for node, cards in nodes):
                    errors.append(f"app {app.id} (workload line {app.line}): {what} {self._shown(res)} "
                                  "does not fit on any node of the cluster"
                                  + (" (a GPU card must hold its gpu-mem)" if any(c for _, c in nodes) else ""))
        if errors:
            raise SimInputError(errors)

    def _queue(self, name: str) -> None:
        if name not in self.queue_alloc:
            self.queue_alloc[name] = [0] * len(self.real_types)
            self.queue_running[name] = 0
            self.queue_tasks_done[name] = 0

    def _shown(self, res: dict[str, int]) -> dict[str, int | float]:
        """An amount as the input gave it (a type simulated in thousandths divided back)."""
        return {k: v / self.scales[k] if k in self.scales else v for k, v in res.items()}

    def _vector(self, res: dict[str, int]) -> tuple[int, ...]:
        return tuple(res.get(t, 0) for t in self.real_types)

    def _core_ask(self, res: dict[str, int], is_am: bool) -> dict[str, int]:
        if not self.setup.container_extra or is_am:
            return res
        return {**res, **self.setup.container_extra}

    # ------------------------------------------------------------------ the clock

    def _advance(self, t: float) -> None:
        """Moves the clock to t, integrating utilization and taking timeline samples."""
        if self.timeline is not None:
            tl = self.timeline
            next_sample = len(tl.times) * tl.interval
            while next_sample <= t and (self.until is None or next_sample <= self.until):
                self._sample(next_sample)
                next_sample = len(tl.times) * tl.interval
        dt = t - self.area_t
        if dt > 0:
            area, alloc = self.area, self.alloc
            for j in range(len(alloc)):
                area[j] += alloc[j] * dt
            self.area_t = t
        self.now = t

    def _sample(self, t: float) -> None:
        tl = self.timeline
        if tl.target_interval and (not tl.target_times or t >= tl.target_times[-1] + tl.target_interval):
            self._sample_targets(t)
        tl.times.append(t)
        for q, alloc in self.queue_alloc.items():
            tl.shares.setdefault(q, [0.0] * (len(tl.times) - 1)).append(self._share(alloc))
        for q, series in tl.shares.items():
            if len(series) < len(tl.times):
                series.append(self._share(self.queue_alloc[q]))
        for j, name in enumerate(self.real_types):
            cap = self.capacity[j]
            tl.utilization.setdefault(name, []).append(self.alloc[j] / cap if cap else 0.0)

    def _sample_targets(self, t: float) -> None:
        tl = self.timeline
        tl.target_times.append(t)
        goals = TargetInput(self.core).compute()
        for q in self.queue_alloc:
            goal = goals.get(q)
            tl.targets.setdefault(q, []).append(goal.dominant_share if goal else 0.0)
            tl.pooled.setdefault(q, []).append(goal.pooled_dominant_share if goal else 0.0)

    def _share(self, alloc: Sequence[int]) -> float:
        return max((a / c for a, c in zip(alloc, self.capacity) if c), default=0.0)

    def _beat_number(self, node: int, t: float) -> int:
        """The number of the node's first heartbeat at or after t (beat k is at offset + k * period)."""
        return max(math.ceil((t - self.offsets[node]) / self.periods[node] - _EPS), 0)

    def _beat_time(self, node: int, k: int) -> float:
        return self.offsets[node] + k * self.periods[node]

    def _report_time(self, node: int, t: float) -> float:
        """The node's first heartbeat at or after t."""
        return self._beat_time(node, self._beat_number(node, t))

    def _next_beats(self) -> None:
        """Every node's next heartbeat from now (not one it has just had), for the busy mode."""
        beats = []
        for node in range(len(self.offsets)):
            k = self._beat_number(node, self.now)
            if self.last_beat[node] >= self._beat_time(node, k) - _EPS:
                k += 1
            beats.append((self._beat_time(node, k), node, k))
        heapq.heapify(beats)
        self.beats = beats

    # ------------------------------------------------------------------ the run

    def run(self) -> None:
        started = time.perf_counter()
        for i, node in enumerate(self.cluster.nodes):
            cap = dict(node.resources)
            cap.update(self.setup.node_extra)
            self.core.add_node(node.name, {t: cap.get(t, 0) for t in self.types}, rack=node.rack,
                               cards=node.cards if GPU_MEM in self.types else None)
        submits = self.submits
        cursor_valid = False               # self.beats holds every node's next heartbeat
        self.report_heap = []
        h = self.heartbeat
        until = math.inf if self.until is None else self.until
        idle_since_progress = 0.0
        inf = math.inf
        next_progress = 0.0
        progress_step = max(h, (self.until or max((a.submit for a in self.apps), default=0.0)) / 1000.0)
        while True:
            t_submit = submits[0][0] if submits else inf
            if t_submit == inf and not self.pending_total and not self.containers:
                break  # every app has finished
            busy = self.pending_total > 0 or not self.skip_idle
            if busy:
                if not cursor_valid:
                    self._next_beats()
                    cursor_valid = True
                t_beat = self.beats[0][0]
            else:
                if cursor_valid:
                    self._build_report_heap()
                    cursor_valid = False
                heap = self.report_heap
                while heap and (heap[0][0] < self.now - _EPS or self.last_beat[heap[0][1]] == heap[0][0]):
                    heapq.heappop(heap)
                t_beat = heap[0][0] if heap else inf
            t = t_submit if t_submit <= t_beat else t_beat
            t_round = self._round_time()
            if t_round <= t and t_round <= until:
                self._advance(t_round)
                self._preemption_round()
                continue
            if t == inf or t > until:
                break
            if self.progress is not None and t >= next_progress:
                self.progress(t)
                next_progress = t + progress_step
            self._advance(t)
            self.counters["events"] += 1
            if t_submit <= t_beat:
                _, _, spec = heapq.heappop(submits)
                self._submit(spec)
                continue
            if busy:
                _, node, beat = self.beats[0]
                heapq.heapreplace(self.beats, (self._beat_time(node, beat + 1), node, beat + 1))
            else:
                _, node = heapq.heappop(self.report_heap)
            assigned = self._beat(node, t)
            # A workload whose asks can never be served (e.g. a queue max below a task size)
            # would keep the clock running forever: stop once nothing runs, nothing is due,
            # and a whole reservation timeout of heartbeats assigned nothing.
            if assigned or self.running_tasks or submits:
                idle_since_progress = t
            elif self.pending_total and t - idle_since_progress > self._stall_limit():
                self.stalled = True
                break
            if not busy and self.pending_total <= 0 and self.node_finish[node]:
                heapq.heappush(self.report_heap, (self._report_time(node, self.node_finish[node][0][0]), node))
            # (asks that appear in an idle-mode heartbeat make every node beat again from the next
            # loop on: the busy mode's heap is built then, without this node's beat just done)
        end = self.now if self.until is None else self.until
        self._advance(max(end, self.now))
        self.wall_s = time.perf_counter() - started

    def _round_time(self) -> float:
        """When the next preemption round runs: on the heartbeat grid, while there is demand or a mark."""
        if not self.preempting or not (self.pending_total > 0 or self.core.preemption.marks):
            return math.inf
        if self.next_round < self.now - _EPS:
            self.next_round = math.ceil(self.now / self.heartbeat - _EPS) * self.heartbeat
        return self.next_round

    def _preemption_round(self) -> None:
        """The core's round: its marks are told to their AMs (the simulated AMs keep working until
        the kill, as one that does not checkpoint), its kills end containers at once."""
        plan = self.core.preemption_round(self.now)
        self.next_round = self.now + self.heartbeat
        self.preemption["rounds"] += 1
        self.preemption["told"] += len(plan.mark)
        for victim in plan.kill:
            self._preempt(victim.container_id)

    def _preempt(self, cid: str) -> None:
        """A killed task goes back to its app's pending work; a killed AM takes its attempt's tasks
        with it and the app asks for a new AM, which starts the stage it was in again."""
        c = self._release(cid, "preempted")
        if c is None:
            return
        self.preemption["killed"] += 1
        self._lose(c)
        app = c.app
        if not c.is_am:
            self._task_lost(c)
            self._ask(app, app.priority, app.spec.stages[app.stage].resources, app.pending + 1)
            return
        for other, running in list(self.containers.items()):
            if running.app is app:
                self._release(other, "killed")
                self._lose(running)
                self._task_lost(running)
        app.am_container, app.resume = None, app.stage
        self._ask(app, app.priority, app.spec.stages[app.stage].resources, 0)
        app.stage = -1
        self._ask(app, AM_PRIORITY, app.spec.am, 1)

    def _lose(self, c: _Container) -> None:
        self.preemption["work_lost_container_s"] += self.now - c.start

    def _task_lost(self, c: _Container) -> None:
        self.running_tasks -= 1
        self.queue_running[c.app.queue] -= 1
        c.app.running -= 1

    def _build_report_heap(self) -> None:
        """Entering idle mode: each node with running tasks beats next when its first one ends."""
        self.report_heap = [(self._report_time(i, fin[0][0]), i)
                            for i, fin in enumerate(self.node_finish) if fin]
        heapq.heapify(self.report_heap)

    def _stall_limit(self) -> float:
        timeout = self.setup.config.starvation_timeout_s or 0.0
        return timeout + 3 * self.heartbeat

    # ------------------------------------------------------------------ events

    def _submit(self, spec: AppSpec) -> None:
        self.counters["submits"] += 1
        now = self.now
        if self.placer is not None:
            placed = self.placer.submit_app(spec.id, spec.user, spec.queue, groups=spec.groups,
                                            priority=spec.priority, now=now)
            self.placer.remove_app(spec.id)
            if not placed.accepted:
                self.rejected.append({"id": spec.id, "queue": spec.queue, "reason": placed.reason})
                return
            label = placed.queue
            placed = self.core.submit_app(spec.id, spec.user, self.setup.submit_queue,
                                          groups=spec.groups, priority=spec.priority, now=now)
        else:
            placed = self.core.submit_app(spec.id, spec.user, spec.queue, groups=spec.groups,
                                          priority=spec.priority, now=now)
            label = placed.queue
        if not placed.accepted:
            self.rejected.append({"id": spec.id, "queue": spec.queue, "reason": placed.reason})
            return
        self._queue(label)
        app = _App(spec, label)
        self.states[spec.id] = app
        if spec.am is not None:
            self._ask(app, AM_PRIORITY, spec.am, 1)
        else:
            self._start_stage(app, 0)

    def _ask(self, app: _App, priority: int, res: dict[str, int], count: int) -> None:
        shapes = self.pending_shapes
        if app.pending:
            self._unshape(app.core_ask, app.pending)
        core_res = self._core_ask(res, priority == AM_PRIORITY)
        app.priority = priority
        app.ask = self._vector(res)
        app.core_ask = tuple(core_res.get(t, 0) for t in self.types)
        self.pending_total += count - app.pending
        app.pending = count
        if count:
            shapes[app.core_ask] += count
        self.core.update_request(app.spec.id, priority, core_res, count, now=self.now, am=priority == AM_PRIORITY)

    def _unshape(self, shape: tuple[int, ...], n: int) -> None:
        left = self.pending_shapes[shape] - n
        if left:
            self.pending_shapes[shape] = left
        else:
            del self.pending_shapes[shape]

    def _start_stage(self, app: _App, index: int) -> None:
        app.stage = index
        if index == len(app.spec.stages):
            self._finish_app(app)
            return
        stage = app.spec.stages[index]
        app.left = stage.tasks
        self._ask(app, index + 1, stage.resources, stage.tasks)

    def _finish_app(self, app: _App) -> None:
        app.finish = self.now
        if app.am_container is not None:
            # The AM unregisters and exits with its last task; its container is freed now.
            self._release(app.am_container, "completed")
            app.am_container = None
        self.core.remove_app(app.spec.id)
        if app.spec.resubmit:
            # A closed-loop user: the same app again, at once, under a numbered id.
            base = app.spec.resubmit_of or app.spec.id
            n = self.copies.get(base, 1) + 1
            self.copies[base] = n
            again = replace(app.spec, id=f"{base}#{n}", submit=self.now, resubmit_of=base)
            heapq.heappush(self.submits, (self.now, self.submit_seq, again))
            self.submit_seq += 1

    def _beat(self, node: int, t: float) -> bool:
        """One heartbeat of `node` at time t: report finished containers, then schedule."""
        self.counters["heartbeats"] += 1
        self.last_beat[node] = t
        finishing = self.node_finish[node]
        while finishing and finishing[0][0] <= t + _EPS:
            _, cid = heapq.heappop(finishing)
            self._task_done(cid)
        if self.skip_idle:
            # The core would return nothing: no asks at all, or none that fits this node.
            if self.pending_total <= 0:
                self.counters["heartbeats_idle"] += 1
                return False
            if not self._may_assign(node):
                self.counters["heartbeats_full"] += 1
                return False
        t0 = time.perf_counter_ns()
        assignments = self.core.on_heartbeat(self.node_names[node], now=t)
        self.latency.add((time.perf_counter_ns() - t0) / 1000.0)
        self.counters["decisions"] += 1
        for a in assignments:
            self._assigned(a, node)
        return bool(assignments)

    def _may_assign(self, node: int) -> bool:
        """False only when the core certainly returns nothing for this node now."""
        if self.core.timeout:
            return True  # the core watches the queue first in fair order at every heartbeat
        free = self.node_free[node]
        for shape in self.pending_shapes:
            if all(map(le, shape, free)):
                return True
        core_node = self.core.nodes.get(self.node_names[node])
        # A reserved node's heartbeat may drop its reservation: always let the core see it.
        return core_node is None or core_node.reserved is not None

    def _assigned(self, a: Any, node: int) -> None:
        self.counters["assignments"] += 1
        app = self.states.get(a.app_id)
        if app is None or app.pending <= 0 or a.priority != app.priority:
            # More than was asked: hand it back as an AM would, and count it.
            self.counters["excess_assignments"] += 1
            self.core.container_finished(a.assignment_id, "released")
            return
        app.pending -= 1
        self.pending_total -= 1
        self._unshape(app.core_ask, 1)
        vec = app.ask
        is_am = app.stage == -1
        self.containers[a.assignment_id] = _Container(app, node, vec, app.core_ask, is_am, self.now)
        free = self.node_free[node]
        for j, v in enumerate(app.core_ask):
            free[j] -= v
        qa = self.queue_alloc[app.queue]
        for j, v in enumerate(vec):
            qa[j] += v
            self.alloc[j] += v
        if is_am:
            self.core.mark_am(a.assignment_id)
            app.am_container = a.assignment_id
            if app.start is None:
                app.start = self.now
            self._start_stage(app, app.resume)
            return
        if app.start is None:
            app.start = self.now
        self.queue_running[app.queue] += 1
        app.running += 1
        end = self.now + app.spec.stages[app.stage].duration
        heapq.heappush(self.node_finish[node], (end, a.assignment_id))
        self.running_tasks += 1

    def _release(self, cid: str, state: str) -> _Container | None:
        c = self.containers.pop(cid, None)
        if c is None:
            return None
        self.core.container_finished(cid, state)
        self.counters["containers_finished"] += 1
        free = self.node_free[c.node]
        for j, v in enumerate(c.core_vector):
            free[j] += v
        qa = self.queue_alloc[c.app.queue]
        for j, v in enumerate(c.vector):
            qa[j] -= v
            self.alloc[j] -= v
        return c

    def _task_done(self, cid: str) -> None:
        c = self._release(cid, "completed")
        if c is None:
            return
        app = c.app
        self.running_tasks -= 1
        self.queue_running[app.queue] -= 1
        self.queue_tasks_done[app.queue] += 1
        app.running -= 1
        app.left -= 1
        if app.left == 0:
            self._start_stage(app, app.stage + 1)
