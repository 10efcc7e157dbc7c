"""The bridge's field tables and typed items, generated from yarn_bridge/contract.yaml by `make
contract` (python -m yarn_bridge.contract_gen): do not edit, edit the spec and regenerate."""
# fmt: off
# pylint: skip-file
from __future__ import annotations

from typing import Any, NamedTuple

VERSION = 7
SPEC_SHA256 = "4df3e377dd8aa1003436126207094277582e10e71ed1e30d8919466c12f4526a"
REQUEST_TYPES = ('snapshot', 'schedule', 'reload', 'move')
# What a value of each checked type must be (a refusal names it).
WHAT = {'text': 'a string', 'name': 'a non-empty string', 'texts': 'a list of strings', 'long': 'an integer from 0 to 2^63-1', 'key': 'an integer (a Java long)', 'milliseconds': 'a number of milliseconds from 0', 'wall_ms': 'milliseconds since 1970 (an integer from 0 to 2^53-1)', 'reason': "'fair-share' or 'min-share'", 'list': 'a list', 'rows': 'a list of rows', 'pairs': 'a list of pairs (even length)', 'amounts': 'an object of amounts', 'labels': 'an object of node label names to booleans (exclusive)', 'any': 'any JSON value (checked where it is read)'}
# A field: its name, its type (a key of WHAT), whether it is required; in the order it is written.
Field = tuple[str, str, bool]
# The fields of each request type after the envelope (v, type, epoch).
ENVELOPES: dict[str, tuple[Field, ...]] = {
    'snapshot': (('resources', 'texts', True), ('nodes', 'list', False), ('apps', 'list', False), ('containers', 'rows', False), ('asks', 'rows', False), ('counts', 'pairs', False), ('am_asks', 'list', False), ('labels', 'labels', False), ('preemption_state', 'any', False)),
    'schedule': (('seq', 'long', True), ('deltas', 'list', False), ('started', 'rows', False), ('finished', 'pairs', False), ('asks', 'rows', False), ('counts', 'pairs', False), ('am_asks', 'list', False), ('submissions', 'list', False), ('nodes', 'rows', False), ('heartbeats', 'long', False), ('rtt_ms', 'milliseconds', False)),
    'reload': (('path', 'text', False),),
    'move': (('app', 'text', True), ('queue', 'text', True), ('user', 'text', True), ('groups', 'texts', False)),
}
# The objects inside requests.
ITEMS: dict[str, tuple[Field, ...]] = {
    'node': (('node', 'text', True), ('capacity', 'amounts', True), ('rack', 'text', False), ('cards', 'any', False), ('label', 'text', False)),
    'app': (('app', 'text', True), ('user', 'text', True), ('queue', 'text', True), ('groups', 'texts', False), ('priority', 'key', False), ('blacklist', 'texts', False)),
    'submission': (('app', 'text', True), ('user', 'text', True), ('queue', 'text', False), ('groups', 'texts', False), ('priority', 'key', False), ('label', 'text', False)),
}
# The fields of each delta op ("op" names it).
DELTAS: dict[str, tuple[Field, ...]] = {
    'node_added': (('node', 'text', True), ('capacity', 'amounts', True), ('rack', 'text', False), ('cards', 'any', False), ('label', 'text', False)),
    'node_updated': (('node', 'text', True), ('capacity', 'amounts', True), ('cards', 'any', False)),
    'node_removed': (('node', 'text', True),),
    'app_added': (('app', 'text', True), ('user', 'text', True), ('queue', 'text', True), ('groups', 'texts', False), ('priority', 'key', False), ('blacklist', 'texts', False)),
    'app_removed': (('app', 'text', True),),
    'attempt_added': (('app', 'text', True),),
    'assignment_refused': (('assignment_id', 'text', True), ('reason', 'text', False)),
    'blacklist': (('app', 'text', True), ('places', 'texts', True)),
    'app_priority': (('app', 'text', True), ('priority', 'key', True)),
    'labels': (('labels', 'labels', True),),
    'node_label': (('node', 'text', True), ('label', 'text', True)),
}
# The items of the preemption state record (a snapshot gives it back).
STATE_ITEMS: dict[str, tuple[Field, ...]] = {
    'mark': (('container', 'name', True), ('node', 'name', True), ('app', 'name', True), ('priority', 'key', True), ('allocation_id', 'key', True), ('reason', 'reason', True), ('marked_at_ms', 'wall_ms', True), ('deadline_ms', 'wall_ms', True), ('waiting_until_ms', 'wall_ms', False)),
    'leaf': (('queue', 'name', True), ('below_fair_since_ms', 'wall_ms', False), ('below_min_since_ms', 'wall_ms', False), ('starved', 'reason', False), ('waiting_until_ms', 'wall_ms', False)),
}
# Rows (JSON arrays): the names of their fixed leading elements, by position; then their tail.
ROWS = {'container_row': ('container', 'app', 'node', 'priority', 'allocation_id', 'assignment_id'), 'ask_row': ('id', 'count', 'app', 'priority', 'allocation_id', 'location', 'relax_locality'), 'node_row': ('node',), 'finished_pair': ('container', 'state'), 'count_pair': ('id', 'count'), 'headroom_row': ('app',), 'hold_row': ('node', 'app', 'priority', 'allocation_id'), 'am_diagnostic_pair': ('app', 'text')}
# The replies (after the envelope's, first) and the objects in them: their fields, in the order they are written.
REPLIES = {'envelope': ('v', 'ok', 'error'), 'snapshot': ('queues',), 'schedule': ('seq', 'assignments', 'placements', 'queues', 'queues_built', 'queues_created', 'headroom', 'am_diagnostics', 'preempt', 'kill', 'call_in_ms', 'preemption_state', 'holds', 'holds_ended', 'carried'), 'reload': ('accepted', 'changes', 'queues', 'errors'), 'move': ('accepted', 'queue', 'reason')}
REPLY_ITEMS = {'assignment': ('assignment_id', 'app', 'node', 'queue', 'priority', 'allocation_id', 'resources', 'cards'), 'placement': ('app', 'accepted', 'queue', 'reason'), 'preemption': ('container', 'app', 'node', 'queue', 'for_queue', 'reason', 'kill_in_ms'), 'queue_entry': ('name', 'leaf', 'weight', 'max', 'max_fraction', 'submit_acl', 'admin_acl', 'draining', 'max_container', 'labels', 'default_label'), 'preemption_state': ('v', 'marks', 'leaves'), 'mark': ('container', 'node', 'app', 'priority', 'allocation_id', 'reason', 'marked_at_ms', 'deadline_ms', 'waiting_until_ms'), 'leaf': ('queue', 'below_fair_since_ms', 'below_min_since_ms', 'starved', 'waiting_until_ms')}
STATE_VERSION = 1


class Snapshot(NamedTuple):
    """YARN's whole state; the core rebuilds itself from it (first contact, and after any failure)."""
    type: str
    epoch: int
    resources: list[str]
    nodes: list | None
    apps: list | None
    containers: list | None
    asks: list | None
    counts: list | None
    am_asks: list | None
    labels: dict[str, bool] | None
    preemption_state: Any | None


class Schedule(NamedTuple):
    """Everything that changed since the last call, in the order the core applies it (deltas, started, finished, asks, counts, submissions), and every node with room for some ask to decide for."""
    type: str
    epoch: int
    seq: int
    deltas: list | None
    started: list | None
    finished: list | None
    asks: list | None
    counts: list | None
    am_asks: list | None
    submissions: list | None
    nodes: list | None
    heartbeats: int | None
    rtt_ms: float | None


class Reload(NamedTuple):
    """`yarn rmadmin -refreshQueues`: the core re-reads its queue file."""
    type: str
    epoch: int
    path: str | None


class Move(NamedTuple):
    """`yarn application -movetoqueue`: the app to another queue, checked for its user (YARN has checked the caller's rights)."""
    type: str
    epoch: int
    app: str
    queue: str
    user: str
    groups: list[str] | None


class Node(NamedTuple):
    """A node as a snapshot lists it and node_added carries it."""
    node: str
    capacity: dict[str, int]
    rack: str | None
    cards: Any | None
    label: str | None


class App(NamedTuple):
    """An app YARN runs, as a snapshot lists it and app_added carries it: taken into its queue without placement or ACLs."""
    app: str
    user: str
    queue: str
    groups: list[str] | None
    priority: int | None
    blacklist: list[str] | None


class Submission(NamedTuple):
    """An app to place (placement rules, then the submit ACL), the queue as submitted."""
    app: str
    user: str
    queue: str | None
    groups: list[str] | None
    priority: int | None
    label: str | None


NodeAdded = Node


class NodeUpdated(NamedTuple):
    """The node_updated delta: a node's capacity changed; `cards` only when its cards changed ([]: it declares none any more)."""
    node: str
    capacity: dict[str, int]
    cards: Any | None


class NodeRemoved(NamedTuple):
    """The node_removed delta: a node left."""
    node: str


AppAdded = App


class AppRemoved(NamedTuple):
    """The app_removed delta: an app ended."""
    app: str


class AttemptAdded(NamedTuple):
    """The attempt_added delta: a new attempt: outstanding asks cleared, their ids forgotten (for an app that had an attempt before, a blacklist delta with the new attempt's whole blacklist follows in the same request)."""
    app: str


class AssignmentRefused(NamedTuple):
    """The assignment_refused delta: the shim refused an assignment at commit."""
    assignment_id: str
    reason: str | None


class Blacklist(NamedTuple):
    """The blacklist delta: the app's whole blacklist after an allocate call or a new attempt changed it."""
    app: str
    places: list[str]


class AppPriority(NamedTuple):
    """The app_priority delta: `yarn application -updatePriority`."""
    app: str
    priority: int


class Labels(NamedTuple):
    """The labels delta: the cluster's node labels changed (YARN's RMNodeLabelsManager; the shim compares at each call)."""
    labels: dict[str, bool]


class NodeLabel(NamedTuple):
    """The node_label delta: a node moved to another partition (rmadmin -replaceLabelsOnNode, or the NodeManager's own labels)."""
    node: str
    label: str


# The typed item of each request type and delta op.
REQUEST_ITEMS = {'snapshot': Snapshot, 'schedule': Schedule, 'reload': Reload, 'move': Move}
DELTA_ITEMS = {'node_added': NodeAdded, 'node_updated': NodeUpdated, 'node_removed': NodeRemoved, 'app_added': AppAdded, 'app_removed': AppRemoved, 'attempt_added': AttemptAdded, 'assignment_refused': AssignmentRefused, 'blacklist': Blacklist, 'app_priority': AppPriority, 'labels': Labels, 'node_label': NodeLabel}
OBJECT_ITEMS = {'node': Node, 'app': App, 'submission': Submission}
