"""The operator's dashboard, served by the status server at /ui/: one page, its script and its style.

The files are package data, served as they are: no build step, no third-party code, no CDN. The
page reads the status server's JSON endpoints from its own origin, so it needs neither the write
token nor any exception to the server's Host/Origin checks.
"""
from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import NamedTuple


class Asset(NamedTuple):
    content: bytes
    content_type: str


# /ui/NAME -> (file, content type); nothing else under /ui/ is served.
FILES = {
    "": ("index.html", "text/html; charset=utf-8"),
    "app.js": ("app.js", "text/javascript; charset=utf-8"),
    "style.css": ("style.css", "text/css; charset=utf-8"),
}


def asset(name: str) -> Asset | None:
    """The dashboard file served at /ui/NAME, or None for a name that is not one. Only the names of
    FILES are ever read or kept: anyone can request any name, so a cache keyed by the request would
    grow without bound."""
    return _read(name) if name in FILES else None


@cache  # (bounded: called with the keys of FILES only)
def _read(name: str) -> Asset:
    file, content_type = FILES[name]
    return Asset(files(__package__).joinpath(file).read_bytes(), content_type)
