"""Router and AMRM weights of a simulated federation: how asks are split, and a policy that moves them.

Hadoop's WeightedLocalityPolicyManager keeps, per queue, router weights (which sub-cluster is an
app's home) and AMRM weights (how the AMRMProxy splits an app's ANY asks across sub-clusters).
Hadoop's default is equal weights everywhere (`StaticWeights`).

`YieldingWeights` is the feedback rule a GlobalPolicyGenerator-style service would run every
round, from what each sub-cluster's yarn-drf status API reports (usage per queue, asks waiting).
A queue yields, in each sub-cluster, to the queues that wait there and are poorer than it in the
whole federation (a lower weighted dominant share of the federation's capacity): its AMRM weight
there is multiplied by (1 - step), and the others grow as the weights are renormalized over the
sub-clusters the queue's asks can use; a weight below `CLOSED` becomes zero (even one ask left
there would keep the queue level with the poorer one in that core's local DRF; the rule keeps the
weight itself, to grow back from). Its weights relax back toward the default by `relax`, reopening
what it left, only while it is poorer by `margin` than every other queue that waits (hysteresis:
reopening sends a share of every outstanding ask back at once, so a rule that reopened as soon as
the order flipped would swing both queues around their targets). This is DRF's order
(serve the poorest first) applied to where asks are sent: a queue whose work fits everywhere
leaves the sub-clusters that a poorer queue, perhaps one that fits only there, is waiting for.
The router weights stay Hadoop's default (`home`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

CLOSED = 0.05  # an AMRM weight below this is zero: the queue leaves that sub-cluster for now


def split(count: int, weights: Sequence[float], usable: Sequence[bool]) -> list[int]:
    """`count` containers over the sub-clusters by weight (largest remainder), only where usable.

    With every usable weight zero the usable sub-clusters share equally; with none usable the
    result is all zero (the caller never asks for a shape no sub-cluster holds)."""
    w = [x if ok else 0.0 for x, ok in zip(weights, usable)]
    total = sum(w)
    if total <= 0:
        w = [1.0 if ok else 0.0 for ok in usable]
        total = sum(w)
    if total <= 0 or count <= 0:
        return [0] * len(weights)
    exact = [count * x / total for x in w]
    out = [int(e) for e in exact]
    by_remainder = sorted(range(len(w)), key=lambda i: (-(exact[i] - out[i]), i))
    for i in by_remainder[:count - sum(out)]:
        out[i] += 1
    return out


class StaticWeights:
    """Hadoop's default: every queue, equal weight in every sub-cluster, never changed."""

    def __init__(self, subclusters: int) -> None:
        self.default = [1.0 / subclusters] * subclusters
        self.by_queue: dict[str, list[float]] = {}   # AMRM weights

    def of(self, queue: str | None) -> list[float]:
        """The queue's AMRM weights: how its asks are split."""
        return self.by_queue.get(queue or "", self.default)

    def home(self, queue: str | None) -> list[float]:
        """The queue's router weights: where its apps are homed (Hadoop's default, never moved:
        an AM is small and fits anywhere, and homing a queue's apps where its asks go would pile
        the AMs of a queue that fits one sub-cluster onto that one)."""
        return self.default

    def round(self, shares: Mapping[str, float], waiting: Mapping[str, Sequence[bool]],
              usable: Mapping[str, Sequence[bool]]) -> set[str]:
        """Static weights never move: no queue changed."""
        return set()


class YieldingWeights(StaticWeights):
    """The feedback rule of the module docstring."""

    def __init__(self, subclusters: int, step: float = 0.3, relax: float = 0.02, margin: float = 0.05) -> None:
        super().__init__(subclusters)
        self.step = step
        self.relax = relax
        self.margin = margin
        self.kept: dict[str, list[float]] = {}  # each queue's weights before CLOSED is applied

    def round(self, shares: Mapping[str, float], waiting: Mapping[str, Sequence[bool]],
              usable: Mapping[str, Sequence[bool]]) -> set[str]:
        """shares: each queue's weighted dominant share of the federation; waiting[q][s]: q has
        asks waiting in sub-cluster s; usable[q][s]: q's asks can go to s. Returns the queues
        whose weights changed."""
        changed = set()
        for q, share in shares.items():
            old = self.kept.get(q, self.default)
            yields = [any(waiting[r][s] and shares[r] < share for r in shares if r != q) for s in range(len(old))]
            if any(yields):
                moved = [w * (1.0 - self.step) if y else w for w, y in zip(old, yields)]
            elif all(share < shares[r] - self.margin for r in shares if r != q and any(waiting[r])):
                moved = [w + self.relax * (d - w) for w, d in zip(old, self.default)]
            else:
                continue
            self.kept[q] = _normalized(moved, [True] * len(moved))
            amrm = _closed(_normalized(moved, usable.get(q, [True] * len(moved))))
            if max(abs(a - b) for a, b in zip(amrm, self.of(q))) > 1e-6:
                self.by_queue[q] = amrm
                changed.add(q)
        return changed


def _normalized(weights: list[float], usable: Sequence[bool]) -> list[float]:
    live = [w if ok else 0.0 for w, ok in zip(weights, usable)]
    total = sum(live)
    return [w / total for w in live] if total else weights


def _closed(weights: list[float]) -> list[float]:
    """Weights below CLOSED set to zero, the rest renormalized."""
    live = [w if w >= CLOSED else 0.0 for w in weights]
    total = sum(live)
    return [w / total for w in live] if total else weights
