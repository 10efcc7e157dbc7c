"""What preemption remembers across a restart of the core or of the ResourceManager (issue 27).

Preemption's state lives in the core (scheduler.preemption.Preemptor): the marks (a container
told it will be killed, for which request, since when, until when), the nodes held for those
requests, and each leaf's starvation clocks. YARN's state store keeps none of it, so a core
rebuilt from a new ResourceManager's recovered state would tell AMs again with a fresh grace and
make a starved queue wait its whole timeout again. The core therefore hands its state out
(`Preemptor.saved`), the shim keeps the latest where the next active RM reads it, and the next
core takes it back (`Preemptor.restore`). The held nodes are the marks' nodes (a node is held
only while its marks drain), so the marks carry them.

Times here are the core's monotonic clock; the bridge turns them into wall-clock milliseconds at
its edge (yarn_bridge.protocol), because the next core may run on another host.

A restored item cannot always be taken at once: a new ResourceManager learns its containers as
its NodeManagers register again, and its asks as the ApplicationMasters resync, seconds after
its first snapshot. So each restored item waits until what it names is there again, and is
dropped if that has not happened by its `waiting_until` (at most RESTORE_WINDOW_S after it was
first restored, however often it is saved and restored meanwhile).
"""
from __future__ import annotations

from dataclasses import dataclass

# Long enough for NodeManagers to re-register and AMs to resync with a new RM (YARN waits
# yarn.resourcemanager.work-preserving-recovery.scheduling-wait-ms, 10 s by default, for the
# former); short enough that a clock restored for a leaf whose demand went away is not taken up
# by unrelated demand much later.
RESTORE_WINDOW_S = 60.0
# A bound on what is saved (earliest deadlines and longest-starved leaves first): the record must
# fit a ZooKeeper node (1 MB by default); about 250 bytes a mark and 130 a leaf on the wire.
MAX_SAVED_MARKS = 2000
MAX_SAVED_LEAVES = 1000


@dataclass(frozen=True)
class SavedMark:
    """A container marked for preemption: on `node_id`, making room for the request `key`
    (priority, allocation id) of app `app_id`; killed at `deadline` unless released first."""

    container_id: str
    node_id: str
    app_id: str
    key: tuple[int, int]
    reason: str  # "fair-share" or "min-share": how the leaf it makes room for starved
    marked_at: float
    deadline: float
    waiting_until: float | None = None  # restored, not found again yet: dropped then


@dataclass(frozen=True)
class SavedLeaf:
    """A leaf's starvation clocks: below threshold x its target since, below its min since, and
    whether it starves (then until it reaches its target)."""

    path: str
    below_fair_since: float | None
    below_min_since: float | None
    starved: str | None
    waiting_until: float | None = None  # restored, its demand not back yet: dropped then


@dataclass(frozen=True)
class SavedState:
    marks: tuple[SavedMark, ...] = ()
    leaves: tuple[SavedLeaf, ...] = ()


def bounded(marks: list[SavedMark], leaves: list[SavedLeaf]) -> SavedState:
    """The state in a stable order, within the bounds: the marks due first, the leaves that
    starve first, then those below their targets longest."""
    marks.sort(key=lambda m: (m.deadline, m.container_id))
    leaves.sort(key=lambda leaf: (leaf.starved is None, _since(leaf), leaf.path))
    return SavedState(tuple(marks[:MAX_SAVED_MARKS]), tuple(leaves[:MAX_SAVED_LEAVES]))


def _since(leaf: SavedLeaf) -> float:
    times = [t for t in (leaf.below_fair_since, leaf.below_min_since) if t is not None]
    return min(times, default=float("inf"))
