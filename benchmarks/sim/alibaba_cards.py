"""GPU memory per card against one node total, on the Alibaba GPU-sharing trace.

Converts the trace (cluster-trace-gpu-v2023: a node list and a pod list) twice, with each node's
cards (`gpus:`) and with one gpu-mem total per node, replays both through the simulator with
arrivals compressed by each --time-scale (contention) until --after-s past the last submit, and
prints per run: GPU placements, how
many of them real cards could not hold (a shadow of every node's cards, best fit, follows the
placements of both runs), the queueing delay (start - submit) of the GPU pods that started and how
many had not, GPU-memory utilisation (time average over the run) and how many GPU nodes took pods.

    .venv/bin/python benchmarks/sim/alibaba_cards.py NODES.csv PODS.csv [--time-scale 300 600]

The trace is not in the repository: pass the CSV files of the public trace (see docs/simulator.md).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from scheduler.sim.alibaba import DEFAULT_CARD_MIB, convert
from scheduler.sim.engine import Simulation
from scheduler.sim.policies import prepare
from scheduler.sim.report import build_result
from scheduler.sim.runner import SimulationRequest
from scheduler.sim.stats import summary

QUEUES = "reservation: {starvation-timeout-s: null}\n"  # no reservations: heartbeats of full nodes are skipped


class ShadowCards:
    """Every node's cards, charged with each placement of a run: best fit on one card, or whole
    free cards for a multi-card pod; a placement no card could hold is counted, then charged
    across the freest cards (the node total held it), so the shadow follows what the run did."""

    def __init__(self, sim: Simulation, card_mib: int, cards_per_node: list[int], scale: int) -> None:
        self.sim, self.size = sim, card_mib * scale
        self.free = [[self.size] * n for n in cards_per_node]
        self.parts: dict[str, list[tuple[int, int]]] = {}
        self.gpu = sim.real_types.index("gpu-mem")
        self.placements = self.unholdable = 0
        self.nodes_used: set[int] = set()

    def place(self, cid: str, node: int, amount: int) -> None:
        free = self.free[node]
        self.placements += 1
        self.nodes_used.add(node)
        fitting = [(f, i) for i, f in enumerate(free) if f >= amount]
        if fitting:
            parts = [(min(fitting)[1], amount)]
        else:
            whole = [i for i, f in enumerate(free) if f == self.size]
            k = -(-amount // self.size)
            if amount % self.size == 0 and len(whole) >= k:
                parts = [(i, self.size) for i in whole[:k]]
            else:
                self.unholdable += 1
                parts, left = [], amount
                for i in sorted(range(len(free)), key=lambda i: -free[i]):
                    take = min(left, max(free[i], 0)) if left > 0 else 0
                    if take:
                        parts.append((i, take))
                        left -= take
                if left:
                    parts.append((parts[-1][0] if parts else 0, left))
        for i, part in parts:
            free[i] -= part
        self.parts[cid] = parts

    def release(self, cid: str, node: int) -> None:
        for i, part in self.parts.pop(cid, ()):
            self.free[node][i] += part

    def attach(self) -> None:
        sim, assigned, release = self.sim, self.sim._assigned, self.sim._release

        def on_assigned(a, node: int) -> None:
            assigned(a, node)
            c = sim.containers.get(a.assignment_id)
            if c is not None and c.vector[self.gpu]:
                self.place(a.assignment_id, node, c.vector[self.gpu])

        def on_release(cid: str, state: str):
            c = release(cid, state)
            if c is not None:
                self.release(cid, c.node)
            return c

        sim._assigned, sim._release = on_assigned, on_release


def run(nodes_csv: str, pods_csv: str, time_scale: float, cards: bool, heartbeat_s: float, after_s: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        done = convert(nodes_csv, pods_csv, cluster_out=d / "c.yaml", workload_out=d / "w.jsonl",
                       queues_out=d / "q.yaml", card_mib=DEFAULT_CARD_MIB, cards=cards, time_scale=time_scale)
        (d / "q.yaml").write_text(QUEUES + (d / "q.yaml").read_text())
        apps = [json.loads(line) for line in (d / "w.jsonl").read_text().splitlines()]
        until = max(a["submit"] for a in apps) + after_s  # every pod submitted, then after_s more
        request = SimulationRequest.from_files(str(d / "q.yaml"), str(d / "c.yaml"), str(d / "w.jsonl"),
                                               heartbeat_s=heartbeat_s, until=until)
    setup = prepare("drf", request.config, request.resource_types)
    sim = Simulation(setup, request.config, request.cluster, request.apps, heartbeat_s=heartbeat_s,
                     until=until, scales=request.scales)
    scale = request.scales.get("gpu-mem", 1)
    per_node = [len(n.cards) if n.cards else n.resources.get("gpu-mem", 0) // (DEFAULT_CARD_MIB * scale)
                for n in request.cluster.nodes]
    shadow = ShadowCards(sim, DEFAULT_CARD_MIB, per_node, scale)
    shadow.attach()
    started = time.perf_counter()
    sim.run()
    wall = time.perf_counter() - started
    result = build_result(sim)
    gpu_apps = {a["id"] for a in apps if a["stages"][0]["resources"].get("gpu-mem")}
    waits = [a["start"] - a["submit"] for a in result["apps"] if a["id"] in gpu_apps and a["start"] is not None]
    return {"cards": cards, "time_scale": time_scale, "pods": done.pods, "gpu_pods": len(gpu_apps),
            "placements": shadow.placements, "unholdable": shadow.unholdable,
            "not_started": len(gpu_apps) - len(waits), "wait": summary(waits, (50, 99)),
            "gpu_util": result["utilization"].get("gpu-mem", 0.0), "gpu_nodes": sum(1 for n in per_node if n),
            "nodes_used": len(shadow.nodes_used), "until": until, "wall_s": wall}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("nodes", help="the trace's node list, e.g. openb_node_list_all_node.csv")
    parser.add_argument("pods", help="the trace's pod list, e.g. openb_pod_list_default.csv")
    parser.add_argument("--time-scale", type=float, nargs="+", default=[300.0, 600.0],
                        help="divide submit times by each (default 300 600)")
    parser.add_argument("--heartbeat-s", type=float, default=10.0, help="node heartbeat interval (default 10)")
    parser.add_argument("--after-s", type=float, default=3600.0,
                        help="simulate this long after the last submit (default 3600); long pods still run then")
    args = parser.parse_args(argv)
    print(f"{'arrivals':>9}  {'fit':<10}  {'GPU pods':>8}  {'placed':>7}  {'no card holds':>13}  "
          f"{'wait p50 s':>10}  {'wait p99 s':>10}  {'not started':>11}  {'GPU-mem util':>12}  {'GPU nodes used':>14}  {'wall s':>6}")
    for scale in args.time_scale:
        for cards in (True, False):
            r = run(args.nodes, args.pods, scale, cards, args.heartbeat_s, args.after_s)
            w = r["wait"] or {"p50": float("nan"), "p99": float("nan")}
            share = r["unholdable"] / r["placements"] if r["placements"] else 0.0
            print(f"{'x' + format(scale, 'g'):>9}  {'per card' if cards else 'node total':<10}  {r['gpu_pods']:>8}  "
                  f"{r['placements']:>7}  {r['unholdable']:>6} ({share:5.1%})  {w['p50']:>10.1f}  {w['p99']:>10.1f}  "
                  f"{r['not_started']:>11}  {r['gpu_util']:>12.1%}  {r['nodes_used']:>6} of {r['gpu_nodes']:<5}  "
                  f"{r['wall_s']:>6.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
