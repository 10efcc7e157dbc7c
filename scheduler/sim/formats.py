"""The simulator's input files: the cluster (YAML) and the workload (JSON lines).

Both loaders check everything before the simulation starts and raise SimInputError with the
file, the line and the field at fault, so a typo never surfaces as a traceback mid-run.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import yaml

from scheduler.cards import GPU_MEM

DEFAULT_AM: dict[str, int] = {"vcores": 1, "memory-mb": 1024}  # what the converters give an app's AM
# A fractional amount is simulated in thousandths of its type's unit (see `fraction_scales`).
FRACTION_SCALE = 1000

Amount = int | Fraction  # a resource amount as read: an integer, or a fraction with <= 3 decimals

# YARN's rule for resource type names (ResourceUtils): optional "ns/" prefix, then a letter.
_RESOURCE_NAME = re.compile(r"^([A-Za-z][\w.-]*/)?[A-Za-z][\w.-]*$")
_NODE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")


class SimInputError(ValueError):
    """Invalid simulator input; `errors` holds one "file:line: field: problem" string each."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class NodeSpec:
    name: str
    resources: dict[str, Amount]
    rack: str
    cards: tuple[int, ...] | None = None  # MiB per GPU card (`gpus:`), None: gpu-mem is one total


@dataclass(frozen=True)
class StageSpec:
    tasks: int
    resources: dict[str, Amount]
    duration: float


@dataclass(frozen=True)
class AppSpec:
    id: str
    queue: str | None
    user: str
    submit: float
    stages: tuple[StageSpec, ...]
    am: dict[str, Amount] | None  # the AM container's size; None: the app has none
    groups: tuple[str, ...] = ()
    priority: int = 0
    line: int = 0
    resubmit: bool = False
    resubmit_of: str | None = None


# --------------------------------------------------------------------------- YAML with lines


def _yaml_with_lines(text: str, source: str) -> tuple[Any, dict[tuple, int]]:
    """Parses YAML and records the 1-based line of every mapping value and sequence item."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark else source
        raise SimInputError([f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}"]) from None
    lines: dict[tuple, int] = {}
    if root is None:
        return None, lines
    constructor = yaml.SafeLoader("")

    def build(node: yaml.Node, path: tuple) -> Any:
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            out = {}
            for key_node, value_node in node.value:
                key = constructor.construct_object(key_node, deep=True)
                out[key] = build(value_node, path + (key,))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [build(item, path + (i,)) for i, item in enumerate(node.value)]
        return constructor.construct_object(node, deep=True)

    return build(root, ()), lines


def _path_str(path: Iterable) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


# --------------------------------------------------------------------------- shared checks


def amount_of(value: Any) -> Amount | None:
    """A resource amount as written: a non-negative integer, or a number with at most 3 decimals
    (exactly: 0.1 is 1/10, and 12.0 is the integer 12); None if it is neither."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    if isinstance(value, int):
        return value
    if not math.isfinite(value):
        return None
    exact = Fraction(repr(value))  # the decimal as written, not the binary float
    if exact.denominator == 1:
        return int(exact)
    return exact if (exact * FRACTION_SCALE).denominator == 1 else None


def _resources(value: Any, where: str, errors: list[str]) -> dict[str, Amount]:
    """Validates a {resource-name: amount} mapping; appends problems to errors."""
    if not isinstance(value, Mapping):
        errors.append(f"{where}: must be a mapping of resource name to amount")
        return {}
    start = len(errors)
    out: dict[str, Amount] = {}
    for name, raw in value.items():
        if not isinstance(name, str) or not _RESOURCE_NAME.match(name):
            errors.append(f"{where}: invalid resource name {name!r}")
            continue
        amount = amount_of(raw)
        if amount is None:
            errors.append(f"{where}.{name}: must be a non-negative integer or a number with at most "
                          f"3 decimals, got {raw!r}")
            continue
        out[name] = amount
    if len(errors) == start and not any(out.values()):
        errors.append(f"{where}: asks for nothing (every amount is 0 or none given)")
    return out


def _check_types(res: Mapping[str, int], allowed: set[str], where: str, what: str, errors: list[str]) -> None:
    for name in res:
        if name not in allowed:
            errors.append(f"{where}: resource {name!r} is not one of the {what}: {', '.join(sorted(allowed))}")


# --------------------------------------------------------------------------- cluster


@dataclass(frozen=True)
class ClusterSpec:
    nodes: tuple[NodeSpec, ...]
    source: str

    def resource_names(self) -> list[str]:
        """Every resource type some node names, in first-seen order."""
        seen: dict[str, None] = {}
        for node in self.nodes:
            seen.update(dict.fromkeys(node.resources))
        return list(seen)

    def capacity(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for node in self.nodes:
            for name, amount in node.resources.items():
                total[name] = total.get(name, 0) + amount
        return total


def parse_cluster(text: str, source: str = "<cluster>") -> ClusterSpec:
    """Parses a cluster file: `nodes: [{name, count, resources, rack}]`.

    A group with count 1 makes one node named `name`; count N > 1 makes `name-1` .. `name-N`.
    """
    data, lines = _yaml_with_lines(text, source)
    errors: list[str] = []

    def where(*path: Any) -> str:
        line = lines.get(tuple(path)) or lines.get(tuple(path[:-1])) or 1
        return f"{source}:{line}: {_path_str(path)}"

    if not isinstance(data, Mapping) or "nodes" not in data:
        raise SimInputError([f"{source}:1: the cluster file must be a mapping with a `nodes` list"])
    for key in data:
        if key != "nodes":
            errors.append(f"{where(key)}: unknown field (the cluster file has only `nodes`)")
    groups = data["nodes"]
    if not isinstance(groups, list) or not groups:
        raise SimInputError([f"{where('nodes')}: must be a non-empty list of node groups"])
    nodes: list[NodeSpec] = []
    names: dict[str, str] = {}
    for i, group in enumerate(groups):
        if not isinstance(group, Mapping):
            errors.append(f"{where('nodes', i)}: must be a mapping with name, count, resources")
            continue
        for key in group:
            if key not in ("name", "count", "resources", "rack", "gpus"):
                errors.append(f"{where('nodes', i, key)}: unknown field (known: name, count, resources, rack, gpus)")
        name = group.get("name")
        if not isinstance(name, str) or not _NODE_NAME.match(name):
            errors.append(f"{where('nodes', i, 'name')}: must be a node name (letters, digits, _ . : -), got {name!r}")
            continue
        count = group.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            errors.append(f"{where('nodes', i, 'count')}: must be a positive integer, got {count!r}")
            continue
        rack = group.get("rack", "/default-rack")
        if not isinstance(rack, str) or not rack.startswith("/"):
            errors.append(f"{where('nodes', i, 'rack')}: must be a rack path starting with '/', got {rack!r}")
            continue
        if "resources" not in group:
            errors.append(f"{where('nodes', i)}: missing `resources`")
            continue
        group_errors: list[str] = []
        res = _resources(group["resources"], where("nodes", i, "resources"), group_errors)
        cards = _cards(group, res, lambda *p: where("nodes", i, *p), group_errors) if "gpus" in group else None
        if group_errors:
            errors.extend(group_errors)
            continue
        if cards is not None:
            res = {**res, GPU_MEM: sum(cards)}
        for n in range(count):
            node_name = name if count == 1 else f"{name}-{n + 1}"
            if node_name in names:
                errors.append(f"{where('nodes', i, 'name')}: node {node_name!r} is already defined ({names[node_name]})")
                break
            names[node_name] = where("nodes", i, "name")
            nodes.append(NodeSpec(node_name, res, rack, cards))
    if errors:
        raise SimInputError(errors)
    return ClusterSpec(tuple(nodes), source)


def _cards(group: Mapping, res: Mapping[str, Amount], where, errors: list[str]) -> tuple[int, ...] | None:
    """A group's `gpus:` (MiB per card), checked against its gpu-mem if that is given too."""
    sizes = group["gpus"]
    if not isinstance(sizes, list) or not sizes:
        errors.append(f"{where('gpus')}: must be a non-empty list of MiB per GPU card, got {sizes!r}")
        return None
    for j, size in enumerate(sizes):
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            errors.append(f"{where('gpus', j)}: must be a positive integer of MiB, got {size!r}")
            return None
    given = res.get(GPU_MEM)
    if given is not None and given != sum(sizes):
        errors.append(f"{where('resources', GPU_MEM)}: {given} is not the sum of the node's gpus "
                      f"({' + '.join(map(str, sizes))} = {sum(sizes)}); give either, or both agreeing")
        return None
    return tuple(sizes)


def load_cluster(path: str | Path) -> ClusterSpec:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SimInputError([f"{path}: cannot read the cluster file: {exc.strerror or exc}"]) from None
    return parse_cluster(text, str(path))


def check_cluster_types(cluster: ClusterSpec, types: list[str]) -> None:
    """A node naming a resource type the queue YAML does not list is an error."""
    errors: list[str] = []
    for node in cluster.nodes:
        _check_types(node.resources, set(types), f"{cluster.source}: node {node.name}",
                     "resource types the queue configuration lists", errors)
    if errors:
        raise SimInputError(errors)


# --------------------------------------------------------------------------- workload

_APP_FIELDS = {"id", "queue", "user", "submit", "stages", "am", "groups", "priority", "resubmit"}
_STAGE_FIELDS = {"tasks", "resources", "duration"}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_app(obj: Any, where: str, errors: list[str]) -> AppSpec | None:
    """Validates one decoded workload line; `where` is "file:line"."""
    if not isinstance(obj, Mapping):
        errors.append(f"{where}: each line must be a JSON object (one application)")
        return None
    start = len(errors)
    for key in obj:
        if key not in _APP_FIELDS:
            errors.append(f"{where}: {key}: unknown field (known: {', '.join(sorted(_APP_FIELDS))})")
    app_id = obj.get("id")
    if not isinstance(app_id, str) or not app_id:
        errors.append(f"{where}: id: must be a non-empty string, got {app_id!r}")
    queue = obj.get("queue")
    if queue is not None and (not isinstance(queue, str) or not queue):
        errors.append(f"{where}: queue: must be a queue name such as root.a, got {queue!r}")
    user = obj.get("user")
    if not isinstance(user, str) or not user:
        errors.append(f"{where}: user: must be a non-empty string, got {user!r}")
    submit = obj.get("submit")
    if not _number(submit) or submit < 0:
        errors.append(f"{where}: submit: must be a number of seconds >= 0, got {submit!r}")
    groups = obj.get("groups", [])
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        errors.append(f"{where}: groups: must be a list of group names")
    priority = obj.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        errors.append(f"{where}: priority: must be an integer, got {priority!r}")
    resubmit = obj.get("resubmit", False)
    if not isinstance(resubmit, bool):
        errors.append(f"{where}: resubmit: must be true or false, got {resubmit!r}")
    am = None
    if "am" not in obj:
        errors.append(f"{where}: am: required: the ApplicationMaster container's size, e.g. "
                      f"{json.dumps(DEFAULT_AM)}, or null for an app without one")
    elif obj["am"] is not None:
        am = _resources(obj["am"], f"{where}: am", errors)
    stages_raw = obj.get("stages")
    stages: list[StageSpec] = []
    if not isinstance(stages_raw, list) or not stages_raw:
        errors.append(f"{where}: stages: must be a non-empty list of stages")
    else:
        for i, stage in enumerate(stages_raw):
            at = f"{where}: stages[{i}]"
            if not isinstance(stage, Mapping):
                errors.append(f"{at}: must be an object with tasks, resources, duration")
                continue
            for key in stage:
                if key not in _STAGE_FIELDS:
                    errors.append(f"{at}.{key}: unknown field (known: duration, resources, tasks)")
            tasks = stage.get("tasks")
            if isinstance(tasks, bool) or not isinstance(tasks, int) or tasks < 1:
                errors.append(f"{at}.tasks: must be a positive integer, got {tasks!r}")
            duration = stage.get("duration")
            if not _number(duration) or duration <= 0:
                errors.append(f"{at}.duration: must be a number of seconds > 0, got {duration!r}")
            if "resources" not in stage:
                errors.append(f"{at}: missing `resources`")
                continue
            res = _resources(stage["resources"], f"{at}.resources", errors)
            if len(errors) == start:
                stages.append(StageSpec(tasks, res, float(duration)))
    if len(errors) > start:
        return None
    return AppSpec(app_id, queue, user, float(submit), tuple(stages), am, tuple(groups), priority,
                   resubmit=resubmit)


def parse_workload(text: str, source: str = "<workload>") -> list[AppSpec]:
    """Parses JSON lines, one application a line; blank lines are skipped.

    Apps are returned sorted by submit time (ties keep file order)."""
    errors: list[str] = []
    apps: list[AppSpec] = []
    first_line: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}:{lineno}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{where}: not valid JSON: {exc.msg} (column {exc.colno})")
            continue
        app = parse_app(obj, where, errors)
        if app is None:
            continue
        if app.id in first_line:
            errors.append(f"{where}: id: {app.id!r} is already used on line {first_line[app.id]}")
            continue
        first_line[app.id] = lineno
        if "#" in app.id:
            errors.append(f"{where}: id: '#' is reserved for resubmitted copies, got {app.id!r}")
            continue
        apps.append(replace(app, line=lineno))
        if len(errors) > 50:
            errors.append(f"{source}: too many errors, stopped")
            break
    if not errors and not apps:
        errors.append(f"{source}: the workload has no applications")
    if errors:
        raise SimInputError(errors)
    apps.sort(key=lambda a: a.submit)
    return apps


def load_workload(path: str | Path) -> list[AppSpec]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SimInputError([f"{path}: cannot read the workload file: {exc.strerror or exc}"]) from None
    return parse_workload(text, str(path))


def check_workload_types(apps: list[AppSpec], types: list[str], source: str, what: str) -> None:
    """Every resource a task or AM asks for must be one of the divided types."""
    errors: list[str] = []
    allowed = set(types)
    for app in apps:
        where = f"{source}:{app.line}"
        if app.am:
            _check_types(app.am, allowed, f"{where}: am", what, errors)
        for i, stage in enumerate(app.stages):
            _check_types(stage.resources, allowed, f"{where}: stages[{i}].resources", what, errors)
    if errors:
        raise SimInputError(errors)
