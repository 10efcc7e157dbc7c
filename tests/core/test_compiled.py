"""The decision path compiled with mypyc decides exactly as the pure-Python modules it is built from."""
from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scheduler import compiled
from scheduler.bench import NODE_SHAPES, SHAPES, queue_yaml
from scheduler.config import parse_config
from scheduler.core import SchedulerCore

ROOT = Path(__file__).resolve().parents[2]


def decisions(seed: int, users: int = 0) -> dict:
    """Every assignment of a busy three-level cluster (containers finishing, asks changing, some
    naming nodes and racks, a short starvation timeout so that nodes get reserved), as a digest,
    with the modules that decided.
    With `users`, every leaf has user-limits and its apps belong to several of that many users."""
    rng = random.Random(seed)
    text, leaves = queue_yaml((3, 3, 4), rng, users)
    clock = [0.0]
    core = SchedulerCore(parse_config("reservation: {starvation-timeout-s: 0.05}\n" + text),
                         clock=lambda: clock[0])
    for n in range(150):
        core.add_node(f"n{n}", NODE_SHAPES[n % len(NODE_SHAPES)], rack=f"/rack{n % 5}")
    for a in range(300):
        core.submit_app(f"app{a}", f"user{a // len(leaves) % users}" if users else "u", leaves[a % len(leaves)])
        shape, count = rng.choice(SHAPES), rng.choice((3, 30, 1000))
        if a % 3 == 0:  # a third name nodes (and their racks), as MapReduce's maps do: delay scheduling decides
            for node in rng.sample(range(150), 3):
                core.update_request(f"app{a}", 1, shape, count, location=f"n{node}")
            core.update_request(f"app{a}", 1, shape, count, location=f"/rack{a % 5}")
        core.update_request(f"app{a}", 1, shape, count)
    held: dict[str, list[str]] = {f"n{n}": [] for n in range(150)}
    digest = hashlib.sha256()
    for step in range(1500):
        clock[0] += 0.01
        node = rng.choice(list(held)) if step >= 150 else f"n{step}"
        for _ in range(min(len(held[node]), rng.randint(0, 3))):
            core.container_finished(held[node].pop(rng.randrange(len(held[node]))))
        if step % 5 == 0:
            core.update_request(f"app{rng.randrange(300)}", rng.choice((1, 2)), rng.choice(SHAPES),
                                rng.choice((0, 2, 20)))
        got = core.on_heartbeat(node) if step % 7 else core.on_nodes([node, *rng.sample(list(held), 4)])
        for a in got:
            held[a.node_id].append(a.assignment_id)
        digest.update(repr([(a.app_id, a.node_id, a.vector) for a in got]).encode())
    counters = core.counters
    return {"digest": digest.hexdigest(), "assignments": counters["assignments"],
            "reservations": counters["reservations_made"], "module": sys.modules[SchedulerCore.__module__].__file__}


def _run(seed: int, users: int, pure: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != compiled.PURE_ENV}
    if pure:
        env[compiled.PURE_ENV] = "1"
    code = f"import json; from tests.core.test_compiled import decisions; print(json.dumps(decisions({seed}, {users})))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("seed, users", [(1, 0), (2, 0), (1, 4)])
def test_the_compiled_core_assigns_exactly_what_the_pure_python_core_assigns(seed, users):
    if compiled.mode() != "compiled" and not os.environ.get(compiled.PURE_ENV):
        pytest.skip(f"no fresh mypyc build ({compiled.mode()})")
    if os.environ.get(compiled.PURE_ENV):
        pytest.skip("YARN_DRF_PURE is set: this test compares the two")
    built, pure = _run(seed, users, pure=False), _run(seed, users, pure=True)
    assert built["module"].endswith(".so") and pure["module"].endswith(".py")
    assert built["assignments"] > 1000 and built["reservations"] > 0  # the workload decides a lot
    assert built == {**pure, "module": built["module"]}


def test_a_build_is_used_only_for_the_sources_it_was_built_from(tmp_path, monkeypatch):
    package = tmp_path / "scheduler"
    shutil.copytree(compiled.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    core = package / "core.py"
    core.write_text(core.read_text() + "\n# an edit\n")
    stamp = tmp_path / "sources.sha256"
    stamp.write_text(compiled.digest(package) + "\n")  # a build of the edited sources
    monkeypatch.delenv(compiled.PURE_ENV, raising=False)
    monkeypatch.setattr(compiled, "STAMP", stamp)
    path: list[str] = []
    assert compiled.select(path) == "pure (build/mypyc is stale: make venv)" and path == []
    stamp.write_text(compiled.digest() + "\n")
    assert compiled.mode() == "compiled"


def test_yarn_drf_pure_keeps_the_pure_python_modules():
    done = subprocess.run([sys.executable, "-c", "import scheduler, scheduler.core as c; print(scheduler.MODE, c.__file__)"],
                          cwd=ROOT, env={**os.environ, compiled.PURE_ENV: "1"}, capture_output=True, text=True,
                          check=True)
    mode, module = done.stdout.split(" (")[0], done.stdout.split()[-1]
    assert mode == "pure" and module.endswith("scheduler/core.py")
