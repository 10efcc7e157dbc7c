"""`yarn-drf replay`: the built-in example workload through the real core, shares as they converge.

It runs the simulator (same core, simulated clock and heartbeats) over the files in
scheduler/data/, prints each queue's dominant share at evenly spaced moments next to its
weighted-DRF target, and ends with a verdict.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from scheduler.config import QueueConfig, load_config
from scheduler.sim.formats import AppSpec, load_cluster, load_workload
from scheduler.sim.runner import SimulationRequest, simulate

DATA = resources.files("scheduler") / "data"


def drf_targets(config: QueueConfig, apps: list[AppSpec], capacity: dict[str, int]) -> dict[str, float]:
    """Each leaf's dominant share under weighted DRF in the fluid model, when every leaf wants more.

    Equal weighted shares t for all leaves: queue i runs t * w_i / d_i tasks of shape s_i
    (d_i = one task's dominant share); t is the largest value the capacity allows.
    """
    specs = config.queues()
    shape = {}
    for app in apps:
        shape.setdefault(app.queue, app.stages[0].resources)
    per_task = {q: max(s.get(r, 0) / c for r, c in capacity.items() if c) for q, s in shape.items()}
    weight = {q: _scalar(specs[q].weight) for q in shape}
    load = {r: sum(weight[q] / per_task[q] * shape[q].get(r, 0) for q in shape) for r in capacity}
    t = min(capacity[r] / load[r] for r in capacity if load[r])
    return {q: t * weight[q] for q in shape}


def _scalar(weight) -> float:
    return weight if isinstance(weight, float) else min(weight.values())


def main(queues_file: str | None = None, steps: int = 12) -> int:
    queues_path = Path(queues_file) if queues_file else DATA / "demo-queues.yaml"
    config = load_config(queues_path)
    cluster = load_cluster(DATA / "demo-cluster.yaml")
    apps = load_workload(DATA / "demo-workload.jsonl")
    request = SimulationRequest.build(config, cluster, apps, until=150.0)
    result, sim = simulate(request, timeline=True)
    capacity = dict(zip(sim.real_types, sim.capacity))
    targets = drf_targets(config, apps, capacity)
    leaves = sorted(targets)

    print(f"yarn-drf replay: {len(apps)} apps in {len(leaves)} queues on {len(cluster.nodes)} nodes "
          f"<{', '.join(f'{r} {v}' for r, v in capacity.items())}>, heartbeats every 1 s (simulated)")
    weights = {q: _scalar(config.queues()[q].weight) for q in leaves}
    print("queue weights: " + ", ".join(f"{q} {weights[q]:g}" for q in leaves))
    tl = sim.timeline
    print(f"{'time s':>7}  " + "  ".join(f"{q:>14}" for q in leaves))
    picks = sorted({min(len(tl.times) - 1, round(i * (len(tl.times) - 1) / max(1, steps - 1))) for i in range(steps)})
    for i in picks:
        print(f"{tl.times[i]:>7.0f}  " + "  ".join(f"{tl.shares[q][i]:>14.3f}" for q in leaves))
    print(f"{'target':>7}  " + "  ".join(f"{targets[q]:>14.3f}" for q in leaves))

    final = {q: result["queues"][q]["dominant_share"] for q in leaves}
    weighted = {q: final[q] / weights[q] for q in leaves}
    spread = max(weighted.values()) - min(weighted.values())
    print("final dominant shares: " + ", ".join(f"{q} {final[q]:.3f} (target {targets[q]:.3f})" for q in leaves))
    print(f"weighted shares differ by {spread:.3f}; utilization: " +
          ", ".join(f"{r} {v:.0%}" for r, v in result["utilization"].items()))
    ok = spread <= 0.1
    print("verdict: " + ("shares converged to weighted DRF" if ok else "shares did NOT converge to weighted DRF"))
    return 0 if ok else 2
