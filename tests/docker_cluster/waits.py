"""Waits whose budget follows progress, for the Docker cluster's tests and the demo.

A fixed budget fails a slow machine and waits too long on a hung one: on the project's 2-core
machines shared with other builds, a Spark app took longer than a fixed 150 s to start and release
its executors while every step still moved. Here a wait fails only when what it watches has not
moved for `stall_s` (a hung cluster fails as soon as that is clear), or after `limit_s` in all (so a
cluster that churns without ever reaching the condition cannot wait forever).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")


class Stalled(AssertionError):
    """A wait gave up: nothing moved for its stall budget, or its whole limit ran out."""


def wait_for(condition: Callable[[], T], what: str, *, progress: Callable[[], Hashable], stall_s: float,
             limit_s: float, poll_s: float = 1.0, describe: Callable[[], str] | None = None,
             clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], Any] = time.sleep) -> T:
    """Polls `condition` until it returns something true, and returns that. `progress()` is any value
    that changes while the awaited thing moves (apps' states, containers, log sizes); each change
    restarts the stall budget. On giving up, raises Stalled naming `what`, why, and `describe()`."""
    start = clock()
    last, moved = progress(), start
    while True:
        value = condition()
        if value:
            return value
        now = clock()
        seen = progress()
        if seen != last:
            last, moved = seen, now
        if now - moved > stall_s or now - start > limit_s:
            why = (f"nothing moved for {now - moved:.0f} s" if now - moved > stall_s
                   else f"still moving, but not there after {now - start:.0f} s (the limit)")
            state = f"\n{describe()}" if describe is not None else ""
            raise Stalled(f"gave up waiting for {what}: {why}; last progress seen: {last!r}{state}")
        sleep(poll_s)
