"""The queue rules every part of the scheduler applies alike: a queue's max, its leaf's
max-am-share and the max-running-apps of the leaf and its ancestors.

The decision (scheduler.decision, scheduler.reservations), preemption (which must not plan a
container the decision would refuse) and the why-pending analysis (scheduler.explain) import these
from here, so a rule is written once. On the heartbeat path: compiled (scheduler.compiled).
"""
from __future__ import annotations

from typing import Final

from scheduler.model import App, Queue
from scheduler.resources import Vector, fits, vadd, vmin, vsub

# Final: compiled, a constant, not a lookup in the module's globals at every use.
UNLIMITED: Final = 1 << 62  # a max that does not limit this resource


def max_room(q: Queue, headroom: Vector | None) -> Vector:
    """What q's max leaves (within `headroom`, the room its ancestors' max leave)."""
    assert q.max is not None  # the caller checked
    own = vsub(q.max, q.usage)
    return own if headroom is None else vmin(headroom, own)


def within_max(cap: Vector, leaf: Queue, room: Vector | None = None) -> bool:
    """True when `cap` more would keep `leaf` and its ancestors within their max."""
    if room is not None and not fits(cap, room):
        return False
    for q in leaf.ancestors_and_self():
        if q.max is not None and not fits(vadd(q.usage, cap), q.max):
            return False
    return True


def am_room(leaf: Queue, cap: Vector) -> bool:
    """Whether one more AM of `cap` keeps the leaf's AMs within its max-am-share. A leaf running
    no AM takes one whatever its share, as CapacityScheduler does when its AM limit is below a
    single AM: else a share smaller than one AM would hold every app of the queue back forever."""
    limit = leaf.am_limit
    if limit is None or not any(leaf.am_usage):
        return True
    return fits(vadd(leaf.am_usage, cap), limit)


def app_limit(leaf: Queue) -> Queue | None:
    """The nearest of the leaf and its ancestors that runs its max-running-apps (None: another
    app of the leaf may run)."""
    for q in leaf.ancestors_and_self():
        if q.max_apps is not None and q.running_apps >= q.max_apps:
            return q
    return None


def count_running(app: App, change: int) -> None:
    """Counts the app as running (+1) or not (-1) in its queues and its user, as app_limit reads."""
    for q in app.queue.ancestors_and_self():
        q.running_apps += change
    if app.owner is not None:
        app.owner.running_apps += change
