"""The bridge message format, version 3 (see BRIDGE.md): JSON objects in, JSON objects out.

Java sends one request per call; each request has "v" and "type". Replies always have "v" and
"ok"; a request that cannot be understood gets {"ok": false, "error": ...} and never an exception.
Version 2 moved asks out of "deltas": "asks" in full with an id (ASK_FIELDS), "counts" by id.
Version 3 moved containers out too: "started" rows (CONTAINER_FIELDS), "finished" pairs.
"""
from __future__ import annotations

import json
from typing import Any

VERSION = 3
REQUEST_TYPES = ("snapshot", "heartbeat", "events", "submit", "reload", "status")
DELTA_OPS = (
    "node_added", "node_updated", "node_removed", "app_added", "app_removed", "attempt_added",
    "assignment_refused",
)
# A container started ("started", and a snapshot's "containers"): these, then one amount per
# resource type in the snapshot's "resources" order. assignment_id is null for a container the
# core did not assign (recovered after an RM restart). "finished" is flat container, state pairs.
CONTAINER_FIELDS = ("container", "app", "node", "priority", "allocation_id", "assignment_id")
# An ask in full ("asks"): these, then one amount per resource type in the snapshot's "resources"
# order. Afterwards the pair id, count in the flat "counts" array changes its count.
ASK_FIELDS = ("id", "count", "app", "priority", "allocation_id", "location", "relax_locality")


_decoder = json.JSONDecoder()


class ProtocolError(ValueError):
    """A request that is not a well-formed message of this version; the text says what and where."""


def decode_request(text: str) -> dict[str, Any]:
    if not isinstance(text, str):
        raise ProtocolError(f"request is not a string but {type(text).__name__}")
    try:
        # raw_decode skips json.loads' wrapper layers, a measurable share of a small heartbeat
        if text[:1].isspace():
            text = text.lstrip()
        msg, end = _decoder.raw_decode(text)
        if end != len(text) and text[end:].strip():
            raise ValueError(f"extra data after the JSON value at character {end}")
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"request is not JSON: {exc}") from exc
    if not isinstance(msg, dict):
        raise ProtocolError("request is not a JSON object")
    if msg.get("v") != VERSION:
        raise ProtocolError(f"request version {msg.get('v')!r}, this service speaks {VERSION}")
    if msg.get("type") not in REQUEST_TYPES:
        raise ProtocolError(f"unknown request type {msg.get('type')!r} (known: {', '.join(REQUEST_TYPES)})")
    return msg


# One encoder for every reply: json.dumps with non-default arguments builds a new one per call.
_encode = json.JSONEncoder(separators=(",", ":")).encode
_EMPTY_HEARTBEAT_REPLY = '{"v":%d,"ok":true,"seq":%%d,"assignments":[]}' % VERSION


def reply(**fields: Any) -> str:
    return _encode({"v": VERSION, "ok": True, **fields})


def heartbeat_reply(seq: int, queues: list[dict[str, Any]] | None, assignments: list[dict[str, Any]]) -> str:
    """Most heartbeats assign nothing and carry no new queue list; their reply is a format away,
    not an encoding."""
    if queues is not None:
        return reply(seq=seq, assignments=assignments, queues=queues)
    if not assignments and type(seq) is int:
        return _EMPTY_HEARTBEAT_REPLY % seq
    return reply(seq=seq, assignments=assignments)


def error(message: str) -> str:
    return _encode({"v": VERSION, "ok": False, "error": message})
