"""Queue ACLs decide as Hadoop's AccessControlList does, so the core and the ResourceManager agree.

The shared vector file (java_shim/src/test/resources/acl-vectors.json) lists ACL texts, users and
groups with Hadoop's answer; the shim's AclAgreementTest checks the real AccessControlList (and the
shim's queues built from the core's queue list) against it, and these tests check scheduler/acl.py
and the text the core sends. The oracle below is written from Hadoop 3.4's source, character by
character, independently of scheduler/acl.py.
"""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler import SchedulerCore, load_config, parse_config
from scheduler.acl import Acl
from yarn_bridge.service import CoreService

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "java_shim" / "src" / "test" / "resources" / "acl-vectors.json"
JAVA_WHITESPACE = " \t\n\x0b\f\r"  # java.util.regex \s


# ---------------------------------------------------------------- the oracle (Hadoop's rules)

def java_trim(s: str) -> str:
    """String.trim(): drops every char <= U+0020 at both ends."""
    start, end = 0, len(s)
    while start < end and s[start] <= " ":
        start += 1
    while end > start and s[end - 1] <= " ":
        end -= 1
    return s[start:end]


def split_at_first_space(s: str) -> list[str]:
    """aclString.split(" ", 2)."""
    k = s.find(" ")
    return [s] if k < 0 else [s[:k], s[k + 1:]]


def trimmed_string_collection(s: str) -> set[str]:
    """StringUtils.getTrimmedStringCollection: trim, split at \\s*[,\\n]\\s*, drop empty entries."""
    entries, current = [], ""
    for ch in java_trim(s):
        if ch in ",\n":
            entries.append(current)
            current = ""
        else:
            current += ch
    entries.append(current)
    stripped = []
    for e in entries:
        while e and e[0] in JAVA_WHITESPACE:
            e = e[1:]
        while e and e[-1] in JAVA_WHITESPACE:
            e = e[:-1]
        stripped.append(e)
    return {e for e in stripped if e}


def hadoop_allows(acl: str, user: str, groups: list[str]) -> bool:
    """new AccessControlList(acl).isUserInList(ugi of user with groups)."""
    parts = split_at_first_space(acl)
    if any("*" in p and java_trim(p) == "*" for p in parts):
        return True
    users = trimmed_string_collection(parts[0])
    acl_groups = trimmed_string_collection(parts[1]) if len(parts) == 2 else set()
    return user in users or any(g in acl_groups for g in groups)


def vectors() -> list[dict]:
    return json.loads(VECTORS.read_text(encoding="utf-8"))["cases"]


# ---------------------------------------------------------------- tests

def test_the_core_decides_every_shared_vector_as_hadoop_does():
    cases = vectors()
    assert len(cases) >= 300
    wrong = [c for c in cases if Acl(c["acl"]).allows(c["user"], c["groups"]) != c["allowed"]]
    assert not wrong, wrong[:5]


def test_the_shared_vectors_are_what_hadoops_rules_say():
    wrong = [c for c in vectors() if hadoop_allows(c["acl"], c["user"], c["groups"]) != c["allowed"]]
    assert not wrong, wrong[:5]


ACL_TEXT = st.text(st.sampled_from(["a", "b", "g", "*", " ", ",", "\n", "\t", "\r", "\x0b", "\x01", "\x1f",
                                    "\u00a0", "\u2003", "é"]), max_size=12)
NAME = st.text(st.sampled_from(["a", "b", "g", "*", " ", "\t", "\x01", "\u00a0", "é", ","]), max_size=3)


@settings(max_examples=2000, deadline=None)
@given(ACL_TEXT, NAME, st.lists(NAME, max_size=3))
def test_acl_allows_exactly_whom_hadoops_access_control_list_allows(text, user, groups):
    assert Acl(text).allows(user, groups) == hadoop_allows(text, user, groups)


def test_a_group_acl_admits_the_groups_members_and_not_a_user_named_like_it():
    # conf/queues.yaml: root.groups.analysts has submit-acl " analysts" (the group, no users)
    core = SchedulerCore(load_config(REPO / "conf" / "queues.yaml"),
                         resource_types=["memory-mb", "vcores", "gpu-mem"])
    named_like_it = core.submit_app("app1", "analysts", "root.groups.analysts", groups=[])
    member = core.submit_app("app2", "dave", "root.groups.analysts", groups=["analysts"])
    assert not named_like_it.accepted and "may not submit" in named_like_it.reason
    assert member.accepted and member.queue == "root.groups.analysts"


def test_more_than_one_space_is_read_as_hadoop_reads_it_not_refused():
    config = parse_config("queues: {root: {submit-acl: ' ', admin-acl: ' ', "
                          "children: {a: {submit-acl: 'ann domain users,ops'}}}}")
    acl = config.queues()["root.a"].submit_acl
    assert acl.users == {"ann"} and acl.groups == {"domain users", "ops"}
    core = SchedulerCore(config)
    assert core.submit_app("1", "bob", "root.a", groups=["domain users"]).accepted
    assert not core.submit_app("2", "bob", "root.a", groups=["domain"]).accepted


def test_the_queue_list_carries_each_acl_text_unchanged_and_the_core_decides_it_the_same(tmp_path):
    # The shim builds its AccessControlList from this text (QueueSettings); the JUnit test runs
    # the same vectors through Hadoop's class and the shim's queues.
    cases = vectors()
    acls = sorted({c["acl"] for c in cases})
    children = "".join(f"      q{i}: {{submit-acl: {json.dumps(a)}}}\n" for i, a in enumerate(acls))
    queues = tmp_path / "queues.yaml"
    queues.write_text(f"queues:\n  root:\n    submit-acl: ' '\n    admin-acl: ' '\n    children:\n{children}",
                      encoding="utf-8")
    service = CoreService(queues)
    sent = {q["name"]: q for q in json.loads(json.dumps(service.queue_list()))}
    assert [sent[f"root.q{i}"]["submit_acl"] for i in range(len(acls))] == acls
    leaf = {a: f"root.q{i}" for i, a in enumerate(acls)}
    decided = [service.core.submit_app(f"app{n}", c["user"], leaf[c["acl"]], c["groups"]).accepted
               for n, c in enumerate(cases)]
    assert decided == [c["allowed"] for c in cases]
