"""Data locality of MapReduce over HDFS under yarn-drf, CapacityScheduler and FairScheduler, on the
same Docker cluster and the same data: one HDFS (a NameNode, a DataNode on each NodeManager's host,
two racks; tests/docker_cluster/hdfs.py) stays up while YARN (RM and NodeManagers) is started once per
scheduler; wordcount runs over input files spread by HDFS (tests/docker_cluster/locality.py) a few times under
each, and the table gives the data-local and rack-local fractions of its maps and its time.

    make bench-locality                     # = .venv/bin/python benchmarks/locality/run.py
    .venv/bin/python benchmarks/locality/run.py --runs 3 --files 6 --blocks-per-file 8 --json out.json

Each scheduler runs with its defaults (yarn-drf: 1 s node- and 1 s rack-locality delay;
CapacityScheduler: node-locality-delay 40 opportunities, at most the node count; FairScheduler:
locality thresholds off), on the queues of conf/docker-queues.yaml; `fair-delay` is FairScheduler
with `yarn.scheduler.fair.locality.threshold.node` and `.rack` 0.5 each. Needs the images (`make
images`).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
# the e2e fixtures' module finds the Docker engine and configures testcontainers when imported
from tests.docker_cluster import conftest  # noqa: E402
from tests.docker_cluster.cluster import SHAPES, Cluster  # noqa: E402
from tests.docker_cluster.hdfs import Hdfs, running_hdfs  # noqa: E402
from tests.docker_cluster.locality import data_local_ceiling, load_input, random_baseline, wordcount  # noqa: E402

FAIR = "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler"
SCHEDULERS = {  # name: (scheduler class, extra RM settings)
    "yarn-drf": ("org.yarndrf.shim.YarnDrfScheduler", {}),
    "capacity": ("org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler", {}),
    "fair": (FAIR, {}),
    "fair-delay": (FAIR, {"YARN-SITE.XML_yarn.scheduler.fair.locality.threshold.node": "0.5",
                          "YARN-SITE.XML_yarn.scheduler.fair.locality.threshold.rack": "0.5"}),
}


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def table(runs: list[dict], names: list[str]) -> str:
    """Medians per scheduler; "of reach" is the data-local maps over the most its AM's host left
    possible (`data_local_ceiling`), which separates the locality rule from where the AM went."""
    rows = [f"{'scheduler':10} {'runs':>4} {'data-local':>10} {'of reach':>8} {'rack-local':>10} {'job s':>7}   (medians)"]
    by = {n: [r for r in runs if r["scheduler"] == n] for n in names}
    for name, rs in by.items():
        if rs:
            reach = statistics.median(r["data_local"] / r["data_local_ceiling"] for r in rs)
            rows.append(f"{name:10} {len(rs):4d} {median(rs, 'data_local'):10.3f} {reach:8.3f} "
                        f"{median(rs, 'rack_local'):10.3f} {median(rs, 'seconds'):7.1f}")
    others = [n for n in names if n != "yarn-drf" and by[n]]
    if by.get("yarn-drf") and others:
        best = max(others, key=lambda n: median(by[n], "data_local"))
        drf = by["yarn-drf"]
        rows.append(f"yarn-drf / {best} (the better data-local of the others): data-local "
                    f"{median(drf, 'data_local') / max(median(by[best], 'data_local'), 1e-9):.2f}, "
                    f"rack-local {median(drf, 'rack_local') / max(median(by[best], 'rack_local'), 1e-9):.2f}, "
                    f"job time {median(drf, 'seconds') / median(by[best], 'seconds'):.2f}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3, help="wordcount runs per scheduler (default 3)")
    ap.add_argument("--schedulers", default="yarn-drf,capacity,fair",
                    help=f"comma-separated, of {', '.join(SCHEDULERS)} (default yarn-drf,capacity,fair)")
    ap.add_argument("--files", type=int, default=6, help="input files (default 6)")
    ap.add_argument("--blocks-per-file", type=int, default=8, help="1 MiB blocks per file (default 8)")
    ap.add_argument("--replication", type=int, default=1, help="HDFS replication of the input (default 1)")
    ap.add_argument("--json", type=Path, help="write every run's figures here")
    args = ap.parse_args(argv)
    names = [s.strip() for s in args.schedulers.split(",") if s.strip()]
    unknown = [s for s in names if s not in SCHEDULERS]
    if unknown:
        ap.error(f"--schedulers: unknown {unknown}; known: {list(SCHEDULERS)}")
    if not os.environ.get("DOCKER_HOST"):  # conftest sets it when an engine answers
        sys.exit("no Docker engine answers: run `make images` first")

    runs: list[dict] = []
    data = None
    with running_hdfs(Hdfs.create([s.name for s in SHAPES])) as hdfs:
        for name in names:
            scheduler, settings = SCHEDULERS[name]
            cluster = Cluster.create(scheduler, conftest.QUEUES, hdfs=hdfs)
            cluster.env.update(settings)
            with conftest.running(cluster):
                if data is None:
                    data = load_input(cluster, hdfs, "/locality/in", files=args.files,
                                      blocks_per_file=args.blocks_per_file, replication=args.replication)
                    base = random_baseline(data.blocks, hdfs)
                    per_host = {h.name: sum(h.name in b for b in data.blocks) for h in hdfs.hosts}
                    print(f"{len(data.blocks)} blocks (replication {args.replication}) over "
                          + ", ".join(f"{n} {hdfs.host(n).rack} {c}" for n, c in per_host.items())
                          + f"; random placement: data-local {base.data_local:.3f}, rack-local {base.rack_local:.3f}",
                          flush=True)
                for i in range(args.runs):
                    tag = f"{name}-{i}-{int(time.time())}"
                    run = wordcount(cluster, data, f"/locality/out-{tag}")
                    ceiling = data_local_ceiling(data.blocks, {s.name: s.vcores for s in SHAPES}, run.am_host)
                    runs.append({"scheduler": name, "run": i, "maps": run.maps, "data_local": run.data_local_fraction,
                                 "rack_local": run.rack_local_fraction,
                                 "other_local": run.other_local / run.maps, "seconds": run.seconds,
                                 "am_host": run.am_host, "data_local_ceiling": ceiling / run.maps})
                    print(f"{name:10} run {i}: {run.maps} maps, data-local {run.data_local} (at most {ceiling} "
                          f"with the AM on {run.am_host}), rack-local {run.rack_local}, other {run.other_local}, "
                          f"{run.seconds:.1f} s", flush=True)
                    if args.json:  # after every run: a bench stopped early keeps what it measured
                        args.json.write_text(json.dumps({"baseline": vars(base), "runs": runs}, indent=2) + "\n")
    print()
    print(table(runs, names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
