"""Reading a YAML document within fixed limits, whatever the input.

PyYAML alone accepts documents that cost far more than their size: an alias stands for a whole
subtree, so a few hundred bytes of nested aliases become billions of nodes for anything that walks
the result; it keeps the last of two equal keys without a word; it takes `5:` or `no:` as
non-string keys; and some tagged values raise plain Python errors. This reader refuses all of that
before anything walks the document, each refusal naming the place ("path: problem (line N)"):

- at most MAX_BYTES bytes, in UTF-8 (an invalid byte is named by its offset);
- at most MAX_NODES nodes, counting every alias as a copy of what it names, so alias bombs and
  alias trees stop in time linear in the file; no alias inside the node it names;
- at most MAX_DEPTH levels of nesting, an alias again counted as a copy of what it names;
- mapping keys are strings, each once per mapping (merge keys `<<` work as in YAML 1.1);
- values are strings, booleans, null, lists, mappings and numbers of at most MAX_NUMERAL
  characters; dates, binary, sets and other tags are refused.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from yaml._yaml import CParser  # libyaml's events: three times faster than PyYAML's own parser
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from scheduler.echo import ECHO, brief

MAX_BYTES = 1 << 20
MAX_NODES = 50_000
MAX_DEPTH = 64
MAX_NUMERAL = 100

_TAG = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL, MAP, SEQ, MERGE = (_TAG + t for t in
                                                ("str", "int", "float", "bool", "null", "map", "seq", "merge"))
_SCALAR_TAGS = frozenset({STR, INT, FLOAT, BOOL, NULL})


class YamlRefused(Exception):
    """The document is not read; `errors` says why, each "path: problem (line N)" or "line N: ..."."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__("\n".join(errors))


@dataclass(frozen=True)
class Document:
    value: Any
    lines: dict[tuple, int]  # path (keys and list indexes) -> 1-based line of its key or item


def read_yaml(data: bytes | str) -> Document:
    """The one document in `data`, or YamlRefused."""
    data = _utf8(data)
    loader = _Loader(data)
    try:
        node = loader.read()
        if loader.errors:
            raise YamlRefused(loader.errors)
        value = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise YamlRefused([_yaml_error(exc, data)]) from None
    finally:
        loader.dispose()
    return Document(value, _lines(node))


# ---------------------------------------------------------------------------- messages


def field_path(path) -> str:
    """"queues.root.children.a" for a path of keys and indexes; each part cut to ECHO characters,
    and the middle of a deep path left out."""
    parts = [str(p) if len(str(p)) <= ECHO else str(p)[:ECHO - 1] + "…" for p in path]
    if len(parts) > 8:
        parts = parts[:4] + [f"…({len(parts) - 7} more)…"] + parts[-3:]
    return ".".join(parts) or "(top level)"


def at(path, line: int | None, message: str) -> str:
    return f"{field_path(path)}: {message}" + (f" (line {line})" if line else "")


def _utf8(data: bytes | str) -> bytes:
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError as exc:
            line = data.count("\n", 0, exc.start) + 1
            raise YamlRefused([f"line {line}: character U+{ord(data[exc.start]):04X} cannot be written "
                               "in UTF-8"]) from None
    if len(data) > MAX_BYTES:
        raise YamlRefused([f"line 1: the file is {len(data):,} bytes; a queue file may have at most "
                           f"{MAX_BYTES:,}"])
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlRefused([f"line {_line_at(data, exc.start)}: not UTF-8: byte 0x{data[exc.start]:02x} "
                           f"at offset {exc.start}"]) from None
    return data


def _line_at(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _yaml_error(exc: yaml.YAMLError, data: bytes) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    position = getattr(exc, "position", None)  # a ReaderError: a byte offset
    if mark is not None:
        where = f"line {mark.line + 1}, column {mark.column + 1}"
    elif position is not None:
        where = f"line {_line_at(data, position)}"
    else:
        where = "line 1"
    problem = getattr(exc, "problem", None) or str(exc).split("\n", 1)[0]
    return f"{where}: invalid YAML: {problem[:200]}"


# ---------------------------------------------------------------------------- composing

class _Composer:
    """PyYAML's Composer with budgets, key checks and tag checks. Structural faults (budget, depth,
    aliases, a second document) stop at once; the others are collected so one pass reports them all."""

    def _init_bounds(self) -> None:
        self.anchors: dict[str, Node] = {}
        self.errors: list[str] = []
        self.path: list = []
        self.nodes = 0  # so far, every alias counted as the size of what it names
        self.size: dict[int, int] = {}  # id(anchored node) -> its size with aliases expanded
        self.height: dict[int, int] = {}  # id(anchored node) -> levels below it, aliases expanded
        self.deepest = 0  # the deepest level reached in the node being composed
        self.open: set[int] = set()  # collections being composed: an alias to one is recursive

    def read(self) -> Node | None:
        self.get_event()  # stream start
        node = None
        if not self.check_event(yaml.StreamEndEvent):
            self.get_event()  # document start
            node = self._compose()
            self.get_event()  # document end
        if not self.check_event(yaml.StreamEndEvent):
            event = self.get_event()
            self._stop(f"line {event.start_mark.line + 1}: a queue file holds one YAML document; "
                       "a second one starts here")
        return node

    def _stop(self, message: str) -> None:
        raise YamlRefused(self.errors + [message])

    def _here(self, node_or_event, message: str) -> str:
        return at(self.path, node_or_event.start_mark.line + 1, message)

    def _count(self, n: int, event) -> None:
        self.nodes += n
        if self.nodes > MAX_NODES:
            self._stop(self._here(event, f"the document has more than {MAX_NODES:,} YAML nodes (an alias "
                                         "counts as a copy of what it names)"))

    def _compose(self, key: bool = False) -> Node:
        level = len(self.path)
        if self.check_event(yaml.AliasEvent):
            event = self.get_event()
            node = self.anchors.get(event.anchor)
            if node is None:
                self._stop(self._here(event, f"alias *{event.anchor[:ECHO]} names no anchor before it"))
            if id(node) in self.open:
                self._stop(self._here(event, f"alias *{event.anchor[:ECHO]} is inside the node it names"))
            self._reach(level + self.height.get(id(node), 0), event)
            self._count(self.size.get(id(node), 1), event)
            return node
        event = self.peek_event()
        self._reach(level, event)
        start, outer = self.nodes, self.deepest
        self.deepest = level  # from here, the depth below this node alone
        self._count(1, event)
        if self.check_event(yaml.ScalarEvent):
            node = self._scalar(key)
        elif self.check_event(yaml.SequenceStartEvent):
            node = self._collection(SequenceNode, SEQ, self._sequence_items)
        else:
            node = self._collection(MappingNode, MAP, self._mapping_items)
        if event.anchor is not None:
            self.anchors[event.anchor] = node
            self.size[id(node)] = self.nodes - start
            self.height[id(node)] = self.deepest - level
        self.deepest = max(outer, self.deepest)
        return node

    def _reach(self, level: int, event) -> None:
        """Notes that the document goes `level` levels deep here (an alias: as deep as what it names)."""
        if level >= MAX_DEPTH:
            self._stop(self._here(event, f"nested more than {MAX_DEPTH} levels deep (an alias counts as a "
                                         "copy of what it names)"))
        self.deepest = max(self.deepest, level)

    def _scalar(self, key: bool) -> ScalarNode:
        event = self.get_event()
        explicit = event.tag not in (None, "!")
        tag = event.tag if explicit else self.resolve(ScalarNode, event.value, event.implicit)
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
        problem = None if key else self._unreadable(node, explicit)  # a key must be a string: _key_name
        if problem:
            self.errors.append(self._here(event, problem))
        return node

    def _unreadable(self, node: ScalarNode, explicit: bool) -> str | None:
        if node.tag in (INT, FLOAT) and len(node.value) > MAX_NUMERAL:
            return f"a number of {len(node.value):,} characters; at most {MAX_NUMERAL} are read"
        if node.tag not in _SCALAR_TAGS and node.tag != MERGE:
            return (f"{_tag_name(node.tag)} values are not read here; quote the value to make it a string: "
                    f"{brief(node.value)}")
        if explicit and node.tag != STR and not self._constructs(node):
            return f"{brief(node.value)} is not a valid {_tag_name(node.tag)}"
        return None

    def _constructs(self, node: ScalarNode) -> bool:
        """Whether an explicitly tagged scalar (`!!int abc`) has a value of its tag: PyYAML would
        raise a plain ValueError or KeyError building it."""
        try:
            self.yaml_constructors[node.tag](self, node)
        except (ValueError, KeyError, TypeError, yaml.YAMLError):
            return False
        return True

    def _collection(self, kind, default_tag: str, items) -> Node:
        event = self.get_event()
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolve(kind, None, event.implicit)
        node = kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
        if tag != default_tag:
            self.errors.append(self._here(event, f"{_tag_name(tag)} collections are not read here"))
        if event.anchor is not None:
            self.anchors[event.anchor] = node  # so that an alias inside it is found, and refused
        self.open.add(id(node))
        items(node)
        self.open.discard(id(node))
        node.end_mark = self.get_event().end_mark
        return node

    def _sequence_items(self, node: SequenceNode) -> None:
        while not self.check_event(yaml.SequenceEndEvent):
            self.path.append(len(node.value))
            node.value.append(self._compose())
            self.path.pop()

    def _mapping_items(self, node: MappingNode) -> None:
        seen: dict[str, int] = {}
        while not self.check_event(yaml.MappingEndEvent):
            key = self._compose(key=True)
            name = self._key_name(key)
            if name is not None:
                line = key.start_mark.line + 1
                if name in seen:
                    self.errors.append(at(self.path + [name], line, f"duplicate key, first on line {seen[name]}"))
                seen.setdefault(name, line)
            self.path.append(name if name is not None else "?")
            node.value.append((key, self._compose()))
            self.path.pop()

    def _key_name(self, key: Node) -> str | None:
        """The key's name if it is a string; None (and an error) otherwise, or for a merge key."""
        if isinstance(key, ScalarNode) and key.tag == STR:
            return key.value
        if isinstance(key, ScalarNode) and key.tag == MERGE:
            return None
        if isinstance(key, ScalarNode):
            problem = f"the key {brief(key.value)} is read as {_tag_name(key.tag)}, not a string"
        else:
            problem = f"a {type(key).__name__[:-4].lower()} is used as a key"
        self.errors.append(self._here(key, problem + "; mapping keys must be strings (quote a name)"))
        return None


def _tag_name(tag: str) -> str:
    return "!!" + tag[len(_TAG):] if tag.startswith(_TAG) else brief(tag)


class _Loader(_Composer, CParser, SafeConstructor, Resolver):
    def __init__(self, data: bytes) -> None:
        CParser.__init__(self, data)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self._init_bounds()


def _lines(node: Node | None) -> dict[tuple, int]:
    """Path -> line, for errors found later. Walks the document once (within MAX_NODES)."""
    out: dict[tuple, int] = {}
    stack: list[tuple[Node, tuple]] = [(node, ())] if node is not None else []
    while stack:
        node, path = stack.pop()
        out.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, MappingNode):
            # the last of equal keys wins, as in construction (merged keys come before a mapping's own)
            effective = {key.value: (key, value) for key, value in node.value if isinstance(key, ScalarNode)}
            for name, (key, value) in effective.items():
                out[path + (name,)] = key.start_mark.line + 1  # point at the key, not its value
                stack.append((value, path + (name,)))
        elif isinstance(node, SequenceNode):
            stack.extend((item, path + (i,)) for i, item in enumerate(node.value))
    return out
