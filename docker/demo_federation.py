#!/usr/bin/env python3
"""YARN Federation of yarn-drf sub-clusters on the Docker mini-cluster (`make demo-federation`).

Starts ZooKeeper (the federation state store), two sub-clusters each of one ResourceManager running
yarn-drf with its own core (SC-1: a CPU-rich and a memory-rich NodeManager; SC-2: a GPU node with
two cards), the AMRMProxy with the FederationInterceptor on every NodeManager, a Router, and a
client container whose `yarn` talks to the Router. Saves a policy with `yarn routeradmin -policy`
(the app's AM in SC-1, its asks to SC-2), submits a distributed-shell
app through the Router, and prints while it runs each sub-cluster's yarn-drf view of its queues; at
the end, where each container ran (by the NodeManager it marked), `yarn application -list` through
the Router and a verdict. --keep leaves the federation running and prints how to reach it.
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

YARN_DRF = "org.yarndrf.shim.YarnDrfScheduler"
QUEUE = "root.research.dev"
CONTAINERS = 8
SHAPE = {"memory-mb": 1024, "vcores": 1}
SECONDS = 30  # each container's sleep: long enough to watch both cores hold them


def core_view(sc) -> dict[str, dict]:
    """The sub-cluster core's queues with usage (its status server's /v1/queues), {} while it does
    not answer."""
    try:
        return {q["name"]: q for q in sc.rest_status("/v1/queues")["queues"]
                if q["leaf"] and (q["running_apps"] or any(q["usage"].values()))}
    except Exception:  # noqa: BLE001 (a core starting, or its RM killed: nothing to show)
        return {}


def render(fed, tag: str, elapsed: float) -> Table:
    t = Table(title=f"{elapsed:5.0f} s: each sub-cluster's yarn-drf core (its status server), "
                    f"and the containers that marked their NodeManager",
              caption="the UAM the AMRMProxy registers in SC-2 is an app of SC-2's queue like any other")
    for col in ("sub-cluster", "queue", "usage", "dominant share", "target", "containers marked"):
        t.add_column(col, justify="right")
    marks = fed.marks_by_subcluster(tag)
    for sc_id, sc in fed.subclusters.items():
        queues = core_view(sc) or {"-": None}
        for name, q in queues.items():
            usage = "-" if q is None else ", ".join(f"{k} {v:g}" for k, v in q["usage"].items() if v)
            t.add_row(sc_id, name, usage, "-" if q is None else f"{q['dominant_share']:.3f}",
                      "-" if q is None else f"{q['target_share']:.3f}", str(len(marks[sc_id])))
    return t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", action="store_true", help="leave the federation running at the end")
    args = ap.parse_args(argv)
    started = time.monotonic()
    ensure_engine()

    from tests.docker_cluster.federation import Federation

    fed = Federation.create(YARN_DRF, ROOT / "conf" / "docker-queues.yaml")
    shapes = "; ".join(f"{sc_id}: " + ", ".join(f"{s.name} ({s.vcores} vcores, {s.memory_mb} MiB"
                                                 + (f", gpu-mem {s.gpu_mem} MiB" if s.gpu_mem else "") + ")"
                                                 for s in sc.shapes) for sc_id, sc in fed.subclusters.items())
    console.print(f"Starting ZooKeeper, the Router and two yarn-drf sub-clusters: {shapes}")
    try:
        fed.start()
        console.print(f"Federation up in {time.monotonic() - started:.0f} s; Router: client RPC "
                      f"127.0.0.1:{fed.env['ROUTER_CLIENTRM_PORT']}, web http://127.0.0.1:{fed.env['ROUTER_WEB_PORT']}")
        # Split weights (0.25/0.75) race: SC-1 fills its part before SC-2's unmanaged AM registers,
        # and the AM's next ask, of what is still missing, is split again (docs/federation.md).
        fed.save_policy("*", {"SC-1": 1.0, "SC-2": 0.0}, {"SC-1": 0.0, "SC-2": 1.0})
        console.print("yarn routeradmin -policy -s '*;SC-1:1.0,SC-2:0.0;SC-1:0.0,SC-2:1.0;0': "
                      "every queue's AMs in SC-1, their asks to SC-2 (through an unmanaged AM there)")
        tag = uuid.uuid4().hex[:6]
        name = f"fed-demo-{tag}"
        from tests.docker_cluster.cluster import dshell_command
        fed.exec_detached(dshell_command(name, QUEUE, CONTAINERS, SHAPE, fed.marked_command(tag, SECONDS)), name)
        console.print(f"Submitted {name} through the Router: {CONTAINERS} containers of {SHAPE} in {QUEUE}")
        ok = watch(fed, tag, name)
        if args.keep:
            kept(fed)
        return 0 if ok else 1
    finally:
        if not args.keep:
            fed.stop()
        console.print(f"Total demo time {time.monotonic() - started:.0f} s")


def watch(fed, tag: str, name: str) -> bool:
    """Shows the live table until the app's client returns; then the verdict."""
    from tests.waits import wait_for

    begin = time.monotonic()
    with Live(console=console, refresh_per_second=1) as live:
        def ended() -> str | None:
            live.update(render(fed, tag, time.monotonic() - begin))
            log = fed.client_log(name)
            return log if "Application completed" in log or "failed" in log.lower() else None

        log = wait_for(ended, f"{name} to end", budget_s=300, progress=lambda: fed.marks_by_subcluster(tag),
                       alive=fed.assert_alive, describe=fed.explain, poll_s=2)
    for sc_id, sc in fed.subclusters.items():
        capacity = sc.rest_status("/v1/queues")["capacity"]
        console.print(f"{sc_id}'s yarn-drf core: capacity {capacity}, {len(sc.apps())} apps "
                      f"({sum(1 for a in sc.apps() if a.get('unmanagedApplication'))} unmanaged)")
    marks = fed.marks_by_subcluster(tag)
    console.print("containers per sub-cluster: " + ", ".join(f"{sc} {len(ids)}" for sc, ids in marks.items()))
    _, listed = fed.exec(["yarn", "application", "-list", "-appStates", "ALL"])
    console.print("yarn application -list -appStates ALL, through the Router:\n"
                  + "\n".join(line for line in listed.splitlines() if "application_" in line or "Application-Id" in line))
    # the AM runs in SC-1: SC-2's containers (its unmanaged AM's) make the app span both
    ok = "Application completed successfully" in log and bool(marks["SC-2"])
    console.print("[bold]" + ("FEDERATED: the app ran through the Router, its AM in SC-1, containers in SC-2"
                              if ok else f"NOT OK: client log:\n{log}") + "[/]")
    return ok


def kept(fed) -> None:
    """How to reach the federation left running (docker/DOCKER.md, "YARN Federation")."""
    c = f"{fed.volume}-client"
    web = {sc_id: f"http://127.0.0.1:{sc.web_port}" for sc_id, sc in fed.subclusters.items()}
    console.print(f"Federation left running (--keep); sub-cluster RM web UIs {web}, Router web "
                  f"http://127.0.0.1:{fed.env['ROUTER_WEB_PORT']}.\n"
                  f"  clients:  docker exec {c} yarn application -list\n"
                  f"            docker exec {c} yarn routeradmin -subCluster -getSubClusters\n"
                  f"            docker exec {c} yarn routeradmin -policy -l\n"
                  f"  remove:   docker rm -f $(docker ps -aq --filter label=yarn-drf=1); docker volume rm {fed.volume}")


if __name__ == "__main__":
    sys.exit(main())
