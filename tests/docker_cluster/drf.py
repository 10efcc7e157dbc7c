"""Weighted DRF measured on a live cluster from the RM REST API (no scheduler internals)."""
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
