"""The queue file the bridge's, the core's and the JVM cluster's tests share (tests/queues.yaml)."""
from __future__ import annotations

from pathlib import Path

QUEUES_FILE = Path(__file__).with_name("queues.yaml")
