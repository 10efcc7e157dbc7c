"""Every defect of issue 13's queue-file part, from its reproducer: what check-config accepted but
stopped scheduling, what crashed or hung it, and the limits that bound time and memory."""
from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import pytest

from scheduler import ConfigError, SchedulerCore, parse_config
from scheduler.bounded_yaml import MAX_BYTES, MAX_DEPTH, MAX_NODES
from scheduler.config import MAX_AMOUNT, MAX_ERRORS, MAX_QUEUES
from yarn_bridge.cli import main as cli
from yarn_bridge.reload import Reloader
from yarn_bridge.service import CoreService

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "java_shim" / "src" / "test" / "resources" / "queue-list-bounds.json"


def errors_of(text: str | bytes) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    return info.value.errors


def only_error(text: str | bytes) -> str:
    errors = errors_of(text)
    assert len(errors) == 1, errors
    return errors[0]


def leaf(fields: str) -> str:
    return f"queues: {{root: {{children: {{a: {fields}}}}}}}\n"


# ---------------------------------------------------------------- numbers the core or the shim cannot hold

@pytest.mark.parametrize("weight, path", [
    (".nan", "weight"), (".inf", "weight"), ("-.inf", "weight"), ("1.0e+999", "weight"),
    ("{vcores: .nan}", "weight.vcores"), ("{memory-mb: 1, vcores: .inf}", "weight.vcores"),
])
def test_a_weight_that_is_not_a_finite_number_is_refused(weight, path):
    error = only_error(leaf(f"{{weight: {weight}}}"))
    assert error.startswith(f"queues.root.children.a.{path}: must be a finite number, got ")


@pytest.mark.parametrize("key", ["node-locality-delay-s", "rack-locality-delay-s"])
@pytest.mark.parametrize("value, ok", [("0", True), ("0.25", True), ("3600", True), (".inf", False), (".nan", False),
                                       ("-0.5", False), ("3600.5", False), ("1.0e+300", False), ("'1s'", False)])
def test_a_locality_delay_is_a_finite_number_of_seconds_from_0_to_an_hour(key, value, ok):
    text = leaf(f"{{{key}: {value}}}")
    if ok:
        assert parse_config(text).queues()["root.a"] is not None
        core = SchedulerCore(parse_config(text))
        assert core.queues["root.a"].locality_delays[0 if key.startswith("node") else 1] == float(value)
    else:
        assert only_error(text).startswith(f"queues.root.children.a.{key}: must be ")


@pytest.mark.parametrize("weight, ok", [("0.000001", True), ("1000000", True), ("0.0000009", False),
                                        ("1000001", False), ("{vcores: 1.0e+7}", False), ("1.0e+300", False)])
def test_weights_lie_between_a_millionth_and_a_million(weight, ok):
    text = leaf(f"{{weight: {weight}}}")
    if ok:
        parse_config(text)
    else:
        assert "must be from 1e-06 to 1e+06" in only_error(text)


@pytest.mark.parametrize("field", ["weight: true", "weight: {vcores: false}", "min: {vcores: true}",
                                   "max: {vcores: true}", "max-running-apps: true", "node-locality-delay-s: false",
                                   "rack-locality-delay-s: true"])
def test_a_boolean_is_not_a_number(field):
    assert "got True" in only_error(leaf("{" + field + "}")) or "got False" in only_error(leaf("{" + field + "}"))


@pytest.mark.parametrize("field", [
    "min: {vcores: 18446744073709551621}",  # Jackson's asLong() read this as 5
    "max: {vcores: 18446744073709551621}",
    "max: {memory-mb: 9007199254740993}",
    "max-running-apps: 9223372036854775808",
    "min: {vcores: 1.0e+300}",  # a float with no fraction passes as a JSON-Schema integer
])
def test_an_integer_beyond_two_to_the_53_is_refused(field):
    assert "must be at most 9,007,199,254,740,992" in only_error(leaf("{" + field + "}"))


def test_integers_up_to_two_to_the_53_are_accepted_exactly():
    config = parse_config(leaf(f"{{min: {{vcores: {MAX_AMOUNT}}}, max: {{vcores: {MAX_AMOUNT}}}, "
                               f"max-running-apps: {MAX_AMOUNT}}}")
                          .replace("queues:", f"reservation: {{starvation-timeout-s: {MAX_AMOUNT}}}\nqueues:"))
    a = config.queues()["root.a"]
    assert a.min == {"vcores": 2**53} and a.max == {"vcores": 2**53} and a.max_running_apps == 2**53


def test_a_number_of_hundreds_of_digits_is_refused_without_being_converted():
    # float(10**400) raised OverflowError; int("9" * 5000) raises ValueError in Python 3.11
    for digits in ("9" * 400, "9" * 5000, "1:" * 300 + "1"):
        assert "a number of" in only_error(leaf(f"{{weight: {digits}}}"))


def test_a_timeout_that_is_not_finite_is_refused():
    assert "must be a finite number" in only_error("reservation: {starvation-timeout-s: .inf}\n"
                                                   "queues: {root: {children: {}}}")


# ---------------------------------------------------------------- the tree placement rules need

def test_root_must_be_a_parent_queue():
    # a leaf root with the `specified` rule raised AttributeError at every heartbeat
    error = only_error("placement: [{rule: specified}]\nqueues: {root: {}}")
    assert error.startswith("queues.root: must have children (root is always a parent queue")
    config = parse_config("placement: [{rule: specified}, {rule: reject}]\nqueues: {root: {children: {}}}")
    core = SchedulerCore(config)
    placed = core.submit_app("app", "u", "root")
    assert not placed.accepted and "is a parent queue" in placed.reason


@pytest.mark.parametrize("rules, expected", [
    ("[{rule: default, queue: root.x.y, create: true}]", "cannot create 'root.x.y': its parent 'root.x' is "
                                                         "not a parent queue"),
    ("[{rule: default, queue: 'root.a b'}]", "placement.0.queue: must be a queue path like 'root.a.b'"),
    ("[{rule: default, queue: 'root.'}]", "placement.0.queue: must be a queue path"),
    ("[{rule: user, parent: 'root..x'}]", "placement.0.parent: must be a queue path"),
    ("[{rule: user, parent: root.x}]", "placement.0.parent: 'root.x' is a leaf queue"),
])
def test_placement_targets_must_be_queues_placement_can_use(rules, expected):
    text = f"placement: {rules}\nqueues: {{root: {{children: {{x: {{}}}}}}}}\n"
    assert any(expected in e for e in errors_of(text)), errors_of(text)


# ---------------------------------------------------------------- YAML that used to crash, hang or mislead

def test_a_duplicate_key_is_refused_naming_the_key_and_both_lines():
    error = only_error("queues:\n  root:\n    children:\n      a: {weight: 1}\n      a: {weight: 5}\n")
    assert error == "queues.root.children.a: duplicate key, first on line 4 (line 5)"


@pytest.mark.parametrize("key, shown", [("5", "the key '5' is read as !!int"), ("~", "the key '~' is read as !!null"),
                                        ("no", "the key 'no' is read as !!bool"),
                                        ("1.5", "the key '1.5' is read as !!float"),
                                        ("2024-01-01", "the key '2024-01-01' is read as !!timestamp"),
                                        ("[a]", "a sequence is used as a key")])
def test_a_key_that_is_not_a_string_is_refused(key, shown):
    error = only_error(f"queues: {{root: {{children: {{{key}: {{}}}}}}}}")
    assert error.startswith(f"queues.root.children: {shown}") and "mapping keys must be strings" in error
    quoted = f"queues: {{root: {{children: {{'{key}' : {{}}}}}}}}"
    try:
        parse_config(quoted)
    except ConfigError as exc:
        assert not any("key" in e for e in exc.errors), exc.errors


def test_non_utf8_bytes_are_refused_naming_the_byte_offset():
    assert only_error(b"queues:\n  root: {children: {a\xff: {}}}\n") == "line 2: not UTF-8: byte 0xff at offset 29"


def test_deep_nesting_is_refused_at_a_fixed_depth():
    error = only_error("queues: {root: {children: " + "[" * 180 + "]" * 180 + "}}")
    assert f"nested more than {MAX_DEPTH} levels deep" in error


def test_the_598_byte_alias_bomb_is_refused_at_once():
    bomb = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
        f"{c}: &{c} [{','.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    start = time.perf_counter()
    error = only_error(bomb + "queues: {root: {children: {}}}\n")
    assert f"more than {MAX_NODES:,} YAML nodes" in error
    assert time.perf_counter() - start < 5  # a guard against a hang, not a speed target


def test_an_alias_tree_of_a_hundred_thousand_queues_is_refused():
    text = "x0: &q0 {weight: 1}\n" + "".join(
        f"x{i}: &q{i} {{children: {{{', '.join(f'c{j}: *q{i - 1}' for j in range(5))}}}}}\n" for i in range(1, 9))
    assert f"more than {MAX_NODES:,} YAML nodes" in only_error(text + "queues: {root: *q8}\n")


def test_anchors_aliases_and_merge_keys_within_the_limits_still_work():
    config = parse_config("queues:\n  root:\n    children:\n"
                          "      a: &base {weight: 2, max: {vcores: '50%'}}\n"
                          "      b: *base\n"
                          "      c: {<<: *base, weight: 3}\n")
    q = config.queues()
    assert q["root.b"].weight == 2.0 and q["root.c"].weight == 3.0 and q["root.c"].max == {"vcores": 0.5}


def test_an_alias_inside_the_node_it_names_is_refused():
    assert "is inside the node it names" in only_error("a: &a [*a]\nqueues: {root: {children: {}}}")


@pytest.mark.parametrize("value, tag", [("!!int abc", "!!int"), ("!!float x", "!!float"),
                                        ("!!bool maybe", "!!bool")])
def test_a_tagged_value_that_is_not_of_its_tag_is_refused(value, tag):
    assert f"is not a valid {tag}" in only_error(leaf(f"{{weight: {value}}}"))


@pytest.mark.parametrize("value", ["!!binary aGVsbG8=", "2001-01-01", "!!set {a}", "!!omap [a: 1]", "!mine x"])
def test_other_yaml_types_are_refused(value):
    assert "are not read here" in only_error(leaf(f"{{submit-acl: {value}}}"))


def test_a_file_above_the_size_limit_is_refused_before_it_is_parsed(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"queues: {root: {children: {}}}\n" + b"#" * MAX_BYTES)
    assert cli(["check-config", str(big)]) == 1
    with pytest.raises(ConfigError, match=f"at most {MAX_BYTES:,}"):
        Reloader(lambda: None, None, big).loader(big)


def test_more_queues_than_the_limit_are_refused():
    children = "".join(f"      q{i}: {{}}\n" for i in range(MAX_QUEUES))
    error = only_error(f"queues:\n  root:\n    children:\n{children}")
    assert error.startswith(f"queues: {MAX_QUEUES + 1:,} queues; a queue file may have at most {MAX_QUEUES:,}")


def test_errors_repeat_no_more_than_a_clipped_part_of_any_value():
    huge = "x" * 100_000
    for text in (leaf(f"{{order: {huge}}}"), leaf(f"{{{huge}: 1}}"), f"queues: {{root: {{children: {{{huge}.y: {{}}}}}}}}",
                 leaf(f"{{weight: [{', '.join(['1'] * 5000)}]}}"), leaf(f"{{submit-acl: [{huge}]}}")):
        for error in errors_of(text):
            assert len(error) < 400, error[:500]


def test_no_more_than_fifty_errors_are_listed():
    children = "".join(f"      q{i}: {{weight: -1}}\n" for i in range(200))
    errors = errors_of(f"queues:\n  root:\n    children:\n{children}")
    assert len(errors) == MAX_ERRORS + 1 and errors[-1] == "(top level): 150 more error(s) not shown"


def test_a_queue_name_with_a_trailing_newline_is_refused():
    assert "may only hold letters" in only_error('queues: {root: {children: {"a\\n": {}}}}')


# ---------------------------------------------------------------- every failure is a refusal

def test_a_bug_while_checking_is_a_refusal_naming_the_exception(monkeypatch):
    def broken(self):
        raise RuntimeError("boom")
    monkeypatch.setattr("scheduler.config._Semantics.check", broken)
    error = only_error("queues: {root: {children: {}}}")
    assert error.startswith("(top level): the file could not be checked: RuntimeError: 'boom'")


def test_check_config_refuses_every_reproducer_of_the_issue_without_a_traceback(tmp_path, capsys):
    files = {"nan.yaml": leaf("{weight: {vcores: .nan}}"), "key.yaml": "queues: {root: {children: {5: {}}}}",
             "bytes.yaml": b"queues: \xfe\n", "deep.yaml": "a: " + "[" * 180 + "]" * 180,
             "digits.yaml": leaf("{weight: " + "7" * 300 + "}")}
    for name, text in files.items():
        path = tmp_path / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        assert cli(["check-config", str(path)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"{path}: 1 error(s)") and "Traceback" not in err


def test_a_reload_that_fails_in_a_way_nobody_expected_is_refused_and_the_old_config_stays(tmp_path, caplog):
    good = tmp_path / "queues.yaml"
    good.write_text("queues: {root: {children: {a: {}}}}\n")
    service = CoreService(good)

    def loader(path):
        raise MemoryError("from the loader")
    reloader = Reloader(lambda: service.core, service.lock, good, loader=loader)
    result = reloader.reload()
    assert not result.accepted and result.version == 1
    assert result.errors == [f"{good}: (top level): the reload failed: MemoryError: 'from the loader' "
                             "(a yarn-drf bug; please report it)"]
    assert service.core.config is service.config


def test_a_reload_the_core_would_fail_to_install_leaves_the_running_core_untouched(tmp_path, monkeypatch):
    good = tmp_path / "queues.yaml"
    good.write_text("queues: {root: {children: {a: {}}}}\n")
    service = CoreService(good)
    core, config = service.core, service.config
    good.write_text("queues: {root: {children: {a: {}, b: {}}}}\n")
    # a queue's limits are computed from its policy while the new tree is built (a class of the
    # pure-Python policies module: patchable whether or not the core is compiled)
    monkeypatch.setattr("scheduler.policies.Policy.scale", lambda *args: 1 / 0)
    result = Reloader(lambda: service.core, service.lock, good).reload()
    assert not result.accepted and "ZeroDivisionError" in result.errors[0]
    assert service.core is core and core.config is config and set(core.queues) == {"root", "root.a"}


# ---------------------------------------------------------------- the queue list the shim reads

BOUNDS = f"""\
resources: [memory-mb, vcores, gpu-mem]
reservation: {{starvation-timeout-s: {MAX_AMOUNT}}}
queues:
  root:
    max-running-apps: {MAX_AMOUNT}
    submit-acl: "*"
    admin-acl: " ops"
    children:
      heavy:
        weight: 1000000
        min: {{memory-mb: {MAX_AMOUNT}, vcores: {MAX_AMOUNT}}}
        max: {{memory-mb: {MAX_AMOUNT}, vcores: {MAX_AMOUNT}, gpu-mem: 0}}
        max-running-apps: {MAX_AMOUNT}
      light: {{weight: 0.000001, max: "0.0001%"}}
      mixed:
        weight: {{memory-mb: 0.000001, vcores: 1000000, gpu-mem: 1}}
        max: {{vcores: "100%", gpu-mem: "0.5%", memory-mb: 1}}
        submit-acl: "a,b  c\\td"
      users: {{children: {{}}}}
"""


def test_the_queue_list_at_the_bounds_is_the_shims_golden_file(tmp_path):
    """QueueTreeTest feeds this file to the shim; rewrite it with YARN_DRF_WRITE_GOLDEN=1."""
    queues = tmp_path / "queues.yaml"
    queues.write_text(BOUNDS)
    sent = json.loads(json.dumps(CoreService(queues).queue_list(), allow_nan=False))
    if os.environ.get("YARN_DRF_WRITE_GOLDEN"):
        GOLDEN.write_text(json.dumps(sent, indent=1) + "\n")
    assert sent == json.loads(GOLDEN.read_text())
    numbers = [v for q in sent for v in _numbers(q)]
    assert all(math.isfinite(v) and abs(v) < 2**63 for v in numbers)


def _numbers(value):
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from _numbers(v)


def test_aliases_count_as_copies_toward_the_nesting_limit():
    # each queue nests the one before it through an alias: 150 levels from 150 lines
    chain = "".join(f"      q{i}: &q{i} {{children: {{c: *q{i - 1}}}}}\n" for i in range(1, 150))
    error = only_error("queues:\n  root:\n    children:\n      q0: &q0 {}\n" + chain)
    assert f"nested more than {MAX_DEPTH} levels deep (an alias counts as a copy" in error


def test_an_alias_is_as_deep_as_what_it_names_not_as_what_came_before_it():
    deep = "deep: " + "[" * 60 + "]" * 60 + "\n"  # 61 levels, before the anchor
    error = only_error(deep + "queues:\n  root:\n    children:\n      a: &a {weight: 2}\n      b: *a\n")
    assert error.startswith("deep: unknown field")
