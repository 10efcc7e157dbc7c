"""The expected outcome of weighted DRF, computed independently of the core: progressive filling
over the pooled cluster (Ghodsi et al.), each queue's next container going to the queue with the
lowest weighted dominant share whose container still fits."""
from __future__ import annotations


def weighted_share(usage: dict[str, int], total: dict[str, int], weight: float) -> float:
    return max(usage.get(r, 0) / total[r] for r in total if total[r]) / weight


def progressive_filling(total: dict[str, int], queues: dict[str, dict]) -> dict[str, int]:
    """queues: name -> {"weight", "used" (already running, e.g. AMs), "task" (shape), "pending"}.
    Returns the number of tasks each queue gets."""
    used = {r: sum(q["used"].get(r, 0) for q in queues.values()) for r in total}
    usage = {n: dict(q["used"]) for n, q in queues.items()}
    got = dict.fromkeys(queues, 0)
    while True:
        fits = [n for n, q in queues.items() if got[n] < q["pending"]
                and all(used[r] + q["task"].get(r, 0) <= total[r] for r in total)]
        if not fits:
            return got
        n = min(fits, key=lambda n: (weighted_share(usage[n], total, queues[n]["weight"]), n))
        for r, v in queues[n]["task"].items():
            used[r] += v
            usage[n][r] = usage[n].get(r, 0) + v
        got[n] += 1
