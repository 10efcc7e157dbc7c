"""Which Docker engine the cluster tooling talks to: the one `docker/engine.sh env` selects (the
project's private engine when it runs, else one the user already has), for the tests, the demo
and the benchmarks alike."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "docker" / "engine.sh"


def engine_host() -> str | None:
    """DOCKER_HOST as set, else the engine engine.sh selects, or None when no engine answers."""
    if os.environ.get("DOCKER_HOST"):
        return os.environ["DOCKER_HOST"]
    out = subprocess.run([str(ENGINE), "env"], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return out.stdout.strip().removeprefix("export DOCKER_HOST=")
