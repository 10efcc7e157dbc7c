from __future__ import annotations

from pathlib import Path

import pytest

from tests.queues import QUEUES_FILE as QUEUES


@pytest.fixture
def queues_file(tmp_path) -> Path:
    path = tmp_path / "queues.yaml"
    path.write_text(QUEUES.read_text())
    return path
