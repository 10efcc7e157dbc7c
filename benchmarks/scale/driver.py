"""A 10,000-node cluster through the real shim and the real core, without SLS.

    make bench-scale                         # = make venv shim; .venv/bin/python benchmarks/scale/driver.py
    .venv/bin/python benchmarks/scale/driver.py --nodes 10000 --apps 200 --asks 100 --seconds 30
    .venv/bin/python benchmarks/scale/driver.py --offer-between-heartbeats false,true

Runs java_shim's ScaleDriver (test tree): a ResourceManager in one JVM with YarnDrfScheduler,
which starts `yarn-drf serve` as its child over py4j; NODES NodeManagers registered through the
RM's ResourceTrackerService; APPS unmanaged applications. One thread heartbeats every node once
a second (a NodeUpdateSchedulerEvent into the scheduler, as YARN's event thread delivers a
NodeManager heartbeat: NODES heartbeats a second); another plays each app's AM once a second,
keeping ASKS containers asked for and releasing what the app got in its previous round (so
APPS x ASKS allocations a second are asked for). When the scheduler cannot keep up, the threads
fall behind and the measured rates show it. Prints heartbeats and allocations per second against
the issue's targets (10,000 and 20,000) and where the time went. --offer-between-heartbeats
(yarn-drf.scheduler.offer-between-heartbeats, false by default as in the shim) runs once per value
given, one after the other.
"""
from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SHIM = REPO / "java_shim"
SHIM_JAR = SHIM / "target" / "yarn-drf-shim-0.1.0.jar"
OPENS = REPO / "conf" / "hadoop" / "java17-opens"
HEARTBEATS_TARGET = 10_000
ALLOCATIONS_TARGET = 20_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def java_command(a: argparse.Namespace, status_port: int, between_heartbeats: bool) -> list[str]:
    test_classes = SHIM / "target" / "test-classes"
    for f in (SHIM_JAR, test_classes / "org" / "yarndrf" / "shim" / "bench" / "ScaleDriver.class",
              SHIM / "target" / "classpath.txt"):
        if not f.exists():
            raise SystemExit(f"scale: {f.relative_to(REPO)} is missing; run `make shim` first")
    cp = ":".join([str(SHIM_JAR), str(test_classes), (SHIM / "target" / "classpath.txt").read_text().strip()])
    serve = f"{Path(sys.executable).parent / 'yarn-drf'} serve --status-port {status_port}"
    if a.max_assignments_per_call:
        serve += f" --max-assignments-per-call {a.max_assignments_per_call}"
    return ["java", *OPENS.read_text().split(), f"-Xmx{a.heap_mb}m",
            f"-Dyarndrf.offer-between-heartbeats={str(between_heartbeats).lower()}", "-cp", cp,
            "org.yarndrf.shim.bench.ScaleDriver", str(a.nodes), str(a.apps), str(a.asks),
            str(a.warmup_s), str(a.seconds), serve, str(a.queues.resolve()), str(status_port),
            *([str(a.bridge_timeout_ms)] if a.bridge_timeout_ms else [])]


# The scheduling thread's parts (java_shim LoopClock), in the order its time goes round.
LOOP_PARTS = (
    ("wait", "  waiting for work (a change, a timer, a retry)"),
    ("collect", "  collect, under the scheduler lock"),
    ("call", "  call: encode + py4j + core + decode, every attempt, answered or not"),
    ("commit", "  commit, under the scheduler lock"),
    ("resync", "  resync: a full snapshot built, sent and taken in"),
    ("handed", "  calls handed to the loop (reloads, moves)"),
)


def loop_rows(r: dict) -> list[tuple[str, float, str]]:
    """The scheduling thread's time, ms per second of the window, part by part: the parts cover
    all of it (they sum to 1,000, the last row says so), and the call splits into the core's own
    timer and the rest. Every figure is read at the window's two ends, so a call under way at an
    end counts on both sides or neither (a timed-out call's wait is in `call`, its work in the
    core's timer)."""
    parts = r["loop_ms_per_s"]
    call, decide = parts["call"], r["core_decide_ms_per_s"]
    rows: list[tuple[str, float, str]] = []
    for key, label in LOOP_PARTS:
        note = f"mean {r['loop_call_mean_ms']:.2f} ms an answered call" if key == "call" else ""
        rows.append((label, parts[key], note))
        if key == "call":
            rows.append(("    of which the core's apply + decide", decide, "the core's own timer"))
            rows.append(("    of which JSON both sides + py4j", call - decide, "call - core"))
    rows.append(("  all parts", sum(parts[k] for k, _ in LOOP_PARTS), "1,000: the whole window"))
    return rows


def report(r: dict) -> str:
    """The figures, and per second of wall time where the work went."""
    hb, alloc = r["heartbeats_per_s"], r["allocations_per_s"]
    rows = [
        ("heartbeats per second", f"{hb:,.0f}", f"{hb / HEARTBEATS_TARGET:.2f}x of 10,000"),
        ("allocations per second", f"{alloc:,.0f}", f"{alloc / ALLOCATIONS_TARGET:.2f}x of 20,000"),
        ("handle(NODE_UPDATE) p50 / p99 (µs)", f"{r['handle_p50_us']:.2f} / {r['handle_p99_us']:.2f}", ""),
        ("scheduling-thread calls answered per second", f"{r['loop_calls_per_s']:.1f}",
         f"{r['loop_nodes_per_call']:.0f} nodes, {r['loop_assignments_per_call']:.1f} assignments a call"),
        ("scheduling thread (ms per s)", "", ""),
        *((label, f"{ms:.1f}", note) for label, ms, note in loop_rows(r)),
        ("heartbeat thread in handle() (ms/s)", f"{hb * r['handle_p50_us'] / 1000:.1f}", "p50 x rate, a floor"),
        ("CPU: the RM's JVM / the core (ms/s)", f"{r['rm_cpu_ms_per_s']:.0f} / {r['core_cpu_ms_per_s']:.0f}",
         "of 1,000 a core: not slowed by other processes, unlike the times above"),
        ("asked for per second", f"{r['apps'] * r['asks_per_app']:,}", "apps x asks: the most that can be allocated"),
        ("bridge counters (shim), the window", "", r["bridge"]),
        ("bridge counters (shim), the whole run", "", r["bridge_whole_run"]),
    ]
    head = (f"**{r['nodes']:,} nodes, {r['apps']} apps asking for {r['asks_per_app']} each, "
            f"{r['seconds']:.0f} s measured, offer-between-heartbeats "
            f"{str(r['offer_between_heartbeats']).lower()}**\n\n| figure | value | note |\n|---|---:|---|\n")
    return head + "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--apps", type=int, default=200)
    ap.add_argument("--asks", type=int, default=100, help="containers each app keeps asked for")
    ap.add_argument("--warmup-s", type=int, default=15)
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--heap-mb", type=int, default=4096)
    ap.add_argument("--bridge-timeout-ms", type=int, default=None,
                    help="yarn-drf.bridge.timeout-ms (default: the shim's); a call deciding for "
                         "10,000 nodes and 20,000 asks at once takes longer than the default")
    ap.add_argument("--max-assignments-per-call", type=int, default=None,
                    help="serve --max-assignments-per-call (default: the core's)")
    ap.add_argument("--queues", type=Path, default=HERE / "queues.yaml")
    ap.add_argument("--offer-between-heartbeats", type=between_heartbeats, default=[False],
                    help="yarn-drf.scheduler.offer-between-heartbeats: false, true, or false,true "
                         "for a run of each (default false, the shim's default)")
    a = ap.parse_args(argv)
    for between in a.offer_between_heartbeats:
        r = run(a, between)
        print(json.dumps(r))
        print(report(r))
    return 0


def between_heartbeats(text: str) -> list[bool]:
    values = {"false": False, "true": True}
    try:
        return [values[v.strip()] for v in text.split(",")]
    except KeyError:
        raise argparse.ArgumentTypeError(f"expected false, true or both comma-separated, got {text!r}")


def run(a: argparse.Namespace, between: bool) -> dict:
    """One run of the driver: its figures, with the setting they were measured under."""
    # The RM writes its node-attribute store under the working directory: keep it in build/.
    workdir = REPO / "build" / "scale-driver"
    workdir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(java_command(a, free_port(), between), capture_output=True, text=True,
                          cwd=workdir, timeout=a.warmup_s + a.seconds + 600)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-5000:])
        raise SystemExit(f"scale: the driver failed (exit {proc.returncode})")
    return {**json.loads(lines[-1]), "offer_between_heartbeats": between}


if __name__ == "__main__":
    sys.exit(main())
