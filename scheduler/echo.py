"""Bounded echoes of untrusted values, for error messages and log lines.

A queue file, a bridge message or an HTTP request may carry a value of any size or depth; an error
about it repeats only a short, flat rendering, so a hostile input never makes a huge message.
"""
from __future__ import annotations

import reprlib
from typing import Any

ECHO = 60  # characters of a value or name an error message repeats

_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = _repr.maxlong = ECHO


def brief(value: Any) -> str:
    """`value`'s repr, bounded in nesting and cut to ECHO characters."""
    try:
        text = _repr.repr(value)
    except ValueError:  # an integer beyond Python's str conversion limit
        return f"<an integer of {value.bit_length()} bits>"
    return text if len(text) <= ECHO else text[:ECHO - 1] + "…"
