"""Helpers for the simulator tests: write input files, run the CLI sub-commands."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from scheduler.sim import cli
from scheduler.sim.formats import DEFAULT_AM

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "conf" / "scenarios"


def run_cli(argv: list[str]) -> int:
    """Parses argv with the simulator's sub-commands exactly as `yarn-drf` registers them."""
    parser = argparse.ArgumentParser(prog="yarn-drf")
    cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


class Files:
    def __init__(self, root: Path) -> None:
        self.root = root

    def write(self, name: str, text: str) -> str:
        path = self.root / name
        path.write_text(text)
        return str(path)

    def workload(self, name: str, apps: list[dict]) -> str:
        return self.write(name, "".join(json.dumps(a) + "\n" for a in apps))

    def simulate(self, queues: str, cluster: str, workload: str, *extra: str) -> dict:
        out = self.root / "out.json"
        code = run_cli(["simulate", "--queues", queues, "--cluster", cluster, "--workload", workload,
                        "--json", str(out), "--quiet", *extra])
        assert code == 0
        return json.loads(out.read_text())


@pytest.fixture
def files(tmp_path: Path) -> Files:
    return Files(tmp_path)


TWO_QUEUES = """\
queues:
  root:
    children:
      a: {weight: 1}
      b: {weight: 1}
"""


def app(app_id: str, queue: str, submit: float, stages: list[tuple[int, dict, float]], **extra) -> dict:
    line = {"id": app_id, "queue": queue, "user": "u", "submit": submit, "am": DEFAULT_AM,
            "stages": [{"tasks": n, "resources": r, "duration": d} for n, r, d in stages]}
    line.update(extra)
    return line
