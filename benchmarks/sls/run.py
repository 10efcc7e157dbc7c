"""Runs Hadoop's Scheduler Load Simulator on the same nodes and trace with FairScheduler (drf),
CapacityScheduler (DominantResourceCalculator) and yarn-drf, and writes one comparison table.

    make bench-sls                       # 200 and 1,000 nodes, all three schedulers
    .venv/bin/python benchmarks/sls/run.py --sizes 200 --schedulers yarn-drf --out build/sls

Each run is one JVM (SLS + a real ResourceManager) in its own network namespace with only a
loopback interface. Output per run: <out>/<nodes>/<scheduler>/{conf,sls,run.log}; then
<out>/results.json and <out>/table.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

import confgen
import netns
import report
import workload

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
COMPANION_JAR = HERE / "java" / "target" / "yarn-drf-sls-0.1.0.jar"
CLASSPATH_TXT = HERE / "java" / "target" / "classpath.txt"
SHIM_JAR = REPO / "java_shim" / "target" / "yarn-drf-shim-0.1.0.jar"
JAVA17_OPENS = REPO / "conf" / "hadoop" / "java17-opens"


def java_command(conf_dir: Path, run_out: Path, nodes: Path, trace: Path, timeout_s: int,
                 heap_mb: int) -> list[str]:
    for f in (COMPANION_JAR, CLASSPATH_TXT, SHIM_JAR):
        if not f.exists():
            raise SystemExit(f"sls: {f.relative_to(REPO)} is missing; run `make sls-jar` first")
    opens = JAVA17_OPENS.read_text().split()
    cp = os.pathsep.join([str(conf_dir), str(COMPANION_JAR), str(SHIM_JAR),
                          CLASSPATH_TXT.read_text().strip()])
    return ["java", *opens, f"-Xmx{heap_mb}m", "-XX:+UseParallelGC",
            f"-Dyarndrf.bench.timeout-s={timeout_s}",
            # log4j 1.x, as Hadoop 3.4.1 uses it
            f"-Dlog4j.configuration=file:{conf_dir / 'log4j.properties'}",
            "-cp", cp, "org.yarndrf.sls.BenchRunner",
            "-tracetype", "SLS", "-tracelocation", str(trace), "-nodes", str(nodes),
            "-output", str(run_out)]


def run_one(scheduler: str, dir_: Path, *, nodes: Path, trace: Path, queues: Path,
            timeout_s: int, heap_mb: int, timer_window: int,
            yarn_drf_conf: dict[str, str] | None = None) -> Path:
    """One SLS run; returns SLS's output directory (holding bench.json)."""
    conf_dir = dir_ / "conf"
    sls_out = dir_ / "sls"
    serve = f"{Path(sys.executable).parent / 'yarn-drf'} serve"
    confgen.write_conf(conf_dir, scheduler, queues, workload.NODE, serve, timer_window,
                       yarn_drf_conf)
    cmd = java_command(conf_dir, sls_out, nodes, trace, timeout_s, heap_mb)
    log = dir_ / "run.log"
    t0 = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=dir_,
                              preexec_fn=netns.enter_private_loopback,
                              timeout=timeout_s + 120)
    print(f"  {scheduler}: exit {proc.returncode} after {time.monotonic() - t0:.0f} s "
          f"(log {log})", flush=True)
    if not (sls_out / "bench.json").exists():
        tail = "\n".join(log.read_text().splitlines()[-30:])
        raise RunFailed(f"sls: {scheduler} wrote no bench.json; last lines of {log}:\n{tail}")
    return sls_out


class RunFailed(RuntimeError):
    """An SLS JVM ended without writing its results."""


def attempt_dir(dir_: Path, attempt: int) -> Path:
    return dir_ if attempt == 1 else dir_.with_name(f"{dir_.name}.{attempt}")


def finished_run(dir_: Path, retries: int) -> tuple[Path, int] | None:
    """An earlier invocation's results for this run (--reuse), if it left any."""
    for attempt in range(retries + 1, 0, -1):
        sls_out = attempt_dir(dir_, attempt) / "sls"
        if (sls_out / "bench.json").exists():
            return sls_out, attempt
    return None


def run_with_retries(scheduler: str, dir_: Path, retries: int, **kw) -> tuple[Path, int]:
    """SLS 3.4 itself sometimes dies at random under load (e.g. "Didn't find any AMSimulator for
    applicationId": its mock AM launcher can run before the AM simulator registered the app),
    for any scheduler. Such a run is repeated from scratch, and the attempts are reported."""
    for attempt in range(1, retries + 2):
        try:
            return run_one(scheduler, attempt_dir(dir_, attempt), **kw), attempt
        except RunFailed as e:
            print(str(e).splitlines()[0] + (" - retrying" if attempt <= retries else ""), flush=True)
            if attempt > retries:
                raise SystemExit(str(e)) from e
    raise AssertionError("unreachable")


def add_run_args(ap: argparse.ArgumentParser, timeout_s: int) -> None:
    """The options of how each SLS run goes (shared by every scenario's command line)."""
    ap.add_argument("--schedulers", default="fair,capacity,yarn-drf")
    ap.add_argument("--timeout-s", type=int, default=timeout_s,
                    help=f"end a run after this many seconds (default {timeout_s})")
    ap.add_argument("--heap-mb", type=int, default=3072)
    ap.add_argument("--timer-window", type=int, default=300000,
                    help="SLS timer samples kept (covers every call of a benchmark run)")
    ap.add_argument("--bridge-timeout-ms", type=int, default=None,
                    help="yarn-drf.bridge.timeout-ms for the yarn-drf runs (default: the shim's)")
    ap.add_argument("--yarn-drf-conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a yarn-site property for the yarn-drf runs (repeat for more), e.g. "
                         "yarn-drf.scheduler.max-nodes-per-call=64, or yarn-drf.serve.command=\"PATH/yarn-drf "
                         "serve --max-assignments-per-call 32\" (replaces the venv's command)")
    ap.add_argument("--retries", type=int, default=1,
                    help="repeat a run whose SLS JVM died without results (default 1)")
    ap.add_argument("--reuse", action="store_true",
                    help="take a run's results from an earlier invocation with the same --out "
                         "when it left them (run the schedulers one at a time, then report all)")


def yarn_drf_conf(args: argparse.Namespace) -> dict[str, str]:
    """The yarn-site properties the yarn-drf runs add (--bridge-timeout-ms, --yarn-drf-conf)."""
    conf = dict(kv.split("=", 1) for kv in args.yarn_drf_conf)
    if args.bridge_timeout_ms is not None:
        conf["yarn-drf.bridge.timeout-ms"] = str(args.bridge_timeout_ms)
    return conf


class Variant(NamedTuple):
    """A further yarn-drf run of one invocation (--variant): its column, queue YAML and the
    yarn-site properties it adds to the yarn-drf runs' own."""
    label: str
    queues: Path
    conf: dict[str, str]

    @property
    def column(self) -> str:
        return f"yarn-drf:{self.label}"


def parse_variant(text: str, default_queues: Path) -> Variant:
    """LABEL[:QUEUES][:KEY=VALUE,...] (--variant); an empty QUEUES is the invocation's --queues."""
    label, _, rest = text.partition(":")
    queues, _, props = rest.partition(":")
    if not label or "/" in label:
        raise ValueError(f"--variant: a label (no '/') first, got {text!r}")
    conf = {}
    for kv in filter(None, props.split(",")):
        key, eq, value = kv.partition("=")
        if not eq or not key.startswith("yarn-drf."):
            raise ValueError(f"--variant {label}: expected yarn-drf.KEY=VALUE, got {kv!r}")
        conf[key] = value
    return Variant(label, Path(queues).resolve() if queues else default_queues, conf)


def checked_run_args(ap: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """Makes the run's paths absolute (the JVM runs in the run's own directory), checks that SLS
    can run here; returns the schedulers asked for."""
    args.out = args.out.resolve()
    args.queues = args.queues.resolve()
    schedulers = [s.strip() for s in args.schedulers.split(",") if s.strip()]
    for s in schedulers:
        if s not in confgen.SCHEDULERS:
            ap.error(f"--schedulers: unknown scheduler {s!r} (choose from {', '.join(confgen.SCHEDULERS)})")
    for kv in args.yarn_drf_conf:
        if "=" not in kv or not kv.split("=", 1)[0].startswith("yarn-drf."):
            ap.error(f"--yarn-drf-conf: expected yarn-drf.KEY=VALUE, got {kv!r}")
    if not netns.available():
        raise SystemExit("sls: cannot create a network namespace (needs root); the benchmark "
                         "isolates SLS's servers that way")
    return schedulers


def run_or_reuse(scheduler: str, dir_: Path, args: argparse.Namespace, nodes: Path,
                 trace: Path, variant: Variant | None = None) -> tuple[Path, int]:
    """One scheduler's (or yarn-drf variant's) SLS output directory and attempts: an earlier
    invocation's with --reuse when it left one, else a new run."""
    earlier = finished_run(dir_, args.retries) if args.reuse else None
    return earlier or run_with_retries(
        scheduler, dir_, args.retries, nodes=nodes, trace=trace,
        queues=variant.queues if variant else args.queues,
        timeout_s=args.timeout_s, heap_mb=args.heap_mb, timer_window=args.timer_window,
        yarn_drf_conf=yarn_drf_conf(args) | (variant.conf if variant else {}))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="200,1000", help="simulated node counts (default 200,1000)")
    ap.add_argument("--queues", type=Path, default=HERE / "queues.yaml")
    ap.add_argument("--out", type=Path, default=REPO / "build" / "sls")
    ap.add_argument("--duration-s", type=float, default=90,
                    help="work each queue brings, in seconds of the whole cluster x load")
    ap.add_argument("--arrival-s", type=float, default=30, help="jobs arrive over this many seconds")
    ap.add_argument("--tasks-per-job", type=int, default=40)
    ap.add_argument("--task-s", default="10,30", help="task duration range, seconds")
    ap.add_argument("--load", type=float, default=0.5,
                    help="each queue's work as a fraction of the cluster over --duration-s")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL[:QUEUES][:KEY=VALUE,...]",
                    help="one more yarn-drf run after the schedulers, in the same invocation (repeat "
                         "for more): its own queue YAML (same queues and weights, other settings, "
                         "e.g. max-am-share) and/or yarn-site properties; its column is "
                         "yarn-drf:LABEL, e.g. --variant am0.01:am.yaml --variant "
                         "nodefer::yarn-drf.scheduler.max-deferred-share=0")
    add_run_args(ap, timeout_s=900)
    args = ap.parse_args(argv)
    schedulers = checked_run_args(ap, args)
    try:
        variants = [parse_variant(v, args.queues) for v in args.variant]
    except ValueError as e:
        ap.error(str(e))
    if len({v.label for v in variants}) < len(variants):
        ap.error("--variant: each label once")
    sizes = [int(n) for n in args.sizes.split(",")]
    task_s = tuple(float(x) for x in args.task_s.split(","))
    weights = confgen.weights(args.queues)
    for v in variants:
        if confgen.weights(v.queues) != weights:
            ap.error(f"--variant {v.label}: its queues or weights differ from --queues'")
    all_results: dict[str, dict] = {}
    tables = []
    for n in sizes:
        size_dir = args.out / str(n)
        nodes, trace = workload.write(size_dir, n, args.duration_s, args.arrival_s,
                                      args.tasks_per_job, task_s, args.load, args.seed)
        print(f"sls: {n} nodes, {len(workload.job_queues(trace))} jobs", flush=True)
        runs = [(s, s, None) for s in schedulers]
        runs += [(v.column, "yarn-drf", v) for v in variants]
        results = {}
        for column, s, variant in runs:
            dir_ = size_dir / (column.replace(":", "-"))
            sls_out, attempts = run_or_reuse(s, dir_, args, nodes, trace, variant)
            results[column] = report.analyse(sls_out, weights, workload.node_vectors(nodes))
            results[column]["attempts"] = attempts
            results[column]["sls_dir"] = str(sls_out)
        all_results[str(n)] = results
        tables.append(report.table(results, f"{n} simulated nodes"))
    (args.out / "results.json").write_text(json.dumps(all_results, indent=2) + "\n")
    text = "\n".join(tables)
    (args.out / "table.md").write_text(text)
    print(text)
    unfinished = [f"{n}/{s}" for n, rs in all_results.items() for s, r in rs.items() if not r["finished"]]
    if unfinished:
        print(f"sls: runs that did not finish every job: {', '.join(unfinished)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
