"""The yarn-site.xml keys the Java shim reads, from ShimConf.java: the one list the docs are checked against."""
from __future__ import annotations

import re
from pathlib import Path

SHIM_CONF = (Path(__file__).resolve().parents[2] / "java_shim" / "src" / "main" / "java" / "org" / "yarndrf" / "shim"
             / "ShimConf.java")
PREFIX = "yarn-drf."


def declared_keys() -> set[str]:
    """Every `yarn-drf.*` key ShimConf declares (`PREFIX + "bridge.port"`, also split over two lines)."""
    keys = {PREFIX + k for k in re.findall(r'PREFIX\s*\+\s*"([a-z0-9.-]+)"', SHIM_CONF.read_text())}
    assert keys, f"no keys found in {SHIM_CONF}"
    return keys
