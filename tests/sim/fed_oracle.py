"""Federation-wide weighted DRF targets, computed apart from the cores (the federation tests' and
benchmark's oracle): continuous water-filling over the federation's total capacity.

Each queue's demand is one vector (what it holds plus what it still asks). Every queue not yet
frozen holds the same weighted dominant share level L, along its demand's direction; L rises
until a queue's demand is met (it stops there) or a resource runs out (every queue using it stops).
Node and sub-cluster boundaries are ignored: the target is the federation as one pool.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from scheduler.sim.engine import Simulation


def water_fill(capacity: Sequence[float], demands: Mapping[str, Sequence[float]],
               weights: Mapping[str, float]) -> dict[str, float]:
    """Each queue's dominant share (of `capacity`) at the fill's end."""
    # d: the weighted dominant share of a queue's whole demand; its holding at level L is
    # min(L, d) / d of its demand vector.
    dom = {q: max((v / c / weights[q] for v, c in zip(vec, capacity) if c), default=0.0)
           for q, vec in demands.items()}
    level = {q: 0.0 for q in demands}
    active = {q for q in demands if dom[q] > 0}
    used = [0.0] * len(capacity)
    while active:
        # per unit of level, what the active queues consume of each resource
        rate = [sum(demands[q][j] / dom[q] for q in active) for j in range(len(capacity))]
        base = min(level[q] for q in active)
        steps = [dom[q] - level[q] for q in active]
        steps += [(capacity[j] - used[j]) / rate[j] for j in range(len(capacity)) if rate[j] > 0]
        step = max(min(steps), 0.0)
        for j in range(len(capacity)):
            used[j] += rate[j] * step
        for q in active:
            level[q] = base + step
        full = {j for j in range(len(capacity)) if rate[j] > 0 and used[j] >= capacity[j] * (1 - 1e-9)}
        active = {q for q in active if level[q] < dom[q] * (1 - 1e-12)
                  and not any(demands[q][j] > 0 for j in full)}
    return {q: _dominant([demands[q][j] * (level[q] / dom[q] if dom[q] else 0.0) for j in range(len(capacity))],
                         capacity) for q in demands}


def _dominant(vec: Sequence[float], capacity: Sequence[float]) -> float:
    return max((v / c for v, c in zip(vec, capacity) if c), default=0.0)


def fairness(sim: Simulation) -> dict[str, tuple[float, float]]:
    """Each queue's (dominant share of the federation, its water-filling target) at the sim's now.

    Demand: what the queue holds plus what its apps' current steps still ask (as the simulator's
    own target_share counts it)."""
    demand = {q: [float(v) for v in alloc] for q, alloc in sim.queue_alloc.items()}
    for app in sim.states.values():
        if app.finish is None and app.pending > 0:
            row = demand[app.queue]
            for j, v in enumerate(app.ask):
                row[j] += v * app.pending
    weights = {q: float(spec.weight) if not isinstance(spec.weight, dict) else 1.0
               for q, spec in sim.setup.config.queues().items() if q in demand}
    targets = water_fill(sim.capacity, demand, weights)
    return {q: (_dominant(sim.queue_alloc[q], sim.capacity), targets[q]) for q in demand}


def shortfall(figures: Mapping[str, tuple[float, float]]) -> float:
    """The federation's total shortfall: the sum over queues of target minus share, where below."""
    return sum(max(target - share, 0.0) for share, target in figures.values())
