"""Federation-wide DRF on the federated Docker cluster: static weights against the policy service
(issue 32 item 3; docs/federation.md, "Federation-wide DRF: the policy service").

    .venv/bin/python benchmarks/federation/policy.py [--runs 3] [--warmup 90] [--measure 120] [--json out.json]
    .venv/bin/python benchmarks/federation/policy.py --report out.json   # the report of a saved run

The federation of tests/docker_cluster/federation.py (SC-1: a CPU-rich and a memory-rich node;
SC-2: one GPU node with two 10 GiB cards) and conf/docker-queues.yaml. The same workload runs
2 x --runs times on one federation, the phases alternated (static, policy, static, ...), each
queue from its own submit loop in the client container (distributed-shell apps, each submitted
as another ends, so later apps meet the newer weights):

- root.research.ml: GPU executors (gpu-mem on every container), which fit only SC-2;
- root.prod (weight 2) and root.research.dev: CPU containers that fit both sub-clusters.

Each queue's submit loop keeps its apps in flight (three at once), so a queue's next app asks
before its last ends and every queue's demand stays up through the phase.

Phase `static`: every queue on even router and AMRM weights (Hadoop's uniform split: the `*`
policy, and even weights saved over every name an earlier policy phase saved). Phase `policy`:
`yarn-drf federation-policy`'s rounds (yarn_bridge.federation_cli.one_round) every --interval
seconds, saving through `docker exec CLIENT yarn routeradmin`. After --warmup seconds, and once the
federation is filled (every queue has demand waiting: pending asks in some sub-cluster), every
--sample seconds for --measure seconds, each queue's federation-wide dominant share (its usage
summed over both cores' /v1/queues over the federation's capacity), where it is (each
sub-cluster's part), and its federation-wide weighted-DRF target, shape-aware
(yarn_bridge.federation_policy.plan over the same reads and the cores' /v1/demand), with the
pooled target beside it. The means are over the filled samples (some queue waiting for nothing:
not a full federation); a phase with fewer than half of its samples filled is marked `NOT FILLED`
and left out of the medians. `--report JSON` prints the report of a saved run again.
Prints each phase's means per queue, where each queue's containers were, the AMRM weights the
policy's rounds compute from the readings (saved in a policy phase only), the load average, and
the sum of the mean distances |share - target|; then per phase the median and range over the
filled runs. Needs `make images`.
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
# queue -> (container shape, containers per app, apps in flight): ml's GPU memory fits SC-2 only
WORKLOAD = {
    "root.research.ml": ({"memory-mb": 1024, "vcores": 1, "gpu-mem": 2560}, 4, 3),
    "root.prod": ({"memory-mb": 2048, "vcores": 2}, 6, 3),
    "root.research.dev": ({"memory-mb": 2048, "vcores": 1}, 6, 3),
}
SLEEP_S = 45  # each container's run


def docker_host() -> None:
    from tests.docker_cluster.engine import engine_host

    host = engine_host()
    if host is None:
        sys.exit("no Docker engine answers: run `make images` first")
    os.environ["DOCKER_HOST"] = host


def start_loops(fed, phase: str) -> None:
    """A submit loop per queue, keeping its apps in flight: a new app the moment one ends (while
    its client and AM start, the queue's other apps still ask), so no queue's demand lapses."""
    from tests.docker_cluster.cluster import dshell_command
    for queue, (shape, count, in_flight) in WORKLOAD.items():
        name = f"{phase}-{queue.rsplit('.', 1)[-1]}"
        app = shlex.join(dshell_command(name, queue, count, shape, f"sleep {SLEEP_S}"))
        script = (f"echo $$ > /tmp/loop-{name}.pid; while true; do "
                  f"while [ $(jobs -rp | wc -l) -ge {in_flight} ]; do wait -n; done; "
                  f"{app} >> /tmp/{name}.log 2>&1 & sleep 2; done")
        fed.exec(["bash", "-c", script], detach=True)


def stop_loops(fed) -> None:
    """The submit loops (their pid files), then every app still running, through the Router."""
    # stopped first, so that it starts no client while its running ones are killed
    fed.exec(["bash", "-c", "for f in /tmp/loop-*.pid; do p=$(cat $f); kill -STOP $p; pkill -P $p; kill -KILL $p; "
                            "rm -f $f; done"])
    _, listed = fed.exec(["yarn", "application", "-list"])
    for app_id in {w for w in listed.split() if w.startswith("application_")}:
        fed.exec(["yarn", "application", "-kill", app_id])


def reads(fed):
    """Each sub-cluster's /v1/queues (checked, and raw: its `pending` per queue) and /v1/demand."""
    from yarn_bridge.federation_policy import parse_demand, parse_status
    raw = {sc_id: sc.rest_status("/v1/queues") for sc_id, sc in fed.subclusters.items()}
    statuses = [parse_status(sc_id, doc) for sc_id, doc in raw.items()]
    demands = [parse_demand(s.id, fed.subclusters[s.id].rest_status("/v1/demand"), s.types) for s in statuses]
    return raw, statuses, demands


def sample(fed) -> dict:
    """One reading: per queue its federation-wide share, targets, each sub-cluster's part of the
    share and whether it waits there; `filled` when every queue waits somewhere."""
    from yarn_bridge.federation_policy import plan
    raw, statuses, demands = reads(fed)
    plans, _ = plan(statuses, demands)
    pooled, _ = plan(statuses)
    total = [sum(col) for col in zip(*(s.capacity for s in statuses))]
    queues = {}
    for q in WORKLOAD:
        if q not in plans:
            continue
        where = {s.id: max((u / c for u, c in zip(s.queues[q].usage, total) if c > 0), default=0.0)
                 if q in s.queues else 0.0 for s in statuses}
        waiting = {sc_id: any(v > 0 for v in (row.get("pending") or {}).values())
                   for sc_id, doc in raw.items() for row in doc["queues"] if row["name"] == q}
        queues[q] = {"share": plans[q].share, "target": plans[q].target_share, "pooled": pooled[q].target_share,
                     "where": where, "waiting": waiting, "policy_weights": plans[q].weights}
    filled = all(q in queues and any(queues[q]["waiting"].values()) for q in WORKLOAD)
    return {"t": time.time(), "load": os.getloadavg()[0], "filled": filled, "queues": queues}


def measure(fed, warmup: float, seconds: float, every: float) -> dict:
    """A phase's samples from the first filled one after `warmup` (waiting up to `warmup` more for
    it), and phase_result's means."""
    time.sleep(warmup)
    deadline = time.monotonic() + warmup
    first = sample(fed)
    while not first["filled"] and time.monotonic() < deadline:
        print(f"  not filled yet: waiting {sorted(q for q, r in first['queues'].items() if any(r['waiting'].values()))}",
              flush=True)
        time.sleep(every)
        first = sample(fed)
    samples, end = [first], time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(every)
        samples.append(sample(fed))
        for q, r in samples[-1]["queues"].items():
            print(f"  {q:<20} share {r['share']:.3f} target {r['target']:.3f} (pooled {r['pooled']:.3f}) "
                  f"where {fmt(r['where'])} waits {sorted(sc for sc, w in r['waiting'].items() if w)}", flush=True)
    return phase_result(samples)


def phase_result(samples: list[dict]) -> dict:
    """The means over a phase's filled samples; the phase counts (`filled`) when at least half of
    its samples are."""
    filled = [s for s in samples if s["filled"]]
    loads = [s["load"] for s in samples]
    return {"filled": bool(filled) and 2 * len(filled) >= len(samples), "filled_samples": len(filled),
            "load": [min(loads), statistics.fmean(loads), max(loads)], "samples": samples, "queues": means(filled)}


def means(samples: list[dict]) -> dict[str, dict]:
    out = {}
    for q in WORKLOAD:
        xs = [s["queues"][q] for s in samples if q in s["queues"]]
        if xs:
            scs = sorted({sc for x in xs for sc in x["where"]})
            out[q] = {"share": statistics.fmean(x["share"] for x in xs),
                      "target": statistics.fmean(x["target"] for x in xs),
                      "pooled_target": statistics.fmean(x["pooled"] for x in xs),
                      "distance": statistics.fmean(abs(x["share"] - x["target"]) for x in xs),
                      "pooled_distance": statistics.fmean(abs(x["share"] - x["pooled"]) for x in xs),
                      "where": {sc: statistics.fmean(x["where"].get(sc, 0.0) for x in xs) for sc in scs},
                      # what the policy's round makes of the reading (saved only in a policy phase)
                      "policy_weights": {sc: statistics.fmean(x["policy_weights"].get(sc, 0.0) for x in xs)
                                         for sc in scs},
                      "samples": len(xs)}
    return out


def fmt(by_sc: dict[str, float]) -> str:
    return " ".join(f"{sc}:{v:.3f}" for sc, v in sorted(by_sc.items()))


def policy_rounds(fed, interval: float, stop: threading.Event, applied: dict[str, str]) -> None:
    """The service's rounds until `stop`; `applied` holds the spec it saved last for each queue name."""
    from yarn_bridge.federation_cli import one_round
    urls = [(sc_id, f"http://127.0.0.1:{sc.status_port()}") for sc_id, sc in fed.subclusters.items()]
    routeradmin = f"docker exec {fed.volume}-client yarn routeradmin"
    seen: dict[str, frozenset[int]] = {}  # as the service keeps it while it runs
    while not stop.is_set():
        one_round(urls, routeradmin, 0.0, False, applied, seen)
        stop.wait(interval)


def phase(fed, name: str, policy: bool, interval: float, applied: dict[str, str], work) -> object:
    """One phase: the policy's rounds (if `policy`) and the submit loops while `work()` runs, then
    the loops and their apps stopped and the containers let end."""
    stop = threading.Event()
    rounds = threading.Thread(target=policy_rounds, args=(fed, interval, stop, applied), daemon=True)
    if policy:
        rounds.start()
    start_loops(fed, name)
    try:
        return work()
    finally:
        stop.set()
        if rounds.is_alive():
            rounds.join()
        stop_loops(fed)
        time.sleep(SLEEP_S)


def summary(runs: list[tuple[str, dict]]) -> str:
    """Each phase's sum of mean distances and per-queue means over its filled runs: median [min - max]."""
    lines = [f"{'phase':<7} {'queue':<20} {'share':>22} {'target':>22} {'|share-target|':>22}"]

    def spread(xs: list[float]) -> str:
        return f"{statistics.median(xs):.3f} [{min(xs):.3f}-{max(xs):.3f}]"
    for phase in ("static", "policy"):
        mine = [r["queues"] for p, r in runs if p == phase and r["filled"]]
        skipped = sum(1 for p, r in runs if p == phase and not r["filled"])
        for q in WORKLOAD:
            got = [r[q] for r in mine if q in r]
            if got:
                lines.append(f"{phase:<7} {q:<20} {spread([g['share'] for g in got]):>22} "
                             f"{spread([g['target'] for g in got]):>22} {spread([g['distance'] for g in got]):>22}")
        for key, what in (("distance", "sum of distances"), ("pooled_distance", "... to pooled targets")):
            sums = [sum(r[q][key] for q in r) for r in mine]
            if sums:
                lines.append(f"{phase:<7} {what:<20} {'':>22} {'':>22} {spread(sums):>22}")
        if skipped:
            lines.append(f"{phase:<7} {skipped} run(s) NOT FILLED, left out")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="runs of each phase, alternated (default 3)")
    ap.add_argument("--warmup", type=float, default=90)
    ap.add_argument("--measure", type=float, default=120)
    ap.add_argument("--sample", type=float, default=5)
    ap.add_argument("--interval", type=float, default=10, help="seconds between the policy's rounds")
    ap.add_argument("--prime", type=float, default=60,
                    help="seconds of the policy with the workload before the first run, not measured (default 60)")
    ap.add_argument("--json", type=Path, help="write every phase's samples and means here, after each phase")
    ap.add_argument("--report", type=Path, metavar="JSON", help="print the report of a saved --json run; run nothing")
    args = ap.parse_args(argv)
    if args.report:
        print(report([(r["phase"], phase_result(r["samples"])) for r in json.loads(args.report.read_text())]))
        return 0
    docker_host()
    from tests.docker_cluster.federation import Federation

    fed = Federation.create(YARN_DRF, ROOT / "conf" / "docker-queues.yaml")
    even = {sc: 1 / len(fed.subclusters) for sc in fed.subclusters}
    runs: list[tuple[str, dict]] = []
    applied: dict[str, str] = {}  # queue name -> the spec the policy saved last
    try:
        fed.start()
        if args.prime > 0:  # the service's first rounds: a policy phase starts with the weights it had
            print(f"priming the policy for {args.prime:g} s (not measured)", flush=True)
            phase(fed, "prime", True, args.interval, applied, lambda: time.sleep(args.prime))
        for i, name in enumerate(["static", "policy"] * args.runs):
            print(f"run {i // 2 + 1} phase {name}", flush=True)
            # An app's asks are split by the weights in force when it starts: a static phase starts
            # on even weights everywhere, a policy phase on the specs the service saved last
            for queue in ["*", *sorted(applied)]:
                if name == "static" or queue == "*":
                    fed.save_policy(queue, even, even)
                else:
                    code, out = fed.exec(["yarn", "routeradmin", "-policy", "-s", applied[queue]])
                    assert code == 0, out[-2000:]
            runs.append((name, phase(fed, f"{name}{i}", name == "policy", args.interval, applied,
                                     lambda: measure(fed, args.warmup, args.measure, args.sample))))
            print("policy specs saved last:", *sorted(applied.values()), sep="\n  ", flush=True)
            if args.json:  # after every phase: a run cut short keeps what it measured
                args.json.write_text(json.dumps([{"phase": p, **r} for p, r in runs], indent=1))
    finally:
        fed.stop()
    print(report(runs))
    return 0


def report(runs: list[tuple[str, dict]]) -> str:
    """Per run and phase: load average, whether filled, each queue's means; then summary()."""
    lines = [f"{'run':<4} {'queue':<20} {'phase':<7} {'share':>7} {'target':>7} {'pooled':>7} {'|share-target|':>15} "
             f"{'where':>24} {'policy weights':>24} samples"]
    for i, (phase, r) in enumerate(runs):
        lines.append(f"{i // 2 + 1:<4} {phase:<7} load average {r['load'][0]:.1f}-{r['load'][2]:.1f} "
                     f"(mean {r['load'][1]:.1f}), {'filled' if r['filled'] else 'NOT FILLED'}, "
                     f"{r['filled_samples']}/{len(r['samples'])} samples filled")
        for q in WORKLOAD:
            m = r["queues"].get(q)
            if m:
                lines.append(f"{i // 2 + 1:<4} {q:<20} {phase:<7} {m['share']:7.3f} {m['target']:7.3f} "
                             f"{m['pooled_target']:7.3f} {m['distance']:15.3f} {fmt(m['where']):>24} "
                             f"{fmt(m['policy_weights']):>24} {m['samples']:7d}")
    return "\n".join(["", *lines, "", summary(runs)])


if __name__ == "__main__":
    sys.exit(main())
