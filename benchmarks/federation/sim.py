"""Federation-wide weighted DRF and allocation throughput of N simulated sub-clusters behind a router.

Sub-cluster 0 has GPU nodes <32 vcores, 128 GiB, 64 GiB gpu-mem>; every other one draws each
node's shape from <32 vcores, 128 GiB>, <16 vcores, 256 GiB>, <64 vcores, 256 GiB> (seeded).
Three equally weighted queues get the synthetic generator's task shapes (scheduler.sim.synthetic:
cpu <4 vcores, 2 GiB>, memory <1 vcore, 12 GiB>, gpu <2 vcores, 4 GiB, 8 GiB gpu-mem>, which fits
only sub-cluster 0), each app one or two stages of 5-60 tasks per 25 nodes of a sub-cluster,
20-200 s a task, arriving over the first `--arrive` seconds: more than the federation holds.

Each run is measured twice: Hadoop's static equal weights, and scheduler.sim.fed_weights'
yielding rule (a round every 10 simulated seconds). Every round after `--warmup` the oracle
(tests/sim/fed_oracle.py: water-filling over the federation's total capacity and the queues'
demands) gives each queue's federation-wide target; the table shows the mean over those samples of
each queue's dominant share of the federation and its target, and the mean total shortfall
(sum over queues of target minus share, where below). Throughput: containers started per
simulated second and per wall second (this machine, both cores shared).

Run: .venv/bin/python benchmarks/federation/sim.py [--subclusters 2,4,8] [--nodes 5000] [--until 300]
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scheduler import parse_config  # noqa: E402
from scheduler.sim.fed_weights import StaticWeights, YieldingWeights  # noqa: E402
from scheduler.sim.federation import FederatedSimulation  # noqa: E402
from scheduler.sim.formats import DEFAULT_AM, AppSpec, ClusterSpec, NodeSpec, StageSpec  # noqa: E402
from scheduler.sim.synthetic import KINDS  # noqa: E402
from tests.sim.fed_oracle import fairness, shortfall  # noqa: E402

QUEUES = parse_config("""
queues:
  root:
    children:
      cpu: {weight: 1}
      memory: {weight: 1}
      gpu: {weight: 1}
""")
GPU_NODE = {"vcores": 32, "memory-mb": 131072, "gpu-mem": 65536}
CPU_SHAPES = ({"vcores": 32, "memory-mb": 131072}, {"vcores": 16, "memory-mb": 262144},
              {"vcores": 64, "memory-mb": 262144})
POLICY_S = 10.0


def subclusters(n: int, nodes: int, seed: int) -> list[ClusterSpec]:
    rng = random.Random(seed)
    out = [ClusterSpec(tuple(NodeSpec(f"sc0-{i}", dict(GPU_NODE), f"/sc0/r{i // 40}") for i in range(nodes)), "sc0")]
    for s in range(1, n):
        out.append(ClusterSpec(tuple(NodeSpec(f"sc{s}-{i}", dict(rng.choice(CPU_SHAPES)), f"/sc{s}/r{i // 40}")
                                     for i in range(nodes)), f"sc{s}"))
    return out


def workload(n: int, nodes: int, arrive: float, seed: int) -> list[AppSpec]:
    """40 apps per sub-cluster, each stage 5-60 tasks per 25 nodes of a sub-cluster; a third of the
    apps are GPU apps whatever N (so their only sub-cluster is crowded by the others' split asks)."""
    rng = random.Random(seed)
    scale = max(1, nodes // 25)
    apps = []
    for i in range(40 * n):
        kind = rng.choice(list(KINDS))
        tasks = rng.randint(5, 60) * scale
        stages = [StageSpec(tasks, dict(KINDS[kind]), round(rng.uniform(20, 200), 1))]
        if rng.random() < 0.5:
            stages.append(StageSpec(max(1, tasks // 4), dict(KINDS[kind]), round(rng.uniform(20, 200), 1)))
        apps.append(AppSpec(f"app{i:05d}-{kind}", f"root.{kind}", f"{kind}-user", round(rng.uniform(0, arrive), 3),
                            tuple(stages), dict(DEFAULT_AM)))
    return sorted(apps, key=lambda a: a.submit)


class Measured(FederatedSimulation):
    """Takes the oracle's figures at every policy round after the warm-up."""

    warmup = 0.0

    def _policy_round(self) -> None:
        super()._policy_round()
        if self.now >= self.warmup:
            self.samples.append(fairness(self))


def run(n: int, nodes: int, weights_name: str, args: argparse.Namespace) -> dict:
    clusters = subclusters(n, nodes, args.seed)
    apps = workload(n, nodes, args.arrive, args.seed)
    weights = YieldingWeights(n) if weights_name == "yielding" else StaticWeights(n)
    sim = Measured(QUEUES, clusters, apps, weights, until=args.until, seed=args.seed, policy_s=POLICY_S)
    sim.warmup, sim.samples = args.warmup, []
    started = time.perf_counter()
    sim.run()
    wall = time.perf_counter() - started
    queues = sorted(sim.samples[0])
    mean = {q: tuple(sum(s[q][k] for s in sim.samples) / len(sim.samples) for k in (0, 1)) for q in queues}
    return {"n": n, "weights": weights_name, "queues": mean,
            "shortfall": sum(shortfall(s) for s in sim.samples) / len(sim.samples),
            "containers": sim.counters["assignments"], "sim_s": sim.now, "wall_s": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subclusters", default="2,4,8")
    parser.add_argument("--nodes", type=int, default=5000, help="nodes per sub-cluster")
    parser.add_argument("--until", type=float, default=300.0)
    parser.add_argument("--arrive", type=float, default=120.0)
    parser.add_argument("--warmup", type=float, default=100.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"{args.nodes} nodes a sub-cluster, {args.until:.0f} simulated s, fairness sampled every "
          f"{POLICY_S:.0f} s from {args.warmup:.0f} s; share / target: federation-wide dominant shares")
    header = ("sub-clusters", "weights", "cpu share/target", "memory share/target", "gpu share/target",
              "shortfall", "containers", "per sim-s", "per wall-s", "wall s", "wall s per SC")
    print(" | ".join(header))
    for n in [int(x) for x in args.subclusters.split(",")]:
        for weights_name in ("static", "yielding"):
            r = run(n, args.nodes, weights_name, args)
            q = r["queues"]
            row = (str(n), weights_name,
                   *(f"{q[f'root.{k}'][0]:.3f} / {q[f'root.{k}'][1]:.3f}" for k in ("cpu", "memory", "gpu")),
                   f"{r['shortfall']:.3f}", f"{r['containers']:,}", f"{r['containers'] / r['sim_s']:,.0f}",
                   f"{r['containers'] / r['wall_s']:,.0f}", f"{r['wall_s']:.1f}", f"{r['wall_s'] / n:.1f}")
            print(" | ".join(row), flush=True)


if __name__ == "__main__":
    main()
