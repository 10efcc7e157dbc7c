"""The one way the tests, the Docker demo and the benchmarks wait for something: poll a condition
with a budget that follows progress, and fail with a message that explains itself.

A fixed budget fails a slow machine and waits too long on a hung one: on the project's 2-core
machines shared with other builds, a Spark app took longer than a fixed 150 s to start and release
its executors while every step still moved. So a wait given a `progress` callable fails only when
what it reports has not changed for `budget_s` (a hung cluster fails as soon as that is clear), or
after `limit_s` in all (a cluster that churns without ever reaching the condition cannot wait
forever). Without one, `budget_s` is the whole budget.

On giving up it raises Stalled naming what was awaited, why it gave up, the last value the condition
returned (or the error it raised), the last progress seen, and what `describe()` adds (a daemon's
state, the tail of its log).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

LIMIT_FACTOR = 4  # a wait that keeps seeing progress gives up after this many times its budget
SHOWN = 500  # characters of a value or a progress shown in a failure


class Stalled(AssertionError):
    """A wait gave up: nothing moved for its budget, or its whole limit ran out."""


def wait_for(condition: Callable[[], T], what: str, *, budget_s: float,
             progress: Callable[[], object] | None = None, limit_s: float | None = None, poll_s: float = 0.5,
             ignore: tuple[type[BaseException], ...] = (), alive: Callable[[], Any] | None = None,
             describe: Callable[[], str] | None = None,
             clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], Any] = time.sleep) -> T:
    """Polls `condition` every `poll_s` until it returns something true, and returns that.

    `progress()`: any value that changes while the awaited thing moves (apps' states, containers, log
    sizes); each change restarts the budget, up to `limit_s` (default LIMIT_FACTOR * budget_s).
    `ignore`: errors of these types from `condition` or `progress` count as "not yet" (a server
    between states answers with anything). `alive()`: raises when waiting longer is pointless (a
    daemon exited); called after each poll that finds the condition false, its error ends the wait
    at once. `describe()`: what a failure adds (a daemon's state, its log's tail); an error in it is
    reported, not raised."""
    start = clock()
    limit = limit_s if limit_s is not None else (LIMIT_FACTOR * budget_s if progress is not None else budget_s)
    last, moved = _reading(progress, ignore), start
    while True:
        seen = _reading(condition, ignore)
        if seen:
            return seen
        if alive is not None:
            try:
                alive()
            except Exception as exc:
                exc.add_note(f"(while waiting for {what})")
                raise
        now = clock()
        if progress is not None:
            reported = _reading(progress, ignore)
            if reported != last:
                last, moved = reported, now
        if now - moved > budget_s or now - start > limit:
            raise Stalled(_failure(what, _why(now - start, now - moved, budget_s, progress is not None),
                                   seen, (last,) if progress is not None else (), describe))
        sleep(poll_s)


def wait_steady(value: Callable[[], T], what: str, *, quiet_s: float, budget_s: float,
                accept: Callable[[T], bool] = lambda _: True, progress: Callable[[], object] | None = None,
                clock: Callable[[], float] = time.monotonic, **waiting: Any) -> T:
    """`value()` once it has read the same for `quiet_s` seconds and `accept` takes it (a settled
    allocation). A value that keeps changing is progress, as is a change in `progress()`, within
    `limit_s`; one that settles where `accept` refuses it fails after `budget_s`. Other arguments as
    wait_for's."""
    seen: dict[str, Any] = {}

    def settled() -> tuple[T] | None:
        now, current = clock(), value()
        if "value" not in seen or current != seen["value"]:
            seen.update(value=current, since=now)
        # (in a tuple: a settled value may be false, an empty allocation)
        return (current,) if now - seen["since"] >= quiet_s and accept(current) else None

    def moving() -> tuple[object, object]:
        return seen.get("value"), progress() if progress is not None else None

    return wait_for(settled, what, budget_s=budget_s, progress=moving, clock=clock, **waiting)[0]


class _Raised:
    """What a reading that raised an ignored error returns: false, and shown as the error."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Raised) and repr(other.error) == repr(self.error)

    def __hash__(self) -> int:
        return hash(repr(self.error))

    def __repr__(self) -> str:
        return f"raised {self.error!r}"


def _reading(read: Callable[[], Any] | None, ignore: tuple[type[BaseException], ...]) -> Any:
    if read is None:
        return None
    try:
        return read()
    except ignore as exc:
        return _Raised(exc)


def _why(waited: float, still: float, budget_s: float, follows_progress: bool) -> str:
    if not follows_progress:
        return f"not there after {waited:.0f} s (its budget)"
    if still > budget_s:
        return f"nothing moved for {still:.0f} s"
    return f"still moving, but not there after {waited:.0f} s (the limit)"


def _failure(what: str, why: str, seen: object, progress: tuple[object, ...],
             describe: Callable[[], str] | None) -> str:
    lines = [f"gave up waiting for {what}: {why}", f"last seen: {_short(seen)}"]
    lines += [f"last progress: {_short(last)}" for last in progress]
    if describe is not None:
        try:
            lines.append(describe())
        except Exception as exc:  # noqa: BLE001 (the reason must come out whatever state the thing is in)
            lines.append(f"(its state could not be read: {exc!r})")
    return "\n".join(lines)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}... ({len(text)} characters)"
