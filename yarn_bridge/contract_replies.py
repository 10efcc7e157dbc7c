"""The bridge's reply encoders, generated from yarn_bridge/contract.yaml by `make contract`
(python -m yarn_bridge.contract_gen): do not edit, edit the spec and regenerate.

One function per reply (a JSON text) and per object in replies (a dict), a parameter per field:
the fields always written come first, then the optional ones, left out when None. Each writes
its fields in the spec's order, the golden replies' (tests/bridge/contract/); protocol.py maps
the core's values to them."""
# fmt: off
# pylint: skip-file
from __future__ import annotations

import json
from typing import Any

VERSION = 7
# One encoder for every reply: json.dumps with non-default arguments builds a new one per call.
_encode = json.JSONEncoder(separators=(",", ":")).encode


def error_reply(error: str) -> str:
    """A refused request: only when ok is false: what is wrong."""
    return _encode({'v': VERSION, 'ok': False, 'error': error})


def snapshot_reply(queues: list) -> str:
    """The core's queue tree, rebuilt."""
    return _encode({'v': VERSION, 'ok': True, 'queues': queues})


def schedule_reply(seq: int, assignments: list, placements: list, queues: list | None = None, queues_built: list | None = None, queues_created: dict | None = None, headroom: list | None = None, am_diagnostics: list | None = None, preempt: list | None = None, kill: list | None = None, call_in_ms: int | None = None, preemption_state: dict | None = None, holds: list | None = None, holds_ended: list[str] | None = None, carried: int | None = None) -> str:
    """The call's decisions; each optional field only when it says something."""
    out: dict[str, Any] = {'v': VERSION, 'ok': True, 'seq': seq, 'assignments': assignments, 'placements': placements}
    if queues is not None:
        out['queues'] = queues
    if queues_built is not None:
        out['queues_built'] = queues_built
    if queues_created is not None:
        out['queues_created'] = queues_created
    if headroom is not None:
        out['headroom'] = headroom
    if am_diagnostics is not None:
        out['am_diagnostics'] = am_diagnostics
    if preempt is not None:
        out['preempt'] = preempt
    if kill is not None:
        out['kill'] = kill
    if call_in_ms is not None:
        out['call_in_ms'] = call_in_ms
    if preemption_state is not None:
        out['preemption_state'] = preemption_state
    if holds is not None:
        out['holds'] = holds
    if holds_ended is not None:
        out['holds_ended'] = holds_ended
    if carried is not None:
        out['carried'] = carried
    return _encode(out)


def reload_reply(accepted: bool, changes: dict | None = None, queues: list | None = None, errors: list[str] | None = None) -> str:
    """A reload applied or refused."""
    out: dict[str, Any] = {'v': VERSION, 'ok': True, 'accepted': accepted}
    if changes is not None:
        out['changes'] = changes
    if queues is not None:
        out['queues'] = queues
    if errors is not None:
        out['errors'] = errors
    return _encode(out)


def move_reply(accepted: bool, queue: str | None, reason: str | None) -> str:
    """The core's answer to a move."""
    return _encode({'v': VERSION, 'ok': True, 'accepted': accepted, 'queue': queue, 'reason': reason})


def assignment(assignment_id: str, app: str, node: str, queue: str, priority: int, allocation_id: int, resources: dict[str, int], cards: list[int] | None = None) -> dict[str, Any]:
    """A container the core decided to start on a node, for the shim to re-check and commit."""
    out: dict[str, Any] = {'assignment_id': assignment_id, 'app': app, 'node': node, 'queue': queue, 'priority': priority, 'allocation_id': allocation_id, 'resources': resources}
    if cards is not None:
        out['cards'] = cards
    return out


def placement(app: str, accepted: bool, queue: str | None, reason: str | None) -> dict[str, Any]:
    """The core's placement of a submitted app."""
    return {'app': app, 'accepted': accepted, 'queue': queue, 'reason': reason}


def preemption(container: str, app: str, node: str, queue: str, for_queue: str, reason: str, kill_in_ms: int) -> dict[str, Any]:
    """A container of the preemption plan ('preempt', 'kill')."""
    return {'container': container, 'app': app, 'node': node, 'queue': queue, 'for_queue': for_queue, 'reason': reason, 'kill_in_ms': kill_in_ms}


def queue_entry(name: str, leaf: bool, weight: Any, max: dict, max_fraction: float, submit_acl: str, admin_acl: str, draining: bool, max_container: dict[str, int] | None = None, labels: list[str] | None = None, default_label: str | None = None) -> dict[str, Any]:
    """One queue of a 'queues' list, what the shim needs for getQueueInfo, ACLs, limits and labels."""
    out: dict[str, Any] = {'name': name, 'leaf': leaf, 'weight': weight, 'max': max, 'max_fraction': max_fraction, 'submit_acl': submit_acl, 'admin_acl': admin_acl, 'draining': draining}
    if max_container is not None:
        out['max_container'] = max_container
    if labels is not None:
        out['labels'] = labels
    if default_label is not None:
        out['default_label'] = default_label
    return out


def preemption_state(marks: list | None = None, leaves: list | None = None) -> dict[str, Any]:
    """The core's preemption state record: its own version (a saved record outlives the processes);
    times in ms since 1970.
    """
    out: dict[str, Any] = {'v': 1}
    if marks is not None:
        out['marks'] = marks
    if leaves is not None:
        out['leaves'] = leaves
    return out


def mark(container: str, node: str, app: str, priority: int, allocation_id: int, reason: str, marked_at_ms: int, deadline_ms: int, waiting_until_ms: int | None = None) -> dict[str, Any]:
    """A container marked for preemption."""
    out: dict[str, Any] = {'container': container, 'node': node, 'app': app, 'priority': priority, 'allocation_id': allocation_id, 'reason': reason, 'marked_at_ms': marked_at_ms, 'deadline_ms': deadline_ms}
    if waiting_until_ms is not None:
        out['waiting_until_ms'] = waiting_until_ms
    return out


def leaf(queue: str, below_fair_since_ms: int | None = None, below_min_since_ms: int | None = None, starved: str | None = None, waiting_until_ms: int | None = None) -> dict[str, Any]:
    """A leaf's starvation clocks (those it has)."""
    out: dict[str, Any] = {'queue': queue}
    if below_fair_since_ms is not None:
        out['below_fair_since_ms'] = below_fair_since_ms
    if below_min_since_ms is not None:
        out['below_min_since_ms'] = below_min_since_ms
    if starved is not None:
        out['starved'] = starved
    if waiting_until_ms is not None:
        out['waiting_until_ms'] = waiting_until_ms
    return out
