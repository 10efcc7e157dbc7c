"""Any bridge message gets a reply, never an exception, and leaves the core's accounting whole.

A seeded driver plays a plausible YARN (snapshots, schedule calls confirming the core's assignments,
containers finishing, apps and nodes coming and going, asks and counts, submissions) and mutates
a share of its messages: wrong types, numbers beyond any bound, NaN and Infinity, deep nesting,
unknown ops and types, duplicated or stray ids, truncated text. Snapshots give back the
preemption state, as the shim does: the latest a reply carried, or one made up from the driver's
containers and apps. Hypothesis puts arbitrary JSON into each field of valid messages (and
anywhere inside the preemption state). After every message the reply must be a JSON object of
this version with a boolean "ok", tests.bridge.invariants must hold, and a preemption state the
reply carries must read back whole.
"""
from __future__ import annotations

import json
import random
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.bridge.invariants import check_accounting
from yarn_bridge import protocol
from yarn_bridge.service import CoreService

TYPES = ["memory-mb", "vcores", "gpu-mem"]
LEAVES = ["root.cpu", "root.mem", "root.gpu", "root.batch", "root.restricted", "root.gone", "cpu"]
QUEUES = """
resources: [memory-mb, vcores, gpu-mem]
preemption: {enabled: true, fair-share-timeout-s: 0, min-share-timeout-s: 0, grace-s: 1, max-per-round: '100%'}
placement: [{rule: specified}, {rule: user, parent: root.users, create: true}, {rule: reject}]
queues:
  root:
    submit-acl: " "
    admin-acl: " "
    children:
      cpu: {weight: 1, submit-acl: "*"}
      mem: {weight: 2, submit-acl: "*", max-running-apps: 2, user-limits: {max-running-apps: 1}}
      gpu: {weight: 1, submit-acl: "*", user-limits: {users: {alice: {weight: 2, max-running-apps: 2}}}}
      batch: {weight: 1, submit-acl: "*", max-running-apps: 1}
      restricted: {submit-acl: "alice"}
      users: {children: {}}
"""
HOSTILE = [10 ** 309, 2 ** 63, 2 ** 63 - 1, -1, -(2 ** 63) - 1, 1e308, 1.5, 0.0, True, False, None, "", "x" * 300,
           [], {}, [[[]]], {"a": {"b": None}}, float("inf"), float("nan"), "Infinity", "root.cpu", "n1:1"]


def deep(depth: int):
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


class Yarn:
    """A plausible ResourceManager: what it sends, shaped by what the core answered."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd
        self.epoch = 0
        self.seq = 0
        self.nodes = {f"n{i}:1": f"/r{i % 2}" for i in range(3)}
        self.apps: dict[str, str] = {}  # app -> queue
        self.containers: dict[str, list] = {}  # container -> started row
        self.assigned: list[dict] = []  # the core's assignments not yet confirmed or refused
        self.asks: list[int] = []
        self.next_id = 0
        self.resync = True
        self.preemption_state: dict | None = None  # the latest a reply carried

    def _saved_state(self, asks: list) -> dict:
        """What the shim gives back: the latest state heard, or (as from another RM) marks of
        the driver's containers for other apps' asks and clocks of its leaves, some stale."""
        if self.preemption_state is not None and self.rnd.random() < 0.5:
            return self.preemption_state
        rnd, now_ms = self.rnd, int(time.time() * 1000)
        marks = []
        for cid, row in rnd.sample(sorted(self.containers.items()), min(3, len(self.containers))):
            ask = rnd.choice([a for a in asks if a[2] != row[1]] or [[0, 0, "app_none", 1, 0]])
            marks.append({"container": cid, "node": row[2], "app": ask[2], "priority": ask[3],
                          "allocation_id": ask[4], "reason": rnd.choice(["fair-share", "min-share"]),
                          "marked_at_ms": now_ms, "deadline_ms": now_ms + rnd.choice([-1000, 0, 500, 10 ** 9])})
        leaves = [{"queue": q, "below_fair_since_ms": now_ms - rnd.randint(0, 10 ** 6),
                   **({"starved": "fair-share"} if rnd.random() < 0.5 else {})} for q in rnd.sample(LEAVES, 2)]
        return {"v": 1, "marks": marks, "leaves": leaves}

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def _amounts(self) -> list[int]:
        return [self.rnd.choice([128, 512, 1024, 4096]), self.rnd.randint(0, 4), self.rnd.choice([0, 0, 1024])]

    def _capacity(self) -> dict:
        return {"memory-mb": 16384, "vcores": 16, "gpu-mem": self.rnd.choice([0, 8192])}

    def _ask(self, app: str) -> list:
        ask_id = self._id()
        self.asks.append(ask_id)
        location = self.rnd.choice(["*", "*", "*", "/r0", next(iter(self.nodes), "*")])
        return [ask_id, self.rnd.randint(0, 5), app, self.rnd.randint(0, 2), self.rnd.randint(0, 1), location,
                self.rnd.random() < 0.9, *self._amounts()]

    def snapshot(self) -> dict:
        self.epoch += 1
        self.assigned.clear()
        self.asks.clear()
        return {"type": "snapshot", "epoch": self.epoch, "resources": TYPES,
                "nodes": [{"node": n, "capacity": self._capacity(), "rack": r} for n, r in self.nodes.items()],
                "apps": [{"app": a, "user": self.rnd.choice(["alice", "bob"]), "queue": q, "groups": ["g"],
                          "priority": self.rnd.randint(0, 3), "blacklist": self._places()}
                         for a, q in self.apps.items()],
                "containers": list(self.containers.values()),
                "asks": (asks := [self._ask(a) for a in self.apps for _ in range(self.rnd.randint(0, 2))]),
                "counts": [], "am_asks": self._am_asks(asks), "preemption_state": self._saved_state(asks)}

    def _places(self) -> list[str]:
        """A blacklist: some nodes and racks, maybe unknown ones."""
        return self.rnd.sample(sorted(self.nodes) + ["/r0", "/r1", "n_none:1"], self.rnd.randint(0, 2))

    def _am_asks(self, asks: list) -> list[int]:
        """Some of the asks in full named as AM asks (YARN's: priority 0, one container)."""
        return [a[0] for a in asks if a[3] == 0 and self.rnd.random() < 0.5]

    def changes(self) -> dict:
        rnd = self.rnd
        deltas, started, finished = [], [], []
        for _ in range(rnd.randint(0, 3)):
            kind = rnd.choice(["node_added", "node_removed", "node_updated", "app_added", "app_removed",
                               "attempt_added", "assignment_refused", "blacklist", "app_priority"])
            if kind == "node_added":
                node = f"n{self._id()}:1"
                self.nodes[node] = "/r1"
                deltas.append({"op": kind, "node": node, "capacity": self._capacity(), "rack": "/r1"})
            elif kind == "app_added":
                app = f"app_{self._id()}"
                self.apps[app] = rnd.choice(LEAVES)
                deltas.append({"op": kind, "app": app, "user": "bob", "queue": self.apps[app], "groups": []})
            elif kind == "assignment_refused" and self.assigned:
                a = self.assigned.pop(rnd.randrange(len(self.assigned)))
                deltas.append({"op": kind, "assignment_id": a["assignment_id"], "reason": "fuzz"})
            elif kind in ("node_removed", "node_updated") and self.nodes:
                node = rnd.choice(list(self.nodes))
                if kind == "node_removed":
                    del self.nodes[node]
                    self.containers = {c: r for c, r in self.containers.items() if r[2] != node}
                deltas.append({"op": kind, "node": node, "capacity": self._capacity()})
            elif kind == "blacklist" and self.apps:
                deltas.append({"op": kind, "app": rnd.choice(list(self.apps)), "places": self._places()})
            elif kind == "app_priority" and self.apps:
                deltas.append({"op": kind, "app": rnd.choice(list(self.apps)), "priority": rnd.randint(-1, 9)})
            elif kind in ("app_removed", "attempt_added") and self.apps:
                app = rnd.choice(list(self.apps))
                if kind == "app_removed":
                    del self.apps[app]
                    self.containers = {c: r for c, r in self.containers.items() if r[1] != app}
                deltas.append({"op": kind, "app": app})
        while self.assigned and rnd.random() < 0.8:  # YARN starts what the core assigned
            a = self.assigned.pop(0)
            cid = f"c_{self._id()}"
            row = [cid, a["app"], a["node"], a["priority"], a["allocation_id"], a["assignment_id"],
                   *(a["resources"][t] for t in TYPES)]
            started.append(row)
            self.containers[cid] = row[:5] + [None] + row[6:]
        if self.apps and self.nodes and rnd.random() < 0.3:  # a container the core did not assign
            cid = f"c_{self._id()}"
            row = [cid, rnd.choice(list(self.apps)), rnd.choice(list(self.nodes)), 1, 0, None, *self._amounts()]
            started.append(row)
            self.containers[cid] = row
        for cid in rnd.sample(sorted(self.containers), min(len(self.containers), rnd.randint(0, 2))):
            del self.containers[cid]
            finished += [cid, rnd.choice(["completed", "killed", "lost", "weird"])]
        asks = [self._ask(a) for a in rnd.sample(sorted(self.apps), min(len(self.apps), rnd.randint(0, 2)))]
        counts = [x for i in rnd.sample(self.asks, min(len(self.asks), rnd.randint(0, 4)))
                  for x in (i, rnd.randint(0, 6))]
        return {"deltas": deltas, "started": started, "finished": finished, "asks": asks, "counts": counts,
                "am_asks": self._am_asks(asks)}

    def next_message(self) -> dict:
        rnd = self.rnd
        roll = rnd.random()
        if self.resync or roll < 0.08:
            self.resync = False
            return self.snapshot()
        if roll < 0.95:
            self.seq += 1
            nodes = rnd.sample(sorted(self.nodes), rnd.randint(0, len(self.nodes))) if roll < 0.8 else []
            submissions = [{"app": f"app_{self._id()}", "user": rnd.choice(["alice", "bob", "carol.x"]),
                            "queue": rnd.choice(LEAVES + [None]), "groups": ["g"], "priority": rnd.randint(0, 3)}
                           for _ in range(rnd.randint(0, 2) if roll >= 0.65 else 0)]
            return {"type": "schedule", "epoch": self.epoch, "seq": self.seq,
                    "nodes": [[n, *self._amounts()] for n in nodes], "submissions": submissions, **self.changes()}
        if roll < 0.975 and self.apps:
            return {"type": "move", "epoch": self.epoch, "app": rnd.choice(list(self.apps)),
                    "queue": rnd.choice(LEAVES + ["root", "nosuch"]), "user": rnd.choice(["alice", "bob"]),
                    "groups": ["g"]}
        return {"type": "reload", "epoch": self.epoch}

    def heard(self, msg: dict, reply: dict) -> None:
        """Follows the core's answers: assignments to start, placements accepted."""
        if not reply.get("ok"):
            self.resync = True  # as the shim: any failure, and the next message is a snapshot
            return
        if msg.get("type") == "move" and reply["accepted"]:
            self.apps[msg["app"]] = reply["queue"]
        if msg.get("type") == "schedule":
            self.preemption_state = reply.get("preemption_state", self.preemption_state)
            self.assigned += reply.get("assignments", [])
            for placed in reply.get("placements", []):
                if placed["accepted"]:
                    self.apps[placed["app"]] = placed["queue"]


def mutate(rnd: random.Random, msg: dict) -> object:
    """One hostile change to a valid message."""
    kind = rnd.randrange(8)
    if kind == 0:  # a value somewhere inside replaced
        paths = list(_paths(msg))
        path = rnd.choice(paths)
        return _replace(msg, path, rnd.choice(HOSTILE + [deep(rnd.choice([50, 2000]))]))
    if kind == 1:  # a field dropped
        key = rnd.choice(sorted(msg))
        return {k: v for k, v in msg.items() if k != key}
    if kind == 2:  # an unknown op, or an unknown type
        if "deltas" in msg:
            return {**msg, "deltas": msg["deltas"] + [{"op": rnd.choice(["teleport", 7, None]), "app": "x"}]}
        return {**msg, "type": rnd.choice(["dance", 3, None])}
    if kind == 3:  # duplicated items: ids, rows, apps sent twice
        for field in ("started", "asks", "apps", "nodes", "containers", "deltas"):
            if msg.get(field):
                return {**msg, field: msg[field] + msg[field]}
        return msg
    if kind == 4:  # hostile epoch
        return {**msg, "epoch": rnd.choice([1e30, float("inf"), "5", -1, 2 ** 63, None, 10 ** 18])}
    if kind == 5:  # deep nesting around the whole message
        return deep(rnd.choice([10, 3000]))
    if kind == 6:  # stray ids: unknown apps, nodes, containers, asks
        return {**msg, "started": [["c_x", "app_none", "n_none:1", 1, 0, "a999", 1, 1, 0]],
                "finished": ["c_none", "completed"], "counts": [10 ** 6, 3, -5, 1],
                "deltas": [{"op": "app_removed", "app": "app_none"}, {"op": "node_removed", "node": "n_none"},
                           {"op": "assignment_refused", "assignment_id": "a_none"}]}
    return msg  # sent whole, truncated by the caller


def _paths(value, path=()):
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, path + (i,))


def _replace(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    out = list(value)
    out[head] = _replace(value[head], rest, new)
    return out


def encode(msg: object) -> str:
    try:
        return json.dumps(msg if not isinstance(msg, dict) else {"v": protocol.VERSION, **msg})
    except RecursionError:  # deeper than json.dumps goes: write it by hand
        return "[" * 3000 + "]" * 3000


def exchange(svc: CoreService, text: str) -> dict:
    reply = json.loads(svc.handle(text))
    assert isinstance(reply, dict) and reply["v"] == protocol.VERSION and type(reply["ok"]) is bool, reply
    assert reply["ok"] or (type(reply["error"]) is str and reply["error"]), reply
    check_accounting(svc.core)
    assert svc.counters["internal_errors"] == 0, "a message raised inside the service"
    core = svc.core
    for a in reply.get("assignments", []):
        app, node = core.apps.get(a["app"]), core.nodes[a["node"]]
        assert app is None or not {node.id, node.rack} & app.blacklist, f"{a} on a place its app blacklisted"
    for row in reply.get("headroom", []):
        assert type(row[0]) is str and len(row) == 1 + len(TYPES) and all(type(v) is int and v >= 0 for v in row[1:])
    assert all(type(app) is type(text) is str for app, text in reply.get("am_diagnostics", []))
    if "preemption_state" in reply:
        state, problems = protocol.saved_state(reply["preemption_state"], 0.0)
        assert not problems, problems
    return reply


class Ticks:
    """A clock a quarter second further on at every reading: preemption's rounds, kills and
    restored items' windows come and go within a seed's messages."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 0.25
        return self.now


def test_any_message_gets_a_reply_and_leaves_the_accounting_whole(tmp_path):
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    mutated = applied = 0
    for seed in range(40):
        rnd = random.Random(seed)
        svc, yarn = CoreService(path, clock=Ticks()), Yarn(rnd)
        for _ in range(30):
            msg = yarn.next_message()
            if rnd.random() < 0.4:
                mutated += 1
                text = encode(mutate(rnd, msg))
                if rnd.random() < 0.1:
                    text = text[:rnd.randrange(len(text) + 1)]
                exchange(svc, text)
            else:
                reply = exchange(svc, encode(msg))
                applied += reply["ok"]
                yarn.heard(msg, reply)
    assert mutated > 400 and applied > 500, (mutated, applied)


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                     max_leaves=8)
_FIELDS = {
    "schedule": ["epoch", "seq", "deltas", "started", "finished", "asks", "counts", "am_asks", "submissions",
                 "nodes", "heartbeats", "rtt_ms"],
    "snapshot": ["epoch", "resources", "nodes", "apps", "containers", "asks", "counts", "am_asks",
                 "preemption_state"],
}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(sorted(_FIELDS)), data=st.data(), value=_json)
def test_arbitrary_json_in_any_field_or_item_gets_a_reply_and_leaves_the_accounting_whole(tmp_path, kind, data, value):
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES)
    svc, yarn = CoreService(path), Yarn(random.Random(1))
    for _ in range(6):  # some state: nodes, apps, containers, asks
        msg = yarn.next_message()
        yarn.heard(msg, exchange(svc, encode(msg)))
    msg = yarn.snapshot() if kind == "snapshot" else \
        {"type": "schedule", "epoch": yarn.epoch, "seq": 99, "nodes": [[n, 4096, 4, 0] for n in yarn.nodes],
         "submissions": [{"app": "app_h", "user": "bob", "queue": "root.cpu", "groups": []}], "heartbeats": 3,
         "rtt_ms": 0.5, **yarn.changes()}
    field = data.draw(st.sampled_from(_FIELDS[kind]))
    items = msg.get(field)
    if field == "preemption_state" and data.draw(st.booleans()):  # anywhere inside the record
        msg = {**msg, field: _replace(items, data.draw(st.sampled_from(list(_paths(items)))), value)}
    elif isinstance(items, list) and items and data.draw(st.booleans()):  # one item of the field, not all of it
        items = list(items)
        items[data.draw(st.integers(0, len(items) - 1))] = value
        msg = {**msg, field: items}
    else:
        msg = {**msg, field: value}
    exchange(svc, encode(msg))
