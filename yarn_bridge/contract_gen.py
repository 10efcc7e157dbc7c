"""Generates the bridge's tables from its one spec, yarn_bridge/contract.yaml (`make contract`).

    python -m yarn_bridge.contract_gen           write every generated file
    python -m yarn_bridge.contract_gen --check   write nothing; exit 1 naming each stale file

It writes the Python field tables and typed items (yarn_bridge/contract_tables.py) and reply
encoders (contract_replies.py), the Java reply value classes and their readers (ReplyValues.java)
and, for the tests' fake core, their writers (ReplyWriters.java, test sources), the Java request
value classes and their writers (RequestValues.java) and, for the fake core, their readers
(RequestReaders.java, test sources; contract_java_requests.py writes both),
the Java constants (java_shim/.../Contract.java: the version, request types, delta ops, field names and row
positions, and the spec's SHA-256, which the Java test ContractSpecTest compares with the spec) and
the field tables and version history of docs/bridge.md, between its "generated" markers. The
output depends only on the spec (and, for the page, the text around the markers), so a test can
regenerate and compare (tests/bridge/test_contract_spec.py).
"""
from __future__ import annotations

import hashlib
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

from scheduler.bounded_yaml import read_yaml
from yarn_bridge.contract_java_requests import (JAVA_REQUEST_READERS, JAVA_REQUEST_VALUES, java_request_readers,
                                                java_request_values)
from yarn_bridge.contract_naming import camel, constant, javadoc, member

ROOT = Path(__file__).resolve().parents[1]
SPEC = Path("yarn_bridge/contract.yaml")
PYTHON_TABLES = Path("yarn_bridge/contract_tables.py")
PYTHON_REPLIES = Path("yarn_bridge/contract_replies.py")
JAVA_CONSTANTS = Path("java_shim/src/main/java/org/yarndrf/shim/Contract.java")
JAVA_REPLY_VALUES = Path("java_shim/src/main/java/org/yarndrf/shim/ReplyValues.java")
JAVA_REPLY_WRITERS = Path("java_shim/src/test/java/org/yarndrf/shim/ReplyWriters.java")
BRIDGE_PAGE = Path("docs/bridge.md")
# The sections of the page the generator owns: what lies between "<!-- generated: NAME -->" and
# "<!-- end generated: NAME -->" is replaced, the rest of the page is the writer's.
PAGE_SECTIONS = ("history", "fields")
# The spec's sections of objects and rows, in the order the page lists them, with their headings.
SECTIONS = (("requests", "Requests"), ("items", "Objects in requests"), ("deltas", "Deltas"),
            ("rows", "Rows (JSON arrays)"), ("replies", "Replies"), ("reply_items", "Objects in replies"))
JAVA_GROUPS = {"requests": "Requests", "items": "Items", "deltas": "Deltas", "rows": "Rows", "replies": "Replies",
               "reply_items": "ReplyItems"}


def load(text: str) -> dict[str, Any]:
    """The spec with every delta's shared fields ("node.capacity") resolved to the item's field."""
    spec = read_yaml(text).value
    for delta in spec["deltas"].values():
        delta["fields"] = [_shared(spec["items"], f) if isinstance(f, str) else f for f in delta["fields"]]
    return spec


def _shared(items: dict[str, Any], ref: str) -> dict[str, Any]:
    item, name = ref.split(".")
    return next(f for f in items[item]["fields"] if f["name"] == name)


def generate(spec_text: str, page: str) -> dict[Path, str]:
    """Every generated file's text (paths relative to the repository), from the spec's text and
    the page's current text."""
    spec = load(spec_text)
    sha = hashlib.sha256(spec_text.encode()).hexdigest()
    return {PYTHON_TABLES: python_tables(spec, sha), PYTHON_REPLIES: python_replies(spec),
            JAVA_CONSTANTS: java_constants(spec, sha), JAVA_REPLY_VALUES: java_reply_values(spec, sha),
            JAVA_REPLY_WRITERS: java_reply_writers(spec, sha),
            JAVA_REQUEST_VALUES: java_request_values(spec, sha), JAVA_REQUEST_READERS: java_request_readers(spec, sha),
            BRIDGE_PAGE: page_with_tables(spec, page)}


# ---------------------------------------------------------------------------- Python


def _field_rows(fields: list[dict[str, Any]]) -> str:
    return "".join(f"({f['name']!r}, {f['type']!r}, {bool(f.get('required'))}), " for f in fields)


def _table(name: str, messages: dict[str, Any], comment: str) -> list[str]:
    lines = [f"# {comment}", f"{name}: dict[str, tuple[Field, ...]] = {{"]
    lines += [f"    {key!r}: ({_field_rows(m['fields']).rstrip(', ')}{',' if len(m['fields']) == 1 else ''}),"
              for key, m in messages.items()]
    return [*lines, "}"]


def _named_tuple(name: str, doc: str, fields: list[dict[str, Any]], types: dict[str, Any]) -> list[str]:
    lines = ["", "", f"class {name}(NamedTuple):", f'    """{doc}"""']
    for f in fields:
        kind = types[f["type"]]["python"]
        lines.append(f"    {f['name']}: {kind if f.get('required') else f'{kind} | None'}")
    return lines


def python_tables(spec: dict[str, Any], sha: str) -> str:
    types = spec["types"]
    envelope = spec["requests"]["envelope"]["fields"]
    requests = {k: m for k, m in spec["requests"].items() if k != "envelope"}
    lines = [
        '"""The bridge\'s field tables and typed items, generated from yarn_bridge/contract.yaml by `make',
        'contract` (python -m yarn_bridge.contract_gen): do not edit, edit the spec and regenerate."""',
        "# fmt: off", "# pylint: skip-file", "from __future__ import annotations", "",
        "from typing import Any, NamedTuple", "",
        f"VERSION = {spec['version']}",
        f'SPEC_SHA256 = "{sha}"',
        f"REQUEST_TYPES = {tuple(requests)!r}",
        "# What a value of each checked type must be (a refusal names it).",
        "WHAT = {" + ", ".join(f"{k!r}: {t['what']!r}" for k, t in types.items() if t.get("check")) + "}",
        "# A field: its name, its type (a key of WHAT), whether it is required; in the order it is written.",
        "Field = tuple[str, str, bool]",
        *_table("ENVELOPES", requests, "The fields of each request type after the envelope (v, type, epoch)."),
        *_table("ITEMS", spec["items"], "The objects inside requests."),
        *_table("DELTAS", spec["deltas"], 'The fields of each delta op ("op" names it).'),
        *_table("STATE_ITEMS", {k: spec["reply_items"][k] for k in ("mark", "leaf")},
                "The items of the preemption state record (a snapshot gives it back)."),
        "# Rows (JSON arrays): the names of their fixed leading elements, by position; then their tail.",
        "ROWS = {" + ", ".join(f"{k!r}: {tuple(f['name'] for f in r['fields'])!r}" for k, r in spec["rows"].items()) + "}",
        "# The replies (after the envelope's, first) and the objects in them: their fields, in the order they are written.",
        "REPLIES = {" + ", ".join(f"{k!r}: {tuple(f['name'] for f in r['fields'])!r}"
                                  for k, r in spec["replies"].items()) + "}",
        "REPLY_ITEMS = {" + ", ".join(f"{k!r}: {tuple(f['name'] for f in r['fields'])!r}"
                                      for k, r in spec["reply_items"].items()) + "}",
        f"STATE_VERSION = {spec['reply_items']['preemption_state']['version']}",
    ]
    for key, m in requests.items():
        lines += _named_tuple(camel(key), m["meaning"].strip(), [*envelope[1:], *m["fields"]], types)
    for key, m in spec["items"].items():
        lines += _named_tuple(camel(key), m["meaning"].strip(), m["fields"], types)
    for key, m in spec["deltas"].items():
        same = [item for item, i in spec["items"].items() if i["fields"] == m["fields"]]
        if same:  # (a delta that carries a whole object is that object's item)
            lines += ["", "", f"{camel(key)} = {camel(same[0])}"]
        else:
            lines += _named_tuple(camel(key), f"The {key} delta: {m['meaning'].strip()}.", m["fields"], types)
    lines += ["", "", "# The typed item of each request type and delta op.",
              "REQUEST_ITEMS = {" + ", ".join(f"{k!r}: {camel(k)}" for k in requests) + "}",
              "DELTA_ITEMS = {" + ", ".join(f"{k!r}: {camel(k)}" for k in spec["deltas"]) + "}",
              "OBJECT_ITEMS = {" + ", ".join(f"{k!r}: {camel(k)}" for k in spec["items"]) + "}"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- Python replies


def python_replies(spec: dict[str, Any]) -> str:
    types = spec["types"]
    lines = [
        '"""The bridge\'s reply encoders, generated from yarn_bridge/contract.yaml by `make contract`',
        "(python -m yarn_bridge.contract_gen): do not edit, edit the spec and regenerate.",
        "",
        "One function per reply (a JSON text) and per object in replies (a dict), a parameter per field:",
        "the fields always written come first, then the optional ones, left out when None. Each writes",
        "its fields in the spec's order, the golden replies' (tests/bridge/contract/); protocol.py maps",
        'the core\'s values to them."""',
        "# fmt: off", "# pylint: skip-file", "from __future__ import annotations", "",
        "import json", "from typing import Any", "",
        f"VERSION = {spec['version']}",
        "# One encoder for every reply: json.dumps with non-default arguments builds a new one per call.",
        '_encode = json.JSONEncoder(separators=(",", ":")).encode',
    ]
    envelope = spec["replies"]["envelope"]["fields"]
    said = {**envelope[2], "required": True}  # (the envelope's "error": what a refusal says)
    lines += _encoder("error_reply", f"A refused request: {said['meaning']}.", [*envelope[:2], said], types,
                      {"v": "VERSION", "ok": "False"}, text=True)
    for key, m in spec["replies"].items():
        if key != "envelope":
            lines += _encoder(f"{key}_reply", m["meaning"], [*envelope[:2], *m["fields"]], types,
                              {"v": "VERSION", "ok": "True"}, text=True)
    for key, m in spec["reply_items"].items():
        filled = {"v": str(m["version"])} if "version" in m else {}  # (a record with a version of its own)
        lines += _encoder(key, m["meaning"], m["fields"], types, filled, text=False)
    return "\n".join(lines) + "\n"


def _written_always(field: dict[str, Any]) -> bool:
    return bool(field.get("required") or field.get("always"))


def _encoder(name: str, doc: str, fields: list[dict[str, Any]], types: dict[str, Any], filled: dict[str, str],
             text: bool) -> list[str]:
    """One encoder: a parameter per field but those it fills itself (`filled`: field -> Python
    expression), those always written first, then the optional ones (None by default: left out);
    it returns the object, or (`text`) its JSON text."""
    def param(f: dict[str, Any]) -> str:
        kind = types[f["type"]]["python"]
        return f"{f['name']}: {kind}" if f.get("required") else f"{f['name']}: {kind} | None"

    given = [f for f in fields if f["name"] not in filled]
    optional = [f for f in given if not _written_always(f)]
    if optional and any(_written_always(f) for f in fields[fields.index(optional[0]):]):
        raise ValueError(f"{name}: a field always written follows an optional one (its order would vary)")
    always = [f for f in given if _written_always(f)]
    params = [param(f) for f in always] + [f"{param(f)} = None" for f in optional]
    entries = ", ".join(f"{f['name']!r}: {filled.get(f['name'], f['name'])}" for f in fields
                        if f["name"] in filled or _written_always(f))
    lines = ["", "", f"def {name}({', '.join(params)}) -> {'str' if text else 'dict[str, Any]'}:", *_docstring(doc)]
    if not optional:
        return [*lines, f"    return {'_encode({' + entries + '})' if text else '{' + entries + '}'}"]
    lines.append(f"    out: dict[str, Any] = {{{entries}}}")
    for f in optional:
        lines += [f"    if {f['name']} is not None:", f"        out[{f['name']!r}] = {f['name']}"]
    return [*lines, f"    return {'_encode(out)' if text else 'out'}"]


def _docstring(text: str) -> list[str]:
    wrapped = textwrap.wrap(" ".join(text.split()).replace('"', "'"), 100 - 7)
    if len(wrapped) == 1:
        return [f'    """{wrapped[0]}"""']
    return [f'    """{wrapped[0]}', *[f"    {line}" for line in wrapped[1:]], '    """']


# ---------------------------------------------------------------------------- Java


def java_constants(spec: dict[str, Any], sha: str) -> str:
    requests = [k for k in spec["requests"] if k != "envelope"]
    lines = [
        "// Generated from yarn_bridge/contract.yaml by `make contract` (python -m yarn_bridge.contract_gen).",
        "// Do not edit: edit the spec and regenerate.",
        "package org.yarndrf.shim;", "",
        "/**",
        " * The bridge's wire contract as the spec states it: the version, the request types, the delta",
        " * ops, every object's field names and every row's positions. The generated value classes",
        " * (RequestValues, ReplyValues) write and read the messages with these; ContractSpecTest checks",
        " * {@link #SPEC_SHA256} against the spec.",
        " */",
        "public final class Contract {",
        f"  public static final int VERSION = {spec['version']};",
        "  /** The SHA-256 of the spec's bytes this file was generated from. */",
        f'  public static final String SPEC_SHA256 = "{sha}";', "",
        "  private Contract() {", "  }", "",
        "  /** The request types. */",
        "  public static final class Types {",
        *[f'    public static final String {constant(k)} = "{k}";' for k in requests],
        "", "    private Types() {", "    }", "  }", "",
        "  /** The delta ops, and the field that names a delta's op. */",
        "  public static final class Ops {",
        '    public static final String OP = "op";',
        *[f'    public static final String {constant(k)} = "{k}";' for k in spec["deltas"]],
        "", "    private Ops() {", "    }", "  }",
    ]
    for section, _ in SECTIONS:
        group = JAVA_GROUPS[section]
        lines += ["", f"  /** The {section.replace('_', ' ')} of the spec. */", f"  public static final class {group} {{"]
        for key, m in spec[section].items():
            same = [item for item, i in spec["items"].items() if section == "deltas" and i["fields"] == m["fields"]]
            if same:  # (a delta that carries a whole object: its fields are the object's, Items)
                lines += ["", f"    // {key}: the fields of Items.{camel(same[0])}"]
                continue
            lines += ["", *javadoc("    ", m["meaning"]), f"    public static final class {camel(key)} {{"]
            if section == "rows":
                lines += [f"      public static final int {constant(f['name'])} = {i};" for i, f in enumerate(m["fields"])]
                if "tail" in m:
                    lines += [*javadoc("      ", f"Where the tail begins: {m['tail']}"),
                              f"      public static final int TAIL = {len(m['fields'])};"]
            else:
                lines += [f'      public static final String {constant(f["name"])} = "{f["name"]}";' for f in m["fields"]]
            lines += ["", f"      private {camel(key)}() {{", "      }", "    }"]
        lines += ["", f"    private {group}() {{", "    }", "  }"]
    return "\n".join([*lines, "}"]) + "\n"


# How the generated reply readers read a field of each type (Messages' checked readers: a value
# out of its range is a MalformedReplyException naming the field), and whether the reader takes
# an absent field itself (else an optional field absent is null).
JAVA_READS = {"text": ("Messages.text(n, {f})", False), "name": ("Messages.text(n, {f})", False),
              "reason": ("Messages.text(n, {f})", False), "bool": ("Messages.bool(n, {f})", False),
              "int": ("(int) Messages.integer(n, {f}, Integer.MIN_VALUE, Integer.MAX_VALUE)", False),
              "key": ("Messages.integer(n, {f}, Long.MIN_VALUE, Long.MAX_VALUE)", False),
              "long": ("Messages.integer(n, {f}, 0, Long.MAX_VALUE)", False),
              "amounts": ("Messages.amounts(n, {f})", False), "cards": ("Messages.cards(n, {f})", True)}
JAVA_BOXED = {"int": "Integer", "long": "Long", "boolean": "Boolean", "double": "Double"}
# What a reader that takes an absent field itself gives for one (else null), for the constructor
# without the optional fields: a field added to the spec as optional leaves the callers as they were.
JAVA_ABSENT = {"cards": "java.util.Collections.<Integer>emptyList()"}


def java_reply_values(spec: dict[str, Any], sha: str) -> str:
    """The value class of each reply and object in replies that names a `java_class`, with its
    reader."""
    lines = [
        "// Generated from yarn_bridge/contract.yaml by `make contract` (python -m yarn_bridge.contract_gen).",
        "// Do not edit: edit the spec and regenerate.",
        "package org.yarndrf.shim;", "",
        "import com.fasterxml.jackson.databind.JsonNode;", "import java.util.List;", "import java.util.Map;",
        "import org.yarndrf.shim.bridge.MalformedReplyException;", "",
        "/**",
        " * The objects of the core's replies as the spec states them: one value class each, a field per",
        " * field of the spec, and its reader, which checks every field ({@link Messages} reads the replies",
        " * with them).",
        " */",
        "public final class ReplyValues {",
        "  /** The SHA-256 of the spec's bytes this file was generated from (ContractSpecTest). */",
        f'  static final String SPEC_SHA256 = "{sha}";', "",
        "  private ReplyValues() {", "  }",
    ]
    for section, group in (("replies", "Replies"), ("reply_items", "ReplyItems")):
        for key, m in spec[section].items():
            if "java_class" in m:
                lines += _java_value_class(m["java_class"], f"{group}.{camel(key)}", m, spec)
    return "\n".join([*lines, "}"]) + "\n"


def _java_field(f: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str, bool]:
    """A field's Java type, its reader (with {f} for the field's constant) and whether the reader
    takes an absent field itself."""
    if "java_read" in f:
        return f["java_type"], f"Messages.{f['java_read']}(n, {{f}})", True
    item = spec["reply_items"].get(f.get("item"), {})
    if f["type"] == "list" and "java_class" in item:
        required = "true" if f.get("required") else "false"
        return f"List<{item['java_class']}>", f"Messages.items(n, {{f}}, {required}, {item['java_class']}::read)", True
    read, reads_absent = JAVA_READS[f["type"]]
    return spec["types"][f["type"]]["java"], read, reads_absent


def _java_value_class(name: str, group: str, item: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    members = []
    for f in item["fields"]:
        kind, read, reads_absent = _java_field(f, spec)
        if not (f.get("required") or reads_absent):
            kind = JAVA_BOXED.get(kind, kind)  # (absent: null)
            read = f"n.hasNonNull({{f}}) ? {read} : null"
        members.append((member(f), kind, read.format(f=f"Contract.{group}.{constant(f['name'])}"), f))
    lines = ["", *javadoc("  ", item["meaning"]), f"  public static final class {name} {{"]
    for name_, kind, _, f in members:
        lines += [*javadoc("    ", f["meaning"]), f"    public final {kind} {name_};"]
    params = ", ".join(f"{kind}\0{name_}".replace(", ", ",\0") for name_, kind, _, _ in members)  # (\0: no break)
    signature = textwrap.wrap(f"public {name}({params}) {{", 100 - 4, subsequent_indent="    ")
    lines += ["", *(f"    {line}".replace("\0", " ") for line in signature)]
    lines += [f"      this.{name_} = {name_};" for name_, _, _, _ in members]
    lines += ["    }", *_java_short_constructor(name, members)]
    lines += ["", "    /** Reads one, every field checked. */",
              f"    static {name} read(JsonNode n) throws MalformedReplyException {{"]
    reads = [read.replace(", Integer.MIN", ",\n              Integer.MIN").replace(", Long.MIN", ",\n              Long.MIN")
             .replace(", true, ", ",\n              true, ").replace(", false, ", ",\n              false, ")
             for _, _, read, _ in members]
    lines.append(f"      return new {name}(" + ",\n          ".join(reads) + ");")
    return [*lines, "    }", "  }"]


# How the tests' writers (the core's side) write a field of each type: {f} the field's constant,
# {v} the value; and when an optional one is left out.
JAVA_WRITES_FIELD = {"text": "g.writeStringField({f}, {v})", "name": "g.writeStringField({f}, {v})",
                     "reason": "g.writeStringField({f}, {v})", "bool": "g.writeBooleanField({f}, {v})",
                     "int": "g.writeNumberField({f}, {v})", "key": "g.writeNumberField({f}, {v})",
                     "long": "g.writeNumberField({f}, {v})", "amounts": "RequestValues.writeAmounts(g, {f}, {v})",
                     "cards": "writeInts(g, {f}, {v})"}
JAVA_LEFT_OUT = {"cards": "{v}.isEmpty()"}


def java_reply_writers(spec: dict[str, Any], sha: str) -> str:
    """The tests' writers of the objects in replies that ReplyValues reads (test sources: only the
    fake core writes replies)."""
    lines = [
        "// Generated from yarn_bridge/contract.yaml by `make contract` (python -m yarn_bridge.contract_gen).",
        "// Do not edit: edit the spec and regenerate.",
        "package org.yarndrf.shim;", "",
        "import com.fasterxml.jackson.core.JsonGenerator;", "import java.io.IOException;",
        "import java.util.List;", "",
        "/** Writes the objects of {@link ReplyValues} as the core does: the spec's fields in its order. */",
        "final class ReplyWriters {",
        "  /** The SHA-256 of the spec's bytes this file was generated from (ContractSpecTest). */",
        f'  static final String SPEC_SHA256 = "{sha}";', "",
        "  private ReplyWriters() {", "  }",
    ]
    for key, m in spec["reply_items"].items():
        if "java_class" not in m:
            continue
        name = m["java_class"]
        lines += ["", f"  static void write(JsonGenerator g, ReplyValues.{name} x) throws IOException {{",
                  "    g.writeStartObject();"]
        for f in m["fields"]:
            value = f"x.{member(f)}"
            write = JAVA_WRITES_FIELD[f["type"]].format(
                f=f"Contract.ReplyItems.{camel(key)}.{constant(f['name'])}", v=value) + ";"
            if _written_always(f):
                lines.append(f"    {write}")
                continue
            left_out = JAVA_LEFT_OUT.get(f["type"], "{v} == null").format(v=value)
            lines += [f"    if (!({left_out})) {{", f"      {write}", "    }"]
        lines += ["    g.writeEndObject();", "  }"]
    lines += [
        "", "  private static void writeInts(JsonGenerator g, String field, List<Integer> values)",
        "      throws IOException {",
        "    g.writeArrayFieldStart(field);",
        "    for (int x : values) {", "      g.writeNumber(x);", "    }", "    g.writeEndArray();", "  }",
    ]
    return "\n".join([*lines, "}"]) + "\n"


def _java_short_constructor(name: str, members: list[tuple[str, str, str, dict[str, Any]]]) -> list[str]:
    """The constructor of the fields always written, the optional ones absent; none where there is
    no optional field, or one read apart (its absent value is its reader's)."""
    optional = [f for _, _, _, f in members if not _written_always(f)]
    if not optional or any("java_read" in f for f in optional):
        return []
    given = [(name_, kind) for name_, kind, _, f in members if _written_always(f)]
    params = ", ".join(f"{kind}\0{name_}".replace(", ", ",\0") for name_, kind in given)
    signature = textwrap.wrap(f"public {name}({params}) {{", 100 - 4, subsequent_indent="    ")
    values = ", ".join(name_ if _written_always(f) else JAVA_ABSENT.get(f["type"], "null")
                       for name_, _, _, f in members)
    call = textwrap.wrap(f"this({values});", 100 - 6, subsequent_indent="    ")
    return ["", "    /** Without the optional fields: absent. */", *(f"    {line}".replace("\0", " ") for line in signature),
            *(f"      {line}" for line in call), "    }"]


# ---------------------------------------------------------------------------- docs/bridge.md


def page_with_tables(spec: dict[str, Any], page: str) -> str:
    for name in PAGE_SECTIONS:
        body = history(spec) if name == "history" else field_tables(spec)
        begin, end = f"<!-- generated: {name} (make contract) -->", f"<!-- end generated: {name} -->"
        pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.DOTALL)
        if not pattern.search(page):
            raise ValueError(f"{BRIDGE_PAGE} has no {begin} ... {end} section")
        page = pattern.sub(lambda _m, body=body, begin=begin, end=end: f"{begin}\n{body}{end}", page)
    return page


def history(spec: dict[str, Any]) -> str:
    return "".join(f"- **Version {h['version']}**: {' '.join(h['change'].split())}\n" for h in spec["history"])


def field_tables(spec: dict[str, Any]) -> str:
    out = []
    for section, title in SECTIONS:
        out.append(f"#### {title}\n\n")
        for key, m in spec[section].items():
            heading = _doc_name(section, key)
            out.append(f"**{heading}**: {' '.join(m['meaning'].split())}" +
                       (f" Core call: `{m['core']}`." if "core" in m else "") + "\n")
            position = "position" if section == "rows" else "order"
            out.append(f"\n| {position} | field | type | required | since | meaning |\n|---|---|---|---|---|---|\n")
            out += [f"| {i} | `{f['name']}` | {spec['types'][f['type']]['what']} | {'yes' if f.get('required') else 'no'} "
                    f"| {f['since']} | {_cell(f['meaning'])} |\n" for i, f in enumerate(m["fields"])]
            if "tail" in m:
                out.append(f"| {len(m['fields'])}... | (tail) | | | | {_cell(m['tail'])} |\n")
            out.append("\n")
    return "".join(out)


def _doc_name(section: str, key: str) -> str:
    if section == "deltas":
        return f"`{key}` delta"
    if section in ("requests", "replies"):
        return f"{'Request' if section == 'requests' else 'Reply'} `{key}`"
    return f"`{key}`"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


# ---------------------------------------------------------------------------- command


def main(argv: list[str]) -> int:
    check = argv[1:] == ["--check"]
    spec_text = (ROOT / SPEC).read_text()
    stale = []
    for path, text in generate(spec_text, (ROOT / BRIDGE_PAGE).read_text()).items():
        target = ROOT / path
        if target.exists() and target.read_text() == text:
            continue
        stale.append(str(path))
        if not check:
            target.write_text(text)
    if stale:
        print(("stale (run make contract): " if check else "wrote: ") + ", ".join(stale))
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
