"""Delay scheduling inside the DRF order (Zaharia et al., EuroSys 2010): where a request whose
turn it is goes, and when it lets a node go by to wait for a more local one.

A request *prefers locality* when it names nodes or racks that still want containers. When its
turn comes at a node (the decision walked the DRF order down to it and it fits the node), it is
placed on, in this order:

1. the node itself, if it is node-local (the request names its host, or its id);
2. another node of the same schedule call that is node-local for it and has room for it;
3. once its level accepts rack-local: the node if it is rack-local, else another node of the
   call in a rack it names with room for it;
4. once its level accepts any node: the node itself (YARN's relax-locality rule permitting).

Otherwise it is passed over at this node: the decision goes on in DRF order, as it does for a
request that does not fit. The level is the locality the request accepts now: node-local (it
names a node that wants containers) or rack-local (it names only racks) at first; rack-local once
it has been passed over for its queue's `node-locality-delay-s`, any node after
`rack-locality-delay-s` more. The clock starts when it is first passed over after its last
container (or after it started waiting) and runs whatever else happens, so a request is passed
over for at most the two delays together; a container brings the level back to the locality it
got (node-local, rack-local, or any) and stops the clock.

Time, not a count of scheduling opportunities: a schedule call offers the nodes that heartbeated
since their last offer (with the shim's yarn-drf.scheduler.offer-between-heartbeats, every node
with room, in calls back to back on a busy cluster), so a count of nodes passed over would measure
the heartbeat and call rates, not how long a local slot takes to free; a time means the same on
any cluster and at any call rate. (FairScheduler
does the same in its continuous-scheduling mode, `locality-delay-node-ms`/`-rack-ms`; its
heartbeat-driven `locality.threshold.node` is a fraction of the cluster's nodes, each heartbeating
once per `yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`, so a threshold f is about f
times that interval.)
"""
from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Final

from scheduler.model import NODE_LOCAL, OFF_SWITCH, RACK_LOCAL, Node, Request

if TYPE_CHECKING:
    from scheduler.config import QueueSpec

# The defaults of a queue file that sets no delay: CapacityScheduler's default node-locality-delay
# (40 missed opportunities, at most the cluster's node count) lets rack-local in after at most one
# heartbeat round of the cluster, 1 s with YARN's default NodeManager heartbeat, and off-switch
# after about one more round.
DEFAULT_NODE_DELAY_S: Final = 1.0
DEFAULT_RACK_DELAY_S: Final = 1.0
LEVELS: Final = ("node-local", "rack-local", "off-switch")

Delays = tuple[float, float]  # (node-locality-delay-s, rack-locality-delay-s)
Usable = Callable[[Node, Request], bool]  # whether the request's container may go on the node now


def delays_of(spec: QueueSpec, parent: Delays | None) -> Delays:
    """A queue's delays: its own, else its nearest ancestor's, else the defaults."""
    if parent is not None and spec.node_locality_delay_s is None and spec.rack_locality_delay_s is None:
        return parent  # (its parent's pair itself: placement creates leaves by the thousand)
    node_s, rack_s = parent if parent is not None else (DEFAULT_NODE_DELAY_S, DEFAULT_RACK_DELAY_S)
    if spec.node_locality_delay_s is not None:
        node_s = spec.node_locality_delay_s
    if spec.rack_locality_delay_s is not None:
        rack_s = spec.rack_locality_delay_s
    return node_s, rack_s


def locality_of(req: Request, node: Node) -> int:
    """How local `node` is for the request: NODE_LOCAL, RACK_LOCAL or OFF_SWITCH."""
    if req.local_name(node) is not None:
        return NODE_LOCAL
    rack = req.racks.get(node.rack)
    return RACK_LOCAL if rack is not None and rack[0] > 0 else OFF_SWITCH


def level(req: Request, delays: Delays, now: float) -> int:
    """The locality the request accepts at `now` (a level: any node is OFF_SWITCH)."""
    start = _start(req)
    if start == OFF_SWITCH:
        return start
    since = req.skipped_since
    waited = 0.0 if since is None else now - since  # (with no delay it is never passed over)
    to_rack, to_any = _thresholds(start, delays)
    if start == NODE_LOCAL and waited < to_rack:
        return NODE_LOCAL
    return RACK_LOCAL if waited < to_any else OFF_SWITCH


def relaxes_in(req: Request, delays: Delays, now: float) -> tuple[float, float] | None:
    """Seconds until the request accepts rack-local and until it accepts any node (0: it does
    now), counted from `now` if its clock has not started; None when it waits for nothing."""
    start = _start(req)
    if start == OFF_SWITCH:
        return None
    waited = 0.0 if req.skipped_since is None else now - req.skipped_since
    to_rack, to_any = _thresholds(start, delays)
    return max(0.0, to_rack - waited), max(0.0, to_any - waited)


def most_local(req: Request) -> int:
    """The most local level a node can have for the request: what it still names."""
    return NODE_LOCAL if req.wanted_nodes else RACK_LOCAL if req.wanted_racks else OFF_SWITCH


def _start(req: Request) -> int:
    """The level before any wait: the one its last container left, but no more local than what
    it still names (a request naming only racks never waits for a node-local slot)."""
    best = most_local(req)
    return req.level if req.level > best else best


def _thresholds(start: int, delays: Delays) -> tuple[float, float]:
    """Seconds passed over after which a request starting at `start` accepts rack-local, and any node."""
    if start == NODE_LOCAL:
        return delays[0], delays[0] + delays[1]
    return 0.0, delays[1]


def permits(req: Request, node: Node, delays: Delays, now: float) -> bool:
    """Whether the request may go on `node` now, by YARN's rule and its level; changes nothing."""
    if not req.allows(node):
        return False
    if not (req.nodes or req.racks):
        return True
    return locality_of(req, node) <= level(req, delays, now)


def choose(req: Request, node: Node, delays: Delays, now: float, offer: Offer | None,
           usable: Usable) -> Node | None:
    """Where the request whose turn it is at `node` goes (the module's rule), or None when it is
    passed over there; that starts its clock. `usable` tells whether another node of the call
    (`offer`; None: the decision is for `node` alone) can take it now."""
    if req.local_name(node) is not None:
        return node
    if offer is not None:
        other = offer.node_local(req, usable)
        if other is not None:
            return other
    accepts = level(req, delays, now)
    if accepts != NODE_LOCAL:
        if locality_of(req, node) == RACK_LOCAL and req.allows(node):
            return node
        if offer is not None:
            other = offer.rack_local(req, usable)
            if other is not None:
                return other
        if accepts == OFF_SWITCH and req.allows(node):
            return node
    if req.skipped_since is None:
        req.skipped_since = now
    return None


def placed(req: Request, taken: tuple[str, str] | None) -> None:
    """A container of the request went where `taken` (Request.take) says: its level becomes
    that locality and its clock stops."""
    req.level = OFF_SWITCH if taken is None else NODE_LOCAL if taken[0] == "node" else RACK_LOCAL
    req.skipped_since = None


class Offer:
    """The nodes of one schedule call, for the requests that would rather go on another of them.

    Within a call rooms only shrink and locality counts only fall, so a node found unusable for
    a request stays so until the call ends: each request's candidates are listed once per call
    (from its names or the call's nodes, whichever are fewer) and dropped as they fail, so a
    call costs a request O(its names + the call's nodes) however often its turn comes."""

    __slots__ = ("nodes", "_hosts", "_racks", "_local", "_rack_local")

    def __init__(self, nodes: Collection[Node]) -> None:
        self.nodes = nodes
        self._hosts: dict[str, list[Node]] | None = None  # host and node id -> the call's nodes
        self._racks: dict[str, list[Node]] | None = None
        self._local: dict[Request, list[Node]] = {}  # candidates left, the next one last
        self._rack_local: dict[Request, list[Node]] = {}

    def node_local(self, req: Request, usable: Usable) -> Node | None:
        """A node of the call that is node-local for the request and can take it."""
        if not req.wanted_nodes:
            return None
        left = self._local.get(req)
        if left is None:
            left = self._local[req] = self._node_candidates(req)
        while left:
            node = left[-1]
            if req.local_name(node) is not None and usable(node, req):
                return node
            left.pop()
        return None

    def rack_local(self, req: Request, usable: Usable) -> Node | None:
        """A node of the call in a rack the request wants, that it may use and that can take it."""
        if not req.wanted_racks:
            return None
        left = self._rack_local.get(req)
        if left is None:
            racks = self._by_rack()
            left = [n for rack, entry in req.racks.items() if entry[0] > 0 for n in racks.get(rack, ())]
            left.reverse()
            self._rack_local[req] = left
        while left:
            node = left[-1]
            if locality_of(req, node) == RACK_LOCAL and req.allows(node) and usable(node, req):
                return node
            left.pop()
        return None

    def _node_candidates(self, req: Request) -> list[Node]:
        if len(req.nodes) < len(self.nodes):
            hosts = self._by_host()
            found = [n for name, count in req.nodes.items() if count > 0 for n in hosts.get(name, ())]
        else:
            found = [n for n in self.nodes if req.local_name(n) is not None]
        found.reverse()
        return found

    def _by_host(self) -> dict[str, list[Node]]:
        hosts = self._hosts
        if hosts is None:
            hosts = self._hosts = {}
            for node in self.nodes:
                hosts.setdefault(node.host, []).append(node)
                if node.id != node.host:
                    hosts.setdefault(node.id, []).append(node)
        return hosts

    def _by_rack(self) -> dict[str, list[Node]]:
        racks = self._racks
        if racks is None:
            racks = self._racks = {}
            for node in self.nodes:
                racks.setdefault(node.rack, []).append(node)
        return racks
