"""Generates the Java request side of the bridge from its spec, yarn_bridge/contract.yaml: the value
classes of the requests the shim sends and their writers (RequestValues.java), and, for the tests'
fake core, their readers (RequestReaders.java, test sources). contract_gen writes them with the
rest (`make contract`); the spec's header says how its Java keys shape them.

Every field is written by code generated for its type (no reflection on the heartbeat path), in the
spec's order: the golden requests of tests/bridge/contract/ are the byte-for-byte check.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from yarn_bridge.contract_naming import camel, constant, javadoc, member

JAVA_REQUEST_VALUES = Path("java_shim/src/main/java/org/yarndrf/shim/RequestValues.java")
JAVA_REQUEST_READERS = Path("java_shim/src/test/java/org/yarndrf/shim/RequestReaders.java")

HEADER = ["// Generated from yarn_bridge/contract.yaml by `make contract` (python -m yarn_bridge.contract_gen).",
          "// Do not edit: edit the spec and regenerate.", "package org.yarndrf.shim;", ""]
# Types whose values a request's caller adds to after building it (its lists start empty).
FILLED = ("list", "rows", "pairs", "labels", "texts")
PRIMITIVE_DEFAULTS = {"int": "0", "long": "0", "boolean": "false", "double": "0"}
NUMBERS = ("long", "key", "int", "number", "milliseconds", "wall_ms")


def java_type(f: dict[str, Any], spec: dict[str, Any]) -> str:
    """A field's Java type: its `java_type`, its list's item class, or its type's."""
    if "java_type" in f:
        return f["java_type"]
    item = f.get("item")
    if item == "delta":
        return "List<Delta>"
    for section in ("items", "rows"):
        if "java_class" in spec[section].get(item, {}):
            return f"List<{spec[section][item]['java_class']}>"
    return spec["types"][f["type"]]["java"]


def _item_class(f: dict[str, Any], spec: dict[str, Any]) -> tuple[str, str]:
    """For a list of objects or rows: its item's section ("items", "rows", "deltas") and key."""
    item = f["item"]
    return ("deltas", item) if item == "delta" else next((s, item) for s in ("items", "rows") if item in spec[s])


def _written_when(f: dict[str, Any], v: str, kind: str) -> str | None:
    """The condition under which the writer writes an optional field (None: always)."""
    if f.get("required") or f.get("always"):
        return None
    if f.get("left_out") == "zero":
        return f"{v} != 0"
    if f.get("left_out") == "empty":
        return f"!{v}.isEmpty()" if kind.startswith(("List", "Map")) else f"{v} != null && !{v}.isEmpty()"
    if kind in PRIMITIVE_DEFAULTS or f["type"] in ("list", "rows", "pairs", "texts"):
        return None
    return f"{v} != null"


def _guarded(condition: str | None, body: list[str], indent: str) -> list[str]:
    if condition is None:
        return [f"{indent}{line}" for line in body]
    return [f"{indent}if ({condition}) {{", *(f"{indent}  {line}" for line in body), f"{indent}}}"]


def _write_field(f: dict[str, Any], name: str, v: str, spec: dict[str, Any], indent: str) -> list[str]:
    """The lines that write field `f` (its name the constant `name`, its value `v`)."""
    kind = java_type(f, spec)
    t = f["type"]
    if t in ("text", "name", "reason"):
        body = [f"g.writeStringField({name}, {v});"]
    elif t in NUMBERS:
        body = [f"g.writeNumberField({name}, {v});"]
    elif t == "bool":
        body = [f"g.writeBooleanField({name}, {v});"]
    elif t in ("amounts", "labels"):
        body = [f"write{camel(t)}(g, {name}, {v});"]
    elif t == "any" and kind == "String":  # (JSON kept as text: written as it came)
        body = [f"g.writeFieldName({name});", f"g.writeRawValue({v});"]
    elif "item" in f and kind != "List<Long>" and kind != "List<String>":
        section, item = _item_class(f, spec)
        element = kind[len("List<"):-1]
        write = {"deltas": ["x.write(g);"], "rows": [f"write{camel(item)}(g, x);"]}.get(
            section, ["g.writeStartObject();", f"write{camel(item)}(g, x);", "g.writeEndObject();"])
        body = [f"g.writeArrayFieldStart({name});", f"for ({element} x : {v}) {{", *(f"  {w}" for w in write), "}",
                "g.writeEndArray();"]
    elif kind == "List<String>":
        body = [f"writeTexts(g, {name}, {v});"]
    else:  # (a list of numbers)
        body = [f"writeNumbers(g, {name}, {v});"]
    return _guarded(_written_when(f, v, kind), body, indent)


def _write_element(f: dict[str, Any], v: str, indent: str) -> list[str]:
    """The lines that write one element of a row."""
    t = f["type"]
    if t in ("text", "name"):
        body = [f"g.writeString({v});"]
    elif t in NUMBERS:
        body = [f"g.writeNumber({v});"]
    elif t == "bool":
        body = [f"g.writeBoolean({v});"]
    elif t == "vector":
        body = [f"for (long a : {v}) {{", "  g.writeNumber(a);", "}"]
    else:  # (cards: a list of numbers as one element)
        body = ["g.writeStartArray();", f"for (long a : {v}) {{", "  g.writeNumber(a);", "}", "g.writeEndArray();"]
    return _guarded(f"{v} != null" if f.get("optional") else None, body, indent)


def _fields_and_javadoc(fields: list[dict[str, Any]], spec: dict[str, Any], indent: str,
                        initial: dict[str, str], mutable: set[str]) -> list[str]:
    lines = []
    for f in fields:
        kind = java_type(f, spec)
        init = f" = {initial[f['name']]}" if f["name"] in initial else ""
        final = "" if f["name"] in mutable else "final "
        lines += [*javadoc(indent, f.get("meaning", f["name"])), f"{indent}public {final}{kind} {member(f)}{init};"]
    return lines


def _signature(indent: str, head: str, params: list[str], tail: str) -> list[str]:
    """A constructor's or method's first lines, wrapped at 100 characters as the project's Java is."""
    one = f"{indent}{head}({', '.join(params)}){tail}"
    if len(one) <= 100:
        return [one]
    lines, line = [], f"{indent}{head}("
    for i, p in enumerate(params):
        piece = p + (", " if i < len(params) - 1 else f"){tail}")
        if len(line) + len(piece.rstrip()) > 100:
            lines.append(line.rstrip())
            line = f"{indent}    "
        line += piece
    return [*lines, line]


def _constructor(name: str, params: list[tuple[str, str]], indent: str, visibility: str = "public ",
                 first: tuple[str, list[tuple[str, str]]] | None = None) -> list[str]:
    """A constructor assigning each parameter to its member; `first`: a call that comes before, and
    the parameters it takes."""
    taken = first[1] if first else []
    lines = _signature(indent, f"{visibility}{name}", [f"{k} {n}" for k, n in [*taken, *params]], " {")
    call = [f"{indent}  {first[0]}"] if first else []
    return [*lines, *call, *(f"{indent}  this.{n} = {n};" for _, n in params), f"{indent}}}"]


# ---------------------------------------------------------------------------- RequestValues.java


def _classes(spec: dict[str, Any]) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """The value class of each object in requests, with the key and spec of each object it holds:
    objects may share one (its fields their union)."""
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for key, m in spec["items"].items():
        out.setdefault(m["java_class"], []).append((key, m))
    return out


def _union(objects: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    fields: dict[str, dict[str, Any]] = {}
    for _, m in objects:
        for f in m["fields"]:
            fields.setdefault(f["name"], f)
    return list(fields.values())


def _item_of(f: dict[str, Any], spec: dict[str, Any]) -> str | None:
    """The item a delta's field is shared with ("node.capacity": node), or None for its own."""
    return next((k for k, m in spec["items"].items() if any(f is g for g in m["fields"])), None)


def _setter(f: dict[str, Any]) -> str:
    return "with" + member(f)[0].upper() + member(f)[1:]


def _value_class(name: str, doc: str, fields: list[dict[str, Any]], given: list[dict[str, Any]],
                 spec: dict[str, Any]) -> list[str]:
    """A value class: its `given` fields final and taken by its constructor, the others (optional)
    set by a setter each that returns the object (absent until set: null, 0 or an empty list)."""
    optional = [f for f in fields if f not in given]
    initial = {f["name"]: "Collections.emptyList()" for f in optional if f["type"] == "texts"}
    lines = ["", *javadoc("  ", doc), f"  public static final class {name} {{"]
    lines += _fields_and_javadoc(fields, spec, "    ", initial, {f["name"] for f in optional})
    lines += ["", *_constructor(name, [(java_type(f, spec), member(f)) for f in given], "    ")]
    for f in optional:
        lines += ["", f"    public {name} {_setter(f)}({java_type(f, spec)} {member(f)}) {{",
                  f"      this.{member(f)} = {member(f)};", "      return this;", "    }"]
    return [*lines, "  }"]


def _given(fields: list[dict[str, Any]], objects: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The fields a shared class's constructor takes: those any of its objects requires."""
    required = {f["name"] for _, m in objects for f in m["fields"] if f.get("required")}
    return [f for f in fields if f["name"] in required]


def _item_values(spec: dict[str, Any]) -> list[str]:
    lines = []
    for name, objects in _classes(spec).items():
        fields = _union(objects)
        lines += _value_class(name, " ".join(m["meaning"] for _, m in objects), fields, _given(fields, objects), spec)
        for key, m in objects:
            lines += ["", f"  /** Writes {key}'s fields (the object's braces are the caller's). */",
                      f"  static void write{camel(key)}(JsonGenerator g, {name} x) throws IOException {{"]
            for f in m["fields"]:
                lines += _write_field(f, f"Contract.Items.{camel(key)}.{constant(f['name'])}", f"x.{member(f)}", spec,
                                      "    ")
            lines.append("  }")
    return lines


def _row_values(spec: dict[str, Any]) -> list[str]:
    lines = []
    for key, m in spec["rows"].items():
        if "java_class" not in m or "tail_fields" not in m:
            continue
        name, fields = m["java_class"], [*m["fields"], *m["tail_fields"]]
        lines += _value_class(name, m["meaning"], fields, [f for f in fields if not f.get("optional")], spec)
        lines += ["", "  /** Writes one row: its fixed elements in position order, then its tail. */",
                  f"  static void write{camel(key)}(JsonGenerator g, {name} r) throws IOException {{",
                  "    g.writeStartArray();"]
        for f in fields:
            lines += _write_element(f, f"r.{member(f)}", "    ")
        lines += ["    g.writeEndArray();", "  }"]
    return lines


def _delta_members(spec: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Delta's members after its op: (type, name, default) for each item a delta shares fields
    with, then each delta's own fields."""
    out: dict[str, tuple[str, str, str]] = {}
    for m in spec["deltas"].values():
        for f in m["fields"]:
            item = _item_of(f, spec)
            if item is not None:
                out.setdefault(item, (spec["items"][item]["java_class"], item, "null"))
            else:
                kind = java_type(f, spec)
                out.setdefault(member(f), (kind, member(f), PRIMITIVE_DEFAULTS.get(kind, "null")))
    return list(out.values())


def _delta_factory(key: str, m: dict[str, Any], spec: dict[str, Any], members: list[tuple[str, str, str]]) -> list[str]:
    whole = next((k for k, i in spec["items"].items() if i["fields"] == m["fields"]), None)
    if whole is not None:
        cls = spec["items"][whole]["java_class"]
        params, values = [f"{cls} {whole}"], {whole: whole}
    else:
        params, values, shared = [], {}, {}
        for f in m["fields"]:
            params.append(f"{java_type(f, spec)} {member(f)}")
            item = _item_of(f, spec)
            if item is None:
                values[member(f)] = member(f)
            else:
                shared.setdefault(item, set()).add(f["name"])
        for item, names in shared.items():  # (the item with only the delta's fields)
            cls = spec["items"][item]["java_class"]
            objects = _classes(spec)[cls]
            fields = _union(objects)
            given = _given(fields, objects)
            args = [member(f) if f["name"] in names else PRIMITIVE_DEFAULTS.get(java_type(f, spec), "null")
                    for f in given]
            values[item] = f"new {cls}({', '.join(args)})" + "".join(
                f".{_setter(f)}({member(f)})" for f in fields if f["name"] in names and f not in given)
    args = [f"Contract.Ops.{constant(key)}", *(values.get(n, default) for _, n, default in members)]
    call = _signature("      ", "return new Delta", args, ";")
    return ["", *javadoc("    ", m["meaning"]), *_signature("    ", f"public static Delta {camel(key)[0].lower()}{camel(key)[1:]}",
                                                                 params, " {"), *call, "    }"]


def _delta_writer(spec: dict[str, Any]) -> list[str]:
    lines = ["", "    /** Writes the delta: its op, then the op's fields. */",
             "    void write(JsonGenerator g) throws IOException {", "      g.writeStartObject();",
             "      g.writeStringField(Contract.Ops.OP, op);", "      switch (op) {"]
    for key, m in spec["deltas"].items():
        lines.append(f"        case Contract.Ops.{constant(key)}:")
        whole = next((k for k, i in spec["items"].items() if i["fields"] == m["fields"]), None)
        if whole is not None:
            lines.append(f"          write{camel(whole)}(g, {whole});")
        else:
            for f in m["fields"]:
                item = _item_of(f, spec)
                value = f"{item}.{member(f)}" if item else member(f)
                lines += _write_field(f, f"Contract.Deltas.{camel(key)}.{constant(f['name'])}", value, spec,
                                      "          ")
        lines.append("          break;")
    return [*lines, "        default:", '          throw new IllegalStateException("no delta op " + op);',
            "      }", "      g.writeEndObject();", "    }"]


def _delta(spec: dict[str, Any]) -> list[str]:
    members = _delta_members(spec)
    lines = ["", "  /**", "   * An app or node event (docs/bridge.md, \"Deltas\"): its op and that op's fields; the others",
             "   * are null (0). A delta that shares an object's fields holds them in that object.", "   */",
             "  public static final class Delta {", "    public final String op;"]
    lines += [f"    public final {kind} {name};" for kind, name, _ in members]
    lines += ["", *_constructor("Delta", [("String", "op"), *((k, n) for k, n, _ in members)], "    ", "private ")]
    for key, m in spec["deltas"].items():
        lines += _delta_factory(key, m, spec, members)
    return [*lines, *_delta_writer(spec), "  }"]


def _request(key: str, m: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    name, fields = m["java_class"], m["fields"]
    given = [f for f in fields if f.get("required")]
    filled = [f for f in fields if f not in given and f["type"] in FILLED]
    initial = {f["name"]: "new TreeMap<>()" if f["type"] == "labels" else "new ArrayList<>()" for f in filled}
    mutable = {f["name"] for f in fields if f not in given and f not in filled}
    lines = ["", *javadoc("  ", m["meaning"]), f"  public static final class {name} extends Request {{"]
    lines += _fields_and_javadoc(fields, spec, "    ", initial, mutable)
    lines += ["", *_constructor(name, [(java_type(f, spec), member(f)) for f in given], "    ",
                                first=(f"super(Contract.Types.{constant(key)}, epoch);", [("long", "epoch")]))]
    lines += ["", "    @Override", "    void writeFields(JsonGenerator g) throws IOException {"]
    for f in fields:
        lines += _write_field(f, f"Contract.Requests.{camel(key)}.{constant(f['name'])}", member(f), spec, "      ")
    return [*lines, "    }", "  }"]


def java_request_values(spec: dict[str, Any], sha: str) -> str:
    """The value classes of the requests, the objects, the deltas and the rows in them, each with
    its writer."""
    envelope = spec["requests"]["envelope"]["fields"]
    lines = [
        *HEADER,
        "import com.fasterxml.jackson.core.JsonGenerator;", "import java.io.IOException;", "import java.util.ArrayList;",
        "import java.util.Collections;", "import java.util.List;", "import java.util.Map;", "import java.util.TreeMap;", "",
        "/**",
        " * The requests the shim sends as the spec states them: one value class each (and for the",
        " * objects, deltas and rows in them), a field per field of the spec, and its writer, which writes",
        " * the fields in the spec's order ({@link Messages#encode} writes a request with them).",
        " */",
        "public final class RequestValues {",
        "  /** The SHA-256 of the spec's bytes this file was generated from (ContractSpecTest). */",
        f'  static final String SPEC_SHA256 = "{sha}";', "",
        "  private RequestValues() {", "  }", "",
        *javadoc("  ", spec["requests"]["envelope"]["meaning"].rstrip(".") + ": " + ", ".join(f["name"] for f in envelope) + "."),
        "  public abstract static class Request {",
        "    public final String type;", "    public final long epoch;", "",
        "    Request(String type, long epoch) {", "      this.type = type;", "      this.epoch = epoch;", "    }", "",
        "    /** Writes the whole request: the envelope, then its own fields. */",
        "    final void write(JsonGenerator g) throws IOException {", "      g.writeStartObject();",
        f"      g.writeNumberField(Contract.Requests.Envelope.{constant(envelope[0]['name'])}, Contract.VERSION);",
        f"      g.writeStringField(Contract.Requests.Envelope.{constant(envelope[1]['name'])}, type);",
        f"      g.writeNumberField(Contract.Requests.Envelope.{constant(envelope[2]['name'])}, epoch);",
        "      writeFields(g);", "      g.writeEndObject();", "    }", "",
        "    abstract void writeFields(JsonGenerator g) throws IOException;", "  }",
    ]
    for key, m in spec["requests"].items():
        if key != "envelope":
            lines += _request(key, m, spec)
    lines += [*_item_values(spec), *_delta(spec), *_row_values(spec)]
    lines += [
        "", "  private static void writeTexts(JsonGenerator g, String field, List<String> texts)",
        "      throws IOException {", "    g.writeArrayFieldStart(field);", "    for (String t : texts) {",
        "      g.writeString(t);", "    }", "    g.writeEndArray();", "  }",
        "", "  private static void writeNumbers(JsonGenerator g, String field, List<Long> values)",
        "      throws IOException {", "    g.writeArrayFieldStart(field);", "    for (long x : values) {",
        "      g.writeNumber(x);", "    }", "    g.writeEndArray();", "  }",
        "", "  /** An object of amounts, in the map's order (the tests' reply writers write theirs with it). */",
        "  static void writeAmounts(JsonGenerator g, String field, Map<String, Long> amounts)",
        "      throws IOException {", "    g.writeObjectFieldStart(field);",
        "    for (Map.Entry<String, Long> e : amounts.entrySet()) {", "      g.writeNumberField(e.getKey(), e.getValue());",
        "    }", "    g.writeEndObject();", "  }",
        "", "  private static void writeLabels(JsonGenerator g, String field, Map<String, Boolean> labels)",
        "      throws IOException {", "    g.writeObjectFieldStart(field);",
        "    for (Map.Entry<String, Boolean> e : labels.entrySet()) {",
        "      g.writeBooleanField(e.getKey(), e.getValue());", "    }", "    g.writeEndObject();", "  }",
    ]
    return "\n".join([*lines, "}"]) + "\n"


# ---------------------------------------------------------------------------- RequestReaders.java (tests)


def _read_value(f: dict[str, Any], e: str, spec: dict[str, Any]) -> str:
    """How the tests' reader reads field `f` from the node `e` (null when absent)."""
    kind, t = java_type(f, spec), f["type"]
    if t in ("text", "name", "reason"):
        return f"text({e})"
    if kind in ("int", "long"):
        return f"{'(int) ' if kind == 'int' else ''}number({e})"
    if kind == "Double":
        return f"decimal({e})"
    if t == "bool":
        return f"{e}.asBoolean()"
    if t == "any":
        return f"raw({e})" if kind == "String" else f"numbers({e})"
    return {"amounts": f"amounts({e})", "labels": f"labels({e})", "texts": f"texts({e})"}[t]


def _read_element(f: dict[str, Any], spec: dict[str, Any]) -> str:
    """How the tests' reader reads one element `y` of a list field."""
    kind = java_type(f, spec)
    if kind == "List<Long>":
        return "y.asLong()"
    if kind == "List<String>":
        return "y.asText()"
    section, item = _item_class(f, spec)
    return "delta(y)" if section == "deltas" else f"read{camel(item)}(y)"


def _read_request(key: str, m: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    name, fields = m["java_class"], m["fields"]
    given = [f for f in fields if f.get("required")]

    def field(f: dict[str, Any]) -> str:
        return f"r.get(Contract.Requests.{camel(key)}.{constant(f['name'])})"

    args = ["epoch", *(_read_value(f, field(f), spec) for f in given)]
    lines = ["", f"  static {name} read{name}(JsonNode r, long epoch) {{",
             *_signature("    ", f"{name} x = new {name}", args, ";")]
    for f in fields:
        if f in given:
            continue
        if f["type"] in ("labels", "texts"):
            add = "putAll" if f["type"] == "labels" else "addAll"
            lines.append(f"    x.{member(f)}.{add}({_read_value(f, field(f), spec)});")
        elif f["type"] in FILLED:
            elements = f"pairs({field(f)})" if f["type"] == "pairs" else f"elements({field(f)})"
            lines += [f"    for (JsonNode y : {elements}) {{", f"      x.{member(f)}.add({_read_element(f, spec)});", "    }"]
        else:
            lines.append(f"    x.{member(f)} = {_read_value(f, field(f), spec)};")
    return [*lines, "    return x;", "  }"]


def _read_items(spec: dict[str, Any]) -> list[str]:
    lines = []
    for name, objects in _classes(spec).items():
        fields = _union(objects)
        given = _given(fields, objects)
        for key, m in objects:
            own = {f["name"] for f in m["fields"]}
            read = {f["name"]: _read_value(f, f"n.get(Contract.Items.{camel(key)}.{constant(f['name'])})", spec)
                    for f in m["fields"]}
            args = [read.get(f["name"], PRIMITIVE_DEFAULTS.get(java_type(f, spec), "null")) for f in given]
            setters = [f".{_setter(f)}({read[f['name']]})" for f in fields if f["name"] in own and f not in given]
            lines += ["", f"  static {name} read{camel(key)}(JsonNode n) {{",
                      *_signature("    ", f"return new {name}", args, "" if setters else ";"),
                      *(f"        {c}{';' if i == len(setters) - 1 else ''}" for i, c in enumerate(setters)), "  }"]
    return lines


def _read_rows(spec: dict[str, Any]) -> list[str]:
    lines = []
    for key, m in spec["rows"].items():
        if "java_class" not in m or "tail_fields" not in m:
            continue
        name, tail = m["java_class"], m["tail_fields"]
        lines += ["", f"  static {name} read{camel(key)}(JsonNode r) {{", "    int end = r.size();"]
        optional = [f for f in tail if f.get("optional")]
        for f in optional:  # (the last element, told apart from an amount by its kind)
            kind = "isArray" if f["type"] == "cards" else "isTextual"
            cls = java_type(f, spec)
            read = "ints(r.get(end - 1))" if f["type"] == "cards" else "r.get(end - 1).asText()"
            lines += [f"    {cls} {member(f)} = null;",
                      f"    if (end > Contract.Rows.{camel(key)}.TAIL && r.get(end - 1).{kind}()) {{",
                      f"      {member(f)} = {read};", "      end--;", "    }"]
        args = [_read_value(f, f"r.get(Contract.Rows.{camel(key)}.{constant(f['name'])})", spec) for f in m["fields"]]
        args += [f"vector(r, Contract.Rows.{camel(key)}.TAIL, end)" for f in tail if not f.get("optional")]
        setters = "".join(f".{_setter(f)}({member(f)})" for f in optional)
        lines += [*_signature("    ", f"return new {name}", args, f"{setters};"), "  }"]
    return lines


def _read_delta(spec: dict[str, Any]) -> list[str]:
    lines = ["", "  static Delta delta(JsonNode d) {", "    String op = d.get(Contract.Ops.OP).asText();",
             "    switch (op) {"]
    for key, m in spec["deltas"].items():
        factory = f"Delta.{camel(key)[0].lower()}{camel(key)[1:]}"
        whole = next((k for k, i in spec["items"].items() if i["fields"] == m["fields"]), None)
        if whole is not None:
            args = [f"read{camel(whole)}(d)"]
        else:
            args = [_read_value(f, f"d.get(Contract.Deltas.{camel(key)}.{constant(f['name'])})", spec)
                    for f in m["fields"]]
        lines += [f"      case Contract.Ops.{constant(key)}:", *_signature("        ", f"return {factory}", args, ";")]
    return [*lines, "      default:", '        throw new IllegalArgumentException("unknown delta op " + op);',
            "    }", "  }"]


def java_request_readers(spec: dict[str, Any], sha: str) -> str:
    """The tests' readers of the requests (the core's side: only the fake core reads requests)."""
    requests = {k: m for k, m in spec["requests"].items() if k != "envelope"}
    lines = [
        *HEADER,
        "import com.fasterxml.jackson.databind.JsonNode;", "import java.util.ArrayList;",
        "import java.util.Collections;", "import java.util.Iterator;", "import java.util.LinkedHashMap;",
        "import java.util.List;", "import java.util.Map;", "import org.yarndrf.shim.RequestValues.AppInfo;",
        "import org.yarndrf.shim.RequestValues.AskRow;", "import org.yarndrf.shim.RequestValues.ContainerRow;",
        "import org.yarndrf.shim.RequestValues.Delta;", "import org.yarndrf.shim.RequestValues.Move;",
        "import org.yarndrf.shim.RequestValues.NodeInfo;", "import org.yarndrf.shim.RequestValues.NodeRow;",
        "import org.yarndrf.shim.RequestValues.Reload;", "import org.yarndrf.shim.RequestValues.Request;",
        "import org.yarndrf.shim.RequestValues.Schedule;", "import org.yarndrf.shim.RequestValues.Snapshot;", "",
        "/**",
        " * Reads the requests of {@link RequestValues} as the core does: every field of the spec, an",
        " * absent optional one as null (0, empty); an unknown type or op, or pairs of odd length, is an",
        " * IllegalArgumentException.",
        " */",
        "final class RequestReaders {",
        "  /** The SHA-256 of the spec's bytes this file was generated from (ContractSpecTest). */",
        f'  static final String SPEC_SHA256 = "{sha}";', "",
        "  private RequestReaders() {", "  }", "",
        "  /** A request after its envelope's version was checked. */",
        "  static Request read(JsonNode r) {",
        "    long epoch = r.get(Contract.Requests.Envelope.EPOCH).asLong();",
        "    String type = r.get(Contract.Requests.Envelope.TYPE).asText();",
        "    switch (type) {",
    ]
    for key, m in requests.items():
        lines += [f"      case Contract.Types.{constant(key)}:", f"        return read{m['java_class']}(r, epoch);"]
    lines += ["      default:", '        throw new IllegalArgumentException("unknown request type " + type);', "    }",
              "  }"]
    for key, m in requests.items():
        lines += _read_request(key, m, spec)
    lines += [*_read_items(spec), *_read_delta(spec), *_read_rows(spec)]
    lines += [
        "", "  private static String text(JsonNode x) {", "    return x == null || x.isNull() ? null : x.asText();", "  }",
        "", "  private static long number(JsonNode x) {", "    return x == null ? 0 : x.asLong();", "  }",
        "", "  private static Double decimal(JsonNode x) {", "    return x == null ? null : x.asDouble();", "  }",
        "", "  /** JSON kept as text (compact, as it came). */",
        "  private static String raw(JsonNode x) {", "    return x == null ? null : Messages.compactJson(x);", "  }",
        "", "  private static Iterable<JsonNode> elements(JsonNode x) {",
        "    return x == null ? Collections.<JsonNode>emptyList() : x;", "  }",
        "", "  private static Iterable<JsonNode> pairs(JsonNode x) {",
        "    if (x != null && x.size() % 2 != 0) {",
        '      throw new IllegalArgumentException("not a list of pairs: " + x);', "    }",
        "    return elements(x);", "  }",
        "", "  private static List<String> texts(JsonNode x) {", "    List<String> out = new ArrayList<>();",
        "    for (JsonNode y : elements(x)) {", "      out.add(y.asText());", "    }", "    return out;", "  }",
        "", "  private static List<Long> numbers(JsonNode x) {", "    if (x == null) {", "      return null;", "    }",
        "    List<Long> out = new ArrayList<>();", "    for (JsonNode y : x) {", "      out.add(y.asLong());", "    }",
        "    return out;", "  }",
        "", "  private static List<Integer> ints(JsonNode x) {", "    List<Integer> out = new ArrayList<>();",
        "    for (JsonNode y : x) {", "      out.add(y.asInt());", "    }", "    return out;", "  }",
        "", "  private static long[] vector(JsonNode row, int from, int end) {", "    long[] out = new long[end - from];",
        "    for (int i = 0; i < out.length; i++) {", "      out[i] = row.get(from + i).asLong();", "    }",
        "    return out;", "  }",
        "", "  private static Map<String, Long> amounts(JsonNode x) {", "    if (x == null) {", "      return null;",
        "    }", "    Map<String, Long> out = new LinkedHashMap<>();",
        "    for (Iterator<Map.Entry<String, JsonNode>> it = x.fields(); it.hasNext();) {",
        "      Map.Entry<String, JsonNode> e = it.next();", "      out.put(e.getKey(), e.getValue().asLong());", "    }",
        "    return out;", "  }",
        "", "  private static Map<String, Boolean> labels(JsonNode x) {",
        "    Map<String, Boolean> out = new LinkedHashMap<>();", "    if (x == null) {", "      return out;", "    }",
        "    for (Iterator<Map.Entry<String, JsonNode>> it = x.fields(); it.hasNext();) {",
        "      Map.Entry<String, JsonNode> e = it.next();", "      out.put(e.getKey(), e.getValue().asBoolean());",
        "    }", "    return out;", "  }",
    ]
    return "\n".join([*lines, "}"]) + "\n"
