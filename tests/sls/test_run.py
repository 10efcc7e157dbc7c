"""run.py's yarn-drf variants (--variant LABEL[:QUEUES][:KEY=VALUE,...])."""
from __future__ import annotations

from pathlib import Path

import pytest
import run


def test_a_variant_names_its_column_queue_file_and_properties(tmp_path: Path) -> None:
    default = tmp_path / "queues.yaml"
    v = run.parse_variant("nodefer::yarn-drf.scheduler.max-deferred-share=0", default)
    assert (v.column, v.queues, v.conf) == (
        "yarn-drf:nodefer", default, {"yarn-drf.scheduler.max-deferred-share": "0"})
    v = run.parse_variant(f"am:{tmp_path / 'am.yaml'}", default)
    assert (v.queues, v.conf) == (tmp_path / "am.yaml", {})


@pytest.mark.parametrize("text", ["", "a/b", "x::memory=1", "x::yarn-drf.k"])
def test_a_variant_without_a_plain_label_or_with_a_property_not_yarn_drfs_is_refused(
        text: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        run.parse_variant(text, tmp_path / "queues.yaml")
