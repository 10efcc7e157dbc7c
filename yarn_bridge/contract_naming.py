"""How the contract's generators name and document what the spec (yarn_bridge/contract.yaml) states
in Java: class and member names from the spec's snake_case names, and Javadoc from its meanings."""
from __future__ import annotations

import textwrap
from typing import Any


def camel(name: str) -> str:
    """A class name: node_added -> NodeAdded."""
    return "".join(part.capitalize() for part in name.split("_"))


def constant(name: str) -> str:
    """A constant's name: allocation_id -> ALLOCATION_ID."""
    return name.upper()


def member(field: dict[str, Any]) -> str:
    """A field's Java member: the spec's `java`, else its name in camelCase (allocation_id -> allocationId)."""
    return field.get("java") or camel(field["name"])[0].lower() + camel(field["name"])[1:]


def javadoc(indent: str, text: str) -> list[str]:
    """A Javadoc comment of `text`, on one line if it fits in 100 characters, else wrapped."""
    text = " ".join(text.split()).replace("*/", "* /").replace("@", "{@literal @}")
    if len(indent) + len(text) + 7 <= 100:
        return [f"{indent}/** {text} */"]
    wrapped = textwrap.wrap(text, 100 - len(indent) - 3)
    return [f"{indent}/**", *[f"{indent} * {line}" for line in wrapped], f"{indent} */"]
