#!/usr/bin/env python3
"""ResourceManager HA on the Docker mini-cluster (`make demo-ha`).

Starts ZooKeeper, two ResourceManagers running yarn-drf (rm1, rm2: ZKRMStateStore, work-preserving
recovery, embedded automatic failover, one yarn-site.xml and one queue file from the shared store)
and the three NodeManagers; runs a mixed workload from three queues (distributed-shell apps of
10-29 s containers in prod, dev and ml, and a MapReduce job in dev); prints a live table of each
queue's containers and dominant share; then kills the active RM's JVM with SIGKILL. The table shows
the outage, the standby taking over, its own yarn-drf core starting from the recovered state, and
the shares climbing back. The verdict: how long the takeover, the first new container and the
shares' return took, and whether every shell container that started either ended normally or still
runs (none lost). --keep leaves the cluster running; --scheduler capacity runs the same on YARN's
CapacityScheduler.
"""
from __future__ import annotations

import argparse
import sys
import time
import uuid

from rich.live import Live
from rich.table import Table

# docker/demo.py, beside this file: the repository on sys.path, testcontainers' settings, the engine.
from demo import ROOT, console, ensure_engine
SCHEDULERS = {
    "yarn-drf": "org.yarndrf.shim.YarnDrfScheduler",
    "capacity": "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler",
}


def core_targets(cluster) -> dict[str, float]:
    """queue -> the core's weighted-DRF target share (yarn-drf's status server), {} when it does
    not answer (no core: CapacityScheduler, or none active)."""
    try:
        return {q["name"]: q["target_share"] for q in cluster.rest_status("/v1/queues")["queues"]}
    except Exception:  # noqa: BLE001 (between RMs anything may answer, or nothing)
        return {}


def render(f, sample, targets: dict[str, float]) -> Table:
    from tests.docker_cluster.failover import WORKLOAD

    when = "before the kill" if f.killed_at is None else f"{sample.t:5.1f} s after the kill of {f.old}"
    t = Table(title=f"{when}: active RM {sample.active or '-'}; states {f.c.states()}",
              caption="dominant shares from the active RM's REST API; target: the new core's weighted-DRF target")
    for col in ("queue", "containers", "dominant share", "one container", "target"):
        t.add_column(col, justify="right")
    for q in WORKLOAD:
        target = targets.get(q)
        t.add_row(q, str(sample.containers[q]), f"{sample.shares[q]:.3f}", f"{f.one(q):.3f}",
                  "-" if target is None else f"{target:.3f}")
    return t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scheduler", choices=SCHEDULERS, default="yarn-drf")
    ap.add_argument("--keep", action="store_true", help="leave the cluster running at the end")
    args = ap.parse_args(argv)
    started = time.monotonic()
    ensure_engine()

    from tests.docker_cluster import failover
    from tests.docker_cluster.ha_cluster import HaCluster

    cluster = HaCluster.create(SCHEDULERS[args.scheduler], ROOT / "conf" / "docker-queues.yaml")
    console.print(f"Starting ZooKeeper, rm1 and rm2 ({args.scheduler}) and 3 NodeManagers")
    try:
        cluster.start()
        console.print(f"Cluster up in {time.monotonic() - started:.0f} s: {cluster.states()}; active RM web UI "
                      f"http://127.0.0.1:{cluster.web_port}; configuration store /shared/conf (one yarn-site.xml, "
                      "one queues.yaml for both RMs)")
        with Live(console=console, refresh_per_second=2) as live:
            def show(f, sample):
                live.update(render(f, sample, core_targets(cluster) if args.scheduler == "yarn-drf" else {}))

            f, out = failover.run(cluster, uuid.uuid4().hex[:6], on_sample=show)
        if not console.is_terminal:
            console.line()
        ok = verdict(cluster, f, out, args.scheduler)
        if args.keep:
            cluster.restart_rm(f.old)
            kept(cluster)
        return ok
    finally:
        if not args.keep:
            cluster.stop()
        console.print(f"Total demo time {time.monotonic() - started:.0f} s")


def verdict(cluster, f, out, scheduler: str) -> int:
    def s(v):
        return "never" if v is None else f"{v:.1f} s"

    console.print(f"kill -9 of {f.old}'s JVM; {cluster.active_id or 'no RM'} active after {s(out.active_s)}; "
                  f"its first new container after {s(out.first_allocation_s)}; every queue back within one "
                  f"container of its share before the kill after {s(out.back_at_target_s)}")
    console.print("shares before the kill: " + ", ".join(f"{q} {v:.3f}" for q, v in out.before.items()))
    console.print(f"shell containers: {out.started} started, {out.ended} ended normally, {out.running} still "
                  f"running, {len(out.lost)} lost{': ' + ', '.join(out.lost[:5]) if out.lost else ''}")
    ok = out.active_s is not None and out.back_at_target_s is not None and not out.lost
    if scheduler == "yarn-drf" and cluster.active_id:
        cores = {rm: len(cluster.serve_pids(rm)) for rm in cluster.rms if rm not in cluster.down}
        console.print(f"yarn-drf cores per RM container: {cores} (one in the active RM, none in a standby); "
                      f"the new core's first snapshot: {_resync_line(cluster)}")
        ok = ok and cores.get(cluster.active_id) == 1
    console.print("[bold]" + ("FAILED OVER: the standby took over, no container lost, shares back"
                              if ok else "NOT OK: see above") + "[/]")
    return 0 if ok else 1


def kept(cluster) -> None:
    """How to reach the cluster left running (docker/DOCKER.md, "ResourceManager HA")."""
    web = {rm: f"http://127.0.0.1:{cluster.env[f'RM_WEB_PORT_{rm.upper()}']}" for rm in cluster.rms}
    console.print(f"Cluster left running (--keep), {cluster.states()}; RM web UIs {web}.\n"
                  f"  clients:   docker exec {cluster.volume}-client yarn rmadmin -getAllServiceState\n"
                  f"  fail over: docker exec {cluster.volume}-{cluster.active_id} sh -c "
                  "'kill -9 $(pgrep -f \"^java .*ResourceManager\")'"
                  f"   (then: docker start {cluster.volume}-{cluster.active_id})\n"
                  f"  remove:    docker rm -f $(docker ps -aq --filter label=yarn-drf=1); docker volume rm {cluster.volume}")


def _resync_line(cluster) -> str:
    lines = [line for line in cluster.rm_log(cluster.active_id).splitlines() if "core resynchronised" in line]
    return lines[0].split(": ", 1)[-1] if lines else "no resync line"


if __name__ == "__main__":
    sys.exit(main())
