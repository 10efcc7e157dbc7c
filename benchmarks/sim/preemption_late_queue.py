"""A queue arriving on a cluster full of another's hour-long tasks, with and without preemption.

    .venv/bin/python benchmarks/sim/preemption_late_queue.py [--seed N]

Runs conf/scenarios/preemption-late-queue as written (preemption on) and with `enabled: false`,
through the same code path as `yarn-drf simulate`, and prints a Markdown table: when the late
queue first holds its target (the pooled H-DRF target preemption restores, once its tasks are asked
for), how many containers were preempted, and the container-seconds of work the kills threw
away.
"""
from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from scheduler.sim.engine import Simulation
from scheduler.sim.policies import prepare
from scheduler.sim.report import build_result
from scheduler.sim.runner import SimulationRequest
from scheduler.targets import pooled_shares

SCENARIO = Path(__file__).resolve().parents[2] / "conf" / "scenarios" / "preemption-late-queue"
LATE = "root.b"
UNTIL = 4000.0  # past the hour the first queue's tasks run


class _Watched(Simulation):
    """The simulation, noting when the late queue first holds its target (checked at every event;
    the target, a fluid fill, is recomputed only when the share reaches the last one known or
    every RECHECK_S simulated seconds)."""

    RECHECK_S = 10.0

    def __init__(self, *args, arrival: float, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.arrival = arrival
        self.goal, self.goal_at = 1.0, -1e18
        self.reached: tuple[float, float] | None = None  # (time, target)

    def _advance(self, t: float) -> None:
        super()._advance(t)
        if self.reached is not None or t < self.arrival:
            return
        share = max(a / c for a, c in zip(self.queue_alloc[LATE], self.capacity) if c)
        if share >= self.goal - 1e-9 or t >= self.goal_at + self.RECHECK_S:
            self.goal, self.goal_at = pooled_shares(self.core)[LATE], t
        if self.app_asked() and share >= self.goal - 1e-9:
            self.reached = (t, self.goal)

    def app_asked(self) -> bool:
        """The late app's tasks are asked for (before, its target is its AM's)."""
        return any(app.queue == LATE and app.stage >= 0 for app in self.states.values())


def run(enabled: bool, seed: int) -> dict:
    request = SimulationRequest.from_files(str(SCENARIO / "queues.yaml"), str(SCENARIO / "cluster.yaml"),
                                           str(SCENARIO / "workload.jsonl"), until=UNTIL, seed=seed)
    config = request.config
    config = replace(config, preemption=replace(config.preemption, enabled=enabled))
    setup = prepare(request.policy, config, request.resource_types, request.slots_per_node)
    arrival = min(a.submit for a in request.apps if a.queue == LATE)
    sim = _Watched(setup, config, request.cluster, request.apps, until=UNTIL, seed=seed, arrival=arrival)
    sim.run()
    result = build_result(sim)
    preempted = result["preemption"] or {"killed": 0, "work_lost_container_s": 0.0}
    reached = sim.reached
    return {"reached": None if reached is None else reached[0] - arrival,
            "target": None if reached is None else reached[1],
            "killed": preempted["killed"], "lost": preempted["work_lost_container_s"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("#### A late queue on a full cluster (conf/scenarios/preemption-late-queue)\n")
    print("| preemption | arrival to target (s) | target (dominant share) | containers preempted "
          "| work lost (container-s) |")
    print("|---|---:|---:|---:|---:|")
    for enabled in (False, True):
        r = run(enabled, args.seed)
        reached = "not by 4000 s" if r["reached"] is None else f"{r['reached']:.0f}"
        target = "" if r["target"] is None else f"{r['target']:.3f}"
        print(f"| {'on' if enabled else 'off'} | {reached} | {target} | {r['killed']} | {r['lost']:.0f} |")
    print()


if __name__ == "__main__":
    main()
