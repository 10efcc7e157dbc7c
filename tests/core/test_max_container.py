"""A queue's `max-container`: the largest container its apps may ask for, inherited down the tree,
validated against the ancestors', and sent to the shim in force (the queue list's `max_container`)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler import ConfigError, SchedulerCore, parse_config
from scheduler.config import max_container_of
from yarn_bridge import protocol

TREE = """\
resources: [memory-mb, vcores, gpu-mem]
queues:
  root:
    max-container: {memory-mb: 8192}
    children:
      gpu: {max-container: {vcores: 4, gpu-mem: 16384}}
      batch:
        children:
          small: {max-container: {memory-mb: 2048}}
          rest: {}
"""


def entries(text: str) -> dict[str, dict]:
    core = SchedulerCore(parse_config(text))
    return {path: protocol.queue_entry(path, q) for path, q in core.queues.items()}


def test_each_queue_gets_its_own_amounts_over_its_ancestors():
    got = {path: e.get("max_container") for path, e in entries(TREE).items()}
    assert got == {
        "root": {"memory-mb": 8192},
        "root.gpu": {"memory-mb": 8192, "vcores": 4, "gpu-mem": 16384},
        "root.batch": {"memory-mb": 8192},
        "root.batch.small": {"memory-mb": 2048},
        "root.batch.rest": {"memory-mb": 8192},
    }


def test_a_tree_without_max_container_sends_no_field():
    text = "queues:\n  root:\n    children:\n      a: {}\n"
    assert all("max_container" not in e for e in entries(text).values())


@pytest.mark.parametrize("text, expected", [
    ("queues:\n  root:\n    max-container: {memory-mb: 4096}\n    children:\n"
     "      a: {max-container: {memory-mb: 8192}}\n",
     "queues.root.children.a.max-container.memory-mb: 8192 is above 4096, the max-container root sets"),
    ("queues:\n  root:\n    children:\n      a: {max-container: {vcores: 0}}\n",
     "queues.root.children.a.max-container.vcores: must be at least 1"),
    ("queues:\n  root:\n    children:\n      a: {max-container: {memory-mb: -1}}\n",
     "queues.root.children.a.max-container.memory-mb: must be >= 0"),
    ("queues:\n  root:\n    children:\n      a: {max-container: {memory-mb: 1.5}}\n",
     "queues.root.children.a.max-container.memory-mb: must be an integer"),
    ("queues:\n  root:\n    children:\n      a: {max-container: 4096}\n",
     "queues.root.children.a.max-container: must be a mapping"),
    ("resources: [memory-mb, vcores]\nqueues:\n  root:\n    children:\n"
     "      a: {max-container: {gpu-mem: 1}}\n",
     "queues.root.children.a.max-container.gpu-mem: unknown resource type"),
])
def test_a_bad_max_container_is_refused_naming_where(text, expected):
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert any(e.startswith(expected) for e in info.value.errors), info.value.errors


def test_a_grandchild_may_not_widen_a_grandparents_amount():
    text = ("queues:\n  root:\n    children:\n      p:\n        max-container: {memory-mb: 4096}\n"
            "        children:\n          q:\n            children:\n"
            "              r: {max-container: {memory-mb: 5000}}\n")
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert "max-container root.p sets" in info.value.errors[0]


# A chain of queues, each setting some amounts no larger than what it inherits.
_chain = st.lists(st.dictionaries(st.sampled_from(["memory-mb", "vcores", "gpu-mem"]),
                                  st.integers(1, 10_000), max_size=3), min_size=1, max_size=5)


@settings(max_examples=200, deadline=None)
@given(_chain)
def test_the_limit_in_force_is_the_smallest_along_the_path(amounts):
    # Build the file from the chain, lowering each amount to what its ancestors allow (so it parses).
    allowed: dict[str, int] = {}
    written = []
    for own in amounts:
        own = {r: min(v, allowed.get(r, v)) for r, v in own.items()}
        allowed.update(own)
        written.append(own)
    lines, indent = ["queues:", "  root:"], "    "
    for i, own in enumerate(written):
        if own:
            lines.append(f"{indent}max-container: {{{', '.join(f'{r}: {v}' for r, v in own.items())}}}")
        lines.append(f"{indent}children:")
        indent += "  "
        lines.append(f"{indent}q{i}:" + (" {}" if i == len(written) - 1 else ""))
        indent += "  "
    config = parse_config("\n".join(lines) + "\n")
    chain = list(config.root.walk())
    leaf_limit = max_container_of(chain)
    # Oracle: per type, the minimum over every queue on the path that sets it.
    oracle: dict[str, int] = {}
    for own in written:
        for r, v in own.items():
            oracle[r] = min(v, oracle.get(r, v))
    assert leaf_limit == oracle
