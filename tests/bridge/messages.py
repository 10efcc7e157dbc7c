"""Bridge requests as the shim sends them (docs/bridge.md), for the tests that drive the service directly."""
from __future__ import annotations

import json
import time
from weakref import WeakKeyDictionary

from yarn_bridge import protocol
from yarn_bridge.service import CoreService

TYPES = ["memory-mb", "vcores", "gpu-mem"]
NODE = {"memory-mb": 8192, "vcores": 8, "gpu-mem": 8192}


def ping(**extra) -> str:
    """The cheapest request a service answers with ok, for the tests that only need to see the
    bridge answer: an empty snapshot (it leaves a fresh core) of the shim's epoch now."""
    return json.dumps({"v": protocol.VERSION, "type": "snapshot", "epoch": int(time.time() * 1000),
                       "resources": [], **extra})


# The last schedule seq sent to each service: the service refuses one that is not after it.
_seqs: WeakKeyDictionary[CoreService, int] = WeakKeyDictionary()


def next_seq(svc: CoreService) -> int:
    """The seq after the last schedule call `svc` was sent through these helpers."""
    return _seqs.get(svc, 0) + 1


def call(svc: CoreService, **msg) -> dict:
    if msg.get("type") == "schedule" and isinstance(msg.get("seq"), int):
        _seqs[svc] = msg["seq"]
    return json.loads(svc.handle(json.dumps({"v": protocol.VERSION, **msg})))


def snapshot(svc: CoreService, epoch: int = 5, **state) -> dict:
    """A snapshot of `state`'s nodes, apps, containers and asks, and its preemption_state if given."""
    given = {"preemption_state": state["preemption_state"]} if "preemption_state" in state else {}
    return call(svc, type="snapshot", epoch=epoch, resources=TYPES,
                nodes=state.get("nodes", [{"node": "n1:1", "capacity": NODE, "rack": "/r1"}]),
                apps=state.get("apps", []), containers=state.get("containers", []), asks=state.get("asks", []),
                **given)


def room(svc: CoreService, nodes) -> list[list]:
    """Rows of nodes with room, their free amounts as the core has them now (the shim sends YARN's,
    which equal the core's once the request's changes apply)."""
    core = svc.core
    return [[n, *core.types.sub(core.nodes[n].capacity, core.nodes[n].allocated)] if n in core.nodes else [n, 0, 0, 0]
            for n in nodes]


def schedule(svc: CoreService, epoch: int = 5, seq: int | None = None, nodes=("n1:1",), **changes) -> dict:
    """One schedule call deciding for `nodes` (ids), with the changes given (deltas, started,
    finished, asks, counts, submissions); `seq` by default the next."""
    return call(svc, type="schedule", epoch=epoch, seq=seq or next_seq(svc), nodes=room(svc, nodes), **changes)


def submit(svc: CoreService, app: str, user: str, queue: str | None = None, groups=(), epoch: int = 5) -> dict:
    """Places one app (a schedule call with the submission and no node); returns its placement."""
    reply = call(svc, type="schedule", epoch=epoch, seq=next_seq(svc),
                 submissions=[{"app": app, "user": user, "queue": queue, "groups": list(groups)}])
    assert reply["ok"], reply
    [placed] = reply["placements"]
    return placed


def ask(ask_id: int, app: str, count: int, memory: int = 1024, vcores: int = 1, gpu: int = 0) -> list:
    """An ask in full: id, count, app, priority, allocation id, location, relax, amounts in TYPES order."""
    return [ask_id, count, app, 1, 0, "*", True, memory, vcores, gpu]


def started(container: str, app: str, assignment_id: str | None = None, memory: int = 1024, vcores: int = 1,
            gpu: int = 0, node: str = "n1:1") -> list:
    """A started container: container, app, node, priority, allocation id, assignment id, amounts."""
    return [container, app, node, 1, 0, assignment_id, memory, vcores, gpu]
