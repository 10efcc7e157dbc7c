"""The core's holds as YARN is told of them: the nodes it began or ended holding since a reply.

A node the core holds for a starved request (its reservation, or a preemption hold while the
victims drain: `Node.reserved`) is shown in YARN as a reserved container, as CapacityScheduler
and FairScheduler show theirs, so the RM's UI, REST and metrics count it. The core notes every
node whose hold it touches (`SchedulerCore.hold_changes`); each reply tells only what differs
from what the shim was last told, so a call that changes no hold sends nothing and reads no
other node.
"""
from __future__ import annotations

from typing import Any

from scheduler.model import Node

# What the shim holds for a node: the app and the request key (priority, allocation id).
Told = tuple[str, tuple[int, int]]


class HoldsTold:
    """What the shim was told of the core's holds, node -> (app, key); empty for a new core."""

    def __init__(self) -> None:
        self.told: dict[str, Told] = {}

    def changes(self, noted: set[Node]) -> tuple[list[list[Any]], list[str]]:
        """Takes the noted nodes (clearing the set): [node, app, priority, allocation id, the
        request's amounts] for each node held now for a request it was not told of, and the nodes
        whose told hold ended, both sorted by node."""
        if not noted:
            return [], []
        told, holds, ended = self.told, [], []
        for node in noted:
            req = node.reserved
            now = None if req is None else (req.app.id, req.key)
            if now == told.get(node.id):
                continue
            if req is None:
                del told[node.id]
                ended.append(node.id)
            else:
                told[node.id] = (req.app.id, req.key)
                holds.append([node.id, req.app.id, req.key[0], req.key[1], *req.capability])
        noted.clear()
        holds.sort(key=lambda row: row[0])
        ended.sort()
        return holds, ended
