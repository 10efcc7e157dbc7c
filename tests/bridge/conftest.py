from __future__ import annotations

from pathlib import Path

import pytest

QUEUES = Path(__file__).resolve().parents[1] / "integration" / "queues.yaml"


@pytest.fixture
def queues_file(tmp_path) -> Path:
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES.read_text())
    return path
