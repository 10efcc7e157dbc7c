"""Share functions: how a usage vector becomes the number that orders queues and apps.

All policies run through the same core and heartbeat path; they differ only in which resource
types count towards a share and whether shares are combined by max (dominance) or by sum.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from scheduler.resources import MEMORY, VCORES


@dataclass(frozen=True)
class Policy:
    name: str
    description: str
    aggregate: Callable  # max for dominant-share policies, sum for asset fairness
    counts: Callable[[str, frozenset[str]], bool]  # (resource, divided types) -> counts in the share?

    def scale(self, names: tuple[str, ...], divided: frozenset[str], capacity: tuple[int, ...],
              weights: dict[str, float] | float) -> tuple[float, ...]:
        """Per-resource multipliers m_j so that share = aggregate(u_j * m_j) = u_j / (C_j * w_j)."""
        out = []
        for name, cap in zip(names, capacity):
            w = weights.get(name, 1.0) if isinstance(weights, dict) else weights
            out.append(1.0 / (cap * w) if cap and self.counts(name, divided) else 0.0)
        return tuple(out)


POLICIES: dict[str, Policy] = {
    p.name: p
    for p in (
        Policy("drf", "weighted Dominant Resource Fairness over the divided resource types",
               max, lambda r, divided: r in divided),
        Policy("drf-no-gpu", "DRF over vcores and memory-mb only; other types are only checked for fit",
               max, lambda r, divided: r in (VCORES, MEMORY)),
        Policy("fair-memory", "max-min fairness on memory-mb alone (FairScheduler's 'fair' policy)",
               max, lambda r, divided: r == MEMORY),
        Policy("asset", "asset fairness: equalise the sum of a queue's shares of every type",
               sum, lambda r, divided: r in divided),
    )
}


def get_policy(name: str) -> Policy:
    try:
        return POLICIES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; valid policies: {', '.join(POLICIES)}") from None
