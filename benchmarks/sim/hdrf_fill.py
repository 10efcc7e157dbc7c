"""How far whole containers settle from the fluid fill, per tree shape, on many small identical nodes.

Random queue trees (weights 1.00-4.00), every leaf asking for one resource only (vcores, memory or
gpu-mem: the H-DRF starvation shape) in units, on 100 nodes of two units of each: every container
fits anywhere, so what remains is the rule itself. The core settles from empty; each leaf's
allocation is compared with the pooled fluid fill (scheduler.targets, `pooled_allocation`) rounded
to whole containers. Prints, per tree shape, the share of trees where every leaf is within one
container, and the largest distance seen.

Run: .venv/bin/python benchmarks/sim/hdrf_fill.py [--trees 60] [--seed 1]
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scheduler import SchedulerCore, parse_config  # noqa: E402
from scheduler.targets import targets  # noqa: E402

TYPES = ("vcores", "memory-mb", "gpu-mem")
FAMILIES = (  # (levels below root, children per parent at most)
    (1, 4), (2, 2), (2, 3), (2, 4), (3, 2), (3, 3),
)


def tree(rng: random.Random, depth: int, fan: int, lines: list[str], leaves: list[tuple], path: str, indent: int):
    for i in range(rng.randint(2, fan)):
        name = f"{path}.q{len(lines)}"
        lines.append(f"{' ' * indent}{name.rsplit('.', 1)[1]}:")
        lines.append(f"{' ' * indent}  weight: {rng.randint(100, 400) / 100}")
        if depth == 1:
            leaves.append((name, rng.randrange(3), rng.choice([10, 40, 1000])))
        else:
            lines.append(f"{' ' * indent}  children:")
            tree(rng, depth - 1, fan, lines, leaves, name, indent + 4)


def one(rng: random.Random, depth: int, fan: int) -> int:
    """The largest distance, in containers, of a leaf from the fluid fill in one random tree."""
    lines = [f"resources: [{', '.join(TYPES)}]", "reservation: {starvation-timeout-s: null}", "queues:",
             "  root:", "    children:"]
    leaves: list[tuple] = []
    tree(rng, depth, fan, lines, leaves, "root", 6)
    core = SchedulerCore(parse_config("\n".join(lines) + "\n"), resource_types=TYPES)
    for n in range(100):
        core.add_node(f"n{n}", dict.fromkeys(TYPES, 2))
    for path, j, count in leaves:
        core.submit_app(path, "u", path)
        core.update_request(path, 1, {TYPES[j]: 1}, count)
    goal = targets(core)
    while any([a for node in list(core.nodes) for a in core.on_heartbeat(node)]):
        pass
    return max(abs(core.queues[p].usage[j] - round(goal[p].pooled_allocation[j])) for p, j, _ in leaves)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trees", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print(f"{args.trees} random trees per shape, 100 nodes of 2 units of each resource, one-resource leaves")
    print(f"{'levels':>6} {'children':>9} {'within one container':>21} {'largest distance':>17}")
    for depth, fan in FAMILIES:
        worst = [one(rng, depth, fan) for _ in range(args.trees)]
        ok = sum(w <= 1 for w in worst)
        print(f"{depth:>6} {f'2-{fan}':>9} {f'{ok}/{args.trees}':>21} {max(worst):>17}")


if __name__ == "__main__":
    main()
