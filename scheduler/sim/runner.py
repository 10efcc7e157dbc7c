"""Loads and cross-checks the three input files, runs one simulation, returns its result."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from scheduler import load_config
from scheduler.config import QueueConfig
from scheduler.sim.engine import Simulation
from scheduler.sim.formats import (AppSpec, ClusterSpec, SimInputError, check_cluster_types,
                                   check_workload_types, load_cluster, load_workload)
from scheduler.sim.policies import check_policy, prepare
from scheduler.sim.report import build_result


@dataclass(frozen=True)
class SimulationRequest:
    config: QueueConfig
    cluster: ClusterSpec
    apps: list[AppSpec]
    resource_types: tuple[str, ...]
    policy: str = "drf"
    slots_per_node: int | None = None
    heartbeat_s: float = 1.0
    until: float | None = None
    seed: int = 0

    @classmethod
    def from_files(cls, queues: str, cluster: str, workload: str, **options: Any) -> SimulationRequest:
        check_policy(options.get("policy", "drf"))
        config = load_config(queues)
        cluster_spec = load_cluster(cluster)
        apps = load_workload(workload)
        return cls.build(config, cluster_spec, apps, workload_source=workload, **options)

    @classmethod
    def build(cls, config: QueueConfig, cluster: ClusterSpec, apps: list[AppSpec], *,
              workload_source: str = "<workload>", **options: Any) -> SimulationRequest:
        """Decides the divided resource types and checks every file names only those.

        The types are the queue YAML's `resources:` list when it has one (then a node or task
        naming another type is an error), else every type some node names."""
        if config.resources:
            types = tuple(config.resources)
            check_cluster_types(cluster, list(types))
            what = "resource types the queue configuration lists"
        else:
            types = tuple(cluster.resource_names())
            what = "resource types the cluster's nodes have"
        config.check_resources(types)
        check_workload_types(apps, list(types), workload_source, what)
        until = options.get("until")
        if until is not None and until < 0:
            raise SimInputError([f"--until must be >= 0 s, got {until}"])
        looping = [a for a in apps if a.resubmit]
        if looping and until is None:
            raise SimInputError([f"{workload_source}:{looping[0].line}: app {looping[0].id} resubmits "
                                 "itself forever: give --until"])
        return cls(config, cluster, apps, types, **options)


TARGET_SAMPLES = 100  # targets sampled per run for the timeline (each is a replay of the demand)


def simulate(request: SimulationRequest, *, progress: bool = False, timeline: bool = False,
             skip_idle: bool = True) -> tuple[dict[str, Any], Simulation]:
    """Runs the request; returns (result JSON dict, the finished Simulation)."""
    setup = prepare(request.policy, request.config, request.resource_types, request.slots_per_node)
    horizon = request.until if request.until is not None else max(a.submit for a in request.apps)
    sample_s = max(request.heartbeat_s, horizon / 2000.0) if timeline else None
    target_s = max(request.heartbeat_s, horizon / TARGET_SAMPLES) if timeline else None
    bar = _progress_bar(horizon) if progress else None
    sim = Simulation(setup, request.config, request.cluster, request.apps,
                     heartbeat_s=request.heartbeat_s, until=request.until, seed=request.seed,
                     skip_idle=skip_idle, sample_s=sample_s, target_s=target_s, progress=bar)
    try:
        sim.run()
    finally:
        if bar is not None:
            bar.close()
    return build_result(sim), sim


class _progress_bar:
    """A tqdm bar over simulated time, shown on stderr only once a run takes over 2 s."""

    def __init__(self, horizon: float) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=round(horizon) or None, unit="sim-s", file=sys.stderr, delay=2.0,
                        dynamic_ncols=True, leave=False)
        self.shown = 0

    def __call__(self, t: float) -> None:
        step = int(t) - self.shown
        if step >= 1:
            if self.bar.total is not None and self.shown + step > self.bar.total:
                self.bar.total = int(t) + 1
            self.bar.update(step)
            self.shown += step

    def close(self) -> None:
        self.bar.close()
