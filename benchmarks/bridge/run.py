"""Schedule-call round trip through the real shim bridge and the real core, next to a raw loopback
socket round trip, for 1 and 50 pending changes per call and 1 or more nodes with room listed, in
three CPU layouts.

    .venv/bin/python benchmarks/bridge/run.py [--calls 10000] [--warmup 50000] [--layouts same-core,...]
        [--cases counts,full,containers] [--nodes 1,100]
    .venv/bin/python benchmarks/bridge/run.py --core-alone [--cases counts,full,containers,events]

Needs the shim built (`make shim`). Each case also runs py4j alone (the real gateway answering a
constant), which separates the transport from the core's work. Prints a table: the bridge's p50
against the raw round trip, and the calls above 5 ms. Changes: "counts" are count changes of asks
the core already has (id, count pairs: what calls mostly carry), "full" are asks sent whole (an
app's first asks, a new shape), "containers" are containers finished and started. Nodes: how many
nodes with room each call lists (each full, so the core decides for each and finds nothing fits):
since decisions left the heartbeat, one call covers every node with room. `--core-alone` times only
the service's share in this process (no shim needed), with one more case, "events": app and node
events (app_priority, blacklist and node_updated deltas).
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.waits import wait_for  # noqa: E402

SHIM = REPO / "java_shim"
QUEUES = REPO / "tests" / "queues.yaml"
LAYOUTS = {  # name -> (cpus for Java, cpus for Python); None = not pinned
    "same-core": ("0", "0"),
    "split-cores": ("0", "1"),
    "unpinned": (None, None),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pinned(cpus: str | None, cmd: list[str]) -> list[str]:
    return ["taskset", "-c", cpus, *cmd] if cpus else cmd


def wait_port(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    def running() -> None:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")

    wait_for(lambda: listens(port), f"a server listening on {port}", budget_s=timeout, poll_s=0.05, ignore=(OSError,),
             alive=running)


def listens(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=0.2):
        return True


def java_cmd(args: list[str]) -> list[str]:
    jar = next(p for p in (SHIM / "target").glob("yarn-drf-shim-*.jar") if not p.name.startswith("original-"))
    cp = os.pathsep.join([str(jar), str(SHIM / "target" / "test-classes"),
                          (SHIM / "target" / "classpath.txt").read_text().strip()])
    return ["java", *os.environ.get("BENCH_JAVA_OPTS", "-Xmx256m").split(), "-cp", cp, "org.yarndrf.shim.bench.BridgeBench", *args]


# (changes per call, their kind): ask count changes, asks sent whole, containers finished and started
CASES = ((1, "counts"), (50, "counts"), (50, "full"), (50, "containers"))
CORE_CASES = (*CASES, (30, "events"))  # (the service alone: the shim's BridgeBench sends no events)
# raw: the message over a plain socket; echo: through py4j and the gateway to a constant answer;
# py4j: through py4j to the real `yarn-drf serve` and core (the measured bridge)
MODES = ("raw", "echo", "py4j")


def measure(layout: str, mode: str, deltas: int, asks: str, nodes: int, calls: int, warmup: int, tmp: Path) -> dict:
    jcpu, pcpu = LAYOUTS[layout]
    port = free_port()
    token = secrets.token_hex(16)
    token_file = tmp / "token"
    token_file.touch(mode=0o600)  # serve refuses a token file others can read
    token_file.write_text(token)
    if mode == "py4j":
        server_cmd = [sys.executable, "-m", "yarn_bridge.cli", "serve", "--queues", str(QUEUES),
                      "--port", str(port), "--token-file", str(token_file)]
    elif mode == "echo":
        server_cmd = [sys.executable, str(Path(__file__).with_name("echo_server.py")), str(port), str(token_file)]
    else:
        server_cmd = [sys.executable, str(Path(__file__).with_name("raw_server.py")), str(port)]
    server = subprocess.Popen(pinned(pcpu, server_cmd), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              cwd=REPO)
    try:
        if mode == "raw":
            time.sleep(0.5)
        else:
            wait_port(port, server)
        out = subprocess.run(pinned(jcpu, java_cmd(["raw" if mode == "raw" else "py4j", str(port), token,
                                                     str(deltas), str(calls), str(warmup),
                                                     asks, str(nodes)])),
                             capture_output=True, text=True, timeout=600, check=True)
        return {"layout": layout, **json.loads(out.stdout.strip().splitlines()[-1]), "mode": mode}
    finally:
        server.terminate()
        server.wait()


def core_alone(deltas: int, asks: str, nodes: int, calls: int, warmup: int) -> dict:
    """The same calls handled in-process by the service (JSON + core, no transport), in the
    benchmark's own process: the part of the bridge round trip that is not the bridge. Messages
    as BridgeBench builds them."""
    from yarn_bridge import protocol
    from yarn_bridge.service import CoreService

    apps, epoch, types = 50, 1, ["memory-mb", "vcores", "gpu-mem"]

    def amounts(mem: int, vcores: int) -> dict:
        return {"memory-mb": mem, "vcores": vcores, "gpu-mem": 0}

    def full_ask(app: int, count: int) -> list:
        return [app + 1, count, f"application_1_{app}", 1, 0, "*", True, 1024, 1, 0]

    def container(cid: str, app: int, node: str = "bench-node:1", mem: int = 1024, vcores: int = 1) -> list:
        return [cid, f"application_1_{app}", node, 1, 0, None, mem, vcores, 0]

    names = [f"bench-node:{n + 1}" for n in range(nodes)]
    svc = CoreService(QUEUES)
    svc.handle(json.dumps({
        "v": protocol.VERSION, "type": "snapshot", "epoch": epoch, "resources": types,
        "nodes": [{"node": n, "capacity": amounts(apps * 1024, apps), "rack": "/default-rack"} for n in names],
        "apps": [{"app": f"application_1_{a}", "user": "bench", "queue": "root.cpu" if a % 2 == 0 else "root.mem",
                  "groups": []} for a in range(apps)],
        "containers": [container(f"container_1_{a}", a) for a in range(apps)]
                      + [container(f"container_2_{n}", 0, name, apps * 1024, apps) for n, name in enumerate(names) if n],
        "asks": [full_ask(a, 1) for a in range(apps)], "counts": []}))
    churn = asks == "containers"

    def events(seq: int) -> list:
        """`deltas` app and node events, a third each of app_priority, blacklist and node_updated (its
        capacity as it was: a node whose room changed would be a different case)."""
        ops = []
        for j in range(deltas // 3):
            app = f"application_1_{(seq + j) % apps}"
            ops += [{"op": "app_priority", "app": app, "priority": seq % 3},
                    {"op": "blacklist", "app": app, "places": [] if seq % 2 else ["/rack9"]},
                    {"op": "node_updated", "node": names[j % nodes], "capacity": amounts(apps * 1024, apps)}]
        return ops

    times = []
    for seq in range(warmup + calls):
        changed = [((seq * deltas + j) % apps, 1 + seq % 2) for j in range(deltas)]
        gone = [f"container_1_{j}" if seq == 0 else f"c_{seq - 1}_{j}" for j in range(deltas // 2)] if churn else []
        msg = json.dumps({"v": protocol.VERSION, "type": "schedule", "epoch": epoch, "seq": seq,
                          "deltas": events(seq) if asks == "events" else [],
                          "started": [container(f"c_{seq}_{j}", j) for j in range(deltas // 2)] if churn else [],
                          "finished": [x for cid in gone for x in (cid, "completed")],
                          "asks": [full_ask(a, n) for a, n in changed] if asks == "full" else [],
                          "counts": [x for a, n in changed for x in (a + 1, n)] if asks == "counts" else [],
                          "submissions": [], "nodes": [[n, 0, 0, 0] for n in names], "heartbeats": nodes})
        t0 = time.perf_counter_ns()
        svc.handle(msg)
        if seq >= warmup:
            times.append(time.perf_counter_ns() - t0)
    times.sort()
    return {"p50_us": times[len(times) // 2] / 1e3, "p99_us": times[int(len(times) * 0.99)] / 1e3}


def print_core_alone(cases: list[tuple[int, str, int]], calls: int, warmup: int) -> int:
    print("\ncore alone (in-process JSON + core, no transport, this process unpinned):")
    for deltas, asks, nodes in cases:
        c = core_alone(deltas, asks, nodes, calls, warmup)
        print(f"  deltas={deltas:<3} {asks:10} nodes={nodes:<5} p50={c['p50_us']:8.1f}us p99={c['p99_us']:8.1f}us")
    print(f"\nload average at the end: {os.getloadavg()}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=10000)
    # The RM is a long-running JVM: measure after the JIT has compiled the path (tens of thousands of calls),
    # not while its compiler threads compete for the CPU: with 2,000 warm-up calls, late C2
    # compilations put 10-30 calls over 5 ms; with 50,000, none.
    ap.add_argument("--warmup", type=int, default=50000)
    ap.add_argument("--layouts", default=",".join(LAYOUTS))
    ap.add_argument("--cases", default="counts,full,containers", help="change kinds to run (default: all)")
    ap.add_argument("--nodes", default="1", help="nodes with room listed per call, comma-separated (default 1)")
    ap.add_argument("--core-alone", action="store_true", help="only the service's share, in this process")
    args = ap.parse_args()
    cases = [(d, a, int(n)) for d, a in (CORE_CASES if args.core_alone else CASES) if a in args.cases.split(",")
             for n in args.nodes.split(",")]
    if args.core_alone:
        return print_core_alone(cases, args.calls, args.warmup)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for layout in args.layouts.split(","):
            for deltas, asks, nodes in cases:
                for mode in MODES:
                    rows.append(measure(layout, mode, deltas, asks, nodes, args.calls, args.warmup, Path(tmp)))
                    r = rows[-1]
                    print(f"{layout:12} {mode:5} deltas={deltas:<3} {asks:10} nodes={nodes:<5} bytes={r['bytes']:<7} "
                          f"p50={r['p50_us']:8.1f}us p99={r['p99_us']:8.1f}us max={r['max_us']:9.1f}us "
                          f">5ms={r['over_5ms']:<3} {r['per_s']:8.0f}/s", flush=True)
    print_core_alone(cases, args.calls, args.warmup)
    print("\nbridge vs raw (p50 ratio; calls > 5 ms):")
    for layout in args.layouts.split(","):
        for deltas, asks, nodes in cases:
            raw, bri, echo = (next(r for r in rows if r["layout"] == layout and r["deltas"] == deltas
                                   and r["asks"] == asks and r["nodes"] == nodes and r["mode"] == mode)
                              for mode in ("raw", "py4j", "echo"))
            print(f"  {layout:12} deltas={deltas:<3} {asks:10} nodes={nodes:<5} ratio={bri['p50_us'] / raw['p50_us']:.2f} "
                  f"over_5ms={bri['over_5ms']} of {bri['calls']} (raw: {raw['over_5ms']}; "
                  f"py4j alone: {echo['p50_us'] / raw['p50_us']:.2f}x raw)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
