"""The queue configuration: YAML in, a validated immutable tree out, or every error at once.

Structure is checked by a JSON Schema (jsonschema collects all violations with their paths);
meaning (resource names, min <= max, placement targets, ACL syntax) is checked by a second
pass over the same document. Each error is "field.path: problem (line N)". A file with any
error is rejected whole, so a bad file is never partly applied.
"""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from scheduler.acl import Acl, AclSyntaxError
from scheduler.resources import DEFAULT_TYPES, NAME_PATTERN

DEFAULT_STARVATION_TIMEOUT_S = 60.0
ORDERS = ("drf", "fifo")
RULES = ("specified", "user", "primary-group", "default", "reject")
QUEUE_NAME = r"^[A-Za-z0-9_-]+$"
PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")

_RESOURCE_NAME = {"type": "string", "pattern": NAME_PATTERN.pattern}
_AMOUNTS = {
    "type": "object",
    "propertyNames": _RESOURCE_NAME,
    "additionalProperties": {"type": "integer", "minimum": 0},
}
_MAX_AMOUNT = {
    "if": {"type": "string"},
    "then": {"pattern": PERCENT.pattern},
    "else": {"type": "integer", "minimum": 0},
}
_WEIGHT_VALUE = {"type": "number", "exclusiveMinimum": 0}
SCHEMA: dict[str, Any] = {
    "$defs": {
        "queue": {
            "type": ["object", "null"],
            "additionalProperties": False,
            "properties": {
                "weight": {
                    "if": {"type": "object"},
                    "then": {"propertyNames": _RESOURCE_NAME, "additionalProperties": _WEIGHT_VALUE},
                    "else": _WEIGHT_VALUE,
                },
                "min": _AMOUNTS,
                "max": {
                    "if": {"type": "string"},
                    "then": {"pattern": PERCENT.pattern},
                    "else": {
                        "type": "object",
                        "propertyNames": _RESOURCE_NAME,
                        "additionalProperties": _MAX_AMOUNT,
                    },
                },
                "max-running-apps": {"type": "integer", "minimum": 0},
                "order": {"enum": list(ORDERS)},
                "submit-acl": {"type": "string"},
                "admin-acl": {"type": "string"},
                "children": {
                    "type": "object",
                    "propertyNames": {"pattern": QUEUE_NAME},
                    "additionalProperties": {"$ref": "#/$defs/queue"},
                },
            },
        },
        "rule": {
            "type": "object",
            "additionalProperties": False,
            "required": ["rule"],
            "properties": {
                "rule": {"enum": list(RULES)},
                "create": {"type": "boolean"},
                "parent": {"type": "string"},
                "queue": {"type": "string"},
            },
        },
    },
    "type": "object",
    "additionalProperties": False,
    "required": ["queues"],
    "properties": {
        "resources": {"type": "array", "items": _RESOURCE_NAME, "minItems": 1, "uniqueItems": True},
        "reservation": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"starvation-timeout-s": {"type": ["number", "null"], "exclusiveMinimum": 0}},
        },
        "placement": {"type": "array", "items": {"$ref": "#/$defs/rule"}},
        "queues": {
            "type": "object",
            "additionalProperties": False,
            "required": ["root"],
            "properties": {"root": {"$ref": "#/$defs/queue"}},
        },
    },
}
_VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


class ConfigError(ValueError):
    """An invalid configuration; `errors` holds one "path: problem" line per fault."""

    def __init__(self, errors: list[str], source: str = "<config>") -> None:
        self.errors = errors
        self.source = source
        super().__init__(f"{source}: {len(errors)} error(s)\n" + "\n".join(f"  {e}" for e in errors))


@dataclass(frozen=True)
class PlacementRule:
    rule: str
    create: bool = False
    parent: str = "root"
    queue: str | None = None


@dataclass(frozen=True)
class QueueSpec:
    """One configured queue. `max` values are ints (absolute) or floats in (0, 1] (cluster fraction)."""

    path: str
    weight: float | dict[str, float] = 1.0
    min: dict[str, int] = field(default_factory=dict)
    max: dict[str, int | float] = field(default_factory=dict)
    max_fraction: float | None = None
    max_running_apps: int | None = None
    order: str = "drf"
    submit_acl: Acl = field(default_factory=lambda: Acl(""))
    admin_acl: Acl = field(default_factory=lambda: Acl(""))
    children: tuple[QueueSpec, ...] = ()
    parent: bool = False  # declared with `children:` (possibly empty, for queues placement creates)

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1]

    @property
    def is_leaf(self) -> bool:
        return not self.children and not self.parent

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True)
class QueueConfig:
    root: QueueSpec
    resources: tuple[str, ...] | None = None
    starvation_timeout_s: float | None = DEFAULT_STARVATION_TIMEOUT_S
    placement: tuple[PlacementRule, ...] = ()
    source: str = "<config>"

    def queues(self) -> dict[str, QueueSpec]:
        return {q.path: q for q in self.root.walk()}

    def resource_types(self) -> tuple[str, ...]:
        return self.resources or DEFAULT_TYPES

    def check_resources(self, names: tuple[str, ...]) -> None:
        """Raises ConfigError if a queue names a resource type outside `names`."""
        errors = []
        for q in self.root.walk():
            prefix = "queues." + ".children.".join(q.path.split("."))
            for key, values in (("weight", q.weight), ("min", q.min), ("max", q.max)):
                if isinstance(values, dict):
                    for res in values:
                        if res not in names:
                            errors.append(f"{prefix}.{key}.{res}: unknown resource type "
                                          f"(the cluster has: {', '.join(names)})")
        if errors:
            raise ConfigError(errors, self.source)


def load_config(path: str | Path) -> QueueConfig:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError([f"cannot read file: {exc.strerror}"], str(path)) from exc
    return parse_config(text, source=str(path))


def parse_config(text: str, source: str = "<config>") -> QueueConfig:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError([f"{where}invalid YAML: {problem}"], source) from exc
    lines = _line_numbers(node)
    if not isinstance(doc, dict):
        raise ConfigError(["(top level): must be a mapping with a 'queues' key"], source)

    errors = [_describe(e, lines) for e in _VALIDATOR.iter_errors(doc)]
    errors += _Semantics(doc, lines).check()
    if errors:
        raise ConfigError(sorted(set(errors), key=_line_of), source)
    return _build(doc, source)


def _line_of(error: str) -> tuple[int, str]:
    """Sort key: errors in the order of the file, those without a line first."""
    m = re.search(r"\(line (\d+)\)$", error)
    return (int(m.group(1)) if m else 0, error)


# ---------------------------------------------------------------- error reporting

def _line_numbers(node: yaml.Node | None, path: tuple = (), out: dict | None = None) -> dict:
    """Maps each path in the document to its 1-based line, so errors can point into the file."""
    out = {} if out is None else out
    if node is None:
        return out
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _line_numbers(value, path + (key.value,), out)
            out[path + (key.value,)] = key.start_mark.line + 1  # point at the key, not its value
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _line_numbers(item, path + (i,), out)
    return out


def _fmt_path(path) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def _at(path, lines: dict, message: str) -> str:
    key = tuple(str(p) if not isinstance(p, int) else p for p in path)
    line = lines.get(key)
    return f"{_fmt_path(path)}: {message}" + (f" (line {line})" if line else "")


def _describe(error: jsonschema.ValidationError, lines: dict) -> str:
    path = list(error.absolute_path)
    kind, value, got = error.validator, error.validator_value, error.instance
    if kind == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        extras = [k for k in got if k not in known] if isinstance(got, dict) else []
        name = extras[0] if extras else "?"
        hint = difflib.get_close_matches(name, known, n=1)
        more = f" (did you mean {hint[0]!r}?)" if hint else f" (known fields: {', '.join(known)})"
        return _at(path + [name], lines, "unknown field" + more)
    if kind == "exclusiveMinimum":
        return _at(path, lines, f"must be > {value}, got {got!r}")
    if kind == "minimum":
        return _at(path, lines, f"must be >= {value}, got {got!r}")
    if kind == "type":
        wanted = " or ".join(value) if isinstance(value, list) else value
        return _at(path, lines, f"must be {_article(wanted)}, got {got!r}")
    if kind == "enum":
        return _at(path, lines, f"must be one of {', '.join(map(str, value))}; got {got!r}")
    if kind == "required":
        return _at(path, lines, error.message.replace("'", "", 2).replace(" is a required property",
                                                                            ": required field is missing"))
    if kind == "pattern" and value == PERCENT.pattern:
        return _at(path, lines, f"must be an integer amount or a percentage like '50%', got {got!r}")
    if kind == "pattern" and value == QUEUE_NAME:
        return _at(path, lines, f"queue name {got!r} may only hold letters, digits, '_' and '-'")
    if kind == "pattern":
        return _at(path, lines, f"{got!r} is not a valid resource type name")
    if kind == "propertyNames":
        return _at(path, lines, error.message)
    if kind == "uniqueItems":
        return _at(path, lines, f"has duplicates: {got!r}")
    if kind == "minItems":
        return _at(path, lines, "must not be empty")
    return _at(path, lines, error.message)


def _article(word: str) -> str:
    nouns = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "an integer",
             "number": "a number", "boolean": "true or false", "null": "empty"}
    return " or ".join(nouns.get(w, w) for w in word.split(" or "))


# ---------------------------------------------------------------- meaning

class _Semantics:
    """Checks that need more than the schema; tolerant of parts the schema already rejected."""

    def __init__(self, doc: dict, lines: dict) -> None:
        self.doc, self.lines, self.errors = doc, lines, []
        resources = doc.get("resources")
        self.known = tuple(resources) if _is_str_list(resources) else None

    def check(self) -> list[str]:
        queues = self.doc.get("queues")
        root = queues.get("root") if isinstance(queues, dict) else None
        paths: dict[str, bool] = {}
        if isinstance(root, dict) or root is None:
            self._queue(root or {}, "root", ["queues", "root"], paths)
            for key in ("weight", "min", "max"):
                if isinstance(root, dict) and key in root:
                    self._err(["queues", "root", key], "not allowed on root (it has no siblings; the "
                                                        "cluster is its limit)")
        self._placement(paths)
        return self.errors

    def _err(self, path, message: str) -> None:
        self.errors.append(_at(path, self.lines, message))

    def _names(self, values, path) -> None:
        if self.known is None or not isinstance(values, dict):
            return
        for res in values:
            if isinstance(res, str) and res not in self.known:
                self._err(path + [res], f"unknown resource type (resources: {', '.join(self.known)})")

    def _queue(self, q: dict, qpath: str, path: list, paths: dict[str, bool]) -> None:
        children = q.get("children")
        paths[qpath] = isinstance(children, dict)
        self._names(q.get("weight"), path + ["weight"])
        self._names(q.get("min"), path + ["min"])
        self._names(q.get("max"), path + ["max"])
        minimum, maximum = q.get("min"), q.get("max")
        if isinstance(maximum, dict):
            for res, amount in maximum.items():
                m = PERCENT.match(amount) if isinstance(amount, str) else None
                if m and not 0 < float(m.group(1)) <= 100:
                    self._err(path + ["max", res], f"percentage must be in (0, 100], got {amount!r}")
                elif (isinstance(amount, int) and isinstance(minimum, dict)
                      and isinstance(minimum.get(res), int) and minimum[res] > amount):
                    self._err(path + ["min", res], f"min {minimum[res]} is above max {amount}")
        elif isinstance(maximum, str):
            m = PERCENT.match(maximum)
            if m and not 0 < float(m.group(1)) <= 100:
                self._err(path + ["max"], f"percentage must be in (0, 100], got {maximum!r}")
        if isinstance(q.get("weight"), float) and not math.isfinite(q["weight"]):
            self._err(path + ["weight"], f"must be a finite number, got {q['weight']!r}")
        for key in ("submit-acl", "admin-acl"):
            if isinstance(q.get(key), str):
                try:
                    Acl(q[key])
                except AclSyntaxError as exc:
                    self._err(path + [key], str(exc))
        if isinstance(children, dict):
            for name, child in children.items():
                if isinstance(child, dict) or child is None:
                    self._queue(child or {}, f"{qpath}.{name}", path + ["children", name], paths)

    def _placement(self, paths: dict[str, bool]) -> None:
        rules = self.doc.get("placement")
        if not isinstance(rules, list):
            return
        for i, rule in enumerate(rules):
            if not isinstance(rule, dict):
                continue
            where = ["placement", i]
            kind = rule.get("rule")
            if kind in ("user", "primary-group"):
                parent = rule.get("parent", "root")
                if isinstance(parent, str) and paths.get(parent) is None:
                    self._err(where + ["parent"], f"queue {parent!r} does not exist")
                elif isinstance(parent, str) and not paths[parent] and parent != "root":
                    self._err(where + ["parent"], f"{parent!r} is a leaf queue; a parent must have children")
            elif kind == "default":
                target = rule.get("queue")
                if not isinstance(target, str):
                    self._err(where, "the default rule needs 'queue' (a leaf queue path)")
                elif target in paths and paths[target]:
                    self._err(where + ["queue"], f"{target!r} is a parent queue; apps go to leaves")
                elif target not in paths and not rule.get("create"):
                    self._err(where + ["queue"], f"queue {target!r} does not exist (set create: true to "
                                                 "create it on first use)")
            elif kind in ("specified", "reject") and "queue" in rule:
                self._err(where + ["queue"], f"not used by the {kind} rule")
            if kind == "reject" and i != len(rules) - 1:
                self._err(where, "rules after 'reject' can never match")


def _is_str_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# ---------------------------------------------------------------- building

def _build(doc: dict, source: str) -> QueueConfig:
    reservation = doc.get("reservation") or {}
    timeout = reservation.get("starvation-timeout-s", DEFAULT_STARVATION_TIMEOUT_S)
    rules = doc.get("placement")
    if rules is None:
        rules = [{"rule": "specified"}, {"rule": "default", "queue": "root.default"}]
    return QueueConfig(
        root=_build_queue(doc["queues"].get("root") or {}, "root"),
        resources=tuple(doc["resources"]) if doc.get("resources") else None,
        starvation_timeout_s=None if timeout is None else float(timeout),
        placement=tuple(
            PlacementRule(rule=r["rule"], create=r.get("create", False), parent=r.get("parent", "root"),
                          queue=r.get("queue"))
            for r in rules
        ),
        source=source,
    )


def _build_queue(q: dict, path: str) -> QueueSpec:
    weight = q.get("weight", 1.0)
    maximum = q.get("max") or {}
    max_fraction = None
    if isinstance(maximum, str):
        max_fraction, maximum = float(PERCENT.match(maximum).group(1)) / 100, {}
    limits: dict[str, int | float] = {}
    for res, amount in maximum.items():
        m = PERCENT.match(amount) if isinstance(amount, str) else None
        limits[res] = float(m.group(1)) / 100 if m else int(amount)
    default_acl = "*" if path == "root" else ""
    return QueueSpec(
        path=path,
        weight={k: float(v) for k, v in weight.items()} if isinstance(weight, dict) else float(weight),
        min={k: int(v) for k, v in (q.get("min") or {}).items()},
        max=limits,
        max_fraction=max_fraction,
        max_running_apps=q.get("max-running-apps"),
        order=q.get("order", "drf"),
        submit_acl=Acl(q.get("submit-acl", default_acl)),
        admin_acl=Acl(q.get("admin-acl", default_acl)),
        children=tuple(_build_queue(child or {}, f"{path}.{name}")
                       for name, child in (q.get("children") or {}).items()),
        parent=isinstance(q.get("children"), dict),
    )
