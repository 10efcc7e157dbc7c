"""A schedule call the shim timed out on is asked again, not resynchronised (docs/bridge.md, "Retries"):
the service applies each (epoch, seq) once, answers the same request again with the reply it gave
it, and refuses an older seq or the last one with other changes."""
from __future__ import annotations

import json
import threading

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.bridge.invariants import check_accounting
from tests.bridge.messages import NODE, TYPES, ask, room, started
from yarn_bridge import protocol
from yarn_bridge.service import CoreService

EPOCH = 5
NODES = [f"n{i}:1" for i in range(3)]
APPS = [("app_1", "alice", "cpu"), ("app_2", "bob", "mem"), ("app_3", "carol", "batch")]


class Clock:
    """The service's clocks, moved on by the test only: the same calls see the same times."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def new_service(queues_file) -> tuple[CoreService, Clock]:
    clock = Clock()
    svc = CoreService(queues_file, clock=clock, wall_clock=clock)
    reply = svc.handle(json.dumps({"v": protocol.VERSION, "type": "snapshot", "epoch": EPOCH, "resources": TYPES,
                                   "nodes": [{"node": n, "capacity": NODE, "rack": "/r1"} for n in NODES]}))
    assert json.loads(reply)["ok"], reply
    return svc, clock


def request(svc: CoreService, seq: int, **changes) -> str:
    """A schedule request as the shim encodes it, offering every node (by default with the room the
    core has now: a call's own started and finished containers make YARN's differ a little)."""
    return json.dumps({"v": protocol.VERSION, "type": "schedule", "epoch": EPOCH, "seq": seq,
                       "nodes": room(svc, NODES), **changes})


def state(svc: CoreService) -> str:
    return json.dumps(svc.core.snapshot(), sort_keys=True, default=str)


def first_calls(svc: CoreService) -> int:
    """Places the apps (seq 1) and asks for containers (seq 2); returns the next seq."""
    subs = [{"app": app, "user": user, "queue": queue, "groups": []} for app, user, queue in APPS]
    placed = json.loads(svc.handle(request(svc, 1, submissions=subs, nodes=[])))
    assert placed["ok"] and all(p["accepted"] for p in placed["placements"]), placed
    asked = json.loads(svc.handle(request(svc, 2, asks=[ask(i, app, 5) for i, (app, _, _) in enumerate(APPS, 1)],
                                          nodes=[])))
    assert asked["ok"] and not asked["assignments"], asked
    return 3


def test_the_last_request_again_gets_the_same_reply_byte_for_byte_and_changes_nothing(queues_file):
    svc, _ = new_service(queues_file)
    seq = first_calls(svc)
    text = request(svc, seq, asks=[ask(9, "app_1", 4)])
    reply = svc.handle(text)
    assert json.loads(reply)["assignments"], "the call assigned something: a repeat applying it would show"
    before, counters = state(svc), dict(svc.counters)
    assert svc.handle(text) == reply
    assert svc.handle(text) == reply
    assert state(svc) == before
    assert svc.counters["repeated_calls"] == 2
    assert {k: v for k, v in svc.counters.items() if k not in ("repeated_calls", "schedule")} == \
        {k: v for k, v in counters.items() if k != "schedule"}
    check_accounting(svc.core)


def test_an_older_seq_or_the_last_seq_with_other_changes_is_refused_and_changes_nothing(queues_file):
    svc, _ = new_service(queues_file)
    seq = first_calls(svc)
    old = request(svc, seq, asks=[ask(9, "app_1", 4)])
    svc.handle(old)
    newer = request(svc, seq + 1, asks=[ask(10, "app_2", 1)])
    assert json.loads(svc.handle(newer))["ok"]
    before = state(svc)
    late = json.loads(svc.handle(old))  # the first attempt reaching the core after the retry and the next call
    assert not late["ok"] and f"seq {seq} is not after seq {seq + 1}" in late["error"]
    other = json.loads(svc.handle(request(svc, seq + 1, asks=[ask(11, "app_3", 1)])))
    assert not other["ok"] and "with other changes" in other["error"]
    assert state(svc) == before and svc.counters["stale_requests"] == 2
    assert json.loads(svc.handle(request(svc, seq + 2)))["ok"], "the service itself is still in sync"


def test_a_new_snapshot_forgets_the_last_call(queues_file):
    svc, _ = new_service(queues_file)
    seq = first_calls(svc)
    svc.handle(request(svc, seq))
    svc.handle(json.dumps({"v": protocol.VERSION, "type": "snapshot", "epoch": EPOCH + 1, "resources": TYPES,
                           "nodes": [{"node": n, "capacity": NODE, "rack": "/r1"} for n in NODES]}))
    again = json.loads(svc.handle(request(svc, seq).replace(f'"epoch": {EPOCH}', f'"epoch": {EPOCH + 1}')))
    assert again["ok"] and svc.counters["repeated_calls"] == 0, "a new epoch starts its seqs afresh"


def test_the_first_attempt_and_its_retry_at_once_apply_it_once(queues_file):
    """py4j runs the timed-out attempt to its end on its own thread while the retry arrives on
    another connection: the lock serialises them, and whichever comes second gets the stored reply."""
    svc, _ = new_service(queues_file)
    seq = first_calls(svc)
    text = request(svc, seq, asks=[ask(9, "app_1", 4)])
    replies: list[str] = []
    threads = [threading.Thread(target=lambda: replies.append(svc.handle(text))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert replies[0] == replies[1] and json.loads(replies[0])["assignments"]
    assert svc.counters["repeated_calls"] == 1 and svc.counters["schedule"] == 4
    check_accounting(svc.core)


class Shim:
    """The shim's side of a run: collects the changes since the last call (the containers the
    previous reply assigned start, some running ones finish, apps ask again), sends them, commits
    the reply. `timeouts[i]` is how many attempts of call i time out before one is answered; a
    timed-out attempt is still applied by the service (py4j runs it to its end), its reply lost."""

    def __init__(self, svc: CoreService, clock: Clock) -> None:
        self.svc, self.clock = svc, clock
        self.running: list[str] = []
        self.assigned: list[dict] = []
        self.last: list[dict] = []
        self.next_container = 0

    def run(self, steps: list[tuple[int, int, int]], timeouts: list[int], overtaken: list[bool]) -> None:
        seq = first_calls(self.svc)
        for i, (finish, app, count) in enumerate(steps):
            self.clock.now += 0.25
            rows = []
            for a in self.last:
                self.next_container += 1
                container = f"c_{self.next_container}"
                rows.append(started(container, a["app"], a["assignment_id"], node=a["node"],
                                    **dict(zip(("memory", "vcores", "gpu"), a["resources"].values()))))
                self.running.append(container)
            done, self.running = self.running[:finish], self.running[finish:]
            text = request(self.svc, seq, started=rows, finished=[x for c in done for x in (c, "completed")],
                           asks=[ask(100 + i, APPS[app][0], count)])
            reply = self.call(text, timeouts[i], overtaken[i])
            assert reply["ok"], reply
            self.last = reply["assignments"]
            self.assigned += self.last
            seq += 1

    def call(self, text: str, timed_out: int, overtaken: bool) -> dict:
        if overtaken:  # the answered attempt reaches the lock first, the timed-out ones after it
            reply = self.svc.handle(text)
            for _ in range(timed_out):
                self.svc.handle(text)
            return json.loads(reply)
        for _ in range(timed_out):
            self.svc.handle(text)  # applied, but the shim stopped waiting for its reply
        return json.loads(self.svc.handle(text))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, len(APPS) - 1), st.integers(0, 4)),
                min_size=1, max_size=12).flatmap(
    lambda steps: st.tuples(st.just(steps), st.lists(st.integers(0, 2), min_size=len(steps), max_size=len(steps)),
                            st.lists(st.booleans(), min_size=len(steps), max_size=len(steps)))))
def test_timeouts_answered_by_asking_again_assign_what_a_run_without_timeouts_does(queues_file, run):
    steps, timeouts, overtaken = run
    calm_svc, calm_clock = new_service(queues_file)
    calm = Shim(calm_svc, calm_clock)
    calm.run(steps, [0] * len(steps), [False] * len(steps))
    slow_svc, slow_clock = new_service(queues_file)
    slow = Shim(slow_svc, slow_clock)
    slow.run(steps, timeouts, overtaken)
    assert slow.assigned == calm.assigned, "the same assignments, none lost or made twice"
    ids = [a["assignment_id"] for a in slow.assigned]
    assert len(ids) == len(set(ids))
    assert state(slow_svc) == state(calm_svc)
    assert slow_svc.counters["repeated_calls"] == sum(timeouts)
    check_accounting(slow_svc.core)
