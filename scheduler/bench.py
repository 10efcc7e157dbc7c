"""`yarn-drf bench core`: the decision cost per assigned container at cluster scale.

For each size it builds 10,000 heterogeneous nodes and N apps spread over the leaves of a
three-level queue tree (root -> teams -> groups -> leaves, weights 1-3 at every level, so every
decision goes through hierarchical DRF), fills the cluster, then measures steady state: a few
containers finish on a random node and that node heartbeats, as in a busy YARN cluster. Only
on_heartbeat is timed; cost per container = heartbeat time / containers it assigned. When the
decision path runs compiled (scheduler/compiled.py), each size also runs on the pure-Python
modules, in a child process right after, and the table shows both. With `--users U` every leaf
has `user-limits` (weights 1-3 by user) and the apps belong to U users, so every decision also
goes through the user level. With `--local F` a fraction F of the apps ask for three nodes and
their racks (nodes sit in racks of 40), as MapReduce's maps do, and the clock moves 0.1 ms a
heartbeat (10,000 NodeManagers heartbeating once a second), so those requests wait for their
nodes through the run (the default delays are 1 s): every decision also passes them over
(scheduler.locality).

Every run also hashes the assignments it made, in order (app, node, resources, over the fill and
the steady state): the same digest means the same decisions, so a change to the decision path
that is meant to be faster only can show that it is (the pure-Python child must print the same
digest as the compiled run). The machine's load moves absolute microseconds, so each size is also
given as a ratio to the smallest size, and with `--users` the same trees without user-limits are
measured in the same run for a users / plain ratio; `--repeat R` runs each size R times and
reports the medians.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

import scheduler
from scheduler.compiled import PURE_ENV
from scheduler.config import parse_config
from scheduler.core import SchedulerCore

# (apps, (teams, groups per team, leaves per group))
SIZES = ((100, (2, 2, 3)), (1_000, (4, 5, 5)), (10_000, (10, 10, 10)))
SHAPES = (
    {"vcores": 4, "memory-mb": 4096},                    # CPU-heavy
    {"vcores": 1, "memory-mb": 12288},                   # memory-heavy
    {"vcores": 2, "memory-mb": 8192, "gpu-mem": 10240},  # GPU-memory-heavy
    {"vcores": 1, "memory-mb": 2048},                    # small
)
NODE_SHAPES = (
    {"vcores": 32, "memory-mb": 65536, "gpu-mem": 0},
    {"vcores": 16, "memory-mb": 131072, "gpu-mem": 0},
    {"vcores": 32, "memory-mb": 131072, "gpu-mem": 40960},
)


@dataclass
class Result:
    apps: int
    tree: tuple[int, int, int]
    containers: int
    heartbeats: int
    per_container_us: list[float]
    digest: str  # of every assignment made, in order: equal digests, equal decisions

    def pct(self, p: float) -> float:
        data = sorted(self.per_container_us)
        return data[min(len(data) - 1, int(p / 100 * len(data)))]

    def figures(self) -> tuple[float, float, float]:
        """p50, p99 and mean microseconds per container."""
        return self.pct(50), self.pct(99), statistics.fmean(self.per_container_us)


def queue_yaml(tree: tuple[int, int, int], rng: random.Random, users: int = 0,
               apps: int = 0) -> tuple[str, list[str]]:
    """The queue file of a three-level tree, and its leaves' paths; with `users`, leaves with
    user-limits weighing users user0..user<users-1> 1-3. With `apps`, each leaf names only the
    users of app_user's apps in it (the same weights, a file of any size under the queue file's
    limit)."""
    teams, groups, leaves = tree
    count = teams * groups * leaves
    lines = ["resources: [memory-mb, vcores, gpu-mem]", "queues:", "  root:", "    children:"]
    paths: list[str] = []
    for t in range(teams):
        lines += [f"      t{t}:", f"        weight: {rng.choice((1, 2, 3))}", "        children:"]
        for g in range(groups):
            lines += [f"          g{g}:", f"            weight: {rng.choice((1, 2, 3))}", "            children:"]
            for leaf in range(leaves):
                named = range(users) if not (users and apps) else sorted(
                    {app_user(a, count, users) for a in range(len(paths), apps, count)})
                user_limits = (", user-limits: {users: {" + ", ".join(f"user{u}: {{weight: {1 + u % 3}}}" for u in named)
                               + "}}") if users else ""
                lines.append(f"              q{leaf}: {{weight: {rng.choice((1, 2, 3))}{user_limits}}}")
                paths.append(f"root.t{t}.g{g}.q{leaf}")
    return "\n".join(lines) + "\n", paths


def app_user(app: int, leaves: int, users: int) -> int:
    """The user of app number `app` (app a goes to leaf a % leaves): each leaf's apps belong to
    different users while there are enough of them."""
    return app // leaves % users


def run_size(apps: int, tree: tuple[int, int, int], nodes: int, heartbeats: int, seed: int,
             users: int = 0, local: float = 0.0) -> Result:
    rng = random.Random(seed)
    text, leaves = queue_yaml(tree, rng, users, apps)
    core = SchedulerCore(parse_config(text), clock=lambda: 0.0)
    for n in range(nodes):
        core.add_node(f"node{n}", NODE_SHAPES[n % len(NODE_SHAPES)], rack=f"/rack{n // 40}")
    for a in range(apps):
        core.submit_app(f"app{a}", f"user{app_user(a, len(leaves), users)}" if users else "bench",
                        leaves[a % len(leaves)])
        shape = rng.choice(SHAPES)
        if local and rng.random() < local:
            for n in rng.sample(range(nodes), 3):
                core.update_request(f"app{a}", 1, shape, 1_000_000, location=f"node{n}")
                core.update_request(f"app{a}", 1, shape, 1_000_000, location=f"/rack{n // 40}")
        core.update_request(f"app{a}", 1, shape, 1_000_000)
    digest = hashlib.sha256()
    running: dict[str, list[str]] = {f"node{n}": [] for n in range(nodes)}
    for node_id, held in running.items():  # fill the cluster
        got = core.on_heartbeat(node_id)
        held.extend(a.assignment_id for a in got)
        digest.update(repr([(a.app_id, a.node_id, a.vector) for a in got]).encode())
    samples: list[float] = []
    node_ids = list(running)
    timer = time.perf_counter_ns
    for i in range(heartbeats):
        node_id = rng.choice(node_ids)
        held = running[node_id]
        for _ in range(min(len(held), rng.randint(1, 3))):
            core.container_finished(held.pop(rng.randrange(len(held))))
        t0 = timer()
        got = core.on_heartbeat(node_id, now=i * 1e-4) if local else core.on_heartbeat(node_id)
        elapsed = timer() - t0
        if got:
            samples.append(elapsed / 1000 / len(got))
            held.extend(a.assignment_id for a in got)
            digest.update(repr([(a.app_id, a.node_id, a.vector) for a in got]).encode())
    return Result(apps, tree, len(core.containers), heartbeats, samples, digest.hexdigest())


def pure_figures(apps: int, tree: tuple[int, int, int], nodes: int, heartbeats: int,
                 seed: int, users: int = 0, local: float = 0.0) -> tuple[float, float, float, str]:
    """run_size's figures and digest on the pure-Python modules, from a child process (a process
    imports the decision path one way)."""
    code = (f"from scheduler.bench import run_size; import json; r = run_size("
            f"{apps}, {tree!r}, {nodes}, {heartbeats}, {seed}, {users}, {local}); "
            f"print(json.dumps([*r.figures(), r.digest]))")
    done = subprocess.run([sys.executable, "-c", code], env={**os.environ, PURE_ENV: "1"},
                          capture_output=True, text=True, check=True)
    p50, p99, mean, digest = json.loads(done.stdout.splitlines()[-1])
    return p50, p99, mean, digest


def median_run(repeat: int, *args) -> tuple[Result, float, float, float]:
    """The first of `repeat` runs of run_size(*args), and the medians of their p50, p99 and mean
    (every run must make the same decisions)."""
    runs = [run_size(*args) for _ in range(repeat)]
    assert len({r.digest for r in runs}) == 1, "the same run decided differently"
    return (runs[0], *(statistics.median(fig) for fig in zip(*(r.figures() for r in runs))))


def main(nodes: int = 10_000, heartbeats: int = 20_000, seed: int = 1,
         sizes: tuple[tuple[int, tuple[int, int, int]], ...] = SIZES, users: int = 0,
         local: float = 0.0, repeat: int = 1) -> list[Result]:
    compiled = scheduler.MODE == "compiled"
    print(f"yarn-drf core benchmark: {nodes:,} nodes, {heartbeats:,} steady-state heartbeats per size, "
          f"three-level queue trees (teams x groups x leaves), cost per assigned container (heartbeat time "
          f"/ containers it assigned); "
          + (f"{users} users, each leaf with user-limits, and the same trees without them; " if users else "")
          + (f"{local:.0%} of the apps ask for 3 nodes and their racks; " if local else "")
          + (f"medians of {repeat} runs; " if repeat > 1 else "")
          + f"decision path: {scheduler.MODE}"
          + (", then pure-Python in a child process" if compiled else ""))
    print(f"{'apps':>7} {'tree':>10} {'leaves':>7} {'containers':>11} {'samples':>8} {'p50 us':>8} {'p99 us':>8} "
          f"{'mean us':>8} {'p50/first':>9}"
          + (f" {'plain p50':>9} {'users/plain':>11}" if users else "")
          + (f" {'pure p50':>9} {'pure p99':>9} {'pure mean':>9} {'pure/compiled p50':>18}" if compiled else "")
          + f" {'digest':>12}")
    results, p50s, pure_p50, plain_p50 = [], [], [], []
    for apps, tree in sizes:
        r, p50, p99, mean = median_run(repeat, apps, tree, nodes, heartbeats, seed, users, local)
        results.append(r)
        p50s.append(p50)
        shape = "x".join(map(str, tree))
        row = (f"{apps:>7,} {shape:>10} {tree[0] * tree[1] * tree[2]:>7,} {r.containers:>11,} "
               f"{len(r.per_container_us):>8,} {p50:>8.1f} {p99:>8.1f} {mean:>8.1f} {p50 / p50s[0]:>9.2f}")
        if users:
            plain = median_run(repeat, apps, tree, nodes, heartbeats, seed, 0, local)[1]
            plain_p50.append(plain)
            row += f" {plain:>9.1f} {p50 / plain:>11.2f}"
        if compiled:
            pure = pure_figures(apps, tree, nodes, heartbeats, seed, users, local)
            pure_p50.append(pure[0])
            row += f" {pure[0]:>9.1f} {pure[1]:>9.1f} {pure[2]:>9.1f} {pure[0] / p50:>18.2f}"
            if pure[3] != r.digest:
                row += " (the pure-Python run decided differently: " + pure[3][:12] + ")"
        print(row + f" {r.digest[:12]:>12}", flush=True)
    print(f"ratio largest/smallest: p50 {p50s[-1] / p50s[0]:.2f}"
          + (f"; plain p50 {plain_p50[-1] / plain_p50[0]:.2f}" if plain_p50 else "")
          + (f"; pure p50 {pure_p50[-1] / pure_p50[0]:.2f}" if pure_p50 else ""))
    return results
