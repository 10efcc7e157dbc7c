"""`yarn-drf replay`: the built-in example workload through the real core, shares as they converge.

It runs the simulator (same core, simulated clock and heartbeats) over the files in
scheduler/data/, prints each queue's dominant share at evenly spaced moments next to its target
(scheduler.targets: where the core's decisions take the demand on these nodes; the pooled
weighted-DRF share beside it), and ends with a verdict.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from scheduler.config import load_config
from scheduler.sim.formats import load_cluster, load_workload
from scheduler.sim.runner import SimulationRequest, simulate

DATA = resources.files("scheduler") / "data"


def main(queues_file: str | None = None, steps: int = 12) -> int:
    queues_path = Path(queues_file) if queues_file else DATA / "demo-queues.yaml"
    config = load_config(queues_path)
    cluster = load_cluster(DATA / "demo-cluster.yaml")
    apps = load_workload(DATA / "demo-workload.jsonl")
    request = SimulationRequest.build(config, cluster, apps, until=150.0)
    result, sim = simulate(request, timeline=True)
    capacity = dict(zip(sim.real_types, sim.capacity))
    leaves = sorted(q for q, spec in config.queues().items() if spec.is_leaf)

    print(f"yarn-drf replay: {len(apps)} apps in {len(leaves)} queues on {len(cluster.nodes)} nodes "
          f"<{', '.join(f'{r} {v}' for r, v in capacity.items())}>, heartbeats every 1 s (simulated)")
    weights = {q: _scalar(config.queues()[q].weight) for q in leaves}
    print("queue weights: " + ", ".join(f"{q} {weights[q]:g}" for q in leaves))
    print("each cell: dominant share / target (where the decisions take the demand of that moment)")
    tl = sim.timeline
    print(f"{'time s':>7}  " + "  ".join(f"{q:>14}" for q in leaves))
    picks = sorted({min(len(tl.times) - 1, round(i * (len(tl.times) - 1) / max(1, steps - 1))) for i in range(steps)})
    for i in picks:
        k = max(j for j, t in enumerate(tl.target_times) if t <= tl.times[i])
        print(f"{tl.times[i]:>7.0f}  " + "  ".join(f"{tl.shares[q][i]:>6.3f} / {tl.targets[q][k]:.3f}" for q in leaves))

    queues = result["queues"]
    print("final dominant shares: " + ", ".join(
        f"{q} {queues[q]['dominant_share']:.3f} (target {queues[q]['target_share']:.3f}, "
        f"pooled {queues[q]['pooled_target_share']:.3f})" for q in leaves))
    # one container of the queue's largest task, as a dominant share
    one = {q: max(max(s.resources.get(r, 0) / c for r, c in capacity.items() if c)
                  for a in apps if a.queue == q for s in a.stages) for q in leaves}
    off = {q: abs(queues[q]["dominant_share"] - queues[q]["target_share"]) / one[q] for q in leaves}
    print("distance to the target, in containers: " + ", ".join(f"{q} {off[q]:.1f}" for q in leaves)
          + "; utilization: " + ", ".join(f"{r} {v:.0%}" for r, v in result["utilization"].items()))
    ok = all(v <= 1.0 + 1e-9 for v in off.values())
    print("verdict: " + ("shares at their targets, within one container" if ok
                         else "shares NOT at their targets"))
    return 0 if ok else 2


def _scalar(weight) -> float:
    return weight if isinstance(weight, float) else min(weight.values())
