"""The 10,000-node driver lives in benchmarks/scale (a script directory, not a package)."""
from __future__ import annotations

import sys
from pathlib import Path

SCALE_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "scale"
if str(SCALE_DIR) not in sys.path:
    sys.path.insert(0, str(SCALE_DIR))
