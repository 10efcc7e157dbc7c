"""Federation-wide DRF on the federated Docker cluster: static weights against the policy service
(issue 32 item 3; docs/federation.md, "Federation-wide DRF: the policy service").

    .venv/bin/python benchmarks/federation/policy.py [--warmup 90] [--measure 120] [--json out.json]

The federation of tests/docker_cluster/federation.py (SC-1: a CPU-rich and a memory-rich node;
SC-2: one GPU node with two 10 GiB cards) and conf/docker-queues.yaml. The same workload runs
twice on one federation, each queue from its own submit loops in the client container (a
distributed-shell app after another, so later apps meet the newer weights):

- root.research.ml: GPU executors (gpu-mem on every container), which fit only SC-2;
- root.prod (weight 2) and root.research.dev: CPU containers that fit both sub-clusters.

Phase `static`: every queue on the `*` policy with even router and AMRM weights (Hadoop's uniform
split). Phase `policy`: `yarn-drf federation-policy`'s rounds (yarn_bridge.federation_cli.one_round)
every --interval seconds, saving through `docker exec CLIENT yarn routeradmin`. After --warmup
seconds, every --sample seconds for --measure seconds, each queue's federation-wide dominant share
(its usage summed over both cores' /v1/queues over the federation's capacity) and its
federation-wide weighted-DRF target (yarn_bridge.federation_policy.plan over the same reads).
Prints the means per phase and queue and the mean distance |share - target|. Needs `make images`.
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


def statuses(fed):
    from yarn_bridge.federation_policy import parse_status
    return [parse_status(sc_id, sc.rest_status("/v1/queues")) for sc_id, sc in fed.subclusters.items()]


def measure(fed, warmup: float, seconds: float, every: float) -> dict[str, dict[str, float]]:
    from yarn_bridge.federation_policy import plan
    time.sleep(warmup)
    samples: dict[str, list[tuple[float, float]]] = {q: [] for q in WORKLOAD}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        plans, _ = plan(statuses(fed))
        for q in WORKLOAD:
            if q in plans:
                samples[q].append((plans[q].share, plans[q].target_share))
            print(f"  {q:<20} share {plans[q].share if q in plans else 0:.3f} target "
                  f"{plans[q].target_share if q in plans else 0:.3f}", flush=True)
        time.sleep(every)
    return {q: {"share": statistics.fmean(s for s, _ in xs), "target": statistics.fmean(t for _, t in xs),
                "distance": statistics.fmean(abs(s - t) for s, t in xs), "samples": len(xs)}
            for q, xs in samples.items() if xs}


def policy_rounds(fed, interval: float, stop: threading.Event) -> None:
    from yarn_bridge.federation_cli import one_round
    urls = [(sc_id, f"http://127.0.0.1:{sc.status_port()}") for sc_id, sc in fed.subclusters.items()]
    routeradmin = f"docker exec {fed.volume}-client yarn routeradmin"
    applied: dict[str, str] = {}
    while not stop.is_set():
        one_round(urls, routeradmin, 0.0, False, applied)
        stop.wait(interval)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    results = {}
    try:
        fed.start()
        for phase in ("static", "policy"):
            print(f"phase {phase}", flush=True)
            fed.save_policy("*", even, even)
            stop = threading.Event()
            rounds = threading.Thread(target=policy_rounds, args=(fed, args.interval, stop), daemon=True)
            if phase == "policy":
                rounds.start()
            start_loops(fed, phase)
            results[phase] = measure(fed, args.warmup, args.measure, args.sample)
            stop.set()
            if rounds.is_alive():
                rounds.join()
            stop_loops(fed)
            _, saved = fed.exec(["yarn", "routeradmin", "-policy", "-l"])
            print(saved[-3000:], flush=True)
            time.sleep(SLEEP_S)
    finally:
        fed.stop()
    print(f"\n{'queue':<20} {'phase':<7} {'share':>7} {'target':>7} {'|share-target|':>15} samples")
    for q in WORKLOAD:
        for phase, by_queue in results.items():
            r = by_queue.get(q)
            if r:
                print(f"{q:<20} {phase:<7} {r['share']:7.3f} {r['target']:7.3f} {r['distance']:15.3f} {r['samples']:7d}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
