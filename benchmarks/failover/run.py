"""ResourceManager failover with yarn-drf and with CapacityScheduler on the same HA Docker cluster
(ZooKeeper, rm1/rm2, the three NodeManagers; tests/docker_cluster/ha_cluster.py), the same queues and the
same churning mixed workload (tests/docker_cluster/failover.py): kill -9 of the active RM's JVM, then the
time from the kill to the standby reporting ACTIVE, to its first new container, and to every
queue's dominant share back within one of its containers of its level before the kill.

    make bench-failover                     # = .venv/bin/python benchmarks/failover/run.py
    .venv/bin/python benchmarks/failover/run.py --runs 3 --schedulers yarn-drf,capacity --json out.json

Each run is a fresh cluster; the schedulers alternate run by run so machine load hits both alike.
Needs the images (`make images`). Prints every run, the medians and yarn-drf's median over
CapacityScheduler's.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
os.environ.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")
os.environ.setdefault("TC_HOST", "127.0.0.1")

SCHEDULERS = {
    "yarn-drf": "org.yarndrf.shim.YarnDrfScheduler",
    "capacity": "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler",
}
FIGURES = ("active_s", "first_allocation_s", "back_at_target_s")


def docker_host() -> None:
    from tests.docker_cluster.engine import engine_host

    host = engine_host()
    if host is None:
        sys.exit("no Docker engine answers: run `make images` first")
    os.environ["DOCKER_HOST"] = host


def one_run(scheduler: str) -> dict:
    from tests.docker_cluster import failover
    from tests.docker_cluster.ha_cluster import HaCluster

    cluster = HaCluster.create(SCHEDULERS[scheduler], ROOT / "conf" / "docker-queues.yaml")
    try:
        cluster.start()
        f, outcome = failover.run(cluster, uuid.uuid4().hex[:6])
        if outcome.back_at_target_s is None or outcome.lost:
            print(cluster.explain(), file=sys.stderr)
        return {"scheduler": scheduler, **failover.summary(f, outcome)}
    finally:
        cluster.stop()


def fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:6.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs per scheduler (default 3)")
    ap.add_argument("--schedulers", default="yarn-drf,capacity", help="comma-separated: yarn-drf, capacity")
    ap.add_argument("--json", type=Path, help="write every run's figures here")
    args = ap.parse_args(argv)
    names = [s.strip() for s in args.schedulers.split(",") if s.strip()]
    unknown = [s for s in names if s not in SCHEDULERS]
    if unknown:
        ap.error(f"--schedulers: unknown {unknown}; known: {list(SCHEDULERS)}")
    docker_host()

    runs: list[dict] = []
    print(f"{'run':>3} {'scheduler':9} {'active':>7} {'1st alloc':>9} {'at target':>9} "
          f"{'started':>7} {'ended':>6} {'running':>7} {'lost':>4}  wall")
    for i in range(args.runs):
        for name in names:
            t0 = time.monotonic()
            r = one_run(name)
            runs.append(r)
            print(f"{i + 1:>3} {name:9} {fmt(r['active_s']):>7} {fmt(r['first_allocation_s']):>9} "
                  f"{fmt(r['back_at_target_s']):>9} {r['started']:>7} {r['ended']:>6} {r['running']:>7} "
                  f"{r['lost']:>4}  {time.monotonic() - t0:.0f} s", flush=True)

    print("\nmedians, seconds from the kill (runs that reached the point):")
    medians: dict[str, dict[str, float | None]] = {}
    for name in names:
        mine = [r for r in runs if r["scheduler"] == name]
        medians[name] = {f: _median([r[f] for r in mine]) for f in FIGURES}
        print(f"  {name:9} " + "  ".join(f"{f} {fmt(medians[name][f])}" for f in FIGURES)
              + f"  (lost containers: {sum(r['lost'] for r in mine)})")
    if {"yarn-drf", "capacity"} <= set(names):
        ratios = {f: _ratio(medians["yarn-drf"][f], medians["capacity"][f]) for f in FIGURES}
        print("  yarn-drf / capacity: " + "  ".join(f"{f} {v}" for f, v in ratios.items()))
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "medians": medians}, indent=2))
    return 0 if all(r["lost"] == 0 and r["back_at_target_s"] is not None for r in runs) else 1


def _median(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return statistics.median(got) if got else None


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or not b else f"{a / b:.2f}x"


if __name__ == "__main__":
    sys.exit(main())
