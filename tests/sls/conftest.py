"""The SLS benchmark's modules live in benchmarks/sls (a script directory, not a package)."""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SLS_DIR = REPO / "benchmarks" / "sls"
if str(SLS_DIR) not in sys.path:
    sys.path.insert(0, str(SLS_DIR))
