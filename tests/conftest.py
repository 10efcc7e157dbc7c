"""What the whole suite shares: the check that it leaves nothing behind (tests/leftovers.py), and
the places of the tools that would otherwise write into the home directory."""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# matplotlib keeps its font cache and config under ~/.cache and ~/.config; a build folder keeps
# them between runs (building the font list again would cost each session a second).
os.environ.setdefault("MPLCONFIGDIR", str(REPO / "build" / "matplotlib"))

pytest_plugins = ["tests.leftovers"]
