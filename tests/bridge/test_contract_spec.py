"""The contract's one spec, yarn_bridge/contract.yaml, and what `make contract` generates from it:
the Python tables (contract_tables.py) and reply encoders (contract_replies.py), the Java constants
(Contract.java; the JUnit ContractSpecTest checks its fingerprint of the spec), reply value
classes (ReplyValues.java) and request value classes with their writers (RequestValues.java), the
tests' Java reply writers and request readers, and docs/bridge.md's field tables and version history. A generated file that differs from what the spec generates now fails, with the head of
the diff; so does a spec edited without regenerating."""
from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path

import pytest

from yarn_bridge import contract_gen, protocol
from yarn_bridge import contract_replies as replies
from yarn_bridge import contract_tables as tables
from yarn_bridge.service import CoreService

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = Path(__file__).with_name("contract")


def stale(spec_text: str) -> dict[str, str]:
    """Each generated file that differs from what `spec_text` generates: the head of its diff."""
    out = {}
    page = (ROOT / contract_gen.BRIDGE_PAGE).read_text()
    for path, text in contract_gen.generate(spec_text, page).items():
        committed = (ROOT / path).read_text()
        if committed != text:
            diff = difflib.unified_diff(committed.splitlines(), text.splitlines(), f"{path} (committed)",
                                        f"{path} (generated)", lineterm="", n=1)
            out[str(path)] = "\n".join(list(diff)[:30])
    return out


def test_every_generated_file_is_what_the_spec_generates_now():
    differ = stale((ROOT / contract_gen.SPEC).read_text())
    assert not differ, "run `make contract`, the generated files are stale:\n" + "\n".join(differ.values())


# Every generated file but the Python reply encoders carries the spec's fingerprint: stale after any edit.
FINGERPRINTED = (contract_gen.PYTHON_TABLES, contract_gen.JAVA_CONSTANTS, contract_gen.JAVA_REPLY_VALUES,
                 contract_gen.JAVA_REPLY_WRITERS, contract_gen.JAVA_REQUEST_VALUES, contract_gen.JAVA_REQUEST_READERS,
                 contract_gen.BRIDGE_PAGE)


@pytest.mark.parametrize("after, added, also", [
    ('{name: places, type: texts, required: true, since: 6, meaning: "node ids (host:port) and racks"}',
     "{name: until_ms, type: wall_ms, since: 7, meaning: a new delta field}", ()),
    ('{name: kill_in_ms, type: long, required: true, since: 6, meaning: "milliseconds until the kill (0 in kill)"}',
     "{name: grace_ms, type: long, since: 7, meaning: a new reply field}", (contract_gen.PYTHON_REPLIES,)),
])
def test_a_field_added_to_the_spec_without_regenerating_makes_the_generated_files_stale(after, added, also):
    text = (ROOT / contract_gen.SPEC).read_text()
    field = f"      - {after}\n"
    assert field in text
    edited = text.replace(field, f"{field}      - {added}\n")
    assert set(stale(edited)) == {str(p) for p in (*FINGERPRINTED, *also)}


def test_the_generated_encoders_write_the_specs_fields_in_its_order_leaving_out_the_optional_ones_not_given():
    assert list(replies.assignment("a1", "app", "n", "root.a", 1, 0, {"memory": 1})) == list(
        tables.REPLY_ITEMS["assignment"][:-1])
    assert list(replies.assignment("a1", "app", "n", "root.a", 1, 0, {}, [0])) == list(tables.REPLY_ITEMS["assignment"])
    assert list(json.loads(replies.move_reply(False, None, "no"))) == ["v", "ok", *tables.REPLIES["move"]]
    assert json.loads(replies.error_reply("bad")) == {"v": tables.VERSION, "ok": False, "error": "bad"}
    assert replies.preemption_state([], [])["v"] == tables.STATE_VERSION


def test_the_spec_fingerprint_is_of_the_spec_as_committed():
    assert tables.SPEC_SHA256 == hashlib.sha256((ROOT / contract_gen.SPEC).read_bytes()).hexdigest()


def test_every_checked_type_has_its_test_and_every_delta_op_its_handler(tmp_path):
    assert set(protocol.TESTS) == set(tables.WHAT)
    queues = tmp_path / "queues.yaml"
    queues.write_text((CONTRACT / "queues.yaml").read_text())
    assert set(CoreService(queues)._on_delta) == set(protocol.DELTA_OPS)


def test_every_field_of_the_golden_deltas_nodes_apps_and_submissions_is_in_the_spec():
    requests = [e["message"] for name in ("snapshot", "schedule") for e in
                json.loads((CONTRACT / f"{name}.request.json").read_text())["examples"]]
    seen = 0
    for message in requests:
        for d in message.get("deltas", []):
            assert set(d) - {"op"} <= set(protocol.DELTAS[d["op"]].names), d
            seen += 1
        for kind, items in (("node", message.get("nodes", []) if message["type"] == "snapshot" else []),
                            ("app", message.get("apps", [])), ("submission", message.get("submissions", []))):
            for item in items:
                assert set(item) <= set(protocol.ITEMS[kind].names), (kind, item)
                seen += 1
    assert seen > 10


def in_spec_order(fields, names: tuple[str, ...]) -> bool:
    """Whether `fields` are some of `names`, in their order (the optional ones may be absent)."""
    return all(f in names for f in fields) and [n for n in names if n in fields] == list(fields)


def test_every_golden_reply_has_the_specs_fields_in_the_specs_order():
    """The replies are what the real service writes (test_contract.py): its encoders follow the spec."""
    items = {"assignments": "assignment", "placements": "placement", "preempt": "preemption", "kill": "preemption",
             "queues": "queue_entry", "queues_built": "queue_entry"}
    seen = set()
    for path in sorted(CONTRACT.glob("*.reply.json")):
        for example in json.loads(path.read_text())["examples"]:
            message = example.get("message")
            if message is None:
                continue  # (invalid.reply.json: texts the shim refuses)
            envelope, rest = list(message)[:2], list(message)[2:]
            assert envelope == ["v", "ok"], example["name"]
            kinds = [k for k, names in tables.REPLIES.items() if k != "envelope" and in_spec_order(rest, names)]
            assert kinds or rest == ["error"], f"{example['name']}: {rest} is no reply of the spec"
            for field, kind in items.items():
                for item in message.get(field) or []:
                    assert in_spec_order(list(item), tables.REPLY_ITEMS[kind]), (example["name"], field, list(item))
                    seen.add(kind)
            state = message.get("preemption_state")
            if state is not None:
                assert in_spec_order(list(state), tables.REPLY_ITEMS["preemption_state"])
                for kind, field in (("mark", "marks"), ("leaf", "leaves")):
                    for item in state[field]:
                        assert in_spec_order(list(item), tables.REPLY_ITEMS[kind]), (example["name"], list(item))
                        seen.add(kind)
    assert seen == {"assignment", "placement", "preemption", "queue_entry", "mark", "leaf"}


@pytest.mark.parametrize("after, added, constant, member, written, read", [
    ('{name: rack, type: text, since: 1, meaning: "its rack (absent: /default-rack)"}',
     "{name: zone, type: text, since: 7, meaning: a new node field}",
     'ZONE = "zone";', "public String zone;",
     ["if (x.zone != null) {", "g.writeStringField(Contract.Items.Node.ZONE, x.zone);",
      "public NodeInfo withZone(String zone) {"],
     ".withZone(text(n.get(Contract.Items.Node.ZONE)))"),
    ('{name: places, type: texts, required: true, since: 6, meaning: "node ids (host:port) and racks"}',
     "{name: until_ms, type: wall_ms, since: 7, meaning: a new delta field}",
     'UNTIL_MS = "until_ms";', "public final long untilMs;",
     ["g.writeNumberField(Contract.Deltas.Blacklist.UNTIL_MS, untilMs);",
      "public static Delta blacklist(String app, List<String> places, long untilMs) {"],
     "number(d.get(Contract.Deltas.Blacklist.UNTIL_MS))"),
])
def test_a_request_field_added_to_the_spec_is_in_the_generated_java_value_class_writer_and_tests_reader(
        after, added, constant, member, written, read):
    """The Java request side follows the spec: a new field gets its constant, its member, its write
    (an optional one left out when null) and its read in the tests' reader."""
    text = (ROOT / contract_gen.SPEC).read_text()
    field = f"      - {after}\n"
    assert field in text
    files = contract_gen.generate(text.replace(field, f"{field}      - {added}\n"),
                                  (ROOT / contract_gen.BRIDGE_PAGE).read_text())
    values = files[contract_gen.JAVA_REQUEST_VALUES]
    assert f"public static final String {constant}" in files[contract_gen.JAVA_CONSTANTS]
    assert member in values
    for line in written:
        assert line in values, line
    assert read in files[contract_gen.JAVA_REQUEST_READERS]
