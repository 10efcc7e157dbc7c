#!/usr/bin/env python3
"""The yarn-drf demo on the Docker mini-cluster (`make cluster-demo`).

Starts a ResourceManager running yarn-drf and three NodeManagers of different shapes, submits a
mixed workload to the default queue tree (conf/docker-queues.yaml: prod, CPU-heavy, weight 2;
research.dev, memory-heavy, from two users, alice weighing twice bob; research.ml, GPU-memory heavy,
per-resource weights; and an app of carol's that names the parent users, which placement puts in
the root.users.carol it creates), prints a live table of each queue's usage and dominant share, parents
included, as measured from YARN's REST API and the address of yarn-drf's live dashboard, writes a
plot of dominant share over time, prints a verdict comparing the measured shares with each queue's
target (read from the scheduler's status server: where the core's hierarchical-DRF decisions take
the demand on these three nodes, whole containers; the pooled share is shown beside it) and tears the
cluster down (--keep leaves it running).
--screenshot PNG also saves the dashboard as headless Chromium shows it at the end of the run.

Then the preemption phase: the apps are killed, preemption is switched on by rewriting the queue
file (the core's file watcher reloads it), dev fills the cluster with hour-long containers, and
prod (weight 2) arrives late; the demo prints how long prod takes to reach its target and how many
of dev's containers were preempted (exit status PREEMPTED, from the RM's own metrics).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
import subprocess
import sys
import time
import uuid
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
os.environ.setdefault("TESTCONTAINERS_CONNECTION_MODE", "docker_host")
os.environ.setdefault("TC_HOST", "127.0.0.1")

import requests  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.live import Live  # noqa: E402
from rich.table import Table  # noqa: E402

from tests import browser  # noqa: E402
from tests.waits import Stalled  # noqa: E402

console = Console(width=None if sys.stdout.isatty() else 120)

# leaf -> (container shape, containers per app, the users submitting one app each: None is the
# client's own user, hadoop); containers are short, so allocations churn and every freed container
# goes down the tree to the queue (and, in dev, the user) furthest below its share. The apps name
# their leaf, but carol's names the parent root.users (the distributed-shell client needs a queue
# that exists): no app runs in a parent, so the `user` rule places it, creating root.users.carol.
WORKLOAD = {
    "root.prod": ({"memory-mb": 512, "vcores": 1}, 120, (None,)),                    # CPU-heavy
    "root.research.dev": ({"memory-mb": 3072, "vcores": 1}, 40, ("alice", "bob")),   # memory-heavy, two users
    "root.research.ml": ({"memory-mb": 1024, "vcores": 1, "gpu-mem": 1024}, 60, (None,)),  # GPU-memory-heavy
    "root.users.carol": ({"memory-mb": 2048, "vcores": 1}, 60, ("carol",)),          # created by placement
}
CREATED = "root.users."  # leaves the demo's placement rule creates: their apps name the parent
# Every queue the table shows: the workload's leaves and their parents below root, in tree order.
SHOWN = sorted({".".join(leaf.split(".")[:i]) for leaf in WORKLOAD for i in range(2, leaf.count(".") + 2)})
# Containers run 10-29 s (bash's $RANDOM): staggered ends free resources one by one.
CONTAINER_CMD = "sleep $((10 + RANDOM % 20))"
AM = {"memory-mb": 256, "vcores": 1}  # the distributed-shell AM of each app
RES = ("memory-mb", "vcores", "gpu-mem")
# The preemption phase: appended to the queue file, whose watcher reloads it within seconds.
PREEMPTION = """
preemption:
  enabled: true
  fair-share-timeout-s: 5
  min-share-timeout-s: 5
  threshold: 0.8
  grace-s: 5
  max-per-round: "25%"
"""
WORKLOAD_STALL_S = 120  # the apps' start, without any change in the cluster
# What a wait counts as "not yet" rather than a failure: a server between states answers with anything.
BETWEEN_STATES = (Exception,)
FILL = ("root.research.dev", {"memory-mb": 512, "vcores": 1}, 40)  # more than the cluster's 28 vcores hold
LATE = ("root.prod", {"memory-mb": 512, "vcores": 1}, 24)
TARGET_ROUNDING = 1e-6  # the status server's shares have 6 decimals (a queue one container off is in)


def ensure_engine() -> None:
    if os.environ.get("DOCKER_HOST"):
        return
    out = subprocess.run([str(ROOT / "docker" / "engine.sh"), "env"], capture_output=True, text=True)
    if out.returncode != 0:
        console.print("[yellow]No Docker engine answers; starting yarn-drf's private engine "
                      "(root, host networking only, under .docker-engine/)[/]")
        subprocess.run([str(ROOT / "docker" / "engine.sh"), "start"], check=True)
        out = subprocess.run([str(ROOT / "docker" / "engine.sh"), "env"], capture_output=True, text=True, check=True)
    os.environ["DOCKER_HOST"] = out.stdout.strip().removeprefix("export DOCKER_HOST=")


def targets(cluster) -> dict[str, tuple[float, float]]:
    """queue -> (target share, pooled target share), from the core's status server (/v1/queues)."""
    r = requests.get(f"http://127.0.0.1:{cluster.status_port()}/v1/queues", timeout=10)
    r.raise_for_status()
    return {q["name"]: (q["target_share"], q["pooled_target_share"]) for q in r.json()["queues"]}


def measure(cluster, capacity: dict[str, int], weights: dict[str, dict[str, float]]) -> dict[str, dict] | None:
    """Each shown queue's usage, containers, dominant and weighted share, from the RM REST API (a
    parent's usage is its leaves'); None when the RM does not answer in time."""
    from tests.drf import dominant_share, queue_usage
    from tests.docker_cluster.hdrf import weighted_share

    try:
        running = cluster.running_containers()
    except requests.RequestException:
        # A loaded RM that answers one read too slowly costs one sample, not the run: the verdict
        # needs samples in the second half and says so when it has none.
        return None
    usage = queue_usage(running)
    out = {}
    for q in SHOWN:
        below = [leaf for leaf in usage if leaf == q or leaf.startswith(q + ".")]
        u = {r: sum(usage[leaf][r] for leaf in below) for r in RES}
        out[q] = {"usage": u, "containers": sum(1 for c in running.values() if c["queue"] in below),
                  "dominant": dominant_share(u, capacity), "weighted": weighted_share(u, weights[q], capacity)}
    return out


def queue_weights(queues_file: Path) -> dict[str, dict[str, float]]:
    """Every queue's weight vector from the queue file, the leaves placement creates included."""
    from tests.docker_cluster.hdrf import load_tree

    created = [leaf.removeprefix(CREATED) for leaf in WORKLOAD if leaf.startswith(CREATED)]
    return {n.path: n.weight for n in load_tree(queues_file, {CREATED[:-1]: created}).walk()}


@dataclass(frozen=True)
class Submission:
    """One app of the workload: the queue it names (a leaf's short name, or for a leaf placement
    creates, the parent's: the distributed-shell client needs a queue that exists), its user (None:
    the client's own, hadoop), its containers."""

    name: str
    queue: str
    user: str | None
    shape: dict[str, int]
    count: int


def submissions(tag: str) -> list[Submission]:
    """The workload's apps, one per leaf and user, named with `tag`."""
    def named(leaf: str) -> str:
        return CREATED.split(".")[1] if leaf.startswith(CREATED) else leaf.split(".")[-1]

    return [Submission(f"demo-{user or leaf.split('.')[-1]}-{tag}", named(leaf), user, shape, n)
            for leaf, (shape, n, users) in WORKLOAD.items() for user in users]


@dataclass
class Verdict:
    """Each shown queue's means over the samples, its one container's share, and its distance from
    its target in those containers; `ok` if every queue is within one."""

    mean: dict[str, float]
    goal: dict[str, float]
    pooled: dict[str, float]
    weighted: dict[str, float]
    one: dict[str, float]
    off: dict[str, float]
    ok: bool


def verdict(steady: list[tuple[dict, dict]], capacity: dict[str, int]) -> Verdict:
    """The verdict over `steady`, (measure() sample, targets()) pairs."""
    def avg(values) -> float:
        values = list(values)
        return sum(values) / len(values)

    mean = {q: avg(s[q]["dominant"] for s, _ in steady) for q in SHOWN}
    goal = {q: avg(g[q][0] for _, g in steady) for q in SHOWN}
    # A parent's one container: the largest of its leaves' (any of them may take the next).
    one = {q: max(max(WORKLOAD[leaf][0].get(r, 0) / capacity[r] for r in RES if capacity[r])
                  for leaf in WORKLOAD if f"{leaf}.".startswith(q + ".")) for q in SHOWN}
    off = {q: abs(mean[q] - goal[q]) / one[q] for q in SHOWN}
    return Verdict(mean=mean, goal=goal, pooled={q: avg(g[q][1] for _, g in steady) for q in SHOWN},
                   weighted={q: avg(s[q]["weighted"] for s, _ in steady) for q in SHOWN}, one=one, off=off,
                   # one container exactly: the status server rounds the targets (TARGET_ROUNDING)
                   ok=all(abs(mean[q] - goal[q]) <= one[q] + TARGET_ROUNDING for q in SHOWN))


def asked(cluster, names: list[str]) -> bool:
    """Whether every app of `names` has asked the core for task containers (or already runs some)."""
    apps = cluster.core_status()["apps"]
    ids = [(cluster.app_by_name(name) or {}).get("id") for name in names]
    return all(i in apps and (apps[i]["pending"] > 0 or apps[i]["containers"] > 1) for i in ids)


def weight_text(weight: dict[str, float]) -> str:
    values = set(weight.values())
    return f"{values.pop():g}" if len(values) == 1 else " ".join(f"{r}={w:g}" for r, w in weight.items() if w != 1)


def render(sample: dict[str, dict], goals: dict[str, tuple[float, float]], elapsed: float,
           pending: dict[str, int], dashboard: str, weights: dict[str, dict[str, float]]) -> Table:
    t = Table(title=f"yarn-drf on the Docker cluster — {elapsed:5.0f} s (measured from the RM REST API)",
              caption=f"live dashboard (the scheduler's own view): {dashboard}")
    for col in ("queue", "weight", "containers", "pending", "memory-mb", "vcores", "gpu-mem",
                "dominant share", "target", "pooled", "weighted share"):
        t.add_column(col, justify="right")
    for q, m in sample.items():
        target, pooled = goals.get(q, (float("nan"), float("nan")))
        t.add_row(q, weight_text(weights[q]), str(m["containers"]), str(pending.get(q, "?")),
                  *(str(m["usage"][r]) for r in RES), f"{m['dominant']:.3f}", f"{target:.3f}", f"{pooled:.3f}",
                  f"{m['weighted']:.3f}")
    return t


def plot(history: list[tuple[float, dict, dict]], path: Path, weights: dict[str, dict[str, float]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    times = [t for t, _, _ in history]
    for i, q in enumerate(SHOWN):
        color = f"C{i}"
        ax.plot(times, [s[q]["dominant"] for _, s, _ in history], color=color,
                label=f"{q} (weight {weight_text(weights[q])})")
        ax.step(times, [g.get(q, (None,))[0] for _, _, g in history], where="post", color=color, linestyle="--",
                linewidth=1)
    ax.set_xlabel("seconds since submission")
    ax.set_ylabel("dominant share (dashed: target, where the decisions take the demand)")
    ax.set_title("yarn-drf: dominant share per queue of the tree on a 3-node YARN cluster")
    ax.legend()
    ax.grid(alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")


def record(history: list[tuple[float, dict, dict]], path: Path) -> None:
    """The samples behind the plot, for a look at a verdict: seconds, and per queue its dominant
    share, containers and target."""
    rows = [{"t": round(t, 1), "queues": {q: {"dominant": s[q]["dominant"], "containers": s[q]["containers"],
                                               "target": g.get(q, (None,))[0]} for q in SHOWN}}
            for t, s, g in history]
    path.write_text(json.dumps(rows, indent=1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=150, help="how long to run the workload (default 150)")
    ap.add_argument("--keep", action="store_true", help="leave the cluster running at the end")
    ap.add_argument("--plot", type=Path, default=ROOT / "out" / "cluster-demo.png", help="PNG to write")
    ap.add_argument("--preemption-seconds", type=float, default=60,
                    help="how long the preemption phase may go without progress (the late queue's share, "
                         "preemption's counters, the cluster's containers) before it gives up on the late "
                         "queue's target (default 60)")
    ap.add_argument("--screenshot", type=Path, metavar="PNG",
                    help="save the dashboard as headless Chromium shows it at the end of the run")
    args = ap.parse_args(argv)
    if args.screenshot and browser.missing():
        ap.error(f"--screenshot: {browser.missing()}")
    started = time.monotonic()
    ensure_engine()

    from tests.docker_cluster.cluster import YARN_DRF_SCHEDULER, Cluster

    # A copy the preemption phase rewrites (the cluster mounts the file itself: it sees the change).
    queues_file = Path(tempfile.mkdtemp(prefix="yarn-drf-demo-")) / "queues.yaml"
    shutil.copy(ROOT / "conf" / "docker-queues.yaml", queues_file)
    cluster = Cluster.create(YARN_DRF_SCHEDULER, queues_file)
    console.print("Starting the cluster: 1 ResourceManager (yarn-drf) + 3 NodeManagers "
                  "(CPU-rich 16 vcores/8 GiB, memory-rich 4 vcores/32 GiB, GPU 8 vcores/16 GiB/2x10 GiB gpu-mem)")
    try:
        return run(cluster, args, started, queues_file)
    except Exception as exc:  # noqa: BLE001 (whatever failed, the user gets the reason and the logs)
        console.print(failure_report(exc, cluster), markup=False, highlight=False)
        return 1
    finally:
        if args.keep:
            console.print(f"Cluster left running (--keep): RM http://127.0.0.1:{cluster.web_port}, dashboard "
                          f"http://127.0.0.1:{cluster.status_port()}/ui/; "
                          "remove it with: docker rm -f $(docker ps -aq --filter label=yarn-drf=1)")
        else:
            cluster.stop()
        console.print(f"Total demo time {time.monotonic() - started:.0f} s")
        shutil.rmtree(queues_file.parent, ignore_errors=True)


def run(cluster, args: argparse.Namespace, started: float, queues_file: Path) -> int:
    """The demo on a created cluster: start, workload, verdict, preemption phase; 0 if all passed."""
    from tests.docker_cluster.cluster import resource_map

    weights = queue_weights(queues_file)
    cluster.start()
    nodes = cluster.running_nodes()
    capacity = {r: sum(resource_map(n["availableResource"]).get(r, 0) for n in nodes) for r in RES}
    dashboard = f"http://127.0.0.1:{cluster.status_port()}/ui/"
    console.print(f"Cluster up in {time.monotonic() - started:.0f} s: capacity {capacity}; "
                  f"RM web UI http://127.0.0.1:{cluster.web_port}, core status "
                  f"http://127.0.0.1:{cluster.status_port()}/")
    console.print(f"[bold]yarn-drf dashboard: {dashboard}[/] (open it while the demo runs)")
    apps = submissions(uuid.uuid4().hex[:4])
    for app in apps:
        cluster.submit_dshell(app.name, app.queue, app.count, app.shape, command=CONTAINER_CMD, user=app.user)
    names = [app.name for app in apps]
    # The run's clock starts once every app's AM runs and has asked for its containers: on a loaded
    # machine the five clients and AMs take a while, and the verdict's second half must still see
    # the steady state.
    console.print(f"Waiting for the {len(names)} apps' ApplicationMasters to ask for their containers")
    cluster.wait_for(lambda: asked(cluster, names), WORKLOAD_STALL_S, "every app's AM to ask for its containers",
                     ignore=BETWEEN_STATES)
    t0 = time.monotonic()
    history: list[tuple[float, dict, dict]] = []
    with ExitStack() as stack, Live(console=console, refresh_per_second=2) as live:
        if args.screenshot:  # the page keeps its chart's history itself: open it for the whole run
            page = stack.enter_context(browser.headless_chromium())
            page.get(dashboard)
        skipped = 0
        while time.monotonic() - t0 < args.seconds:
            sample = measure(cluster, capacity, weights)
            if sample is None:
                skipped += 1
                time.sleep(2)
                continue
            try:  # containers still asked for, and the targets, from the core
                apps = cluster.core_status()["apps"].values()
                pending = {q: sum(a["pending"] for a in apps if f"{a['queue']}.".startswith(q + "."))
                           for q in SHOWN}
                goals = targets(cluster)
            except Exception:
                pending, goals = {}, {}
            history.append((time.monotonic() - t0, sample, goals))
            live.update(render(sample, goals, time.monotonic() - t0, pending, dashboard, weights))
            time.sleep(2)
        if args.screenshot:
            browser.page_screenshot(page, args.screenshot)
            console.print(f"dashboard screenshot: {args.screenshot}")
    if not console.is_terminal:
        console.line()  # Rich's Live leaves its last line open when the output is not a terminal
    if skipped:
        console.print(f"{skipped} samples skipped: the RM's REST API did not answer within its timeout")
    plot(history, args.plot, weights)
    record(history, args.plot.with_suffix(".json"))
    # Verdict over the second half of the run (after the first containers have churned).
    steady = [(s, g) for t, s, g in history if t >= args.seconds / 2 and g]
    if not steady:
        console.print("[red]no targets read from the scheduler's status server in the second half[/]")
        return 1
    v = verdict(steady, capacity)
    table = Table(title="Verdict (means over the second half of the run)")
    for col in ("queue", "weight", "dominant share", "target", "pooled target", "weighted share",
                "one container"):
        table.add_column(col, justify="right")
    for q in SHOWN:
        table.add_row(q, weight_text(weights[q]), f"{v.mean[q]:.3f}", f"{v.goal[q]:.3f}", f"{v.pooled[q]:.3f}",
                      f"{v.weighted[q]:.3f}", f"{v.one[q]:.3f}")
    console.print(table)
    # Why the pooled target may not be reached: free resources stranded on nodes where no
    # queue's next container fits (e.g. vcores left on a node whose memory is used up).
    free = {n["id"]: resource_map(n["availableResource"]) for n in cluster.running_nodes()}
    console.print("free per node at the end: " + "; ".join(
        f"{node} {f['vcores']} vcores / {f['memory-mb']} MB / {f['gpu-mem']} gpu-mem" for node, f in free.items()))
    console.print("distance from the target, in containers of the queue: "
                  + ", ".join(f"{q} {v.off[q]:.1f}" for q in SHOWN))
    text = ("AT THE TARGETS: each queue's mean dominant share, parents' too, within one of its containers of "
            "the share the core's hierarchical-DRF decisions settle at" if v.ok
            else "OFF THE TARGETS by more than one container")
    console.print(f"[bold]{text}[/]; plot: {args.plot} (samples: {args.plot.with_suffix('.json')})")
    preempted_ok = preemption_phase(cluster, queues_file, capacity, weights, args.preemption_seconds)
    return 0 if v.ok and preempted_ok else 1


def preemption_phase(cluster, queues_file: Path, capacity: dict[str, int], weights: dict[str, dict[str, float]],
                     limit_s: float) -> bool:
    """A late queue on a full cluster with preemption on: the time until it holds its target (within
    one of its containers) and the containers taken from the queue that filled the cluster."""
    from tests.docker_cluster.cluster import resource_map

    console.print("\n[bold]Preemption[/]: dev fills the cluster with hour-long containers, prod (weight 2) "
                  "arrives late; preemption on (fair-share-timeout-s 5, grace-s 5)")
    cluster.kill_all_apps()
    with open(queues_file, "a") as f:  # in place: the container's mount is this file
        f.write(PREEMPTION)
    cluster.wait_for(lambda: cluster.rest_status("/v1/queues")["preemption"]["enabled"], 30, "the reload",
                     ignore=BETWEEN_STATES)
    tag = uuid.uuid4().hex[:4]
    (fill_q, fill_shape, fill_n), (late_q, late_shape, late_n) = FILL, LATE
    fill_name, late_name = f"demo-fill-{tag}", f"demo-late-{tag}"
    cluster.submit_dshell(fill_name, fill_q.split(".")[-1], fill_n, fill_shape)
    cluster.wait_for(lambda: cluster.app_by_name(fill_name) and not any(
        all(free.get(r, 0) >= fill_shape[r] for r in fill_shape)
        for free in (resource_map(n["availableResource"]) for n in cluster.running_nodes())),
        60, f"{fill_q} filling the cluster (no node with room for one more of its containers)", ignore=BETWEEN_STATES)
    arrived = time.monotonic()
    cluster.submit_dshell(late_name, late_q.split(".")[-1], late_n, late_shape)
    one = max(late_shape.get(r, 0) / capacity[r] for r in RES if capacity[r])
    seen = {"share": 0.0, "target": 0.0}

    def at_target() -> bool:
        queue = next(q for q in cluster.rest_status("/v1/queues")["queues"] if q["name"] == late_q)
        # its target counts once the core knows the whole demand: its AM runs and has asked for its tasks
        asked = queue["demand"].get("vcores", 0) >= late_n * late_shape["vcores"]
        seen["target"] = queue["pooled_target_share"]  # what preemption restores
        seen["share"] = measure(cluster, capacity, weights)[late_q]["dominant"]
        return asked and seen["share"] >= seen["target"] - one

    def moving() -> tuple:
        counters = cluster.rest_status("/v1/queues")["preemption"]["counters"]
        return round(seen["share"], 3), counters["marked"], counters["killed"], cluster.activity()

    try:
        cluster.wait_for(at_target, limit_s, f"{late_q} to reach its target", progress=moving, ignore=BETWEEN_STATES)
        reached: float | None = time.monotonic() - arrived
    except Stalled as exc:
        reached, why = None, str(exc).split("\n")[0]
    taken = sum(int(a.get("numNonAMContainerPreempted", 0)) + int(a.get("numAMContainerPreempted", 0))
                for a in cluster.apps() if a["name"] == fill_name)
    counters = cluster.rest_status("/v1/queues")["preemption"]["counters"]
    work = cluster.rest_status("/v1/queues")["preemption"].get("work_lost_container_s")
    console.print(f"{fill_q}'s containers preempted (exit status PREEMPTED, the RM's metrics): {taken}; "
                  f"the core marked {counters['marked']}, killed {counters['killed']}, "
                  f"work lost {work} container-s")
    if reached is None:
        console.print(f"[bold red]{late_q} did not reach its target ({seen['target']:.3f}): at {seen['share']:.3f}; "
                      f"{why}[/]")
        return False
    console.print(f"[bold]{late_q} reached its target {seen['target']:.3f} (within one container) "
                  f"{reached:.0f} s after arriving on the full cluster[/] (5 s to starve + 5 s grace, its AM first, then its tasks)")
    return True


# Log lines worth a user's eyes when the demo fails: errors, and the scheduler's own lines (the shim
# logs as yarn-drf, the core as yarn_bridge / scheduler).
RELEVANT = re.compile(r"\b(ERROR|FATAL|SEVERE)\b|Exception|Traceback|yarn-drf|yarn_bridge|scheduler\.core")
LOG_TAIL = 400
LINES_PER_DAEMON = 15


def failure_report(exc: BaseException, cluster) -> str:
    """What the user reads when the demo fails: the reason, then for each daemon its state and the
    last of its log lines that matter. Never raises: a daemon whose state or log cannot be read is
    reported as such."""
    reason = str(exc).split("\n")[0] or type(exc).__name__
    out = [f"The demo failed: {reason}", f"  ({type(exc).__name__}; the cluster's daemons follow, with the "
           "log lines that matter: errors and yarn-drf's own)"]
    for name, container in cluster.daemons():
        if container is None:
            out.append(f"--- {name}: not started")
            continue
        try:
            wrapped = container.get_wrapped_container()
            wrapped.reload()
            state = wrapped.status
            lines = cluster.logs(container, tail=LOG_TAIL).splitlines()
        except Exception as err:  # noqa: BLE001 (the report must come out whatever state Docker is in)
            out.append(f"--- {name}: its state and log cannot be read ({err})")
            continue
        relevant = [line for line in lines if RELEVANT.search(line)][-LINES_PER_DAEMON:]
        out.append(f"--- {name} ({state}): {len(relevant)} line(s) of its last {len(lines)} that matter"
                   + ("" if relevant else "; its last lines instead:"))
        out += ["    " + line for line in (relevant or lines[-5:])]
    out.append("Rerun with --keep to leave the cluster up and read its logs: docker logs <container> "
               "(docker ps --filter label=yarn-drf=1)")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
