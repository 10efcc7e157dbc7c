"""Placement never creates a queue the configuration could not name: user and group names become
queue names only when they are valid ones (after FairScheduler's `_dot_` convention)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler import SchedulerCore, load_config, parse_config
from scheduler.config import QUEUE_PATH

REPO = Path(__file__).resolve().parents[2]
CREATING = """\
placement:
  - {rule: specified, create: true}
  - {rule: user, parent: root.users, create: true}
  - {rule: primary-group, parent: root.groups, create: true}
  - {rule: reject}
queues:
  root:
    children:
      users: {children: {}}
      groups: {children: {}}
"""


def documented_core() -> SchedulerCore:
    return SchedulerCore(load_config(REPO / "conf" / "queues.yaml"), resource_types=["memory-mb", "vcores", "gpu-mem"])


@pytest.mark.parametrize("user", ["", "../x", " alice", "alice ", "a b", "jos\u00e9", "a/b", "x" * 200 + "!"])
def test_a_user_name_that_is_no_queue_name_passes_to_the_next_rule_with_its_reason(user):
    core = SchedulerCore(parse_config(CREATING))
    placed = core.submit_app("app", user, groups=[])
    assert not placed.accepted
    assert "user: user name " in placed.reason and "cannot be a queue name" in placed.reason
    assert set(core.queues) == {"root", "root.users", "root.groups"}
    assert len(placed.reason) < 600


def test_with_the_documented_file_an_invalid_user_name_falls_through_to_the_default_queue():
    core = documented_core()
    for n, user in enumerate(["", "../x", " alice"]):
        placed = core.submit_app(f"app{n}", user)
        assert placed.accepted and placed.queue == "root.default", placed
    assert not [p for p in core.queues if p.startswith("root.users.")]


def test_dots_in_names_become_dot_as_in_fair_scheduler():
    core = SchedulerCore(parse_config(CREATING))
    assert core.submit_app("1", "first.last").queue == "root.users.first_dot_last"
    assert core.submit_app("2", "../x", groups=["ops.team"]).queue == "root.groups.ops_dot_team"


def test_a_group_name_that_is_no_queue_name_is_refused_with_its_reason():
    core = SchedulerCore(parse_config(CREATING))
    placed = core.submit_app("1", "", groups=["domain users"])
    assert not placed.accepted and "primary-group: group name 'domain users' cannot be a queue name" in placed.reason


@pytest.mark.parametrize("requested", ["root.", "root..a", "root.a/b", "root.users.", "root.a b", "root.\u00e9"])
def test_a_requested_queue_that_is_no_queue_path_is_not_created(requested):
    core = SchedulerCore(parse_config(CREATING))
    placed = core.submit_app("app", "", queue=requested)
    assert not placed.accepted
    assert "specified: cannot create" in placed.reason
    assert set(core.queues) == {"root", "root.users", "root.groups"}


NAMES = st.text(st.sampled_from(["a", "Z", "0", "_", "-", ".", " ", "/", "\u00e9", "\t", "\n", "*"]), max_size=6)


@settings(max_examples=500, deadline=None)
@given(NAMES, st.lists(NAMES, max_size=2), st.one_of(st.none(), NAMES.map(lambda s: "root." + s), NAMES))
def test_every_queue_placement_creates_is_a_valid_queue_path(user, groups, requested):
    core = SchedulerCore(parse_config(CREATING))
    placed = core.submit_app("app", user, queue=requested, groups=groups)
    assert all(re.match(QUEUE_PATH, path) for path in core.queues), sorted(core.queues)
    if placed.accepted:
        assert placed.queue in core.queues and core.queues[placed.queue].is_leaf
    cleaned = user.replace(".", "_dot_")
    if re.fullmatch(r"[A-Za-z0-9_-]+", cleaned) and requested is None:
        assert placed.queue == f"root.users.{cleaned}"
