"""The bridge message format, version 1 (see BRIDGE.md): JSON objects in, JSON objects out.

Java sends one request per call; each request has "v" and "type". Replies always have "v" and
"ok"; a request that cannot be understood gets {"ok": false, "error": ...} and never an exception.
"""
from __future__ import annotations

import json
from typing import Any

VERSION = 1
REQUEST_TYPES = ("snapshot", "heartbeat", "events", "submit", "reload", "status")
DELTA_OPS = (
    "node_added", "node_updated", "node_removed", "app_added", "app_removed", "attempt_added",
    "ask", "container_started", "container_finished", "assignment_refused",
)


class ProtocolError(ValueError):
    """A request that is not a well-formed version-1 message; the text says what and where."""


def decode_request(text: str) -> dict[str, Any]:
    try:
        msg = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"request is not JSON: {exc}") from exc
    if not isinstance(msg, dict):
        raise ProtocolError("request is not a JSON object")
    if msg.get("v") != VERSION:
        raise ProtocolError(f"request version {msg.get('v')!r}, this service speaks {VERSION}")
    if msg.get("type") not in REQUEST_TYPES:
        raise ProtocolError(f"unknown request type {msg.get('type')!r} (known: {', '.join(REQUEST_TYPES)})")
    return msg


def reply(**fields: Any) -> str:
    return json.dumps({"v": VERSION, "ok": True, **fields}, separators=(",", ":"))


def error(message: str) -> str:
    return json.dumps({"v": VERSION, "ok": False, "error": message}, separators=(",", ":"))
