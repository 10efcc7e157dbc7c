"""Federation-wide DRF on the federated Docker cluster: static weights against the policy service
(issue 32 item 3; docs/federation.md, "Federation-wide DRF: the policy service").

    .venv/bin/python benchmarks/federation/policy.py [--runs 3] [--warmup 90] [--measure 120] [--json out.json]

The federation of tests/docker_cluster/federation.py (SC-1: a CPU-rich and a memory-rich node;
SC-2: one GPU node with two 10 GiB cards) and conf/docker-queues.yaml. The same workload runs
2 x --runs times on one federation, the phases alternated (static, policy, static, ...), each
queue from its own submit loops in the client container (a distributed-shell app after another,
so later apps meet the newer weights):

- root.research.ml: GPU executors (gpu-mem on every container), which fit only SC-2;
- root.prod (weight 2) and root.research.dev: CPU containers that fit both sub-clusters.

Phase `static`: every queue on even router and AMRM weights (Hadoop's uniform split: the `*`
policy, and even weights saved over every name an earlier policy phase saved). Phase `policy`:
`yarn-drf federation-policy`'s rounds (yarn_bridge.federation_cli.one_round) every --interval
seconds, saving through `docker exec CLIENT yarn routeradmin`. After --warmup seconds, every
--sample seconds for --measure seconds, each queue's federation-wide dominant share (its usage
summed over both cores' /v1/queues over the federation's capacity) and its federation-wide
weighted-DRF target, shape-aware (yarn_bridge.federation_policy.plan over the same reads and the
cores' /v1/demand), and the pooled target beside it. Prints each phase's means per queue and the
sum of the mean distances |share - target|, then per phase the median and range over the runs.
Needs `make images`.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
os.environ.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")
os.environ.setdefault("TC_HOST", "127.0.0.1")

YARN_DRF = "org.yarndrf.shim.YarnDrfScheduler"
# queue -> (container shape, containers per app, submit loops): ml's GPU memory fits SC-2 only
WORKLOAD = {
    "root.research.ml": ({"memory-mb": 1024, "vcores": 1, "gpu-mem": 2560}, 4, 2),
    "root.prod": ({"memory-mb": 2048, "vcores": 2}, 6, 2),
    "root.research.dev": ({"memory-mb": 2048, "vcores": 1}, 6, 2),
}
SLEEP_S = 45  # each container's run


def docker_host() -> None:
    from tests.docker_cluster.engine import engine_host

    host = engine_host()
    if host is None:
        sys.exit("no Docker engine answers: run `make images` first")
    os.environ["DOCKER_HOST"] = host


def start_loops(fed, phase: str) -> None:
    from tests.docker_cluster.cluster import dshell_command
    for queue, (shape, count, loops) in WORKLOAD.items():
        for i in range(loops):
            name = f"{phase}-{queue.rsplit('.', 1)[-1]}-{i}"
            app = shlex.join(dshell_command(name, queue, count, shape, f"sleep {SLEEP_S}"))
            script = f"echo $$ > /tmp/loop-{name}.pid; while true; do {app} >> /tmp/{name}.log 2>&1; done"
            fed.exec(["bash", "-c", script], detach=True)


def stop_loops(fed) -> None:
    """The submit loops (their pid files), then every app still running, through the Router."""
    fed.exec(["bash", "-c", "for f in /tmp/loop-*.pid; do pkill -P $(cat $f); kill $(cat $f); rm -f $f; done"])
    _, listed = fed.exec(["yarn", "application", "-list"])
    for app_id in {w for w in listed.split() if w.startswith("application_")}:
        fed.exec(["yarn", "application", "-kill", app_id])


def reads(fed):
    from yarn_bridge.federation_policy import parse_demand, parse_status
    statuses = [parse_status(sc_id, sc.rest_status("/v1/queues")) for sc_id, sc in fed.subclusters.items()]
    return statuses, [parse_demand(s.id, fed.subclusters[s.id].rest_status("/v1/demand"), s.types) for s in statuses]


def measure(fed, warmup: float, seconds: float, every: float) -> dict[str, dict[str, float]]:
    from yarn_bridge.federation_policy import plan
    time.sleep(warmup)
    samples: dict[str, list[tuple[float, float, float]]] = {q: [] for q in WORKLOAD}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        statuses, demands = reads(fed)
        plans, _ = plan(statuses, demands)
        pooled, _ = plan(statuses)
        for q in WORKLOAD:
            if q in plans:
                samples[q].append((plans[q].share, plans[q].target_share, pooled[q].target_share))
                print(f"  {q:<20} share {plans[q].share:.3f} target {plans[q].target_share:.3f} "
                      f"(pooled {pooled[q].target_share:.3f})", flush=True)
        time.sleep(every)
    return {q: {"share": statistics.fmean(s for s, _, _ in xs), "target": statistics.fmean(t for _, t, _ in xs),
                "pooled_target": statistics.fmean(p for _, _, p in xs),
                "distance": statistics.fmean(abs(s - t) for s, t, _ in xs),
                "pooled_distance": statistics.fmean(abs(s - p) for s, _, p in xs), "samples": len(xs)}
            for q, xs in samples.items() if xs}


def policy_rounds(fed, interval: float, stop: threading.Event, saved: set[str]) -> None:
    """The service's rounds until `stop`; `saved` collects every queue name it saved a policy under."""
    from yarn_bridge.federation_cli import one_round
    urls = [(sc_id, f"http://127.0.0.1:{sc.status_port()}") for sc_id, sc in fed.subclusters.items()]
    routeradmin = f"docker exec {fed.volume}-client yarn routeradmin"
    applied: dict[str, str] = {}
    while not stop.is_set():
        one_round(urls, routeradmin, 0.0, False, applied)
        saved.update(applied)
        stop.wait(interval)


def summary(runs: list[tuple[str, dict[str, dict[str, float]]]]) -> str:
    """Each phase's sum of mean distances and per-queue means over its runs: median [min - max]."""
    lines = [f"{'phase':<7} {'queue':<20} {'share':>22} {'target':>22} {'|share-target|':>22}"]

    def spread(xs: list[float]) -> str:
        return f"{statistics.median(xs):.3f} [{min(xs):.3f}-{max(xs):.3f}]"
    for phase in ("static", "policy"):
        mine = [r for p, r in runs if p == phase]
        for q in WORKLOAD:
            got = [r[q] for r in mine if q in r]
            if got:
                lines.append(f"{phase:<7} {q:<20} {spread([g['share'] for g in got]):>22} "
                             f"{spread([g['target'] for g in got]):>22} {spread([g['distance'] for g in got]):>22}")
        for key, what in (("distance", "sum of distances"), ("pooled_distance", "... to pooled targets")):
            sums = [sum(r[q][key] for q in r) for r in mine]
            if sums:
                lines.append(f"{phase:<7} {what:<20} {'':>22} {'':>22} {spread(sums):>22}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs of each phase, alternated (default 3)")
    ap.add_argument("--warmup", type=float, default=90)
    ap.add_argument("--measure", type=float, default=120)
    ap.add_argument("--sample", type=float, default=5)
    ap.add_argument("--interval", type=float, default=10, help="seconds between the policy's rounds")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    docker_host()
    from tests.docker_cluster.federation import Federation

    fed = Federation.create(YARN_DRF, ROOT / "conf" / "docker-queues.yaml")
    even = {sc: 1 / len(fed.subclusters) for sc in fed.subclusters}
    runs: list[tuple[str, dict[str, dict[str, float]]]] = []
    saved: set[str] = set()  # queue names a policy phase saved weights under: even again for static
    try:
        fed.start()
        for i, phase in enumerate(["static", "policy"] * args.runs):
            print(f"run {i // 2 + 1} phase {phase}", flush=True)
            for name in ["*", *sorted(saved)]:
                fed.save_policy(name, even, even)
            stop = threading.Event()
            rounds = threading.Thread(target=policy_rounds, args=(fed, args.interval, stop, saved), daemon=True)
            if phase == "policy":
                rounds.start()
            start_loops(fed, f"{phase}{i}")
            runs.append((phase, measure(fed, args.warmup, args.measure, args.sample)))
            stop.set()
            if rounds.is_alive():
                rounds.join()
            stop_loops(fed)
            _, listed = fed.exec(["yarn", "routeradmin", "-policy", "-l"])
            print(listed[-3000:], flush=True)
            time.sleep(SLEEP_S)
    finally:
        fed.stop()
    print(f"\n{'run':<4} {'queue':<20} {'phase':<7} {'share':>7} {'target':>7} {'pooled':>7} {'|share-target|':>15} samples")
    for i, (phase, by_queue) in enumerate(runs):
        for q in WORKLOAD:
            r = by_queue.get(q)
            if r:
                print(f"{i // 2 + 1:<4} {q:<20} {phase:<7} {r['share']:7.3f} {r['target']:7.3f} "
                      f"{r['pooled_target']:7.3f} {r['distance']:15.3f} {r['samples']:7d}")
    print("\n" + summary(runs))
    if args.json:
        args.json.write_text(json.dumps([{"phase": p, "queues": r} for p, r in runs], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
