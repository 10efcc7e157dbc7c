"""Small statistics helpers for the simulator's report."""
from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of already sorted values, by linear interpolation."""
    if not sorted_values:
        raise ValueError("no values")
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def summary(values: Sequence[float], percentiles: Sequence[int] = (50, 95)) -> dict[str, float] | None:
    """{"mean", "p50", "p95"} (or the percentiles asked for) of the values, None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    out = {"mean": round(sum(ordered) / len(ordered), 3)}
    for q in percentiles:
        out[f"p{q}"] = round(percentile(ordered, q), 3)
    return out


class LatencyHistogram:
    """Log-bucketed latencies in microseconds: constant memory however long the run.

    Buckets are 1/100 of a decade wide, so a reported percentile is within 2.3 % of the exact
    value; a replay can make tens of millions of decisions, too many to keep one by one.
    """

    PER_DECADE = 100

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.n = 0

    def add(self, us: float) -> None:
        b = int(math.log10(us) * self.PER_DECADE) if us > 0 else -10 ** 6
        self.counts[b] = self.counts.get(b, 0) + 1
        self.n += 1

    def percentile(self, q: float) -> float | None:
        if not self.n:
            return None
        rank = max(1, math.ceil(self.n * q / 100.0))
        seen = 0
        for b in sorted(self.counts):
            seen += self.counts[b]
            if seen >= rank:
                # the bucket's geometric middle
                return 10 ** ((b + 0.5) / self.PER_DECADE) if b > -10 ** 6 else 0.0
        return None
