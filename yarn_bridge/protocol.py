"""The bridge message format, version 6 (docs/bridge.md; golden messages in tests/bridge/contract/):
every request decoded and every reply encoded on the Python side, here and nowhere else.

Java sends one request per call; each request has "v" and "type". Replies always have "v" and
"ok"; a request that cannot be understood gets {"ok": false, "error": ...} and never an exception.
Version 2 moved asks out of "deltas": "asks" in full with an id (ASK_FIELDS), "counts" by id.
Version 3 moved containers out too: "started" rows (CONTAINER_FIELDS), "finished" pairs.
Version 4: an app in a snapshot or an "app_added" delta is one YARN runs; the core takes it into
the queue named, without placement or ACLs (SchedulerCore.recover_app).
Version 5: decisions left the heartbeat. One "schedule" request carries everything that changed
since the last (events, asks, submissions) and every node with room for some ask ("nodes" rows); the core
decides for all of them at once. It replaces "heartbeat", "events" and "submit".
Version 6: GPU cards. A node (snapshot, node_added) may carry "cards", the MiB of each of its GPU
cards as its NodeManager declares them; node_updated carries "cards" when they changed ([]: the
node no longer declares any). An assignment on a node with cards carries "cards", the indices of
the cards it goes on; a container row ("started", a snapshot's "containers") of a container on
cards ends with them, as its allocation tag names them.
Version 6 also: a schedule reply may carry the preemption round's plan: "preempt", containers whose AM
is to be told now (PREEMPTION_FIELDS), and "kill", containers whose grace is over, to be killed
with exit status PREEMPTED. Each container is in each list once; both are absent when empty.
"queues_built" (added later, a field only, issue 29): a schedule reply carries the entries of
the queues the core built since the last reply (placement with create, a recovered app's queue,
and the leaves they went under, now parents), parents first, instead of the whole "queues" list;
the shim adds or replaces them in its tree and keeps the rest. "queues" (whole) still comes after
a reload or a resync.
"call_in_ms" (added later, a field only): the milliseconds until the core wants a call without a
change in YARN (the next preemption round or kill due); absent when nothing is timed.
Version 6 also (fields only, issue 27): a schedule reply carries "preemption_state" whenever the
core's preemption state changed (its marks, the starvation clocks of its leaves: STATE_VERSION
below), and a snapshot gives the latest one the shim has back, so a core that replaces another
(a resync, a restarted service, a restarted or failed-over ResourceManager) goes on from it.
Version 6 also (fields only, issue 28): node labels, and a queue's largest container. A snapshot's
"labels" and a "labels" delta give the cluster's node labels whole, name -> exclusive; a node
(snapshot, node_added) may carry its "label", a "node_label" delta moves a node to another ("":
none); an ask in full may end with its node label expression (its request key's, as YARN takes it
from the ANY ask; absent: none, its queue's default-node-label-expression applies); a submission
may carry its AM's "label". A queue entry carries "labels" (accessible-node-labels, inherited)
unless every label ("*"), "default_label" (default-node-label-expression, inherited) unless none,
and "max_container" (max-container, inherited) unless none is in force.
Version 6 also added the controls of an app (fields only): "am_asks" (the ids of the asks in full that
are the attempt's AM ask), a "blacklist" delta and an app's "blacklist" in a snapshot (the nodes
and racks its AM blacklisted), an app's "priority" (submissions, snapshot apps, app_added) and an
"app_priority" delta (`yarn application -updatePriority`), and in a schedule's reply "headroom"
(what each app could still get, for the apps where it changed) and "am_diagnostics" (why an AM
waits on its queue's max-am-share; "" once it no longer does); and the request type "move"
(`yarn application -movetoqueue`), answered with the core's move_app.

decode_request checks the envelope of a request (its version, type, epoch and the types of its
top-level fields) so a request that passes changes nothing in a way it did not mean; the items
inside (deltas, rows, asks, submissions) are checked one by one where they are applied (the
item parsers below), so one bad item is skipped and the rest still apply.
"""
from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from scheduler.config import ALL_LABELS, max_container_of
from scheduler.echo import brief
from scheduler.preemption import FAIR, MIN
from scheduler.preemption_state import MAX_SAVED_LEAVES, MAX_SAVED_MARKS, SavedLeaf, SavedMark, SavedState

if TYPE_CHECKING:
    from scheduler.model import Assignment, Placement, Queue
    from scheduler.preemption import PreemptionPlan, Victim

VERSION = 6
# Epochs, sequence numbers, ids: Java longs, 0 <= x < LONG_LIMIT.
LONG_LIMIT = 1 << 63
# A snapshot's epoch is the shim's clock in ms (the same host's): one further ahead is refused.
EPOCH_AHEAD_MS = 24 * 3600 * 1000
REQUEST_TYPES = ("snapshot", "schedule", "reload", "move")
# A container started ("started", and a snapshot's "containers"): these, then one amount per
# resource type in the snapshot's "resources" order. assignment_id is null for a container the
# core did not assign (recovered after an RM restart). "finished" is flat container, state pairs.
# A row of a container on GPU cards ends with one more element, the indices of its cards as
# its allocation tag names them (version 6): a core rebuilt by a snapshot, or told of a container
# recovered after an RM restart, charges those cards and not the ones its rule would choose.
CONTAINER_FIELDS = ("container", "app", "node", "priority", "allocation_id", "assignment_id")
# An ask in full ("asks"): these, then one amount per resource type in the snapshot's "resources"
# order, then optionally its node label expression. Afterwards the pair id, count in the flat
# "counts" array changes its count. An ask in full is the attempt's AM ask exactly when its id is
# in the request's "am_asks".
ASK_FIELDS = ("id", "count", "app", "priority", "allocation_id", "location", "relax_locality")
# A container in a schedule reply's "preempt" or "kill": the container, its app (the shim finds
# the attempt by the container id), node and queue, the starved leaf its room goes to, why that
# leaf starved ("fair-share" or "min-share"), and the milliseconds left until the kill (0 in "kill").
PREEMPTION_FIELDS = ("container", "app", "node", "queue", "for_queue", "reason", "kill_in_ms")
# A node with free room (a schedule's "nodes"): its id, then its unallocated amounts as YARN has
# them, in the snapshot's "resources" order.
# The preemption state (a schedule reply's "preemption_state", a snapshot's): {"v": STATE_VERSION,
# "marks": [...], "leaves": [...]}, times in milliseconds since 1970 (the next core may run on
# another host). Its own version: a saved record outlives the processes, and one of another
# yarn-drf version is ignored whole. A mark: the container, its node, the app and request
# (priority, allocation_id) it makes room for, why that leaf starved, when it was marked and when
# it is killed, and (restored, not found again yet) until when it waits. A leaf: its clocks, those
# it has: below threshold x its target since, below its min since, whether it starves, and until
# when a restored one waits for its demand.
STATE_VERSION = 1
MARK_FIELDS = ("container", "node", "app", "priority", "allocation_id", "reason", "marked_at_ms", "deadline_ms",
               "waiting_until_ms")
LEAF_FIELDS = ("queue", "below_fair_since_ms", "below_min_since_ms", "starved", "waiting_until_ms")


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not a JSON number")


# Strict JSON: Python's decoder would take NaN and Infinity, which no amount or epoch may be.
_decoder = json.JSONDecoder(parse_constant=_not_json)


class ProtocolError(ValueError):
    """A request that is not a well-formed message of this version; the text says what and where."""


def decode_request(text: str) -> dict[str, Any]:
    if not isinstance(text, str):
        raise ProtocolError(f"request is not a string but {type(text).__name__}")
    try:
        # raw_decode skips json.loads' wrapper layers, a measurable share of a small request
        if text[:1].isspace():
            text = text.lstrip()
        msg, end = _decoder.raw_decode(text)
        if end != len(text) and text[end:].strip():
            raise ValueError(f"extra data after the JSON value at character {end}")
    except RecursionError:
        # the decoder recurses per level: a bounded stack, whatever the nesting of the text
        raise ProtocolError("request is not JSON this service takes: nested too deeply") from None
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"request is not JSON: {exc}") from exc
    if not isinstance(msg, dict):
        raise ProtocolError("request is not a JSON object")
    if msg.get("v") != VERSION:
        raise ProtocolError(f"request version {brief(msg.get('v'))}, this service speaks {VERSION}")
    kind = msg.get("type")
    if kind not in REQUEST_TYPES:
        raise ProtocolError(f"unknown request type {brief(kind)} (known: {', '.join(REQUEST_TYPES)})")
    epoch = msg.get("epoch")
    if not (type(epoch) is int and 0 <= epoch < LONG_LIMIT):  # is_long, inline: per request
        raise ProtocolError(f"{kind}: epoch must be an integer from 0 to 2^63-1, got {brief(epoch)}")
    if kind == "snapshot" and epoch > time.time() * 1000 + EPOCH_AHEAD_MS:
        # it would make every real snapshot after it look old, for good
        raise ProtocolError(f"snapshot: epoch {epoch} is more than a day ahead of this host's clock "
                            "(epochs are milliseconds since 1970)")
    problem = check_fields(msg, ENVELOPES[kind])
    if problem:
        raise ProtocolError(f"{kind}: {problem}")
    return msg


def is_snapshot(text: str) -> bool:
    """Whether `text` is a snapshot request as the shim encodes one ("v", then "type" first): a
    look at its start, for callers that must not wait to decode it."""
    return text.startswith(_SNAPSHOT_START)


_SNAPSHOT_START = '{"v":%d,"type":"snapshot"' % VERSION


def is_long(value: Any) -> bool:
    """An epoch, sequence number, id or amount: an integer from 0 to 2^63-1."""
    return type(value) is int and 0 <= value < LONG_LIMIT


def is_key(value: Any) -> bool:
    """A priority or allocation id: any Java long (YARN's "none" is -1)."""
    return type(value) is int and -LONG_LIMIT <= value < LONG_LIMIT


# A field check: (name, test of its value, what the value must be, required?).
Field = tuple[str, Callable[[Any], bool], str, bool]


def check_fields(obj: Any, fields: tuple[Field, ...]) -> str:
    """What is wrong with the object `obj` (a request, a delta, a snapshot's node or app, a
    submission) by its fields' checks, or "" when nothing is. An optional field may be absent or null."""
    if type(obj) is not dict:
        return f"must be an object, got {brief(obj)}"
    for name, test, what, required in fields:
        value = obj.get(name)
        if value is None and not required:
            continue
        if not test(value):
            return f"{name} must be {what}, got {brief(value)}"
    return ""


def _text(v: Any) -> bool:
    return type(v) is str


def _object(v: Any) -> bool:
    return type(v) is dict


def _list(v: Any) -> bool:
    return type(v) is list


def _pairs(v: Any) -> bool:
    return type(v) is list and not len(v) % 2


def _labels(v: Any) -> bool:
    return type(v) is dict and all(type(k) is str and k and type(x) is bool for k, x in v.items())


def _texts(v: Any) -> bool:
    return type(v) is list and all(type(x) is str for x in v)


def _milliseconds(v: Any) -> bool:
    return type(v) in (int, float) and 0 <= v < 1e12


def _field(name: str, test: Callable[[Any], bool], what: str, required: bool = True) -> Field:
    return name, test, what, required


TEXT, LIST, ROWS, PAIRS, TEXTS = ("a string", "a list", "a list of rows", "a list of pairs (even length)",
                                  "a list of strings")
LONG = "an integer from 0 to 2^63-1"
KEY = "an integer (a Java long)"
LABELS = "an object of node label names to booleans (exclusive)"
# The top-level fields of each request type (the epoch is checked before).
ENVELOPES: dict[str, tuple[Field, ...]] = {
    "snapshot": (_field("resources", _texts, TEXTS), _field("nodes", _list, LIST, False),
                 _field("apps", _list, LIST, False), _field("containers", _list, ROWS, False),
                 _field("asks", _list, ROWS, False), _field("counts", _pairs, PAIRS, False),
                 _field("am_asks", _list, LIST, False), _field("labels", _labels, LABELS, False)),
    "schedule": (_field("seq", is_long, LONG), _field("deltas", _list, LIST, False),
                 _field("started", _list, ROWS, False), _field("finished", _pairs, PAIRS, False),
                 _field("asks", _list, ROWS, False), _field("counts", _pairs, PAIRS, False),
                 _field("am_asks", _list, LIST, False),
                 _field("submissions", _list, LIST, False), _field("nodes", _list, ROWS, False),
                 _field("heartbeats", is_long, LONG, False),
                 _field("rtt_ms", _milliseconds, "a number of milliseconds from 0", False)),
    "reload": (_field("path", _text, TEXT, False),),
    # `yarn application -movetoqueue`: the app, the target queue, the app's user and groups
    "move": (_field("app", _text, TEXT), _field("queue", _text, TEXT), _field("user", _text, TEXT),
             _field("groups", _texts, TEXTS, False)),
}
# A snapshot's nodes and apps, and the node_added and app_added deltas. A node's "cards" are
# checked apart (CoreService._cards): a node whose cards are wrong still comes in, without them.
# An app's "priority": its application priority as the RM capped it (absent: 0); its
# "blacklist" (snapshot only): the node ids and racks its AM blacklisted.
NODE_FIELDS = (_field("node", _text, TEXT), _field("capacity", _object, "an object of amounts"),
               _field("rack", _text, TEXT, False), _field("label", _text, TEXT, False))
APP_FIELDS = (_field("app", _text, TEXT), _field("user", _text, TEXT), _field("queue", _text, TEXT),
              _field("groups", _texts, TEXTS, False), _field("priority", is_key, KEY, False),
              _field("blacklist", _texts, TEXTS, False))
# A schedule's submissions: apps to place (placement rules, then ACLs), the queue as submitted.
SUBMISSION_FIELDS = (_field("app", _text, TEXT), _field("user", _text, TEXT), _field("queue", _text, TEXT, False),
                     _field("groups", _texts, TEXTS, False), _field("priority", is_key, KEY, False),
                     _field("label", _text, TEXT, False))
# The fields of each delta op ("op" names it).
DELTA_FIELDS: dict[str, tuple[Field, ...]] = {
    "node_added": NODE_FIELDS,
    "node_updated": NODE_FIELDS[:2],
    "node_removed": NODE_FIELDS[:1],
    "app_added": APP_FIELDS,
    "app_removed": APP_FIELDS[:1],
    "attempt_added": APP_FIELDS[:1],
    "assignment_refused": (_field("assignment_id", _text, TEXT), _field("reason", _text, TEXT, False)),
    # the app's whole blacklist after an allocate call or a new attempt changed it: node ids and racks
    "blacklist": (APP_FIELDS[0], _field("places", _texts, TEXTS)),
    # `yarn application -updatePriority`: the priority the RM set (capped at the cluster's max)
    "app_priority": (APP_FIELDS[0], _field("priority", is_key, KEY)),
    # node labels (YARN's RMNodeLabelsManager): the cluster's, whole; a node's new one ("": none)
    "labels": (_field("labels", _labels, LABELS),),
    "node_label": (NODE_FIELDS[0], _field("label", _text, TEXT)),
}
DELTA_OPS = tuple(DELTA_FIELDS)

# ---------------------------------------------------------------------------- rows

StartedRow = tuple[str, str, str, int, int, "str | None", tuple, Any]
AskRow = tuple[int, Any, str, int, int, str, bool, tuple, "str | None"]


def started_row(row: Any, names: Sequence[str]) -> StartedRow | str:
    """A "started" (or snapshot "containers") row parsed: container, app, node, priority,
    allocation_id, assignment_id, amounts, cards (None when the row has none); or what is wrong
    with it. The amounts and cards are checked by the core, which knows its resource types and
    the node's cards: cards that cannot be the container's leave it placed by the core's rule."""
    fields = len(CONTAINER_FIELDS)
    end = fields + len(names)
    if type(row) is not list or not end <= len(row) <= end + 1:
        return (f"a started container is [{', '.join(CONTAINER_FIELDS)}, then one amount for each of "
                f"{', '.join(names)}, then optionally its cards]")
    cid, app, node, priority, allocation_id, assignment_id = row[:fields]
    if not (type(cid) is type(app) is type(node) is str and is_key(priority) and is_key(allocation_id)
            and (assignment_id is None or type(assignment_id) is str)):
        return ("container, app and node must be strings, priority and allocation_id integers (Java longs), "
                "assignment_id a string or null")
    return (cid, app, node, priority, allocation_id, assignment_id, tuple(row[fields:end]),
            row[end] if len(row) > end else None)


def ask_row(row: Any, names: Sequence[str]) -> AskRow | str:
    """An "asks" row parsed: id, count, app, priority, allocation_id, location, relax_locality,
    amounts, node label expression (None: none given); or what is wrong with it. The count and
    amounts are checked by the core."""
    fields = len(ASK_FIELDS)
    end = fields + len(names)
    if type(row) is not list or not end <= len(row) <= end + 1:
        return (f"an ask is [{', '.join(ASK_FIELDS)}, then one amount for each of {', '.join(names)}, "
                "then optionally its node label expression]")
    ask_id, count, app, priority, allocation_id, location, relax = row[:fields]
    label = row[end] if len(row) > end else None
    if not (is_long(ask_id) and type(app) is str and is_key(priority) and is_key(allocation_id)
            and type(location) is str and location and (label is None or type(label) is str)):
        return ("id must be an integer from 0 to 2^63-1, app and location non-empty strings, priority and "
                "allocation_id integers (Java longs), the label a string")
    return ask_id, count, app, priority, allocation_id, location, relax is True, tuple(row[fields:end]), label


def node_row(row: Any, names: Sequence[str]) -> tuple[str, tuple] | str:
    """A schedule's "nodes" row parsed: the node and its free amounts; or what is wrong with it."""
    if type(row) is not list or len(row) != 1 + len(names) or type(row[0]) is not str:
        return f"a node with room is [node, then its free amount of each of {', '.join(names)}]"
    free = tuple(row[1:])
    if not all(map(is_long, free)):
        return "free amounts must be integers from 0 to 2^63-1"
    return row[0], free


def finished_pair(container: Any, state: Any) -> str:
    """What is wrong with one "finished" pair, or ""."""
    if type(container) is not str or type(state) is not str:
        return f"container {brief(container)} in state {brief(state)}: both must be strings"
    return ""


def saved_state(record: Any, offset: float) -> tuple[SavedState, list[str]]:
    """A snapshot's "preemption_state" on the core's clock (`offset`: wall-clock seconds minus the
    core's), and what was wrong with it, each item named. Never raises: a record that is not an
    object of this STATE_VERSION is ignored whole; a bad item is skipped and the rest kept."""
    if type(record) is not dict:
        return SavedState(), [f"is not an object: {brief(record)}"]
    if not (type(record.get("v")) is int and record["v"] == STATE_VERSION):  # (not 1.0, not true)
        return SavedState(), [f"has version {brief(record.get('v'))}, this service reads version {STATE_VERSION} "
                              "(a record of another yarn-drf version): ignored"]
    problems: list[str] = []
    marks = [mark for item in _items(record, "marks", MAX_SAVED_MARKS, problems)
             if (mark := _saved_mark(item, offset, problems)) is not None]
    leaves = [leaf for item in _items(record, "leaves", MAX_SAVED_LEAVES, problems)
              if (leaf := _saved_leaf(item, offset, problems)) is not None]
    return SavedState(tuple(marks), tuple(leaves)), problems


def _items(record: dict, field: str, most: int, problems: list[str]) -> list:
    items = record.get(field)
    if items is None:
        return []
    if type(items) is not list:
        problems.append(f"{field} must be a list, got {brief(items)}")
        return []
    if len(items) > most:
        problems.append(f"{field}: {len(items)} items, more than the {most} a record holds; the rest ignored")
    return items[:most]


def _saved_mark(item: Any, offset: float, problems: list[str]) -> SavedMark | None:
    problem = check_fields(item, _MARK_CHECKS)
    if not problem and item["marked_at_ms"] > item["deadline_ms"]:
        problem = "marked_at_ms is after deadline_ms"
    if problem:
        problems.append(f"mark {brief(item)}: {problem}")
        return None
    marked_at, deadline = item["marked_at_ms"] / 1000 - offset, item["deadline_ms"] / 1000 - offset
    [until] = _times(item, offset, ("waiting_until_ms",))
    return SavedMark(item["container"], item["node"], item["app"], (item["priority"], item["allocation_id"]),
                     item["reason"], marked_at, deadline, until)


def _saved_leaf(item: Any, offset: float, problems: list[str]) -> SavedLeaf | None:
    problem = check_fields(item, _LEAF_CHECKS)
    if not problem and item.get("below_fair_since_ms") is None and item.get("below_min_since_ms") is None:
        problem = "has no clock (below_fair_since_ms or below_min_since_ms)"
    if problem:
        problems.append(f"leaf {brief(item)}: {problem}")
        return None
    fair, low, until = _times(item, offset, ("below_fair_since_ms", "below_min_since_ms", "waiting_until_ms"))
    return SavedLeaf(item["queue"], fair, low, item.get("starved"), until)


def _times(item: dict, offset: float, names: tuple[str, ...]) -> list[float | None]:
    return [None if item.get(n) is None else item[n] / 1000 - offset for n in names]


def _wall_ms(v: Any) -> bool:
    return is_long(v) and v < WALL_MS_LIMIT


def _name(v: Any) -> bool:
    return type(v) is str and v != ""


def _reason(v: Any) -> bool:
    return v in (FAIR, MIN)


# Milliseconds since 1970 that a float holds exactly (beyond the year 287,000).
WALL_MS_LIMIT = 1 << 53
WALL_MS, NAME = "milliseconds since 1970 (an integer from 0 to 2^53-1)", "a non-empty string"
REASON = f"{FAIR!r} or {MIN!r}"
_MARK_CHECKS = (_field("container", _name, NAME), _field("node", _name, NAME), _field("app", _name, NAME),
                _field("priority", is_key, KEY), _field("allocation_id", is_key, KEY),
                _field("reason", _reason, REASON), _field("marked_at_ms", _wall_ms, WALL_MS),
                _field("deadline_ms", _wall_ms, WALL_MS), _field("waiting_until_ms", _wall_ms, WALL_MS, False))
_LEAF_CHECKS = (_field("queue", _name, NAME), _field("below_fair_since_ms", _wall_ms, WALL_MS, False),
                _field("below_min_since_ms", _wall_ms, WALL_MS, False), _field("starved", _reason, REASON, False),
                _field("waiting_until_ms", _wall_ms, WALL_MS, False))


# ---------------------------------------------------------------------------- replies

# One encoder for every reply: json.dumps with non-default arguments builds a new one per call.
_encode = json.JSONEncoder(separators=(",", ":")).encode
_EMPTY_SCHEDULE_REPLY = '{"v":%d,"ok":true,"seq":%%d,"assignments":[],"placements":[]}' % VERSION


def _reply(**fields: Any) -> str:
    return _encode({"v": VERSION, "ok": True, **fields})


def _victim(v: Victim, now: float) -> dict[str, Any]:
    return dict(zip(PREEMPTION_FIELDS, (v.container_id, v.app_id, v.node_id, v.queue, v.for_queue, v.reason,
                                        max(0, round((v.deadline - now) * 1000)))))


def preemption_state(state: SavedState, offset: float) -> dict[str, Any]:
    """The core's preemption state as a reply carries it (`offset`: wall-clock seconds minus the
    core's clock): the fields of MARK_FIELDS and LEAF_FIELDS in that order, those without a value
    left out."""
    def ms(t: float | None) -> int | None:
        return None if t is None or not math.isfinite(t) else max(0, round((t + offset) * 1000))

    marks = [_present(zip(MARK_FIELDS, (m.container_id, m.node_id, m.app_id, m.key[0], m.key[1], m.reason,
                                        ms(m.marked_at), ms(m.deadline), ms(m.waiting_until))))
             for m in state.marks]
    leaves = [_present(zip(LEAF_FIELDS, (leaf.path, ms(leaf.below_fair_since), ms(leaf.below_min_since), leaf.starved,
                                         ms(leaf.waiting_until))))
              for leaf in state.leaves]
    return {"v": STATE_VERSION, "marks": marks, "leaves": leaves}


def _present(pairs) -> dict[str, Any]:
    return {k: v for k, v in pairs if v is not None}


def snapshot_reply(queues: list[dict[str, Any]]) -> str:
    return _reply(queues=queues)


def schedule_reply(seq: int, assignments: list[dict[str, Any]], placements: list[dict[str, Any]],
                   queues: list[dict[str, Any]] | None, headroom: Sequence[list[Any]] = (),
                   am_diagnostics: Sequence[list[str]] = (), plan: PreemptionPlan | None = None,
                   now: float = 0.0, call_in_ms: int | None = None,
                   state: dict[str, Any] | None = None, queues_built: list[dict[str, Any]] | None = None) -> str:
    """Most calls assign nothing, place nothing and change nothing else: their reply is a format
    away, not an encoding. `queues` (the whole list) only when Java has not had the core's tree
    since a reload or resync, `queues_built` (the entries of the queues built since, and of the
    leaves they went under) only when placement or a recovered app built queues; `headroom`
    rows [app, amounts in the snapshot's resource order] and `am_diagnostics` pairs [app, text]
    only for the apps where they changed; "preempt" and "kill" only when the preemption round
    (`plan`, at `now` on the core's clock) has any ("preempt": its new marks, then the restored
    ones a new RM tells again); "call_in_ms" only when the core wants a call by then without a
    change in YARN (a preemption round or kill due); "preemption_state" (`state`, from
    preemption_state) only when it changed."""
    preempt = [_victim(v, now) for v in (*plan.mark, *plan.retold)] if plan is not None else []
    kill = [_victim(v, now) for v in plan.kill] if plan is not None else []
    if queues is None and call_in_ms is None and state is None and not (
            assignments or placements or queues_built or headroom or am_diagnostics or preempt or kill):
        return _EMPTY_SCHEDULE_REPLY % seq
    fields: dict[str, Any] = {"seq": seq, "assignments": assignments, "placements": placements}
    if queues is not None:
        fields["queues"] = queues
    if queues_built:
        fields["queues_built"] = queues_built
    if headroom:
        fields["headroom"] = headroom
    if am_diagnostics:
        fields["am_diagnostics"] = am_diagnostics
    if preempt:
        fields["preempt"] = preempt
    if kill:
        fields["kill"] = kill
    if call_in_ms is not None:
        fields["call_in_ms"] = call_in_ms
    if state is not None:
        fields["preemption_state"] = state
    return _reply(**fields)


def reload_applied(changes: dict[str, list[str]], queues: list[dict[str, Any]]) -> str:
    return _reply(accepted=True, changes=changes, queues=queues)


def reload_refused(errors: list[str]) -> str:
    return _reply(accepted=False, errors=errors)


def move_reply(placed: Placement) -> str:
    return _reply(accepted=placed.accepted, queue=placed.queue, reason=placed.reason)


def error(message: str) -> str:
    return _encode({"v": VERSION, "ok": False, "error": message})


def assignment(a: Assignment) -> dict[str, Any]:
    """An assignment; "cards" only on a node with cards (the shim tells the container which)."""
    out = {"assignment_id": a.assignment_id, "app": a.app_id, "node": a.node_id, "queue": a.queue,
           "priority": a.priority, "allocation_id": a.allocation_id, "resources": a.resources}
    if a.cards:
        out["cards"] = list(a.cards)
    return out


def placement(app: str, placed: Placement) -> dict[str, Any]:
    return {"app": app, "accepted": placed.accepted, "queue": placed.queue, "reason": placed.reason}


def queue_entry(path: str, q: Queue) -> dict[str, Any]:
    """One queue of the "queues" list: what Java needs for getQueueInfo, ACLs, limits and labels
    (the optional fields of issue 28 only where they say more than their absence)."""
    spec = q.spec
    entry = {"name": path, "leaf": q.is_leaf, "weight": spec.weight, "max": dict(spec.max),
             "max_fraction": spec.max_fraction, "submit_acl": spec.submit_acl.text,
             "admin_acl": spec.admin_acl.text, "draining": bool(q.draining)}
    setters, above = [], q  # the queues on its path that set a max-container (few or none): nearest first
    while above is not None:  # a queue's parent is a queue
        if above.spec.max_container:
            setters.append(above.spec)
        above = above.parent
    if setters:
        entry["max_container"] = max_container_of(setters[::-1])
    accessible, default = q.labels
    if ALL_LABELS not in accessible:
        entry["labels"] = sorted(accessible)
    if default:
        entry["default_label"] = default
    return entry
