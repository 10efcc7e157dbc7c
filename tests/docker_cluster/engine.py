"""Which Docker engine the cluster tooling talks to: the one `docker/engine.sh env` selects (the
project's private engine when it runs, else one the user already has), for the tests, the demo
and the benchmarks alike."""
from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "docker" / "engine.sh"


def engine_host() -> str | None:
    """The engine engine.sh selects (the private one when it runs, else DOCKER_HOST or the default
    socket if it answers), or None when no engine answers. `make images` builds in the engine the
    same rule selects, so a DOCKER_HOST left pointing at another engine does not send the tests
    where the images are not."""
    out = subprocess.run([str(ENGINE), "env"], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return out.stdout.strip().removeprefix("export DOCKER_HOST=")
