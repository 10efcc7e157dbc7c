"""Weighted DRF computed apart from the core, for the clusters' tests: the usage and dominant shares
of what a live cluster runs (from the RM's REST API, no scheduler internals), and the outcome DRF
should reach by progressive filling over the pooled cluster (Ghodsi et al.)."""
from __future__ import annotations

from collections import defaultdict
from typing import Any

RESOURCES = ("memory-mb", "vcores", "gpu-mem")


def queue_usage(containers: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    usage: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(RESOURCES, 0))
    for c in containers.values():
        for r in RESOURCES:
            usage[c["queue"]][r] += c["resources"].get(r, 0)
    return dict(usage)


def dominant_share(usage: dict[str, int], capacity: dict[str, int]) -> float:
    return max(usage.get(r, 0) / capacity[r] for r in RESOURCES if capacity.get(r))


def fits_somewhere(request: dict[str, int], free_by_node: dict[str, dict[str, int]]) -> bool:
    return any(all(free.get(r, 0) >= request.get(r, 0) for r in RESOURCES) for free in free_by_node.values())


def progressive_filling(total: dict[str, int], queues: dict[str, dict]) -> dict[str, int]:
    """queues: name -> {"weight", "used" (already running, e.g. AMs), "task" (shape), "pending"}.
    Returns the number of tasks each queue gets: each next one to the queue of the lowest weighted
    dominant share whose task still fits."""
    used = {r: sum(q["used"].get(r, 0) for q in queues.values()) for r in total}
    usage = {n: dict(q["used"]) for n, q in queues.items()}
    got = dict.fromkeys(queues, 0)
    while True:
        fits = [n for n, q in queues.items() if got[n] < q["pending"]
                and all(used[r] + q["task"].get(r, 0) <= total[r] for r in total)]
        if not fits:
            return got
        n = min(fits, key=lambda n: (dominant_share(usage[n], total) / queues[n]["weight"], n))
        for r, v in queues[n]["task"].items():
            used[r] += v
            usage[n][r] = usage[n].get(r, 0) + v
        got[n] += 1
