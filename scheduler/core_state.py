"""What the decision core holds (its nodes, apps, containers, asks and caches), created once,
and the checks every event's input goes through before it changes any of it.

SchedulerCore (scheduler.core) is built on this class through one line of bases, one concern each:
CoreState -> HdrfKeys (keys and heaps) -> Reservations -> QueueTree (the configured tree and its
limits) -> Asks (requests) -> NodesAndContainers -> Admission (apps, ACLs, running-app limits,
moves) -> Decision (the heartbeat) -> SchedulerCore (reloads, labels, preemption, reports). Each
class calls only what it and the classes before it define, so no module imports one after it;
this one declares every attribute, so each part type-checks (and mypyc compiles it) on its own.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from itertools import count

from scheduler.config import QueueConfig
from scheduler.locality import Offer
from scheduler.model import App, Container, Node, Queue, Request, User
from scheduler.multinode import NodeQueue, get_node_choice
from scheduler.partitions import DEFAULT, Partitions
from scheduler.placement import QueueView
from scheduler.policies import get_policy
from scheduler.resources import LinearForm, QuantisedRatio, ResourceTypes, UnknownResourceError, Vector

log = logging.getLogger("yarn_drf.core")


class CoreState:
    """The core's state (declared here for every part) and the checks of its input."""

    # set by QueueTree._install from the config, at the start and at each reload
    divided: frozenset[str]  # the resource types the policy divides
    timeout: float | None  # reservation.starvation-timeout-s
    queues: dict[str, Queue]
    root: Queue
    _built: list[str]  # the queues built (or re-built in place) since take_built

    def __init__(self, config: QueueConfig, resource_types: Sequence[str] | None = None,
                 policy: str = "drf", clock: Callable[[], float] = time.monotonic,
                 node_choice: str = "each-node", max_app_priority: int | None = None) -> None:
        self.max_app_priority = max_app_priority
        self.types = ResourceTypes(resource_types or config.resource_types())
        self.policy = get_policy(policy)
        self._aggregate, self._vadd, self._vsub = self.policy.aggregate, self.types.add, self.types.sub
        self._vmove = self.types.move
        self._zero = self.types.zero
        self.node_choice = get_node_choice(node_choice)
        self._node_choice_name = node_choice
        self._rotation = 0  # on_nodes: where the next call starts in its list of nodes
        # on_nodes: the nodes calls stopped at their limit did not finish (a node that leaves, leaves it)
        self._carried = NodeQueue()
        self._offer: Offer | None = None  # inside on_nodes: the call's nodes (scheduler.locality)
        # The nodes given an AM container by the current offer (a call, or a heartbeat alone), and
        # the nodes that may still have room for another (_am_room_elsewhere; None: not listed yet).
        self._am_nodes: set[str] = set()
        self._am_candidates: list[Node] | None = None
        self.clock = clock
        self.nodes: dict[str, Node] = {}
        self.apps: dict[str, App] = {}
        self.containers: dict[str, Container] = {}
        self.capacity: Vector = self.types.zero
        self.counters: dict[str, int] = dict.fromkeys(
            ("heartbeats", "assignments", "ignored_events", "refused", "apps_accepted", "apps_rejected",
             "apps_recovered_misplaced", "apps_unrecoverable", "reservations_made", "reservations_satisfied",
             "reservations_dropped", "reloads"), 0)
        self._ids = count(1)
        # ask id (chosen by the caller) -> its request: lets a heartbeat change an ask's count
        # without resending its app, key, location and shape (update_counts). ANY asks, by far the
        # most, map to the request alone; rack and node asks to (request, location).
        self.asks: dict[int, Request] = {}
        self.located_asks: dict[int, tuple[Request, str]] = {}
        # inside batch(): apps (and users an app left) whose heap keys are stale, in the order
        # they were last touched
        self._rekey: dict[App | User, None] | None = None
        self._view: QueueView | None = None  # what placement sees of the tree; None: to rebuild
        # A weight's (scale, share function) at `capacity`, and the direction functions of a
        # scale: shared by the queues and users alike (placement creates them by the thousand);
        # emptied when the capacity changes.
        self._forms: dict[object, tuple[tuple[float, ...], LinearForm]] = {}
        self._ratios: dict[tuple[float, ...], QuantisedRatio] = {}
        self._forms_capacity: Vector = self.types.zero
        # parent -> the limits of the leaves placement creates under it (QueueTree._sibling_limits)
        self._created_limits: dict[Queue, tuple] = {}
        self._stale = False  # cluster capacity changed: shares and limits to recompute
        self._placeable: dict[Vector, bool] = {}  # shape -> fits some node's capacity
        self._placeable_bits: tuple[int, int] | None = None  # (shapes known, mask of the placeable)
        self._bits: dict[Vector, int] = {}  # request shape -> its bit in queue masks
        self._heads: dict[int, set[Queue]] = {}  # head_mask -> nested queues heading with that mask
        self.head: Queue | None = None  # the leaf first in fair order (see _reserve_for_head)
        self.head_since = 0.0
        self.config = config
        # node labels (scheduler.partitions): this core's partition ("" for the default one, the
        # home of the others' pools), and, in the home once the cluster has labels, the pools
        self.partition = DEFAULT
        self.partitions: Partitions | None = None
        # The nodes whose hold (node.reserved) may have changed since the bridge last looked:
        # it tells YARN of holds begun and ended (yarn_bridge.service) without scanning every node.
        # A label's pool shares its core's set.
        self.hold_changes: set[Node] = set()
        self._aid = "a"  # assignment ids: a pool's carry its label, so ids are unique in the cluster

    def _now(self, now: float | None) -> float:
        return self.clock() if now is None else now

    def _vector(self, amounts: Mapping[str, int] | Vector, where: str, subject: str) -> Vector | None:
        """`amounts` checked as a vector, or None (ignored, logged as `where subject`). The two
        are joined only on an error: this runs for every container and ask."""
        try:
            if isinstance(amounts, tuple):
                return self.types.checked(amounts)
            return self.types.vector(amounts)
        except (UnknownResourceError, ValueError, AttributeError, TypeError) as exc:
            self._ignore(f"{where} {subject}", str(exc))
            return None

    def _app(self, app_id: str, where: str) -> App | None:
        app = self.apps.get(app_id)
        if app is None:
            self._ignore(where, f"unknown app {app_id!r}")
        return app

    def _node(self, node_id: str, where: str) -> Node | None:
        node = self.nodes.get(node_id)
        if node is None:
            self._ignore(where, f"unknown node {node_id!r}")
        return node

    def _ignore(self, where: str, why: str) -> None:
        self.counters["ignored_events"] += 1
        log.warning("ignored %s: %s", where, why)
