"""The core's holds as the schedule reply tells them (yarn_bridge.holds): each hold begun or ended
is told exactly once, whatever sequence of asks, heartbeats, finished containers, removed apps,
lost nodes and preemption rounds made it, and only from the nodes the core noted."""
from __future__ import annotations

from hypothesis import given, settings, target
from hypothesis import strategies as st

from scheduler import SchedulerCore, parse_config
from yarn_bridge.holds import HoldsTold

QUEUES = ("a", "b", "c")
NODES = {"n1": {"vcores": 8, "memory-mb": 8192}, "n2": {"vcores": 8, "memory-mb": 8192},
         "n3": {"vcores": 4, "memory-mb": 4096}}
CONFIG = ("reservation: {starvation-timeout-s: 1}\n"
          "preemption: {enabled: true, fair-share-timeout-s: 2, min-share-timeout-s: 1, grace-s: 1, threshold: 0.8}\n"
          "queues:\n  root:\n    children:\n" + "".join(f"      {q}: {{}}\n" for q in QUEUES))

ask = st.tuples(st.just("ask"), st.sampled_from(QUEUES), st.integers(1, 2), st.integers(1, 8), st.integers(0, 6))
heartbeat = st.tuples(st.just("heartbeat"), st.sampled_from(sorted(NODES)))
finish = st.tuples(st.just("finish"), st.integers(0, 1000))
remove_app = st.tuples(st.just("remove_app"), st.sampled_from(QUEUES))
node_lost = st.tuples(st.just("node_lost"), st.sampled_from(sorted(NODES)))
preempt = st.tuples(st.just("preempt"))
tick = st.tuples(st.just("tick"), st.floats(0.1, 3.0))
step = st.one_of(ask, ask, heartbeat, heartbeat, heartbeat, heartbeat, finish, remove_app, node_lost, preempt, preempt, tick, tick)


def holds_now(core: SchedulerCore) -> dict[str, tuple]:
    """The oracle: every node of the core that is held, scanned whole."""
    return {n.id: (n.reserved.app.id, n.reserved.key, n.reserved.capability)
            for n in core.nodes.values() if n.reserved is not None}


@settings(max_examples=150, deadline=None)
@given(st.lists(step, min_size=1, max_size=120), st.lists(st.booleans(), min_size=120, max_size=120))
def test_every_hold_begun_or_ended_is_told_once_as_the_set_difference_of_holds(steps, tell_after):
    core = SchedulerCore(parse_config(CONFIG), ("memory-mb", "vcores"), clock=lambda: 0.0)
    for node_id, capacity in NODES.items():
        core.add_node(node_id, capacity)
    told, shim, last = HoldsTold(), {}, {}
    now, running, changes = 0.0, [], 0
    for i, (op, *args) in enumerate(steps):
        if op == "ask":
            queue, priority, vcores, count = args
            app = f"app-{queue}"
            if app not in core.apps:
                assert core.submit_app(app, "u", queue, now=now).accepted
            core.update_request(app, priority, {"vcores": vcores, "memory-mb": 1024 * vcores}, count, now=now)
        elif op == "heartbeat":
            if args[0] not in core.nodes:
                core.add_node(args[0], NODES[args[0]])
            running += [a.assignment_id for a in core.on_heartbeat(args[0], now=now)]
        elif op == "finish" and running:
            core.container_finished(running.pop(args[0] % len(running)))
        elif op == "remove_app" and f"app-{args[0]}" in core.apps:
            core.remove_app(f"app-{args[0]}")
        elif op == "node_lost" and args[0] in core.nodes:
            core.remove_node(args[0])
        elif op == "preempt":
            for victim in core.preemption_round(now).kill:
                core.container_finished(victim.container_id, "preempted")
        elif op == "tick":
            now += args[0]
        running = [c for c in running if c in core.containers]
        if not tell_after[i] and i != len(steps) - 1:
            continue  # several changes between two replies: only the net change is told
        holds, ended = told.changes(core.hold_changes)
        current = holds_now(core)
        begun = {n: h for n, h in current.items() if last.get(n) != h}
        assert holds == [[n, app, key[0], key[1], *cap] for n, (app, key, cap) in sorted(begun.items())]
        assert ended == sorted(set(last) - set(current))
        assert not core.hold_changes, "the noted nodes are taken"
        for row in holds:
            shim[row[0]] = row[1:]
        for node_id in ended:
            del shim[node_id]
        assert shim == {n: [app, *key, *cap] for n, (app, key, cap) in current.items()}
        assert told.changes(core.hold_changes) == ([], []), "told again without a change"
        changes += len(holds) + len(ended)
        last = current
    target(float(changes), label="holds begun and ended")  # steer the search toward holds
