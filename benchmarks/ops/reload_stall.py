"""Whether a reload of a big refused queue file holds up the shim's schedule calls.

A service runs a small cluster (nodes, apps with pending asks, containers running). First, normal
schedule calls are timed alone; then a `-refreshQueues` reload (the bridge's reload message) of a
refused file runs in another thread, as py4j runs each shim connection in its own, while the main
thread keeps making schedule calls: each call's wall time while the reload runs is compared with a
normal call's. The refused files: one just under the 1 MiB limit, valid YAML that fails validation
at its end (the whole file is parsed and checked), and a multi-megabyte one (refused by its size).

Before the reload's parse moved out of the service lock, a call that arrived during it waited for
the whole parse (the audit: 4.5 s for a 614 KiB file).

Run: .venv/bin/python benchmarks/ops/reload_stall.py [--calls 200]
"""
from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
import threading
import time
from pathlib import Path

from yarn_bridge.service import CoreService

ROOT = Path(__file__).resolve().parents[2]
QUEUES = ROOT / "conf" / "queues.yaml"
EPOCH = 1
NODES, APPS = 20, 40
NODE = (8192, 4, 0)  # each node's capacity: four of the apps' 2 GiB, 1-vcore containers
LIMIT = 1 << 20  # scheduler/bounded_yaml.py MAX_BYTES


def snapshot() -> str:
    capacity = dict(zip(("memory-mb", "vcores", "gpu-mem"), NODE))
    nodes = [{"node": f"host{i}:8041", "rack": f"/rack{i % 4}", "capacity": capacity} for i in range(NODES)]
    apps = [{"app": f"application_{EPOCH}_{i:04d}", "user": f"user{i % 7}", "queue": "root.default"}
            for i in range(APPS)]
    asks = [[i, 1000, f"application_{EPOCH}_{i:04d}", 1, 0, "*", True, 2048, 1, 0] for i in range(APPS)]
    return json.dumps({"v": 6, "type": "snapshot", "epoch": EPOCH, "resources": ["memory-mb", "vcores", "gpu-mem"],
                       "nodes": nodes, "apps": apps, "containers": [], "asks": asks})


class Shim:
    """Plays the shim's side of schedule calls in a steady state: each call commits the previous
    call's assignments (started) and reports them finished at once, tops the asks up, and offers
    every node whole again: every call assigns the same number of containers."""

    def __init__(self) -> None:
        self.assigned: list[dict] = []
        self.seq = 0
        self.containers = 0

    def message(self) -> str:
        self.seq += 1
        started, finished = [], []
        for a in self.assigned:
            self.containers += 1
            r, cid = a["resources"], f"container_{self.containers}"
            started.append([cid, a["app"], a["node"], a["priority"], a["allocation_id"], a["assignment_id"],
                            r.get("memory-mb", 0), r.get("vcores", 0), r.get("gpu-mem", 0)])
            finished += [cid, "completed"]
        counts = [x for i in range(APPS) for x in (i, 1000)]
        nodes = [[f"host{i}:8041", *NODE] for i in range(NODES)]
        return json.dumps({"v": 6, "type": "schedule", "epoch": EPOCH, "seq": self.seq, "started": started,
                           "finished": finished, "counts": counts, "nodes": nodes})

    def call(self, service: CoreService) -> float:
        text = self.message()
        start = time.perf_counter()
        reply = json.loads(service.handle(text))
        elapsed = time.perf_counter() - start
        assert reply["ok"], reply
        self.assigned = reply["assignments"]
        return elapsed


def refused_near_limit() -> str:
    """Many valid queues, then one invalid setting: the whole file is read and checked. Long ACL
    texts keep the YAML nodes under the reader's limit."""
    head, tail = QUEUES.read_text().split("\n      users:")
    lines, size, i = [head, "\n"], len(head) + len(tail), 0
    while size < LIMIT - 4096:
        acl = ",".join(f"user{i}x{j}" for j in range(60))
        line = f"      q{i:06d}: {{weight: {1 + i % 5}, submit-acl: \"{acl} staff\"}}\n"
        lines.append(line)
        size += len(line)
        i += 1
    lines.append("      broken: {weight: -1}\n      users:")
    return "".join(lines) + tail


def refused_by_size() -> str:
    return "# padding\n" * (3 * LIMIT // 10)


def during_reload(service: CoreService, shim: Shim, path: Path) -> tuple[list[float], float, dict]:
    """Schedule calls made while a reload of `path` runs; (their times, the reload's, its reply)."""
    out: dict = {}

    def reload() -> None:
        start = time.perf_counter()
        out["reply"] = json.loads(service.handle(json.dumps(
            {"v": 6, "type": "reload", "epoch": EPOCH, "seq": 0, "path": str(path)})))
        out["seconds"] = time.perf_counter() - start

    thread = threading.Thread(target=reload)
    thread.start()
    calls = [shim.call(service)]  # at least one, even when the reload is over in an instant
    while thread.is_alive():
        calls.append(shim.call(service))
    thread.join()
    return calls, out["seconds"], out["reply"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=200, help="normal schedule calls timed alone")
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # the refusals' own log lines
    with tempfile.TemporaryDirectory() as tmp:
        queues = Path(tmp) / "queues.yaml"
        queues.write_text(QUEUES.read_text())
        service = CoreService(queues)
        assert json.loads(service.handle(snapshot()))["ok"]
        shim = Shim()
        for _ in range(20):  # warm-up: the steady state (containers start and finish every call)
            shim.call(service)
        normal = [shim.call(service) for _ in range(args.calls)]
        p50 = statistics.median(normal)
        print(f"normal schedule call ({NODES} nodes offered, {APPS} apps asking, about "
              f"{len(shim.assigned)} assignments each): p50 {p50 * 1000:.2f} ms, p90 "
              f"{statistics.quantiles(normal, n=10)[-1] * 1000:.2f} ms, max {max(normal) * 1000:.2f} ms "
              f"over {args.calls} calls")
        original = queues.read_text()
        for name, text in (("near the 1 MiB limit, invalid at its end", refused_near_limit()),
                           ("3 MiB, refused by its size", refused_by_size())):
            queues.write_text(text)
            calls, seconds, reply = during_reload(service, shim, queues)
            queues.write_text(original)
            assert reply["ok"] and not reply["accepted"] and reply["errors"], reply
            worst = max(calls)
            print(f"refused reload, {len(text) / 1024:,.0f} KiB {name}: reload {seconds * 1000:.0f} ms; "
                  f"{len(calls)} schedule calls meanwhile: p50 {statistics.median(calls) * 1000:.2f} ms "
                  f"({statistics.median(calls) / p50:.2f}x a normal call's), max {worst * 1000:.2f} ms "
                  f"(delay beyond a normal call's p50: {(worst - p50) / p50:.1f} normal calls; the normal calls' "
                  f"own max: {(max(normal) - p50) / p50:.1f}); error: {reply['errors'][0][-70:]}")


if __name__ == "__main__":
    main()
