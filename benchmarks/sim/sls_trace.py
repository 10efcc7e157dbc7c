"""The SLS benchmark's workload replayed through the simulator: fairness of every decision and reservations.

The workload of benchmarks/sls (three job classes, one queue each, the cluster oversubscribed
1.5x; benchmarks/sls/workload.py, seed 1) becomes a simulator workload (each job one stage of its
tasks, at the job's mean task length), on the same nodes and queues, at several starvation
timeouts. For every container the core starts it checks the DRFH rule: was there a queue with a
lower weighted share and a pending request that fitted the node's room at that moment? (A node
held by a reservation serves its request even when that queue is no longer the lowest: those
count too.) It prints those violations, the reservations made, satisfied and dropped, and the gpu
queue's longest stretch more than 0.02 below its target (the reachable target, sampled 100 times).

Run: .venv/bin/python benchmarks/sim/sls_trace.py [--nodes 200] [--timeouts 30,5,0.001]
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "sls"))  # its modules import each other by name

import workload  # noqa: E402
from scheduler.config import parse_config  # noqa: E402
from scheduler.sim.formats import parse_cluster, parse_workload  # noqa: E402
from scheduler.sim.runner import SimulationRequest, simulate  # noqa: E402

TYPES = ("memory-mb", "vcores", "gpu-mem")


def sim_workload(nodes: int, seed: int) -> str:
    lines = []
    for job in workload.jobs(nodes, duration_s=90, arrival_s=30, tasks_per_job=40, task_s=(10, 30),
                             load=0.5, seed=seed):
        tasks = job["job.tasks"]
        shape = {t: int(tasks[0][f"container.{t}"]) for t in TYPES}
        mean_s = statistics.fmean(int(t["container.duration.ms"]) for t in tasks) / 1000
        lines.append(f'{{"id": "{job["job.id"]}", "queue": "root.{job["job.queue.name"]}", '
                     f'"user": "{job["job.user"]}", "submit": {int(job["job.start.ms"]) / 1000}, '
                     f'"stages": [{{"tasks": {len(tasks)}, "resources": {_json(shape)}, "duration": {mean_s:.3f}}}]}}')
    return "\n".join(lines)


def _json(d: dict) -> str:
    return "{" + ", ".join(f'"{k}": {v}' for k, v in d.items()) + "}"


def run(nodes: int, timeout: float, seed: int) -> dict:
    config = parse_config((ROOT / "benchmarks" / "sls" / "queues.yaml").read_text().replace(
        "starvation-timeout-s: 30", f"starvation-timeout-s: {timeout}"))
    node = workload.NODE
    cluster = parse_cluster(f"nodes:\n  - {{name: node, count: {nodes}, resources: {{memory-mb: {node.memory_mb}, "
                            f"vcores: {node.vcores}, gpu-mem: {node.gpu_mem}}}}}\n", "cluster.yaml")
    apps = parse_workload(sim_workload(nodes, seed), "workload.jsonl")
    request = SimulationRequest.build(config, cluster, apps)
    checks = {"containers": 0, "violations": 0}
    below = {"since": None, "longest": 0.0}

    def watch(sim) -> None:
        core = sim.core
        decide = core.on_heartbeat

        def on_heartbeat(node_id, now=None):
            node = core.nodes[node_id]
            room = list(core.types.sub(node.capacity, node.allocated))
            queues = {q.path: q for q in core.queues.values() if q.is_leaf}
            usage = {p: list(q.usage) for p, q in queues.items()}
            got = decide(node_id, now)
            for a in got:
                checks["containers"] += 1
                mine = _wshare(queues[a.queue], usage[a.queue], core)
                for p, q in queues.items():
                    if p != a.queue and _wshare(q, usage[p], core) < mine - 1e-12 and any(
                            all(s <= r for s, r in zip(req.capability, room))
                            for app in q.apps.values() if app.runnable for req in app.pending):
                        checks["violations"] += 1
                        break
                usage[a.queue] = [u + v for u, v in zip(usage[a.queue], a.vector)]
                room = [r - v for r, v in zip(room, a.vector)]
            return got

        core.on_heartbeat = on_heartbeat

    from scheduler.sim import engine
    original = engine.Simulation.run

    def run_and_watch(self):
        watch(self)
        return original(self)

    engine.Simulation.run = run_and_watch
    try:
        result, sim = simulate(request, timeline=True)
    finally:
        engine.Simulation.run = original
    tl = sim.timeline
    gpu, times = tl.shares.get("root.gpu", []), tl.times
    for i, t in enumerate(tl.target_times):
        j = max(k for k, x in enumerate(times) if x <= t)
        short = tl.targets["root.gpu"][i] - gpu[j] > 0.02
        if short and below["since"] is None:
            below["since"] = t
        elif not short and below["since"] is not None:
            below["longest"] = max(below["longest"], t - below["since"])
            below["since"] = None
    counters = result["scheduler"]["core_counters"]
    return {"timeout": timeout, **checks, "made": counters["reservations_made"],
            "satisfied": counters["reservations_satisfied"], "dropped": counters["reservations_dropped"],
            "gpu_below_target_s": below["longest"], "end": result["end_time"]}


def _wshare(q, usage, core) -> float:
    return core.policy.aggregate(u * s for u, s in zip(usage, q.scale))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--timeouts", default="30,5,0.001")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(f"SLS workload (seed {args.seed}) through the simulator on {args.nodes} nodes")
    print(f"{'timeout s':>10} {'containers':>11} {'DRFH violations':>16} {'reservations':>13} {'satisfied':>10} "
          f"{'dropped':>8} {'gpu > 0.02 below target, longest s':>35}")
    for timeout in (float(t) for t in args.timeouts.split(",")):
        r = run(args.nodes, timeout, args.seed)
        print(f"{r['timeout']:>10g} {r['containers']:>11,} {r['violations']:>16,} {r['made']:>13,} "
              f"{r['satisfied']:>10,} {r['dropped']:>8,} {r['gpu_below_target_s']:>35.1f}")


if __name__ == "__main__":
    main()
