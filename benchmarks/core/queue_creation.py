"""The cost of placing submissions that create queues, through the service's entry point.

One schedule call carries N submissions from N new users under the shipped `user, create: true`
rule (conf/queues.yaml: root.users.<user>), so the call creates N queues; the same run times N
submissions into one existing queue (root.default) for the ratio, and a second call of N more new
users on top of the first (the cost per new queue must not grow with the queues already there).
Each is the whole `CoreService.handle` of the call (JSON in, placements and the new queue list
out: the new leaves named under their parent, queues_created) and the collector's pass over what it
allocated, CPU time of this process from a collected heap, against the shim's default schedule-call
timeout (`yarn-drf.bridge.timeout-ms`, 250 ms). --growing times calls of 100 new users each as the tree
grows to 6,000 queues (the audit's figure).

Run: .venv/bin/python benchmarks/core/queue_creation.py [--users 10000] [--repeat 3] [--growing]
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import tempfile
import time
from pathlib import Path

from scheduler.compiled import mode
from yarn_bridge.service import CoreService

ROOT = Path(__file__).resolve().parents[2]
QUEUES = ROOT / "conf" / "queues.yaml"
BRIDGE_TIMEOUT_S = 0.250  # the shim's yarn-drf.bridge.timeout-ms default (docs/yarn-site.md)
EPOCH = 1


def message(kind: str, seq: int, **fields) -> str:
    return json.dumps({"v": 6, "type": kind, "epoch": EPOCH, "seq": seq, **fields})


def snapshot() -> str:
    return json.dumps({"v": 6, "type": "snapshot", "epoch": EPOCH, "resources": ["memory-mb", "vcores", "gpu-mem"],
                       "nodes": [], "apps": [], "containers": [], "asks": []})


def submissions(prefix: str, users: int, queue: str | None) -> list[dict]:
    return [{"app": f"application_{EPOCH}_{prefix}{i:06d}", "user": f"{prefix}{i:06d}", "groups": [],
             **({"queue": queue} if queue else {})} for i in range(users)]


def timed_call(service: CoreService, seq: int, subs: list[dict]) -> tuple[float, dict]:
    """CPU seconds of the service's handling of the call (the reply's text included, and the
    collector's pass over what the call allocated; not the reply's decoding, the shim's work),
    from a collected heap: the earlier calls' and runs' garbage is not this call's."""
    text = message("schedule", seq, submissions=subs)
    gc.collect()
    start = time.process_time()
    reply = service.handle(text)
    gc.collect(0)  # the collector's pass the call left (in serve it comes as py4j sends the reply)
    return time.process_time() - start, json.loads(reply)


def one_run(users: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        queues = Path(tmp) / "queues.yaml"
        queues.write_text(QUEUES.read_text())
        service = CoreService(queues)
        assert json.loads(service.handle(snapshot()))["ok"]
        existing, reply = timed_call(service, 1, submissions("e", users, "root.default"))
        assert all(p["queue"] == "root.default" for p in reply["placements"]), "not placed in root.default"
        first, reply = timed_call(service, 2, submissions("a", users, None))
        placed = {p["queue"] for p in reply["placements"]}
        assert len(placed) == users and all(q.startswith("root.users.") for q in placed), "not one new queue each"
        second, reply = timed_call(service, 3, submissions("b", users, None))
        assert len({p["queue"] for p in reply["placements"]}) == users
        return {"existing": existing, "first": first, "second": second,
                "queues": len(service.core.queues)}


def growing(per_call: int = 100, calls: int = 60, report: tuple[int, ...] = (1, 10, 30, 60)) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        queues = Path(tmp) / "queues.yaml"
        queues.write_text(QUEUES.read_text())
        service = CoreService(queues)
        assert json.loads(service.handle(snapshot()))["ok"]
        print(f"{per_call} new users per call as the tree grows (CPU seconds of each call):")
        for n in range(1, calls + 1):
            seconds, _ = timed_call(service, n, submissions(f"g{n:03d}x", per_call, None))
            if n in report:
                print(f"  call {n}: {seconds * 1000:.1f} ms, {len(service.core.queues)} queues after")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--growing", action="store_true", help="100 new users per call up to 6,000 queues instead")
    args = ap.parse_args()
    if args.growing:
        growing()
        return
    runs = [one_run(args.users) for _ in range(args.repeat)]
    med = {k: statistics.median(r[k] for r in runs) for k in ("existing", "first", "second")}
    print(f"{args.users} submissions per call, median of {args.repeat} runs (CPU seconds of the whole call; "
          f"core: {mode()}):")
    print(f"  into one existing queue (root.default):        {med['existing']:.3f} s")
    print(f"  {args.users} new users, {args.users} new queues:            {med['first']:.3f} s "
          f"({med['first'] / med['existing']:.2f}x the existing queue; {med['first'] / BRIDGE_TIMEOUT_S:.2f}x "
          f"the {BRIDGE_TIMEOUT_S * 1000:.0f} ms bridge timeout)")
    print(f"  {args.users} more new users on top ({runs[0]['queues']} queues after): {med['second']:.3f} s "
          f"({med['second'] / med['first']:.2f}x the first call)")
    print(f"  per new user: {med['first'] / args.users * 1e6:.1f} us of CPU "
          f"(into the existing queue: {med['existing'] / args.users * 1e6:.1f} us a submission)")
    print("  per run (existing / first / second): " +
          "; ".join(f"{r['existing']:.3f} / {r['first']:.3f} / {r['second']:.3f}" for r in runs))


if __name__ == "__main__":
    main()
