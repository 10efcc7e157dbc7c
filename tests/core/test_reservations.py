"""Reservations (HDRF's starvation timeout): who may reserve, how long a reservation lasts, and
starvation measured per queue. Each test replays a reproducer from the issue that found the bug."""
from __future__ import annotations

from tests.core.helpers import make_core

NODE = {"vcores": 16, "memory-mb": 65536}


def three_queues(timeout: float, extra_a: str = "", nodes=None):
    yaml = (f"reservation: {{starvation-timeout-s: {timeout}}}\n"
            f"queues:\n  root:\n    children:\n      a: {{{extra_a}}}\n      b: {{}}\n      c: {{}}\n")
    return make_core(yaml, nodes or {"n1": NODE})


def ask(core, app, queue, vcores, count, now=0.0, priority=1):
    if app not in core.apps:
        assert core.submit_app(app, "u", queue).accepted
    core.update_request(app, priority, {"vcores": vcores, "memory-mb": 1024}, count, now=now)


def four_queues(timeout: float, extra_a: str = "", nodes=None):
    yaml = (f"reservation: {{starvation-timeout-s: {timeout}}}\n"
            f"queues:\n  root:\n    children:\n      a: {{{extra_a}}}\n      b: {{}}\n      c: {{}}\n      d: {{}}\n")
    return make_core(yaml, nodes or {"n1": NODE})


def test_only_the_queue_first_in_fair_order_may_reserve_a_node():
    """R1: a (share 0) asks for 8 vcores, b takes 4 of the 5 free, then c (share 0.094, starved
    for longer) was first in the next pick of the same heartbeat and reserved the node, and got
    its 8 vcores once 13 were free, ahead of a."""
    core = four_queues(5, nodes={"n1": {"vcores": 32, "memory-mb": 65536}})
    ask(core, "c-app", "c", 3, 1)
    ask(core, "b-app", "b", 1, 1)
    ask(core, "d-app", "d", 1, 28)
    held = [x.assignment_id for x in core.on_heartbeat("n1", now=0) if x.app_id == "d-app"]
    ask(core, "d-app", "d", 1, 1000)  # and d takes whatever is left
    ask(core, "c-app", "c", 8, 1, now=0, priority=2)
    ask(core, "b-app", "b", 4, 100, now=0, priority=2)
    ask(core, "a-app", "a", 8, 1, now=9)
    served = []
    for t in range(10, 40):
        for _ in range(5 if t == 10 else 1):  # 5 vcores free at t=10, then one more each second
            if held:
                core.container_finished(held.pop(0))
        got = core.on_heartbeat("n1", now=float(t))
        held += [x.assignment_id for x in got if x.app_id == "d-app"]
        served += [x.app_id for x in got if x.vector[1] == 8]
        reserved = core.snapshot()["nodes"]["n1"]["reserved_for"]
        assert reserved is None or reserved.startswith("a-app"), f"t={t}: {reserved} reserved ahead of a"
        if served:
            break
    assert served == ["a-app"]
    assert core.counters["reservations_made"] == core.counters["reservations_satisfied"] == 1


def test_a_reservation_stays_while_its_request_asks_for_more_after_a_container_elsewhere():
    """R2: a request for two containers reserved n1, then got one on n2; n1 stays held for it and
    serves the second when it frees enough, instead of giving its room away and waiting again."""
    core = three_queues(5, nodes={"n1": NODE, "n2": NODE})
    ask(core, "small", "b", 1, 1000)
    on = {n: [x.assignment_id for x in core.on_heartbeat(n, now=0)] for n in ("n1", "n2")}
    ask(core, "big", "a", 8, 2, now=0)
    core.on_heartbeat("n1", now=0)  # a first in fair order from now on
    core.container_finished(on["n1"].pop())
    assert core.on_heartbeat("n1", now=6) == []
    assert core.snapshot()["nodes"]["n1"]["reserved_for"].startswith("big")
    for _ in range(8):  # n2 frees 8 vcores at once: the first container starts there
        core.container_finished(on["n2"].pop())
    assert [x.app_id for x in core.on_heartbeat("n2", now=7)][:1] == ["big"]
    assert core.snapshot()["nodes"]["n1"]["reserved_for"].startswith("big")
    for _ in range(7):
        core.container_finished(on["n1"].pop())
    assert [x.app_id for x in core.on_heartbeat("n1", now=8)][:1] == ["big"]
    assert core.counters["reservations_satisfied"] == 1
    assert core.counters["reservations_dropped"] == 0


def test_dropping_an_invalid_reservation_lets_the_same_heartbeat_assign_to_others():
    """R3: a reached its max through another app on n2, so its reservation of n1 is invalid; the
    heartbeat of n1 that drops it must still start b's fitting containers there."""
    core = three_queues(5, extra_a="max: {vcores: 8}", nodes={"n1": NODE, "n2": NODE})
    ask(core, "small", "b", 1, 1000)
    on = {n: [x.assignment_id for x in core.on_heartbeat(n, now=0)] for n in ("n1", "n2")}
    ask(core, "big", "a", 8, 1, now=0)
    core.on_heartbeat("n1", now=0)  # a first in fair order from now on
    core.container_finished(on["n1"].pop())
    core.on_heartbeat("n1", now=6)
    assert core.snapshot()["nodes"]["n1"]["reserved_for"].startswith("big")
    core.submit_app("other", "u", "a")  # another app of a takes a's max on n2
    core.container_started("c-other", "other", "n2", {"vcores": 8, "memory-mb": 1024})
    for _ in range(3):
        core.container_finished(on["n1"].pop())
    got = core.on_heartbeat("n1", now=7)
    assert core.snapshot()["nodes"]["n1"]["reserved_for"] is None
    assert [x.app_id for x in got] == ["small"] * 4
    assert core.counters["reservations_dropped"] == 1


def test_a_queue_kept_below_its_share_by_a_stream_of_small_containers_reserves():
    """Starvation per queue: every 7 s n2 frees room for one big container, which restarted the
    request's own clock, so with a 10 s timeout it never starved; the queue is first in fair order
    all along, so it has starved after 10 s and reserves a node although it got a container 4 s ago."""
    core = three_queues(10, nodes={"n1": NODE, "n2": NODE})
    ask(core, "small", "b", 1, 100_000)
    on = {n: [x.assignment_id for x in core.on_heartbeat(n, now=0)] for n in ("n1", "n2")}
    ask(core, "big", "a", 8, 1000, now=0)
    last_big = reserved_at = None
    for t in range(1, 12):
        for n in ("n1", "n2"):
            for _ in range(8 if n == "n2" and t == 7 else 1):
                core.container_finished(on[n].pop(0))
            got = core.on_heartbeat(n, now=float(t))
            if any(x.app_id == "big" for x in got):
                last_big = t
            on[n] += [x.assignment_id for x in got if x.app_id == "small"]
            if reserved_at is None and core.counters["reservations_made"]:
                reserved_at = t
    assert last_big == 7 and reserved_at == 11
    assert core.snapshot()["nodes"]["n1"]["reserved_for"].startswith("big")
