"""A seeded generator of mixed CPU-, memory- and GPU-memory-heavy applications.

Each app picks its kind by the --mix weights, then (all from one random.Random(seed)):
- kind shapes per task: cpu <4 vcores, 2 GiB>; memory <1 vcore, 12 GiB>;
  gpu <2 vcores, 4 GiB, gpu-mem 8 GiB> (GPU-memory in MiB, YARN resource `gpu-mem`)
- 1 or 2 stages (a second, reduce-like stage with a quarter of the tasks, at least 1)
- tasks per stage uniform in 5..60, task duration uniform in 20..200 s
- queue uniform over --queues; user `<kind>-user<0..3>`; arrivals Poisson with mean gap --arrival-s.
The same seed and arguments always give the same file.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

from scheduler.sim.formats import DEFAULT_AM, SimInputError

KINDS = {
    "cpu": {"vcores": 4, "memory-mb": 2048},
    "memory": {"vcores": 1, "memory-mb": 12288},
    "gpu": {"vcores": 2, "memory-mb": 4096, "gpu-mem": 8192},
}


def parse_mix(text: str) -> dict[str, float]:
    """"cpu=1,memory=2,gpu=0" -> weights per kind."""
    mix: dict[str, float] = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        name = name.strip()
        if name not in KINDS:
            raise SimInputError([f"--mix: unknown kind {name!r} (kinds: {', '.join(KINDS)})"])
        try:
            weight = float(value)
        except ValueError:
            raise SimInputError([f"--mix: {name}: weight must be a number, got {value!r}"]) from None
        if weight < 0:
            raise SimInputError([f"--mix: {name}: weight must be >= 0"])
        mix[name] = weight
    if not any(mix.values()):
        raise SimInputError(["--mix: at least one kind needs a weight above 0"])
    return mix


def generate_apps(*, apps: int, queues: list[str], mix: dict[str, float], arrival_s: float,
                  seed: int) -> list[dict]:
    if apps < 1:
        raise SimInputError([f"--apps: must be >= 1, got {apps}"])
    if not queues:
        raise SimInputError(["--queues: give at least one queue"])
    if arrival_s < 0:
        raise SimInputError([f"--arrival-s: must be >= 0, got {arrival_s}"])
    rng = random.Random(seed)
    kinds = [k for k in KINDS if mix.get(k, 0) > 0]
    weights = [mix[k] for k in kinds]
    out, now = [], 0.0
    for i in range(apps):
        kind = rng.choices(kinds, weights)[0]
        tasks = rng.randint(5, 60)
        stages = [{"tasks": tasks, "resources": KINDS[kind], "duration": round(rng.uniform(20, 200), 1)}]
        if rng.random() < 0.5:
            stages.append({"tasks": max(1, tasks // 4), "resources": KINDS[kind],
                           "duration": round(rng.uniform(20, 200), 1)})
        out.append({"id": f"app{i:05d}-{kind}", "queue": rng.choice(queues),
                    "user": f"{kind}-user{rng.randrange(4)}", "submit": round(now, 3), "am": dict(DEFAULT_AM), "stages": stages})
        now += rng.expovariate(1.0 / arrival_s) if arrival_s > 0 else 0.0
    return out


def generate(out: str | Path, **options) -> int:
    lines = generate_apps(**options)
    with open(out, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")
    return len(lines)
