"""Deciding for many nodes at once (SchedulerCore.on_nodes): on which node the per-node decision
runs next. The per-node decision (SchedulerCore.on_heartbeat) stays the one place where fairness
is decided; the functions here only choose the node it decides for.

- `each-node` (the default): every node in turn, in the call's order (rotated at every call): what
  the per-node path does when every node heartbeats at once, with the same fairness.
- `best-fit`: DRF on heterogeneous servers (DRFH, Wang, Li and Liang) places the
  request fairness serves next on the free node where it fits best, the node whose free room has
  the shape closest to the request's. Fitting a CPU-only request on a CPU-only node keeps a GPU
  node's GPU memory usable for a GPU request, where the first node in line would have spent the
  GPU node's CPUs. The request comes from the fairness order itself (`fairness_head`, the order
  the per-node decision walks), the node from the rooms of the call's nodes (`FreeRoom`), and the
  per-node decision then assigns one container there, so every container goes to the lowest share
  whose request fits that node. It packs tighter (8 % more containers per step on the SLS shapes)
  but is not the default: the node it picks for the lowest queue is the room another queue needed
  (a GPU task's best fit is a memory-rich room, the one a memory-heavy queue could use), so over
  time the shares drift apart: on the SLS shapes the mean gap between weighted dominant shares is
  2.1x the per-node path's, the cpu queue ahead of the mem queue by 0.25
  (benchmarks/core/node_choice_fairness.py).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from operator import sub
from typing import Protocol

from scheduler.locality import locality_of, most_local, permits
from scheduler.model import App, Assignment, Node, Queue, Request, head_app
from scheduler.resources import ResourceTypes, Vector, fits


class Deciding(Protocol):
    """What a node choice reads and calls of the core it chooses for (scheduler.core.SchedulerCore)."""

    root: Queue
    nodes: dict[str, Node]
    types: ResourceTypes
    capacity: Vector

    def on_heartbeat(self, node_id: str, now: float | None = None, limit: int = 0) -> list[Assignment]: ...


# A best-fit lookup compares at most this many distinct free rooms: nodes with equal room count
# once, so a cluster of a few node shapes is searched whole, and a lookup stays bounded however
# many rooms a busy, heterogeneous cluster has.
MAX_ROOMS = 64


class NodeQueue:
    """The nodes a schedule call decides for, in order: those earlier calls stopped at their limit
    before finishing first, then the call's own. A node is in it once however often it is listed
    (it keeps its place), and a call takes from the front only the nodes it finished, so a call
    costs what it lists and decides, not what waits (the 10,000-node driver's calls, cut at 64
    assignments, left thousands of nodes for the next ones: copying and checking them at every
    call cost more than its decisions)."""

    __slots__ = ("_order", "_members")

    def __init__(self) -> None:
        self._order: deque[Node] = deque()
        self._members: set[Node] = set()

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[Node]:
        return iter(self._order)

    def __contains__(self, node: object) -> bool:
        return node in self._members

    def add(self, node: Node) -> None:
        """At the back, unless it is in already."""
        if node not in self._members:
            self._members.add(node)
            self._order.append(node)

    def finished(self, count: int) -> None:
        """The first `count` nodes were decided for: they leave."""
        for _ in range(count):
            self._members.discard(self._order.popleft())

    def remove(self, node: Node) -> None:
        """The node left the cluster (rare: O(the queue))."""
        if node in self._members:
            self._members.discard(node)
            self._order.remove(node)


# (core, the call's nodes, now, limit): the assignments for those nodes, at most `limit` of them
# (0: no limit); the nodes the call did not finish stay in the queue, in the order to go on with
NodeChoice = Callable[[Deciding, NodeQueue, float, int], list[Assignment]]


def each_node(core: Deciding, nodes: NodeQueue, now: float, limit: int = 0) -> list[Assignment]:
    """The per-node decision for every node in turn, each until nothing more fits it (or the
    call made `limit` assignments: the node it stopped on and those after it stay, unfinished)."""
    out: list[Assignment] = []
    done = 0
    for node in nodes:
        if not core.root.shapes:
            done = len(nodes)  # nothing pending anywhere: no node waits for more
            break
        out += core.on_heartbeat(node.id, now, limit=limit - len(out) if limit else 0)
        if limit and len(out) >= limit:
            break
        done += 1
    nodes.finished(done)
    return out


def best_fit(core: Deciding, nodes: NodeQueue, now: float, limit: int = 0) -> list[Assignment]:
    """One container at a time, each on the node where the request fairness serves next fits best.

    A node leaves the call once the per-node decision finds nothing more for it. While the head
    of the fairness order fits no free node (it waits for room, or its locality names busy nodes),
    the nodes are taken in the call's order, where the per-node decision skips the blocked queue
    (DRFH) until the head changes."""
    free = FreeRoom(core, nodes)
    out: list[Assignment] = []
    blocked: Request | None = None
    while free and core.root.shapes and not (limit and len(out) >= limit):
        head = fairness_head(core)
        node = None
        if head is not None and head[1] is not blocked:
            node = free.best_for(*head, now)
            if node is None:
                blocked = head[1]
        if node is None:
            node = free.first()
        got = core.on_heartbeat(node.id, now, limit=1)
        if got:
            out += got
            free.update(core.nodes[got[0].node_id])  # (locality may have placed it on another node of the call)
        else:
            free.drop(node)
    unfinished = free.nodes() if limit and len(out) >= limit else []
    nodes.finished(len(nodes))
    for node in unfinished:
        nodes.add(node)
    return out


def fairness_head(core: Deciding) -> tuple[App, Request] | None:
    """The request the per-node decision serves first on a node it fits: the lowest-keyed child at
    each level of the tree, then that app's first pending request. Reads the heaps, changes nothing."""
    q = core.root
    while q.children:
        q = q.heap.peek()
        if q is None:
            return None
    app = head_app(q)
    if app is None:
        return None
    for req in app.pending:
        return app, req
    return None


class FreeRoom:
    """The free room of a call's nodes, grouped by its amounts: nodes with equal room fit any
    request equally well, so best fit compares rooms, not nodes. `first` follows the call's order;
    within a room, nodes are in the order they came to have it."""

    def __init__(self, core: Deciding, nodes: Iterable[Node]) -> None:
        self._sub = core.types.sub
        # per resource, 1 / the cluster's amount: shapes compare shares, whatever the units
        self._inv = tuple(1.0 / c if c else 0.0 for c in core.capacity)
        self._order: dict[Node, None] = dict.fromkeys(nodes)
        self._room: dict[Node, Vector] = {}
        self._rooms: dict[Vector, tuple[tuple[float, ...] | None, dict[Node, None]]] = {}
        for node in nodes:
            self._add(node)

    def __bool__(self) -> bool:
        return bool(self._order)

    def first(self) -> Node:
        return next(iter(self._order))

    def nodes(self) -> list[Node]:
        """The nodes still in the call, in the call's order."""
        return list(self._order)

    def update(self, node: Node) -> None:
        """The node's room changed (it was given a container)."""
        if node in self._room:  # (a node the call dropped has no room left that it tracks)
            self._remove(node)
            self._add(node)

    def drop(self, node: Node) -> None:
        """Nothing more fits the node in this call."""
        self._remove(node)
        del self._order[node]

    def best_for(self, app: App, req: Request, now: float) -> Node | None:
        """The node whose room fits `req` with the shape closest to it (the L1 distance of their
        shares, each normalised to sum 1), among those its locality (YARN's rule and its delay,
        scheduler.locality) and the app's exclusions allow, the most local first; ties go to the
        smallest room (it packs: a call cut at its limit and the next one, which rebuilds the rooms,
        choose as one call would), then to the room met first. None if it fits no node."""
        demand = req.capability
        want = self._shape(demand)
        if want is None:
            return None
        scored = []
        for rank, (room, (shape, members)) in enumerate(self._rooms.items()):
            if rank == MAX_ROOMS:
                break
            if shape is not None and fits(demand, room):
                # (rounded: rooms of one shape but other sizes differ in their floats' last bits)
                distance = round(sum(map(abs, map(sub, want, shape))), 9)
                scored.append((distance, self._size(room), rank, members))
        scored.sort(key=lambda s: s[:3])
        delays, most = app.queue.locality_delays, most_local(req)
        best: tuple[int, Node] | None = None
        for *_, members in scored:
            for node in members:
                if permits(req, node, delays, now) and not app.excludes(node) and (
                        node.cards is None or node.cards.holds(demand)):
                    tier = locality_of(req, node)
                    if tier <= most:
                        return node
                    if best is None or tier < best[0]:
                        best = tier, node
        return None if best is None else best[1]

    def _size(self, amounts: Vector) -> float:
        return sum(a * i for a, i in zip(amounts, self._inv))

    def _shape(self, amounts: Vector) -> tuple[float, ...] | None:
        shares = [a * i for a, i in zip(amounts, self._inv)]
        total = sum(shares)
        return tuple(s / total for s in shares) if total > 0 else None

    def _add(self, node: Node) -> None:
        room = self._sub(node.capacity, node.allocated)
        if node.cards is not None:
            room = node.cards.room(room)  # what one container can get there (scheduler.cards)
        self._room[node] = room
        entry = self._rooms.get(room)
        if entry is None:
            entry = self._rooms[room] = (self._shape(room), {})
        entry[1][node] = None

    def _remove(self, node: Node) -> None:
        room = self._room.pop(node)
        members = self._rooms[room][1]
        del members[node]
        if not members:
            del self._rooms[room]


NODE_CHOICES: dict[str, NodeChoice] = {"best-fit": best_fit, "each-node": each_node}


def get_node_choice(name: str) -> NodeChoice:
    try:
        return NODE_CHOICES[name]
    except KeyError:
        raise ValueError(f"unknown node choice {name!r} (known: {', '.join(NODE_CHOICES)})") from None
