"""Recovery of apps YARN already runs, and the bookkeeping of waiting apps and pending requests."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.model import App, PendingRequests, Request
from tests.bridge.invariants import check_accounting
from tests.core.helpers import make_core

NODE = {"memory-mb": 8192, "vcores": 8}
CONFIG = """
placement: [{rule: specified}, {rule: user, parent: root.users, create: true}, {rule: reject}]
queues:
  root:
    submit-acl: " "
    admin-acl: " "
    children:
      open: {submit-acl: "*"}
      closed: {submit-acl: "alice"}
      users: {submit-acl: "*", children: {}}
      team: {children: {a: {submit-acl: "*"}}}
"""


def test_a_recovered_app_goes_into_its_queue_whatever_placement_and_acls_now_say():
    core = make_core(CONFIG, {"n1": NODE})
    placed = core.recover_app("app_1", "bob", "root.closed")
    assert placed.accepted and placed.queue == "root.closed"
    assert core.apps["app_1"].runnable
    assert core.counters["apps_recovered_misplaced"] == 1, "bob may not submit there now: counted, not moved"
    assert not core.submit_app("app_2", "bob", "root.closed").accepted, "new submissions still obey the ACL"
    assert core.recover_app("app_3", "alice", "root.closed").accepted
    assert core.counters["apps_recovered_misplaced"] == 1, "alice may: nothing to count"


def test_a_queue_the_file_lacks_is_recreated_draining_with_its_parents():
    core = make_core(CONFIG, {"n1": NODE})
    core.recover_app("app_1", "bob", "root.gone.deeper")
    gone, deeper = core.queues["root.gone"], core.queues["root.gone.deeper"]
    assert deeper.draining and gone.draining and not deeper.dynamic
    assert core.apps["app_1"].queue is deeper
    assert core.submit_app("app_2", "bob", "root.gone.deeper").queue == "root.users.bob", \
        "a draining queue takes no new apps: the next rule places it"
    core.recover_app("app_3", "bob", "root.gone.deeper")
    assert set(deeper.apps) == {"app_1", "app_3"}
    check_accounting(core)


def test_a_queue_placement_creates_is_recreated_dynamic_not_draining():
    core = make_core(CONFIG, {"n1": NODE})
    placed = core.recover_app("app_1", "carol", "root.users.carol")
    q = core.queues["root.users.carol"]
    assert placed.accepted and q.dynamic and not q.draining
    assert core.counters["apps_recovered_misplaced"] == 0, "the user rule places carol there now too"
    assert core.submit_app("app_2", "carol", None).queue == "root.users.carol"


def test_a_queue_that_is_now_a_parent_cannot_take_the_app_and_says_why():
    core = make_core(CONFIG, {"n1": NODE})
    for queue in ("root.team", "team", "root", ""):
        placed = core.recover_app("app_1", "bob", queue)
        assert not placed.accepted and ("parent" in placed.reason or "not a queue path" in placed.reason), queue
    assert "app_1" not in core.apps and core.counters["apps_unrecoverable"] == 4


def test_a_recovered_app_counts_against_max_running_apps_in_submission_order():
    core = make_core("""
queues:
  root:
    children:
      q: {max-running-apps: 1}
""", {"n1": NODE})
    assert core.recover_app("app_1", "u", "root.q").reason == ""
    assert "max-running-apps" in core.recover_app("app_2", "u", "root.q").reason
    assert [a.id for a in core.queues["root.q"].waiting] == ["app_2"]
    core.remove_app("app_1")
    assert core.apps["app_2"].runnable and not core.queues["root.q"].waiting


# ---------------------------------------------------------------- max-running-apps, against an oracle

LIMITS = """
queues:
  root:
    max-running-apps: 5
    children:
      a: {max-running-apps: 2, children: {x: {max-running-apps: 1}, y: {}}}
      b: {max-running-apps: 3}
      c: {}
"""
LEAVES = ["root.a.x", "root.a.y", "root.b", "root.c"]


def _oracle_admit(apps: list[list], limits: dict[str, int]) -> None:
    """The rule stated plainly: oldest first, every waiting app whose queue and ancestors all have
    room runs, until none has (a full pass over all waiting apps after every change)."""
    def room(path: str) -> bool:
        parts = path.split(".")
        for i in range(1, len(parts) + 1):
            anc = ".".join(parts[:i])
            running = sum(1 for p, r in apps if r and (p == anc or p.startswith(anc + ".")))
            if anc in limits and running >= limits[anc]:
                return False
        return True
    changed = True
    while changed:
        changed = False
        for entry in apps:
            if not entry[1] and room(entry[0]):
                entry[1] = True
                changed = True
                break


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 3), st.integers(0, 30)), max_size=40))
def test_waiting_apps_run_oldest_first_as_limits_allow_exactly_as_a_full_rescan_decides(ops):
    core = make_core(LIMITS, {"n1": NODE})
    limits = {"root": 5, "root.a": 2, "root.a.x": 1, "root.b": 3}
    oracle: dict[str, list] = {}  # app -> [leaf, runnable], in submission order
    for n, (submit, leaf, pick) in enumerate(ops):
        if submit or not oracle:
            app_id = f"app_{n}"
            core.submit_app(app_id, "u", LEAVES[leaf])
            oracle[app_id] = [LEAVES[leaf], False]
        else:
            app_id = sorted(oracle)[pick % len(oracle)]
            core.remove_app(app_id)
            del oracle[app_id]
        _oracle_admit(list(oracle.values()), limits)
        assert {a: core.apps[a].runnable for a in oracle} == {a: r for a, (_, r) in oracle.items()}
        check_accounting(core)


# ---------------------------------------------------------------- pending requests in key order

@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 20), st.booleans()), max_size=60))
def test_pending_requests_iterate_in_key_order_through_any_adds_and_removes(ops):
    leaf = make_core("queues: {root: {children: {a: {}}}}\n", {}).queues["root.a"]
    app = App("app", "u", leaf, 0, (0,), 0.0)
    requests: dict[tuple, Request] = {}
    pending, expected = PendingRequests(), set()
    for priority, allocation, add in ops:
        key = (priority, allocation)
        req = requests.setdefault(key, Request(app, key, (1,), 0.0))
        if add:
            pending.add(req)
            expected.add(key)
        elif key in expected:
            pending.remove(req)
            expected.discard(key)
        assert (req in pending) == (key in expected)
        assert [r.key for r in pending] == sorted(expected) and len(pending) == len(expected)
    for req in list(pending):  # the decision's pattern: take the first, then look again
        pending.remove(req)
        expected.discard(req.key)
        assert [r.key for r in pending] == sorted(expected)
