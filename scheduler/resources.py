"""Resource vectors over named YARN resource types.

A vector is a plain tuple of ints, one per configured resource type, in the order of its
ResourceTypes. Tuples keep the heartbeat path allocation-light and fast; names only appear at
the edges (config, events, reports), where ResourceTypes converts between the two forms.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import add, sub
from typing import final

from scheduler.echo import brief

MEMORY = "memory-mb"
VCORES = "vcores"
DEFAULT_TYPES = (MEMORY, VCORES)

# YARN's own rule for resource type names (ResourceUtils): optional "ns/" prefix, then a letter.
# ASCII only, as Java's \w; \Z, not $, which would let a trailing newline through.
NAME_PATTERN = re.compile(r"^([A-Za-z][A-Za-z0-9_.-]*/)?[A-Za-z][A-Za-z0-9_.-]*\Z")

Vector = tuple[int, ...]
# Amounts are YARN's (Java long): 0 <= amount < AMOUNT_LIMIT. The bound keeps every sum of them
# far inside what a float holds, so shares and keys never overflow.
AMOUNT_LIMIT = 1 << 63


class UnknownResourceError(ValueError):
    """A resource name that is not one of the configured types."""


class ResourceTypes:
    """The ordered set of resource types the scheduler divides."""

    __slots__ = ("names", "index", "zero", "add", "sub", "move")

    def __init__(self, names: Iterable[str]) -> None:
        names = tuple(names)
        if not names:
            raise ValueError("at least one resource type is needed")
        for name in names:
            if not NAME_PATTERN.match(name):
                raise ValueError(f"invalid resource type name {name!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate resource type in {list(names)}")
        self.names: tuple[str, ...] = names
        self.index: dict[str, int] = {name: i for i, name in enumerate(names)}
        self.zero: Vector = (0,) * len(names)
        # vadd and vsub for the heartbeat path (containers charge four vectors each, and more with depth)
        self.add: Callable[[Vector, Vector], Vector] = _add
        self.sub: Callable[[Vector, Vector], Vector] = _sub
        self.move: Callable[[Vector, Vector, Vector], Vector] = _move  # a - b + c

    def __len__(self) -> int:
        return len(self.names)

    def __repr__(self) -> str:
        return f"ResourceTypes({list(self.names)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ResourceTypes) and other.names == self.names

    def __hash__(self) -> int:
        return hash(self.names)

    def vector(self, amounts: Mapping[str, int], *, ignore_unknown: bool = False) -> Vector:
        """Converts {name: amount} to a vector; missing types are 0."""
        values = [0] * len(self.names)
        for name, amount in amounts.items():
            i = self.index.get(name)
            if i is None:
                if ignore_unknown:
                    continue
                raise UnknownResourceError(
                    f"unknown resource type {name!r} (known: {', '.join(self.names)})"
                )
            if type(amount) is not int or not 0 <= amount < AMOUNT_LIMIT:
                raise ValueError(f"{name}: amount must be an integer from 0 to 2^63-1, got {brief(amount)}")
            values[i] = amount
        return tuple(values)

    def checked(self, values: tuple) -> Vector:
        """A vector given as amounts in this order (the bridge's compact form), checked."""
        if len(values) != len(self.names):
            raise ValueError(f"{len(values)} amounts for {len(self.names)} resource types "
                             f"({', '.join(self.names)})")
        for name, amount in zip(self.names, values):
            if type(amount) is not int or not 0 <= amount < AMOUNT_LIMIT:
                raise ValueError(f"{name}: amount must be an integer from 0 to 2^63-1, got {brief(amount)}")
        return values

    def to_dict(self, vector: Vector) -> dict[str, int]:
        return dict(zip(self.names, vector))

    def format(self, vector: Vector) -> str:
        return "<" + ", ".join(f"{n} {v}" for n, v in zip(self.names, vector)) + ">"


# a + b, a - b and a - b + c (one direction replacing another in a sum) as straight-line code for
# the usual two and three resource types, a loop for more. Compiled, these are native calls: the
# lambdas generated per length that they replace ran in the interpreter, at about 150 ns a call
# from compiled code, against 100 ns here (and a tuple built from a list costs four times that).

def _add(a: Vector, b: Vector) -> Vector:
    n = len(a)
    if n == 3:
        return (a[0] + b[0], a[1] + b[1], a[2] + b[2])
    if n == 2:
        return (a[0] + b[0], a[1] + b[1])
    return tuple([a[i] + b[i] for i in range(n)])


def _sub(a: Vector, b: Vector) -> Vector:
    n = len(a)
    if n == 3:
        return (a[0] - b[0], a[1] - b[1], a[2] - b[2])
    if n == 2:
        return (a[0] - b[0], a[1] - b[1])
    return tuple([a[i] - b[i] for i in range(n)])


def _move(a: Vector, b: Vector, c: Vector) -> Vector:
    n = len(a)
    if n == 3:
        return (a[0] - b[0] + c[0], a[1] - b[1] + c[1], a[2] - b[2] + c[2])
    if n == 2:
        return (a[0] - b[0] + c[0], a[1] - b[1] + c[1])
    return tuple([a[i] - b[i] + c[i] for i in range(n)])


def vadd(a: Vector, b: Vector) -> Vector:
    return tuple(map(add, a, b))


def vsub(a: Vector, b: Vector) -> Vector:
    return tuple(map(sub, a, b))


def fits(request: Vector, available: Vector) -> bool:
    """True when every amount of `request` is at most the same amount of `available`.

    An index loop: compiled, it is native integer compares with nothing allocated (all(map(...))
    allocated a map object per call, a tenth of a decision's time with the collections it set off)."""
    for i in range(len(request)):
        if request[i] > available[i]:
            return False
    return True


def fits_asked(shape: Vector, room: Vector) -> bool:
    """fits(), comparing only the amounts `shape` asks for: a room over its node's capacity in a
    type the shape does not use (containers started over it) still holds the shape."""
    for i in range(len(shape)):
        amount = shape[i]
        if amount and amount > room[i]:
            return False
    return True


def fits_any(shapes: Iterable[Vector], available: Vector) -> bool:
    """True when at least one of `shapes` fits in `available`."""
    for shape in shapes:
        if fits(shape, available):
            return True
    return False


def vmin(a: Vector, b: Vector) -> Vector:
    return tuple(map(min, a, b))


def dominant_share(usage: Sequence[float], capacity: Sequence[float]) -> float:
    """max_j usage_j / capacity_j over the types the cluster has (capacity 0 is skipped)."""
    return max((u / c for u, c in zip(usage, capacity) if c), default=0.0)


def dominant_resource(usage: Sequence[float], capacity: Sequence[float], names: tuple[str, ...]) -> str | None:
    """The name of the resource giving the dominant share, or None when nothing is used."""
    best, best_share = None, 0.0
    for name, u, c in zip(names, usage, capacity):
        if c and u / c > best_share:
            best, best_share = name, u / c
    return best


@final
class LinearForm:
    """A share function: `combine` (max or sum) of v_j * factors_j over the nonzero factors, in
    order. A share is computed per queue and level for every container: compiled, this is a
    native loop (an eval'd lambda ran in the interpreter at twice the cost)."""

    def __init__(self, factors: tuple[float, ...], combine: Callable) -> None:
        self.factors = factors
        self.dominant = combine is max

    def __call__(self, v: Sequence[float]) -> float:
        factors = self.factors
        total = 0.0
        for j in range(len(factors)):
            f = factors[j]
            if f:
                x = v[j] * f
                if not self.dominant:
                    total += x
                elif x > total:
                    total = x
        return total


@final
class QuantisedRatio:
    """(int(v_j * factors_j / s), ...), 0 where the factor is 0: a direction in integer units."""

    def __init__(self, factors: tuple[float, ...]) -> None:
        self.factors = factors

    def __call__(self, v: Sequence[float], s: float) -> tuple[int, ...]:
        factors = self.factors
        if len(factors) == 3:  # (straight-line for three types: a tuple built from a list costs more than the rest)
            f0, f1, f2 = factors[0], factors[1], factors[2]
            return (int(v[0] * f0 / s) if f0 else 0, int(v[1] * f1 / s) if f1 else 0,
                    int(v[2] * f2 / s) if f2 else 0)
        return tuple([int(v[j] * f / s) if f else 0 for j, f in enumerate(factors)])

