"""How recovery scales: one request carrying N new asks of one app, and a full snapshot of a large
cluster, each through `CoreService.handle` (JSON decoding, the service and the real core; py4j
and Java's encoding are not included: see run.py for the transport).

    .venv/bin/python benchmarks/bridge/recovery_scale.py [--sizes 1000,2000,4000,8000,16000]
        [--nodes 10000] [--apps 5000] [--containers 100000] [--repeat 3]

Prints, for each N, the time to apply N new asks and then to withdraw them (counts to 0), and the
ratio to the previous N: about 2 per doubling means O(N log N) or better, about 4 quadratic. Then
the snapshot: its size in bytes and items, the time of the best of --repeat runs, and the timeout
the shim gives a snapshot of that size (yarn-drf.bridge.snapshot-timeout-ms plus
yarn-drf.bridge.snapshot-timeout-per-1000-items-ms per thousand items, at their defaults).
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from yarn_bridge import protocol  # noqa: E402
from yarn_bridge.service import CoreService  # noqa: E402

TYPES = ["memory-mb", "vcores", "gpu-mem"]
# The shim's defaults (ShimConf): the base timeout of a snapshot and the allowance per 1,000 items.
SNAPSHOT_TIMEOUT_MS = 1000
SNAPSHOT_TIMEOUT_PER_1000_ITEMS_MS = 50
# Five leaves; "batch" holds back most of its apps (max-running-apps), so the snapshot also
# recovers apps that wait.
QUEUES = """
resources: [memory-mb, vcores, gpu-mem]
placement: [{rule: specified}, {rule: reject}]
queues:
  root:
    children:
      cpu: {weight: 1}
      mem: {weight: 2}
      gpu: {weight: 1}
      batch: {weight: 1, max-running-apps: 100}
      adhoc: {weight: 1}
"""
LEAVES = ("root.cpu", "root.mem", "root.gpu", "root.batch", "root.adhoc")


def request(**fields) -> str:
    return json.dumps({"v": protocol.VERSION, **fields})


def checked(reply: str) -> dict:
    out = json.loads(reply)
    if not out.get("ok"):
        raise SystemExit(f"the service refused a benchmark request: {out.get('error')}")
    return out


def new_service(queues: Path) -> CoreService:
    return CoreService(queues)


def asks_case(queues: Path, n: int) -> tuple[float, float]:
    """Seconds to apply n new asks of one app (distinct allocation ids, in random order), and to
    withdraw them all, each in one schedule request deciding for no node."""
    svc = new_service(queues)
    checked(svc.handle(request(type="snapshot", epoch=1, resources=TYPES,
                               nodes=[{"node": "n1:1", "capacity": {"memory-mb": 1 << 20, "vcores": 1024}}],
                               apps=[{"app": "app_1", "user": "u", "queue": "root.cpu", "groups": []}],
                               containers=[], asks=[], counts=[])))
    ids = list(range(1, n + 1))
    random.Random(n).shuffle(ids)
    add = request(type="schedule", epoch=1, seq=1, asks=[[i, 1, "app_1", 1, i, "*", True, 1024, 1, 0] for i in ids])
    drop = request(type="schedule", epoch=1, seq=2, counts=[x for i in ids for x in (i, 0)])
    start = time.perf_counter()
    checked(svc.handle(add))
    added = time.perf_counter() - start
    if sum(1 for _ in svc.core.apps["app_1"].pending) != n:
        raise SystemExit("the asks did not all apply")
    start = time.perf_counter()
    checked(svc.handle(drop))
    dropped = time.perf_counter() - start
    if svc.core.apps["app_1"].pending:
        raise SystemExit("the asks were not all withdrawn")
    return added, dropped


def snapshot_request(nodes: int, apps: int, containers: int, seed: int = 7) -> tuple[str, int]:
    rnd = random.Random(seed)
    node_ids = [f"host{i:05d}:8041" for i in range(nodes)]
    node_rows = [{"node": n, "capacity": {"memory-mb": 65536, "vcores": 32, "gpu-mem": 0},
                  "rack": f"/rack{i % 40}"} for i, n in enumerate(node_ids)]
    app_ids = [f"application_1700000000000_{i:05d}" for i in range(apps)]
    app_rows = [{"app": a, "user": f"user{i % 50}", "queue": LEAVES[i % len(LEAVES)], "groups": ["staff"]}
                for i, a in enumerate(app_ids)]
    # Containers fill nodes to at most 20 x <2 GB, 1 vcore> = 40 GB, 20 vcores of 64 GB, 32 vcores.
    rows = []
    for c in range(containers):
        app = app_ids[c % apps]
        node = node_ids[rnd.randrange(nodes)] if c >= nodes else node_ids[c]
        rows.append([f"container_{app[12:]}_01_{c:06d}", app, node, 1, 0, None, 2048, 1, 0])
    asks = [[i + 1, 2, a, 1, 0, "*", True, 1024, 1, 0] for i, a in enumerate(app_ids)]
    items = nodes + apps + containers + len(asks)
    return request(type="snapshot", epoch=1, resources=TYPES, nodes=node_rows, apps=app_rows,
                   containers=rows, asks=asks, counts=[]), items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,2000,4000,8000,16000")
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--apps", type=int, default=5_000)
    parser.add_argument("--containers", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        queues = Path(tmp) / "queues.yaml"
        queues.write_text(QUEUES)

        print("N new asks of one app in one request (best of", args.repeat, "runs)")
        print(f"{'N':>8} {'apply s':>9} {'x prev':>7} {'withdraw s':>11} {'x prev':>7}")
        prev = None
        for n in (int(s) for s in args.sizes.split(",")):
            added, dropped = min(asks_case(queues, n) for _ in range(args.repeat))
            ratio = f"{added / prev[0]:7.2f} {dropped:11.4f} {dropped / prev[1]:7.2f}" if prev else \
                f"{'':7} {dropped:11.4f} {'':7}"
            print(f"{n:>8} {added:9.4f} {ratio}")
            prev = (added, dropped)

        text, items = snapshot_request(args.nodes, args.apps, args.containers)
        timeout_ms = SNAPSHOT_TIMEOUT_MS + SNAPSHOT_TIMEOUT_PER_1000_ITEMS_MS * -(-items // 1000)
        best = None
        for _ in range(args.repeat):
            svc = new_service(queues)
            start = time.perf_counter()
            checked(svc.handle(text))
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
        core = svc.core
        assert len(core.nodes) == args.nodes and len(core.apps) == args.apps
        assert len(core.containers) == args.containers
        print()
        print(f"snapshot: {args.nodes:,} nodes, {args.apps:,} apps, {args.containers:,} containers, "
              f"{args.apps:,} asks = {items:,} items, {len(text) / 1e6:.1f} MB of JSON")
        print(f"  handled in {best:.3f} s (best of {args.repeat}); the shim's timeout for it: "
              f"{timeout_ms / 1000:.1f} s ({best * 1000 / timeout_ms:.0%} of it); "
              f"waiting apps {sum(not a.runnable for a in core.apps.values()):,}")


if __name__ == "__main__":
    main()
