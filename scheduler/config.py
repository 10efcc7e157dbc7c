"""The queue configuration: YAML in, a validated immutable tree out, or every error at once.

The YAML is read within limits (scheduler.bounded_yaml: size, nodes with aliases expanded,
nesting, string keys once each). Structure is then checked by a JSON Schema (jsonschema collects
all violations with their paths); meaning (resource names, min <= max, number ranges, placement
targets) by a second pass over the same document. Each error is "field.path: problem (line N)",
repeating at most a clipped part of any value. A file with any error is rejected whole, so a bad
file is never partly applied; whatever is accepted, the core and the shim can run.
"""
from __future__ import annotations

import difflib
import logging
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import jsonschema

from scheduler.acl import NOBODY, Acl
from scheduler.bounded_yaml import MAX_BYTES, YamlRefused, at, read_yaml
from scheduler.echo import brief
from scheduler.resources import DEFAULT_TYPES, NAME_PATTERN

log = logging.getLogger("yarn_drf.config")

DEFAULT_STARVATION_TIMEOUT_S = 60.0
DEFAULT_MAX_AM_SHARE = 0.5  # FairScheduler's maxAMShare default
# The `preemption:` section's keys and defaults (docs/design.md, "Preemption toward the targets"; docs/queues.md): a public interface.
PREEMPTION_DEFAULTS: dict[str, Any] = {
    "enabled": False, "observe-only": False, "fair-share-timeout-s": 30, "min-share-timeout-s": 15,
    "threshold": 0.8, "grace-s": 15, "max-per-round": "10%",
}
ORDERS = ("drf", "fifo")
RULES = ("specified", "user", "primary-group", "default", "reject")
QUEUE_NAME = r"^[A-Za-z0-9_-]+\Z"
QUEUE_PATH = r"^root(\.[A-Za-z0-9_-]+)*\Z"
PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")
# Every integer (amounts, min, max, max-running-apps) and the timeout: exact in a double, so the
# core's float arithmetic and the shim's Java long agree on it.
MAX_AMOUNT = 2**53
# Weights: shares are usage / (capacity * weight); this range keeps every share finite and nonzero.
MIN_WEIGHT, MAX_WEIGHT = 1e-6, 1e6
# Locality delays: a request that should wait longer than this for its nodes should not relax
# locality at all (relax-locality false), and a larger value is more likely a unit mistake (ms).
MAX_LOCALITY_DELAY_S = 3600
# YARN's node label names (CommonNodeLabelsManager.LABEL_PATTERN, at most 255 characters); "*" in
# accessible-node-labels names every label, as in CapacityScheduler.
LABEL_NAME = r"^[0-9A-Za-z][0-9A-Za-z_-]{0,254}\Z"
ALL_LABELS = "*"
MAX_QUEUES = 5_000
MAX_ERRORS = 50  # listed; the rest are counted

_RESOURCE_NAME = {"type": "string", "pattern": NAME_PATTERN.pattern}
_INTEGER = {"type": "integer", "minimum": 0, "maximum": MAX_AMOUNT}
_AMOUNTS = {
    "type": "object",
    "propertyNames": _RESOURCE_NAME,
    "additionalProperties": _INTEGER,
}
_MAX_AMOUNT = {
    "if": {"type": "string"},
    "then": {"pattern": PERCENT.pattern},
    "else": _INTEGER,
}
_WEIGHT_VALUE = {"type": "number", "exclusiveMinimum": 0}
# Every container holds some memory and CPU: a max-container of 0 for these would refuse every ask.
CONTAINER_FLOOR_TYPES = ("memory-mb", "vcores")
# Hadoop takes user names as the OS gives them: anything but whitespace, within reason.
USER_NAME = r"^\S{1,256}\Z"
_USER_LIMIT_FIELDS = {"max-running-apps": _INTEGER, "weight": _WEIGHT_VALUE}
_USER_LIMIT = {"type": "object", "additionalProperties": False, "properties": _USER_LIMIT_FIELDS}
_USER_LIMITS = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        **_USER_LIMIT_FIELDS,
        "users": {
            "type": "object",
            "propertyNames": {"pattern": USER_NAME},
            "additionalProperties": _USER_LIMIT,
        },
    },
}
_QUEUE_PATH = {"type": "string", "pattern": QUEUE_PATH}
_LOCALITY_DELAY = {"type": "number", "minimum": 0, "maximum": MAX_LOCALITY_DELAY_S}
_LABEL = {"type": "string", "pattern": LABEL_NAME}
_ACCESSIBLE_LABELS = {
    "if": {"type": "string"},
    "then": {"const": ALL_LABELS},
    "else": {"type": "array", "maxItems": 1000, "items": {"anyOf": [_LABEL, {"const": ALL_LABELS}]}},
}
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
                "max-container": _AMOUNTS,
                "max-running-apps": _INTEGER,
                "max-am-share": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                "node-locality-delay-s": _LOCALITY_DELAY,
                "rack-locality-delay-s": _LOCALITY_DELAY,
                "accessible-node-labels": _ACCESSIBLE_LABELS,
                "default-node-label-expression": {"anyOf": [_LABEL, {"const": ""}]},
                "user-limits": _USER_LIMITS,
                "order": {"enum": list(ORDERS)},
                "preemptable": {"type": "boolean"},
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
                "parent": _QUEUE_PATH,
                "queue": _QUEUE_PATH,
            },
        },
    },
    "type": "object",
    "additionalProperties": False,
    "required": ["queues"],
    "properties": {
        # uniqueness is checked in _Semantics: jsonschema's check is quadratic on mixed types
        "resources": {"type": "array", "items": _RESOURCE_NAME, "minItems": 1, "maxItems": 100},
        "reservation": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"starvation-timeout-s": {"type": ["number", "null"], "exclusiveMinimum": 0,
                                                    "maximum": MAX_AMOUNT}},
        },
        "preemption": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "enabled": {"type": "boolean"},
                "observe-only": {"type": "boolean"},
                "fair-share-timeout-s": {"type": "number", "minimum": 0, "maximum": MAX_AMOUNT},
                "min-share-timeout-s": {"type": "number", "minimum": 0, "maximum": MAX_AMOUNT},
                "threshold": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
                "grace-s": {"type": "number", "minimum": 0, "maximum": MAX_AMOUNT},
                "max-per-round": {"type": "string", "pattern": PERCENT.pattern},
            },
        },
        "placement": {"type": "array", "items": {"$ref": "#/$defs/rule"}, "maxItems": 100},
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
    """An invalid configuration; `errors` holds one "path: problem" line per fault (at most
    MAX_ERRORS of them, then one line counting the rest)."""

    def __init__(self, errors: list[str], source: str = "<config>") -> None:
        if len(errors) > MAX_ERRORS:
            errors = errors[:MAX_ERRORS] + [f"(top level): {len(errors) - MAX_ERRORS:,} more error(s) not shown"]
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
class PreemptionSpec:
    """The `preemption:` section (scheduler.preemption acts on it). `max_per_round` is a fraction
    of the cluster in (0, 1]."""

    enabled: bool = PREEMPTION_DEFAULTS["enabled"]
    observe_only: bool = PREEMPTION_DEFAULTS["observe-only"]
    fair_share_timeout_s: float = PREEMPTION_DEFAULTS["fair-share-timeout-s"]
    min_share_timeout_s: float = PREEMPTION_DEFAULTS["min-share-timeout-s"]
    threshold: float = PREEMPTION_DEFAULTS["threshold"]
    grace_s: float = PREEMPTION_DEFAULTS["grace-s"]
    max_per_round: float = 0.1


@dataclass(frozen=True)
class UserLimit:
    """What one user of a leaf may run, and its weight among the leaf's users."""

    weight: float = 1.0
    max_running_apps: int | None = None  # None: unlimited


@dataclass(frozen=True)
class UserLimits:
    """A leaf's `user-limits`: the default limit of each of its users, and named overrides
    (each key a named user leaves out is the default's)."""

    default: UserLimit = UserLimit()
    users: dict[str, UserLimit] = field(default_factory=dict)

    def of(self, user: str) -> UserLimit:
        return self.users.get(user, self.default)

    def without_app_limits(self) -> UserLimits:
        return UserLimits(replace(self.default, max_running_apps=None),
                          {name: replace(u, max_running_apps=None) for name, u in self.users.items()})


@dataclass(frozen=True)
class QueueSpec:
    """One configured queue. `max` values are ints (absolute) or floats in (0, 1] (cluster fraction)."""

    path: str
    weight: float | dict[str, float] = 1.0
    min: dict[str, int] = field(default_factory=dict)
    max: dict[str, int | float] = field(default_factory=dict)
    max_fraction: float | None = None
    # the largest container an app here may ask for, per resource type, as written; a type it leaves
    # out is its nearest ancestor's (max_container_of); none at all: YARN's maximum allocation alone
    max_container: dict[str, int] = field(default_factory=dict)
    max_running_apps: int | None = None
    max_am_share: float | None = None  # as written; None: its parent's, else DEFAULT_MAX_AM_SHARE
    # delay scheduling (scheduler.locality), as written; None: its parent's, else the defaults there
    node_locality_delay_s: float | None = None
    rack_locality_delay_s: float | None = None
    # node labels (scheduler.partitions), as written; None: its parent's (root: every label, and
    # the default partition ""). accessible_labels holds label names, or ALL_LABELS alone.
    accessible_labels: frozenset[str] | None = None
    default_label: str | None = None
    user_limits: UserLimits | None = None  # a leaf's users share it by DRF (None: its apps share it directly)
    order: str = "drf"
    submit_acl: Acl = NOBODY  # (one shared value: an Acl never changes; placement creates queues by the thousand)
    admin_acl: Acl = NOBODY
    children: tuple[QueueSpec, ...] = ()
    parent: bool = False  # declared with `children:` (possibly empty, for queues placement creates)
    preemptable: bool = True  # as written; `false` on any ancestor covers the queue too

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


# The settings of every leaf a placement rule creates (and of a dynamic queue re-created for a
# recovered app): the defaults, one spec shared by them all. Such a leaf's path is its queue's
# (model.Queue.path), never its spec's; what it inherits (limits, labels, delays, ACLs) comes from
# its parent when the core builds it, as for any queue without settings of its own.
CREATED = QueueSpec(path="root.*")


@dataclass(frozen=True)
class QueueConfig:
    root: QueueSpec
    resources: tuple[str, ...] | None = None
    starvation_timeout_s: float | None = DEFAULT_STARVATION_TIMEOUT_S
    placement: tuple[PlacementRule, ...] = ()
    source: str = "<config>"
    preemption: PreemptionSpec = PreemptionSpec()

    def queues(self) -> dict[str, QueueSpec]:
        return {q.path: q for q in self.root.walk()}

    def resource_types(self) -> tuple[str, ...]:
        return self.resources or DEFAULT_TYPES

    def check_resources(self, names: tuple[str, ...]) -> None:
        """Raises ConfigError if a queue names a resource type outside `names`."""
        errors = []
        for q in self.root.walk():
            prefix = "queues." + ".children.".join(q.path.split("."))
            for key, values in _vectors(q).items():
                if isinstance(values, dict):
                    for res in values:
                        if res not in names:
                            errors.append(f"{prefix}.{key}.{res}: unknown resource type "
                                          f"(the cluster has: {', '.join(names)})")
        if errors:
            raise ConfigError(errors, self.source)

    def for_cluster(self, names: tuple[str, ...]) -> tuple[QueueConfig, list[str]]:
        """This configuration without what it says of resource types outside `names`, and one line
        per setting left out. A reload naming a type the cluster lacks is refused (check_resources);
        a core rebuilt from YARN's state must run whatever the file says, so it runs without them."""
        ignored: list[str] = []

        def keep(q: QueueSpec) -> QueueSpec:
            prefix = "queues." + ".children.".join(q.path.split("."))
            kept = {}
            for key, values in _vectors(q).items():
                if isinstance(values, dict):
                    ignored.extend(f"{prefix}.{key}.{res}: ignored, the cluster has no resource type {res}"
                                   for res in values if res not in names)
                    kept[key.replace("-", "_")] = {res: v for res, v in values.items() if res in names}
            return replace(q, **kept, children=tuple(keep(c) for c in q.children))

        resources = self.resources
        if resources is not None:
            ignored.extend(f"resources: {res}: ignored, the cluster has no resource type {res}"
                           for res in resources if res not in names)
            resources = tuple(res for res in resources if res in names) or None
        if not ignored:
            return self, []
        return replace(self, root=keep(self.root), resources=resources), ignored


def max_container_of(chain: list[QueueSpec]) -> dict[str, int]:
    """The max-container in force in the last queue of `chain` (root first, down to it): per type,
    the amount of the nearest queue that sets one. The file never lets a queue widen its
    ancestors', so this is also the smallest on the path."""
    limit: dict[str, int] = {}
    for spec in chain:
        limit.update(spec.max_container)
    return limit


def _vectors(q: QueueSpec) -> dict[str, Any]:
    """A queue's settings keyed by resource type, by their names in the file."""
    return {"weight": q.weight, "min": q.min, "max": q.max, "max-container": q.max_container}


def load_config(path: str | Path) -> QueueConfig:
    path = Path(path)
    try:
        with path.open("rb") as f:
            data = f.read(MAX_BYTES + 1)  # one byte more than allowed is enough to refuse it
    except OSError as exc:
        raise ConfigError([f"(top level): cannot read file: {exc.strerror}"], str(path)) from exc
    return parse_config(data, source=str(path))


def parse_config(text: str | bytes, source: str = "<config>") -> QueueConfig:
    """The validated configuration, or ConfigError listing every fault; never another exception."""
    try:
        return _parse(text, source)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 (a bug must still be a refusal, never a traceback in a reload)
        log.exception("checking %s failed", source)
        raise ConfigError([f"(top level): the file could not be checked: {type(exc).__name__}: "
                           f"{brief(str(exc))} (a yarn-drf bug; please report it)"], source) from exc


def _parse(text: str | bytes, source: str) -> QueueConfig:
    try:
        document = read_yaml(text)
    except YamlRefused as exc:
        raise ConfigError(exc.errors, source) from None
    doc, lines = document.value, document.lines
    if not isinstance(doc, dict):
        raise ConfigError(["(top level): must be a mapping with a 'queues' key"], source)
    queues = _count_queues(doc)
    if queues > MAX_QUEUES:  # before the schema, whose cost grows with the tree
        raise ConfigError([_at(["queues"], lines, f"{queues:,} queues; a queue file may have at most "
                                                  f"{MAX_QUEUES:,}")], source)

    non_finite = _non_finite(doc)
    errors = [_at(path, lines, f"must be a finite number, got {value!r}") for path, value in non_finite.items()]
    errors += [_describe(e, lines) for e in _VALIDATOR.iter_errors(doc) if tuple(e.absolute_path) not in non_finite]
    errors += _Semantics(doc, lines).check()
    if errors:
        raise ConfigError(sorted(set(errors), key=_line_of), source)
    return _build(doc, source)


def _line_of(error: str) -> tuple[int, str]:
    """Sort key: errors in the order of the file, those without a line first."""
    m = re.search(r"\(line (\d+)\)$", error) or re.match(r"line (\d+)", error)
    return (int(m.group(1)) if m else 0, error)


def _count_queues(doc: dict) -> int:
    queues = doc.get("queues")
    stack, count = [queues.get("root") if isinstance(queues, dict) else None], 0
    while stack:
        q = stack.pop()
        count += 1
        children = q.get("children") if isinstance(q, dict) else None
        if isinstance(children, dict):
            stack.extend(children.values())
    return count


def _non_finite(doc: Any) -> dict[tuple, float]:
    """Path -> value of every NaN or infinity in the document (YAML's .nan, .inf, 1e999)."""
    found, stack = {}, [((), doc)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            found[path] = value
        elif isinstance(value, dict):
            stack.extend((path + (k,), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((path + (i,), v) for i, v in enumerate(value))
    return found


# ---------------------------------------------------------------- error reporting

def _at(path, lines: dict, message: str) -> str:
    """The error at `path`, with the line of the path or, for a field left out, of its parent."""
    key = tuple(path)
    while key and key not in lines:
        key = key[:-1]
    return at(path, lines.get(key), message)


def _describe(error: jsonschema.ValidationError, lines: dict) -> str:
    path = list(error.absolute_path)
    kind, value, got = error.validator, error.validator_value, brief(error.instance)
    if kind == "additionalProperties":
        known = sorted(error.schema.get("properties", {}))
        extras = [k for k in error.instance if k not in known] if isinstance(error.instance, dict) else []
        name = extras[0] if extras else "?"
        hint = difflib.get_close_matches(name[:100], known, n=1)
        more = f" (did you mean {hint[0]!r}?)" if hint else f" (known fields: {', '.join(known)})"
        return _at(path + [name], lines, "unknown field" + more)
    if kind == "exclusiveMinimum":
        return _at(path, lines, f"must be > {value}, got {got}")
    if kind == "minimum":
        return _at(path, lines, f"must be >= {value}, got {got}")
    if kind == "maximum":
        return _at(path, lines, f"must be at most {value:,}, got {got}")
    if kind == "type":
        wanted = " or ".join(value) if isinstance(value, list) else value
        return _at(path, lines, f"must be {_article(wanted)}, got {got}")
    if kind == "enum":
        return _at(path, lines, f"must be one of {', '.join(map(str, value))}; got {got}")
    if kind == "required":
        missing = [name for name in value if name not in error.instance]
        return _at(path, lines, f"{', '.join(missing)}: required field is missing")
    if kind == "pattern" and value == PERCENT.pattern and path == ["preemption", "max-per-round"]:
        return _at(path, lines, f"must be a percentage of the cluster like '10%', got {got}")
    if kind == "pattern" and value == PERCENT.pattern:
        return _at(path, lines, f"must be an integer amount or a percentage like '50%', got {got}")
    if kind == "pattern" and value == QUEUE_NAME:
        return _at(path, lines, f"queue name {got} may only hold letters, digits, '_' and '-'")
    if kind == "pattern" and value == USER_NAME:
        return _at(path, lines, f"user name {got} must be 1 to 256 characters without whitespace")
    if kind == "pattern" and value == QUEUE_PATH:
        return _at(path, lines, f"must be a queue path like 'root.a.b', got {got}")
    if kind == "pattern":
        return _at(path, lines, f"{got} is not a valid resource type name")
    if kind == "minItems":
        return _at(path, lines, "must not be empty")
    if kind == "maxItems":
        return _at(path, lines, f"may have at most {value} entries")
    return _at(path, lines, brief(error.message))


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
        paths: dict[str, bool] = {}  # queue path -> is it a parent
        if isinstance(root, dict) or root is None:
            self._queue(root or {}, "root", ["queues", "root"], paths, {})
            if not isinstance(root, dict) or not isinstance(root.get("children"), dict):
                self._err(["queues", "root"], "must have children (root is always a parent queue in YARN; "
                                              "'children: {}' lets placement rules create its leaves)")
            for key in ("weight", "min", "max"):
                if isinstance(root, dict) and key in root:
                    self._err(["queues", "root", key], "not allowed on root (it has no siblings; the "
                                                        "cluster is its limit)")
        if self.known is not None and len(set(self.known)) != len(self.known):
            twice = sorted({r for r in self.known if self.known.count(r) > 1})
            self._err(["resources"], f"has duplicates: {brief(', '.join(twice))}")
        self._placement(paths)
        self._preemption()
        if isinstance(root, dict):
            self._labels(root, ["queues", "root"], frozenset({ALL_LABELS}), "")
        return self.errors

    def _labels(self, q: dict, path: list, accessible: frozenset[str], default: str) -> None:
        """A queue's default-node-label-expression, its own or inherited, must be a label it may
        use (CapacityScheduler refuses such a queue at start and at -refreshQueues as well)."""
        own = q.get("accessible-node-labels")
        if isinstance(own, str) or _is_str_list(own):
            accessible = _labels(own) or frozenset()
        written = q.get("default-node-label-expression")
        if isinstance(written, str):
            default = written
        if default and ALL_LABELS not in accessible and default not in accessible:
            where = path + ["default-node-label-expression"] if isinstance(written, str) else path
            shown = ", ".join(sorted(accessible)) or "none"
            self._err(where, f"default-node-label-expression {default!r} is not one of the queue's "
                             f"accessible-node-labels ({shown})")
        children = q.get("children")
        if isinstance(children, dict):
            for name, child in children.items():
                if isinstance(child, dict):
                    self._labels(child, path + ["children", name], accessible, default)

    def _preemption(self) -> None:
        section = self.doc.get("preemption")
        share = section.get("max-per-round") if isinstance(section, dict) else None
        m = PERCENT.match(share) if isinstance(share, str) else None
        if m and not 0 < float(m.group(1)) <= 100:
            self._err(["preemption", "max-per-round"], f"percentage must be in (0, 100], got {brief(share)}")

    def _err(self, path, message: str) -> None:
        self.errors.append(_at(path, self.lines, message))

    def _names(self, values, path) -> None:
        if self.known is None or not isinstance(values, dict):
            return
        for res in values:
            if isinstance(res, str) and res not in self.known:
                self._err(path + [res], f"unknown resource type (resources: {', '.join(self.known)})")

    def _queue(self, q: dict, qpath: str, path: list, paths: dict[str, bool],
               inherited: dict[str, tuple[int, str]]) -> None:
        children = q.get("children")
        paths[qpath] = isinstance(children, dict)
        for key in ("weight", "min", "max", "max-container"):
            self._names(q.get(key), path + [key])
        inherited = self._max_container(q.get("max-container"), path + ["max-container"], qpath, inherited)
        self._weights(q.get("weight"), path + ["weight"])
        self._limits(q.get("min"), q.get("max"), path)
        self._user_limits(q.get("user-limits"), path + ["user-limits"], isinstance(children, dict))
        if isinstance(children, dict):
            for name, child in children.items():
                if isinstance(child, dict) or child is None:
                    self._queue(child or {}, f"{qpath}.{name}", path + ["children", name], paths, inherited)

    def _max_container(self, amounts, path: list, qpath: str,
                       inherited: dict[str, tuple[int, str]]) -> dict[str, tuple[int, str]]:
        """Checks a queue's max-container against its ancestors' (a queue may narrow it, never
        widen it, as CapacityScheduler's maximum-allocation); returns what its children inherit:
        resource -> (amount, the queue that set it)."""
        if not isinstance(amounts, dict):
            return inherited
        mine = dict(inherited)
        for res, amount in amounts.items():
            if not _is_number(amount) or isinstance(amount, float):
                continue  # the schema said what is wrong with it
            if res in CONTAINER_FLOOR_TYPES and amount < 1:
                self._err(path + [res], f"must be at least 1 (every container holds some {res})")
            elif res in inherited and amount > inherited[res][0]:
                limit, where = inherited[res]
                self._err(path + [res], f"{amount} is above {limit}, the max-container {where} sets "
                                        "(a queue may narrow its parent's, not widen it)")
            else:
                mine[res] = (amount, qpath)
        return mine

    def _weights(self, weight, path: list) -> None:
        """Finite weights above 0 (the schema's bound) must also lie in [MIN_WEIGHT, MAX_WEIGHT]."""
        items = weight.items() if isinstance(weight, dict) else [(None, weight)]
        for res, w in items:
            if _is_number(w) and math.isfinite(w) and w > 0 and not MIN_WEIGHT <= w <= MAX_WEIGHT:
                self._err(path + ([res] if res is not None else []),
                          f"must be from {MIN_WEIGHT:g} to {MAX_WEIGHT:g}, got {brief(w)}")

    def _user_limits(self, limits, path: list, parent: bool) -> None:
        if not isinstance(limits, dict):
            return
        if parent:
            self._err(path, "only a leaf queue has users (set user-limits on the leaves below)")
        self._weights(limits.get("weight"), path + ["weight"])
        users = limits.get("users")
        if isinstance(users, dict):
            for name, limit in users.items():
                if isinstance(limit, dict):
                    self._weights(limit.get("weight"), path + ["users", name, "weight"])

    def _limits(self, minimum, maximum, path: list) -> None:
        if isinstance(maximum, dict):
            for res, amount in maximum.items():
                m = PERCENT.match(amount) if isinstance(amount, str) else None
                if m and not 0 < float(m.group(1)) <= 100:
                    self._err(path + ["max", res], f"percentage must be in (0, 100], got {brief(amount)}")
                elif (_is_number(amount) and isinstance(minimum, dict) and _is_number(minimum.get(res))
                      and minimum[res] > amount):
                    self._err(path + ["min", res], f"min {minimum[res]} is above max {amount}")
        elif isinstance(maximum, str):
            m = PERCENT.match(maximum)
            if m and not 0 < float(m.group(1)) <= 100:
                self._err(path + ["max"], f"percentage must be in (0, 100], got {brief(maximum)}")

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
                if _is_queue_path(parent) and parent not in paths:
                    self._err(where + ["parent"], f"queue {brief(parent)} does not exist")
                elif _is_queue_path(parent) and not paths[parent]:
                    self._err(where + ["parent"], f"{brief(parent)} is a leaf queue; a parent must have children")
            elif kind == "default":
                self._default_target(rule, where, paths)
            elif kind in ("specified", "reject") and "queue" in rule:
                self._err(where + ["queue"], f"not used by the {kind} rule")
            if kind == "reject" and i != len(rules) - 1:
                self._err(where, "rules after 'reject' can never match")

    def _default_target(self, rule: dict, where: list, paths: dict[str, bool]) -> None:
        target = rule.get("queue")
        if target is None:
            self._err(where, "the default rule needs 'queue' (a leaf queue path)")
        elif not _is_queue_path(target):
            return  # the schema said what is wrong with it
        elif paths.get(target):
            self._err(where + ["queue"], f"{brief(target)} is a parent queue; apps go to leaves")
        elif target not in paths and not rule.get("create"):
            self._err(where + ["queue"], f"queue {brief(target)} does not exist (set create: true to "
                                         "create it on first use)")
        elif target not in paths and not paths.get(target.rsplit(".", 1)[0]):
            self._err(where + ["queue"], f"cannot create {brief(target)}: its parent "
                                         f"{brief(target.rsplit('.', 1)[0])} is not a parent queue")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_queue_path(value) -> bool:
    return isinstance(value, str) and re.match(QUEUE_PATH, value) is not None


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
        preemption=_build_preemption(doc.get("preemption") or {}),
    )


def _build_preemption(section: dict) -> PreemptionSpec:
    values = {**PREEMPTION_DEFAULTS, **section}
    return PreemptionSpec(
        enabled=values["enabled"], observe_only=values["observe-only"],
        fair_share_timeout_s=float(values["fair-share-timeout-s"]),
        min_share_timeout_s=float(values["min-share-timeout-s"]),
        threshold=float(values["threshold"]), grace_s=float(values["grace-s"]),
        max_per_round=float(PERCENT.match(values["max-per-round"]).group(1)) / 100,
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
    running = q.get("max-running-apps")
    return QueueSpec(
        path=path,
        weight={k: float(v) for k, v in weight.items()} if isinstance(weight, dict) else float(weight),
        min={k: int(v) for k, v in (q.get("min") or {}).items()},
        max=limits,
        max_fraction=max_fraction,
        max_container={k: int(v) for k, v in (q.get("max-container") or {}).items()},
        max_running_apps=None if running is None else int(running),
        max_am_share=None if q.get("max-am-share") is None else float(q["max-am-share"]),
        node_locality_delay_s=_seconds(q.get("node-locality-delay-s")),
        rack_locality_delay_s=_seconds(q.get("rack-locality-delay-s")),
        accessible_labels=_labels(q.get("accessible-node-labels")),
        default_label=q.get("default-node-label-expression"),
        user_limits=None if q.get("user-limits") is None else _build_user_limits(q["user-limits"]),
        order=q.get("order", "drf"),
        submit_acl=Acl(q.get("submit-acl", default_acl)),
        admin_acl=Acl(q.get("admin-acl", default_acl)),
        children=tuple(_build_queue(child or {}, f"{path}.{name}")
                       for name, child in (q.get("children") or {}).items()),
        parent=isinstance(q.get("children"), dict),
        preemptable=q.get("preemptable", True),
    )


def _labels(value: str | list[str] | None) -> frozenset[str] | None:
    if value is None:
        return None
    values = [value] if isinstance(value, str) else value
    return frozenset({ALL_LABELS}) if ALL_LABELS in values else frozenset(values)


def _seconds(value: float | None) -> float | None:
    return None if value is None else float(value)


def _build_user_limits(section: dict) -> UserLimits:
    default = _build_user_limit(section, UserLimit())
    return UserLimits(default, {name: _build_user_limit(limit or {}, default)
                                for name, limit in (section.get("users") or {}).items()})


def _build_user_limit(section: dict, default: UserLimit) -> UserLimit:
    running = section.get("max-running-apps", default.max_running_apps)
    return UserLimit(weight=float(section.get("weight", default.weight)),
                     max_running_apps=None if running is None else int(running))
