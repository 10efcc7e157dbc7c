"""The runtime objects of the core: nodes, queues, apps, requests and containers.

These are plain slotted records mutated by SchedulerCore; they hold no policy of their own
except the small locality rule of a request, which is YARN's (the delay that relaxes it is
scheduler.locality's).
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import count
from operator import attrgetter
from typing import TYPE_CHECKING, Final, NamedTuple

from scheduler.cards import Cards
from scheduler.heap import KeyedHeap
from scheduler.resources import LinearForm, QuantisedRatio, fits

if TYPE_CHECKING:
    from scheduler.config import QueueSpec
    from scheduler.resources import ResourceTypes, Vector

ANY = "*"
# A request's locality levels (scheduler.locality): how local a node is for it, and what it accepts.
NODE_LOCAL: Final = 0
RACK_LOCAL: Final = 1
OFF_SWITCH: Final = 2
YARN_AM_SUFFIX = "_000001"  # YARN gives an attempt's AM the attempt's first container id
_app_sequence = count()
_UNWEIGHED: Final = LinearForm((), max)
_DEEPEST: Final = 0x10FFFF  # the last code point: chr(_DEEPEST - depth) sorts deeper queues first  # a queue's share functions until SchedulerCore._limits sets them


class Node:
    __slots__ = ("id", "host", "rack", "capacity", "allocated", "containers", "reserved", "cards", "partition")

    def __init__(self, node_id: str, rack: str, capacity: Vector) -> None:
        self.id = node_id
        # YARN's node id is host:port, but an AM names a node by its host (SchedulerNode.getNodeName;
        # host:port only with yarn.scheduler.include-port-in-node-name): a request matches either
        self.host = node_id.rsplit(":", 1)[0] if ":" in node_id else node_id
        self.rack = rack
        self.capacity = capacity
        self.allocated: Vector = tuple(0 for _ in capacity)
        self.containers: set[str] = set()
        self.reserved: Request | None = None
        self.cards: Cards | None = None  # its GPU cards, if it declared them (scheduler.cards)
        self.partition = ""  # its node label, "" for none (scheduler.partitions)

    @property
    def limit(self) -> Vector:
        """The capacity as fit tests see it: with cards, gpu-mem is the most one container can get."""
        return self.capacity if self.cards is None else self.cards.limit

    def holds(self, shape: Vector) -> bool:
        """Whether the node, empty, could hold a container of `shape` (with cards: by their rule)."""
        if self.cards is None:
            return fits(shape, self.capacity)
        return fits(shape, self.cards.limit) and self.cards.holds(shape)


class Request:
    """One request key (priority, allocation id) of an app, with YARN's locality entries.

    `count` is the ANY count (the total still wanted); `racks` maps rack -> [count, relax],
    `nodes` maps node name (a host, or a node id) -> count; `wanted_nodes` and `wanted_racks`
    count the entries that still want containers. `since` is when the request last started
    waiting. `level` and `skipped_since` are its delay-scheduling state (scheduler.locality):
    the locality it accepts before any wait, and when it was first passed over for locality
    since its last container (None: not since then).
    """

    __slots__ = ("app", "key", "capability", "count", "relax", "racks", "nodes", "wanted_nodes", "wanted_racks",
                 "since", "level", "skipped_since", "reserved_node", "am")

    def __init__(self, app: App, key: tuple[int, int], capability: Vector, now: float) -> None:
        self.app = app
        self.key = key
        self.capability = capability
        self.count = 0
        self.relax = True
        self.racks: dict[str, list] = {}
        self.nodes: dict[str, int] = {}
        self.wanted_nodes = 0
        self.wanted_racks = 0
        self.since = now
        self.level = NODE_LOCAL
        self.skipped_since: float | None = None
        self.reserved_node: Node | None = None
        self.am = False  # it asks for the app's ApplicationMaster: limited by its queue's max-am-share

    def restart(self, now: float) -> None:
        """The request starts waiting anew (its count rose from 0): a fresh wait for locality too."""
        self.since = now
        self.level = NODE_LOCAL
        self.skipped_since = None

    def set_node(self, name: str, count: int) -> None:
        self.wanted_nodes += (count > 0) - (self.nodes.get(name, 0) > 0)
        self.nodes[name] = count

    def set_rack(self, rack: str, count: int, relax: bool | None = None) -> None:
        """The rack's count (and its relax-locality, unless None: as it was)."""
        entry = self.racks.get(rack)
        if entry is None:
            entry = self.racks[rack] = [0, True if relax is None else relax]
        elif relax is not None:
            entry[1] = relax
        self.wanted_racks += (count > 0) - (entry[0] > 0)
        entry[0] = count

    def local_name(self, node: Node) -> str | None:
        """The name under which this request still wants containers on `node`, if it does."""
        nodes = self.nodes
        if nodes.get(node.host, 0) > 0:
            return node.host
        if node.id != node.host and nodes.get(node.id, 0) > 0:
            return node.id
        return None

    def allows(self, node: Node) -> bool:
        """YARN's relax-locality rule for placing one container of this request on `node`."""
        if not self.nodes and not self.racks:
            return self.relax
        if self.local_name(node) is not None:
            return True
        rack = self.racks.get(node.rack)
        if rack is not None:
            if not rack[1]:
                return False
            if rack[0] > 0:
                return True
        return self.relax

    def take(self, node: Node) -> tuple[str, str] | None:
        """Counts one container on `node` off the locality entries; returns what to give back
        (its kind tells the container's locality: "node", "rack", or None for off-switch)."""
        self.count -= 1
        if not self.nodes and not self.racks:
            return None
        name = self.local_name(node)
        if name is not None:
            self.set_node(name, self.nodes[name] - 1)
            rack = self.racks.get(node.rack)
            if rack is not None and rack[0] > 0:
                self.set_rack(node.rack, rack[0] - 1)
            return ("node", name)
        rack = self.racks.get(node.rack)
        if rack is not None and rack[0] > 0:
            self.set_rack(node.rack, rack[0] - 1)
            return ("rack", node.rack)
        return None

    def give_back(self, taken: tuple[str, str] | None, rack: str) -> None:
        self.count += 1
        if taken is None:
            return
        kind, where = taken
        if kind == "node":
            self.set_node(where, self.nodes.get(where, 0) + 1)
        name = rack if kind == "node" else where
        entry = self.racks.get(name)
        if entry is not None:
            self.set_rack(name, entry[0] + 1)


class App:
    __slots__ = ("id", "user", "queue", "owner", "priority", "seq", "usage", "am_usage", "requests", "pending",
                 "containers", "runnable", "submitted", "blacklist", "ask_ids")

    def __init__(self, app_id: str, user: str, queue: Queue, priority: int, zero: Vector, now: float) -> None:
        self.id = app_id
        self.user = user
        self.queue = queue
        self.owner: User | None = None  # its user in a leaf with user-limits (SchedulerCore.enter_leaf)
        self.priority = priority
        self.seq = next(_app_sequence)
        self.usage: Vector = zero
        self.am_usage: Vector = zero  # the part of `usage` its AM containers hold
        self.requests: dict[tuple[int, int], Request] = {}
        self.pending = PendingRequests()  # requests with count > 0, iterated in request-key order
        self.containers: set[str] = set()
        self.runnable = False
        self.submitted = now
        self.blacklist: frozenset[str] = frozenset()  # node ids (and racks) the app's AM refuses
        self.ask_ids: list[int] = []  # its asks registered for SchedulerCore.update_counts

    def excludes(self, node: Node) -> bool:
        """Whether the app's AM has blacklisted the node or its rack."""
        return bool(self.blacklist) and (node.id in self.blacklist or node.rack in self.blacklist)


class Sharer:
    """What hierarchical DRF keys in a heap of its parent (SchedulerCore, "keys and heaps"): a
    queue in its parent's heap, or a user in its leaf's. `share` is its H-DRF share for the node
    being decided (its key) and `dirq` its direction (vector / share) in its parent's units,
    quantised; `up_dirq` is the direction its parent's sums hold and `state` how they hold it.
    `shapes` counts, per request capability, the pending requests of runnable apps below it: it
    tells in O(distinct shapes) whether anything below could fit a node at all; `mask` marks
    those shapes. `weigh` turns its usage into its weighted share; `up_raw` turns its usage and
    share into a direction in its parent's units, and `up` its own units (share units when it is
    `nested`, resources otherwise) and share.

    A `nested` one (a parent queue, or a leaf with `user-limits`) heads an H-DRF level: its heap
    holds child queues or users, and it keeps their sums: `act`, the sum of its heap children's
    directions, `idle` its children with usage and no demand, `asides` those the heartbeat set
    aside; `head` is the child heading its heap and `head_mask` that child's mask.
    """

    __slots__ = ("parent", "usage", "shapes", "mask", "share", "dirq", "up_dirq", "state", "aside", "weigh",
                 "up", "up_raw", "min_inv", "nested", "heap", "act", "idle", "asides", "head", "head_mask",
                 "raw_usage", "raw_weigh", "raw_share", "raw_dirq")

    def __init__(self, parent: Queue | None, nested: bool, zero: Vector) -> None:
        self.parent = parent
        self.nested = nested
        self.usage: Vector = zero
        self.shapes: dict[Vector, int] = {}  # (a plain dict: a Counter costs a Python call per queue made)
        self.mask = 0
        self.share = 0.0
        self.dirq: tuple[int, ...] = zero
        self.up_dirq: tuple[int, ...] = zero
        self.state = 0
        self.aside = False
        self.weigh = _UNWEIGHED  # usage -> weighted share: set by SchedulerCore._limits (and _weigh_user)
        self.up: QuantisedRatio | None = None  # (own units, share) -> dirq
        self.up_raw: QuantisedRatio | None = None  # (usage, share) -> dirq
        self.min_inv: tuple[float, ...] | None = None
        self.heap = KeyedHeap()
        self.act: tuple[int, ...] = zero
        self.idle: dict[Sharer, None] = {}
        self.asides: list[Sharer] = []
        self.head: Sharer | None = None  # the child heading its heap when it was last looked at
        self.head_mask = 0
        # the share and direction SchedulerCore._push_queue last measured from `usage` alone, and the
        # usage tuple and share function it measured them with: setting aside and back measures again
        # only if either changed
        self.raw_usage: Vector | None = None
        self.raw_weigh = _UNWEIGHED
        self.raw_share = 0.0
        self.raw_dirq: tuple[int, ...] | None = None


class User(Sharer):
    """A user of a leaf with `user-limits`: one level of hierarchical DRF below the queues, keyed
    in its leaf's heap as a child queue is in its parent's (`parent` is its leaf); its own heap
    holds its runnable apps with pending requests, by the leaf's order. `usage` is the usage of
    its apps in the leaf. It exists while it has apps there."""

    __slots__ = ("name", "weight", "max_apps", "apps", "running_apps", "waiting")

    def __init__(self, name: str, leaf: Queue, weight: float, max_apps: int | None, zero: Vector) -> None:
        super().__init__(leaf, False, zero)
        self.name = name
        self.weight = weight
        self.max_apps = max_apps
        self.apps = 0
        self.running_apps = 0
        self.waiting: dict[App, None] = {}  # its apps held back by max-running-apps, oldest first

    @property
    def full(self) -> bool:
        """Whether it runs its max-running-apps: its next app waits."""
        return self.max_apps is not None and self.running_apps >= self.max_apps


def apps_in_order(leaf: Queue):
    """The leaf's apps with pending requests in the order the decision serves them (through
    its users when it has them), lazily, without changing the heaps."""
    for item in leaf.heap.ordered():
        if type(item) is User:
            yield from item.heap.ordered()
        else:
            yield item


def head_app(leaf: Queue) -> App | None:
    """The app the decision serves first in the leaf, left in place."""
    item = leaf.heap.peek()
    return item.heap.peek() if type(item) is User else item


def queues_below(q: Queue):
    """q and every queue below it, parents first."""
    yield q
    for child in q.children.values():
        yield from queues_below(child)


def apps_below(q: Queue):
    """The apps of q and of every queue below it."""
    for x in queues_below(q):
        yield from x.apps.values()


_by_key = attrgetter("key")


class PendingRequests:
    """An app's requests that still want containers, iterated in request-key order.

    A heartbeat or a snapshot may bring thousands of asks of one app at once, so a change costs
    O(1) and the order is restored, once, at the next iteration: a batch of n asks costs
    O(n log n), not a sort and a list scan per ask. The list is kept in descending key order and
    iterated reversed, so taking away the first request (the decision serves requests in key
    order) is a pop from its end and keeps it in order. Iterate it only to read: adding or
    removing during an iteration ends that iteration's validity (the decision stops at the
    request it changes).
    """

    __slots__ = ("_live", "_order", "_stale")

    def __init__(self) -> None:
        self._live: dict[Request, None] = {}
        self._order: list[Request] = []  # the live requests, descending by key, unless _stale
        self._stale = False

    def __len__(self) -> int:
        return len(self._live)

    def __bool__(self) -> bool:
        return bool(self._live)

    def __contains__(self, req: Request) -> bool:
        return req in self._live

    def __iter__(self):
        if self._stale:
            self._order = sorted(self._live, key=_by_key, reverse=True)
            self._stale = False
        return reversed(self._order)

    def add(self, req: Request) -> None:
        if req in self._live:
            return
        self._live[req] = None
        if self._stale:
            return
        order = self._order
        if order and order[-1].key < req.key:
            self._stale = True
        else:
            order.append(req)

    def remove(self, req: Request) -> None:
        del self._live[req]
        if self._stale:
            return
        order = self._order
        if order[-1] is req:
            order.pop()
        else:
            self._stale = True


class Queue(Sharer):
    """A queue in the live tree. Parents keep a heap of active children, leaves a heap of apps
    (or, with `user-limits`, of users, each with a heap of its apps): both parents and leaves
    with users are `nested` (Sharer).
    """

    __slots__ = ("spec", "path", "depth", "deepest_first", "children", "scale", "max", "max_apps", "running_apps", "am_usage", "am_limit",
                 "am_share", "draining", "dynamic", "apps", "waiting", "users", "app_weigh", "locality_delays", "labels")

    def __init__(self, spec: QueueSpec, parent: Queue | None, zero: Vector, *, dynamic: bool = False,
                 path: str | None = None) -> None:
        super().__init__(parent, not spec.is_leaf or spec.user_limits is not None, zero)
        self.spec = spec  # (shared by the leaves placement creates: config.CREATED; `path` is their own)
        self.path = spec.path if path is None else path
        self.depth = self.path.count(".")  # root 0: set-asides and re-keys go deepest first
        # (-depth, path) as one string: the heartbeat sorts its blocked queues by it (hdrf._unblock),
        # and one string comparison is several times cheaper than a tuple's
        self.deepest_first = chr(_DEEPEST - self.depth) + self.path
        self.children: dict[str, Queue] = {}
        self.scale: tuple[float, ...] = ()
        self.max: Vector | None = None
        self.max_apps = spec.max_running_apps
        self.running_apps = 0
        # a leaf's AM containers, and what max-am-share lets them hold (SchedulerCore._limits)
        self.am_usage: Vector = zero
        self.am_limit: Vector | None = None
        self.am_share = 0.0
        self.draining = False
        self.dynamic = dynamic
        self.apps: dict[str, App] = {}
        # its apps held back by max-running-apps, oldest first: they all have the same queue
        # limits, so only the first (the first of each user, with user-limits) can run next
        self.waiting: dict[App, None] = {}
        # its users by name when it has `user-limits`: then `heap` holds users, not apps
        self.users: dict[str, User] | None = None if spec.user_limits is None else {}
        self.app_weigh = _UNWEIGHED  # an app's usage -> its share in this leaf
        # (node-locality-delay-s, rack-locality-delay-s) of its apps' requests (scheduler.locality)
        self.locality_delays: tuple[float, float] = (0.0, 0.0)
        # (accessible-node-labels, default-node-label-expression), inherited (scheduler.partitions)
        self.labels: tuple[frozenset[str], str] = (frozenset(), "")

    @property
    def is_leaf(self) -> bool:
        return not self.children and self.spec.is_leaf

    def ancestors_and_self(self):
        q = self
        while q is not None:
            yield q
            q = q.parent


class Container:
    """A running container; `started` (the core's clock) and `am` order preemption victims."""

    __slots__ = ("id", "app", "node", "resources", "key", "taken", "confirmed", "cards", "started", "am")

    def __init__(self, cid: str, app: App, node: Node, resources: Vector, key, taken, confirmed: bool,
                 cards: tuple[int, ...] = (), started: float = 0.0) -> None:
        self.id = cid
        self.cards = cards  # the indices of the node's GPU cards its gpu-mem is on; () for none
        self.app = app
        self.node = node
        self.resources = resources
        self.key = key
        self.taken = taken
        self.confirmed = confirmed
        self.started = started
        self.am = False  # the app's ApplicationMaster (SchedulerCore.mark_am, or YARN's id: *_000001)


def is_am(c: Container) -> bool:
    """Whether `c` is its app's ApplicationMaster: marked so, or YARN's first container of an attempt."""
    return c.am or c.id.endswith(YARN_AM_SUFFIX)


class Assignment(NamedTuple):
    """A container the core decided to start on a node now (a tuple: cheap on the hot path)."""

    assignment_id: str
    app_id: str
    node_id: str
    queue: str
    priority: int
    allocation_id: int
    vector: tuple
    types: "ResourceTypes"
    cards: tuple[int, ...] = ()  # the node's GPU cards (indices) it goes on; () on a node without cards

    @property
    def resources(self) -> dict[str, int]:
        return self.types.to_dict(self.vector)


@dataclass(frozen=True, slots=True)
class Placement:
    accepted: bool
    queue: str | None
    reason: str = ""
