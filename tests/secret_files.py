"""Token files the way `yarn-drf serve` and the shim demand them: private to their owner."""
from __future__ import annotations

from pathlib import Path


def secret_file(path: Path, text: str) -> Path:
    path.touch(mode=0o600)  # private before the secret is in it: serve refuses a file others can read
    path.write_text(text)
    return path
