"""`--plot`: dominant share (and target) per queue and utilization per resource over simulated time."""
from __future__ import annotations

from pathlib import Path

from scheduler.sim.engine import Simulation


def plot_timeline(sim: Simulation, out: str | Path) -> None:
    """Writes a PNG with two panels sharing the time axis."""
    import matplotlib

    matplotlib.use("Agg")  # files only: never needs a display
    import matplotlib.pyplot as plt

    tl = sim.timeline
    if tl is None:
        raise ValueError("the simulation was run without a timeline")
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(10, 6.5))
    for queue, series in sorted(tl.shares.items()):
        line, = top.step(tl.times, series, where="post", label=queue, linewidth=1.2)
        if tl.targets.get(queue):
            top.step(tl.target_times, tl.targets[queue], where="post", color=line.get_color(), linestyle="--",
                     linewidth=0.9)
    top.set_ylabel("dominant share (dashed: target)")
    top.set_ylim(0, 1.02)
    top.set_title(f"policy {sim.setup.name}: {len(sim.node_names)} nodes, {len(sim.states)} apps")
    if tl.shares:
        top.legend(loc="upper right", fontsize="small", ncol=max(1, len(tl.shares) // 8))
    for resource, series in tl.utilization.items():
        bottom.step(tl.times, series, where="post", label=resource, linewidth=1.2)
    bottom.set_ylabel("utilization")
    bottom.set_ylim(0, 1.02)
    bottom.set_xlabel("simulated time (s)")
    bottom.legend(loc="upper right", fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
