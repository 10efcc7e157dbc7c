"""Users inside a leaf (`user-limits`) against references written here, not the core's code.

The allocation reference is test_hdrf's brute-force H-DRF with the users of a leaf with
user-limits one more level of it: each user is a child of its leaf, weighted by its user-limits
weight, holding its apps' asks and usage. So the container goes to the user with the lowest
weighted dominant share among the users with a request that fits the node's room (DRFH), and the
leaf's share among its siblings is made from its users' vectors as a parent's is from its
children's: each cut back to the lowest share among its users that can use the node. The
admission reference keeps, per user, the apps in submission order and starts the oldest waiting
app whose user and queue have room.
"""
from __future__ import annotations

import argparse
import itertools
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.commands import check_config
from scheduler.config import ConfigError, parse_config
from scheduler.explain import targets, why_pending
from tests.bridge.invariants import check_accounting
from tests.core.helpers import make_core, settle
from tests.core.test_hdrf import (TYPES, Ref, assert_lowest_at_every_level, evaluate, fits, reference_settle, shapes,
                                  walk, weight, weights, wshare)


def user_ref(leaf: str, name: str, weight_: float, asks: list) -> Ref:
    """A user of a leaf as the reference sees it: one more level of H-DRF, a child of its leaf
    weighted by its user-limits weight, holding its apps' asks and usage."""
    return Ref(f"{leaf}.{name}", (weight_,) * len(TYPES), asks=[[s, n] for s, n in asks])


def app_of(path: str, leaves_with_users: set[str]) -> str:
    """The app the core runs for a reference leaf: `<leaf>` for a leaf, `<leaf>/<user>` for a user."""
    parent, _, name = path.rpartition(".")
    return f"{parent}/{name}" if parent in leaves_with_users else path


# users asking for one resource only (H-DRF's starvation shape) as well as for mixes
user_shapes = st.one_of(shapes, st.sampled_from([(1, 0, 0), (0, 1, 0), (0, 0, 1)]))
user_lists = st.lists(st.tuples(weight, st.lists(st.tuples(user_shapes, st.integers(1, 25)), min_size=1, max_size=2)),
                      min_size=1, max_size=4)


def trees(depth: int):
    leaf = st.tuples(st.just("leaf"), weights, st.one_of(st.none(), user_lists),
                     st.lists(st.tuples(shapes, st.integers(1, 25)), max_size=2))
    if depth == 0:
        return leaf
    return st.one_of(leaf, st.tuples(st.just("node"), weights, st.lists(trees(depth - 1), min_size=2, max_size=3)))


@st.composite
def clusters(draw):
    top = draw(st.lists(trees(1), min_size=1, max_size=3))
    nodes = draw(st.lists(st.tuples(*[st.integers(0, 12) for _ in TYPES]), min_size=1, max_size=5))
    return top, nodes


def prepare(cluster):
    """(reference tree, leaves with users, nodes, capacity, core) of a drawn cluster. A leaf
    without users holds one app of user "u" (named by the leaf); each user of a leaf with users one
    app (named <leaf>/<user>), and is a child of its leaf in the reference tree."""
    top, nodes = cluster
    lines = [f"resources: [{', '.join(TYPES)}]", "reservation: {starvation-timeout-s: null}", "queues:", "  root:",
             "    children:"]
    counter = itertools.count()
    users: set[str] = set()
    apps: list[tuple[str, str, str, list]] = []  # (app id, user, leaf, asks)

    def text(w):
        return f"{w:g}" if isinstance(w, float) else "{" + ", ".join(f"{t}: {x:g}" for t, x in zip(TYPES, w)) + "}"

    def add(node, path: str, indent: int) -> Ref:
        name = f"q{next(counter)}"
        full = f"{path}.{name}"
        w = node[1]
        vec = (w,) * len(TYPES) if isinstance(w, float) else w
        lines.extend([f"{' ' * indent}{name}:", f"{' ' * indent}  weight: {text(w)}"])
        if node[0] == "node":
            lines.append(f"{' ' * indent}  children:")
            return Ref(full, vec, children=[add(c, full, indent + 4) for c in node[2]])
        drawn_users, own_asks = node[2], node[3]
        if drawn_users is None:
            apps.append((full, "u", full, own_asks))
            return Ref(full, vec, asks=[[s, n] for s, n in own_asks])
        named = ", ".join(f"user{i}: {{weight: {w:g}}}" for i, (w, _) in enumerate(drawn_users))
        lines.append(f"{' ' * indent}  user-limits: {{users: {{{named}}}}}")
        users.add(full)
        apps.extend((f"{full}/user{i}", f"user{i}", full, asks) for i, (_, asks) in enumerate(drawn_users))
        return Ref(full, vec, children=[user_ref(full, f"user{i}", w, asks) for i, (w, asks) in enumerate(drawn_users)])

    root = Ref("root", (1.0,) * len(TYPES), children=[add(t, "root", 6) for t in top])
    core = make_core("\n".join(lines) + "\n", {f"n{i}": dict(zip(TYPES, n)) for i, n in enumerate(nodes)},
                     resource_types=TYPES)
    for app_id, user, leaf, asks in apps:
        if asks:
            assert core.submit_app(app_id, user, leaf).accepted
            for priority, (shape, count) in enumerate(asks, start=1):
                core.update_request(app_id, priority, dict(zip(TYPES, shape)), count)
    return root, users, nodes, tuple(map(sum, zip(*nodes))), core


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_each_users_allocation_settles_within_one_container_of_the_reference(cluster):
    root, users, nodes, capacity, core = prepare(cluster)
    settle(core)
    check_accounting(core)
    expected = {app_of(path, users): n for path, n in reference_settle(root, nodes, capacity).items()}
    got = {app_id: len(app.containers) for app_id, app in core.apps.items()}
    for app_id in set(got) | set(expected):
        assert abs(got.get(app_id, 0) - expected.get(app_id, 0)) <= 1, (app_id, got, expected)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_every_container_in_a_leaf_with_users_goes_to_its_lowest_share_user_with_a_fitting_request(cluster):
    _, _, _, capacity, core = prepare(cluster)
    progress = True
    while progress:
        progress = False
        for node_id, node in core.nodes.items():
            room = [c - a for c, a in zip(node.capacity, node.allocated)]
            users = [(q.path, u.name, wshare(u.usage, (u.weight,) * len(TYPES), capacity),
                      any(fits(r.capability, room) for a in q.apps.values() if a.user == u.name for r in a.pending))
                     for q in core.queues.values() if q.users for u in q.users.values()]
            got = core.on_heartbeat(node_id, limit=1)
            check_accounting(core)  # (what a heartbeat set aside is back in its heaps)
            if not got:
                continue
            progress = True
            app = core.apps[got[0].app_id]
            if app.owner is None:
                continue
            mine = next(share for leaf, name, share, _ in users if (leaf, name) == (app.queue.path, app.user))
            for leaf, name, share, fitting in users:
                if leaf == app.queue.path and fitting:
                    assert share >= mine * (1 - 1e-9) - 1e-12, (leaf, name, share, app.user, mine)


def sync(refs: dict[str, Ref], users: set[str], core) -> None:
    """The reference leaves (and users) take the core's usage and pending asks."""
    for path, ref in refs.items():
        if ref.children:
            continue
        leaf, _, name = path.rpartition(".")
        if leaf in users:
            user = core.queues[leaf].users.get(name)
            ref.usage = list(user.usage) if user is not None else [0] * len(TYPES)
            apps = [a for a in core.queues[leaf].apps.values() if a.user == name]
        else:
            ref.usage = list(core.queues[path].usage)
            apps = list(core.queues[path].apps.values())
        ref.asks = [[r.capability, r.count] for a in apps for r in sorted(a.pending, key=lambda r: r.key)]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters())
def test_every_container_goes_to_the_lowest_share_sibling_with_a_fitting_request_at_every_level_users_included(
        cluster):
    """At every level from the user up, the user or queue the container went through has the
    lowest H-DRF share (the reference's, recomputed for the node's room) among its siblings with
    a request that fits: so a leaf with users competes with the share its users make."""
    root, users, _, capacity, core = prepare(cluster)
    refs = {q.path: q for q in walk(root)}
    progress = True
    while progress:
        progress = False
        for node_id, node in core.nodes.items():
            room = [c - a for c, a in zip(node.capacity, node.allocated)]
            sync(refs, users, core)
            values: dict[str, tuple[float, bool]] = {}
            evaluate(root, room, capacity, values)
            got = core.on_heartbeat(node_id, limit=1)
            if not got:
                continue
            progress = True
            app = core.apps[got[0].app_id]
            assert_lowest_at_every_level(refs, values, app.queue.path if app.owner is None
                                         else f"{app.queue.path}.{app.user}")


# ---------------------------------------------------------------- H-DRF's starvation example, one level down

STARVING = """
resources: [vcores, gpu-mem]
queues:
  root:
    children:
      n1: {}
      n2: {user-limits: {}}
"""
STARVING_APPS = {"gpu1": ("n1", "u0", {"gpu-mem": 1}), "cpu_u1": ("n2", "u1", {"vcores": 1}),
                 "gpu_u2": ("n2", "u2", {"gpu-mem": 1})}


def starving_core():
    return make_core(STARVING, {f"h{i}": {"vcores": 1, "gpu-mem": 1} for i in range(10)},
                     resource_types=["vcores", "gpu-mem"])


def usage_of(core) -> dict[str, dict[str, int]]:
    return {a: info["usage"] for a, info in core.snapshot()["apps"].items()}


@pytest.mark.parametrize("order", list(itertools.permutations(STARVING_APPS)))
def test_a_user_is_not_starved_by_another_users_cpu_demand_in_its_leaf_in_any_arrival_order(order):
    """test_hdrf's starvation example with n2's child queues turned into users of n2: u1 takes
    the CPUs nobody else wants; n2's share must not count them against u2, which gets half the
    GPUs as n2_2 does. Counting the leaf's whole usage (naive hierarchical DRF) gives n1 all ten."""
    core = starving_core()
    for app in order:
        queue, user, shape = STARVING_APPS[app]
        assert core.submit_app(app, user, queue).accepted
        core.update_request(app, 1, shape, 100)
    settle(core)
    usage = usage_of(core)
    assert usage["gpu1"]["gpu-mem"] == 5 and usage["gpu_u2"]["gpu-mem"] == 5
    assert usage["cpu_u1"]["vcores"] == 10


def test_a_user_arriving_after_another_took_every_cpu_of_its_leaf_still_gets_half_the_gpus():
    core = starving_core()
    core.submit_app("cpu_u1", "u1", "n2")
    core.update_request("cpu_u1", 1, {"vcores": 1}, 100)
    settle(core)
    for app in ("gpu1", "gpu_u2"):
        queue, user, shape = STARVING_APPS[app]
        core.submit_app(app, user, queue)
        core.update_request(app, 1, shape, 100)
    settle(core)
    usage = usage_of(core)
    assert usage["gpu1"]["gpu-mem"] == usage["gpu_u2"]["gpu-mem"] == 5


# ---------------------------------------------------------------- max-running-apps per user

def limited(queue_max: int | None, user_max: int | None, alice_max: int | None) -> str:
    """Leaf `research` with these max-running-apps (None: the key left out, unlimited)."""
    def key(value):
        return "" if value is None else f"max-running-apps: {value}, "
    return ("queues: {root: {children: {research: {" + key(queue_max) + "user-limits: {" + key(user_max)
            + "users: {alice: {" + key(alice_max).rstrip(", ") + "}}}}}}}\n")


NODES = {"n1": {"memory-mb": 64 * 1024, "vcores": 64}}


class Admission:
    """The reference: apps of each user in submission order; the oldest waiting app whose user and
    queue have room starts whenever one can."""

    def __init__(self, queue_max: int | None, limits: dict[str, int | None]) -> None:
        self.queue_max, self.limits = queue_max, limits
        self.live: list[tuple[str, str]] = []  # (app, user) in submission order
        self.running: set[str] = set()

    def room(self, user: str) -> bool:
        mine = sum(app in self.running for app, u in self.live if u == user)
        limit = self.limits[user]
        return (limit is None or mine < limit) and (self.queue_max is None or len(self.running) < self.queue_max)

    def admit(self) -> None:
        for app, user in self.live:
            if app not in self.running and self.room(user):
                self.running.add(app)

    def submit(self, app: str, user: str) -> None:
        self.live.append((app, user))
        if self.room(user):
            self.running.add(app)

    def finish(self, app: str) -> None:
        self.live = [(a, u) for a, u in self.live if a != app]
        self.running.discard(app)
        self.admit()


events = st.lists(st.one_of(st.tuples(st.just("submit"), st.sampled_from(["alice", "bob", "carol"])),
                            st.tuples(st.just("finish"), st.integers(0, 3))), max_size=40)
limits = st.one_of(st.none(), st.integers(0, 3))


@settings(max_examples=300, deadline=None)
@given(events, limits, limits, limits)
def test_no_user_runs_more_than_its_max_running_apps_and_waiting_apps_start_in_order_as_room_frees(
        script, queue_max, user_max, alice_max):
    core = make_core(limited(queue_max, user_max, alice_max), NODES)
    ref = Admission(queue_max, {"alice": user_max if alice_max is None else alice_max, "bob": user_max,
                                "carol": user_max})
    ids = itertools.count()
    for kind, arg in script:
        if kind == "submit":
            app_id = f"app{next(ids)}"
            waits = "waiting" in core.submit_app(app_id, arg, "research").reason
            ref.submit(app_id, arg)
            assert waits == (app_id not in ref.running)
        elif ref.live:
            app_id = ref.live[arg % len(ref.live)][0]
            core.remove_app(app_id)
            ref.finish(app_id)
        assert {a for a, app in core.apps.items() if app.runnable} == ref.running
        check_accounting(core)
        users = core.queues["root.research"].users
        for name, user in users.items():
            assert user.max_apps is None or user.running_apps <= user.max_apps
            assert user.running_apps == sum(app.runnable for app in core.apps.values() if app.user == name)


def test_an_app_waiting_for_its_user_says_so_and_starts_when_its_users_app_finishes():
    core = make_core(limited(None, 1, 1), NODES)
    assert core.submit_app("a1", "alice", "research").reason == ""
    placed = core.submit_app("a2", "alice", "research")
    assert placed.accepted and placed.reason == "waiting: user alice runs its max-running-apps (1) in root.research"
    assert core.submit_app("b1", "bob", "research").reason == ""  # another user is not held back
    core.update_request("a2", 1, {"memory-mb": 1024, "vcores": 1}, 1)
    (reason,) = why_pending(core, "a2")["requests"][0]["reasons"]
    assert reason["code"] == "user-max-running-apps" and reason["user"] == "alice" and reason["limit"] == 1
    users = core.snapshot()["queues"]["root.research"]["users"]
    assert (users["alice"]["running_apps"], users["alice"]["waiting_apps"]) == (1, 1)
    core.remove_app("a1")
    assert core.apps["a2"].runnable
    assert [a.app_id for a in core.on_heartbeat("n1")] == ["a2"]


def test_a_reload_that_raises_a_users_max_running_apps_starts_its_waiting_apps():
    core = make_core(limited(None, 1, 1), NODES)
    for app in ("a1", "a2", "a3"):
        core.submit_app(app, "alice", "research")
    core.reload(parse_config(limited(None, 1, 2)))
    assert [a for a, app in core.apps.items() if app.runnable] == ["a1", "a2"]
    assert core.snapshot()["queues"]["root.research"]["users"]["alice"]["max_running_apps"] == 2


# ---------------------------------------------------------------- order inside a leaf

TWO_USERS = """
queues:
  root:
    children:
      research:
        order: {order}
        user-limits:
          weight: 1
          users:
            alice: {{weight: 2}}
"""


@pytest.mark.parametrize("order", ["drf", "fifo"])
def test_users_share_a_leaf_by_weight_whatever_the_number_of_their_apps(order):
    """bob runs five apps, alice (weight 2) one: alice still gets twice bob's containers."""
    core = make_core(TWO_USERS.format(order=order), {"n1": {"memory-mb": 12 * 1024, "vcores": 12}})
    apps = [("a1", "alice")] + [(f"b{i}", "bob") for i in range(5)]
    for app, user in apps:
        core.submit_app(app, user, "research")
        core.update_request(app, 1, {"memory-mb": 1024, "vcores": 1}, 100)
    settle(core)
    users = core.snapshot()["queues"]["root.research"]["users"]
    assert users["alice"]["usage"]["vcores"] == 8 and users["bob"]["usage"]["vcores"] == 4



def test_a_node_joining_re_weighs_the_users_whose_usage_did_not_change():
    """alice holds 1 vcore and 4 GB, bob 3 vcores and 1 GB: on 8 vcores and 8 GB bob is lower, but
    once a node of 1 vcore and 56 GB joins alice is (1/9 against 3/9), and she gets the next container."""
    core = make_core(TWO_USERS.format(order="drf").replace("{weight: 2}", "{weight: 1}"),
                     {"n1": {"memory-mb": 8 * 1024, "vcores": 8}})
    for app, user, ask in (("a1", "alice", {"memory-mb": 4096, "vcores": 1}),
                           ("b1", "bob", {"memory-mb": 1024, "vcores": 3})):
        core.submit_app(app, user, "research")
        core.update_request(app, 1, ask, 1)
    settle(core)
    core.add_node("n2", {"memory-mb": 56 * 1024, "vcores": 1})
    for app in ("a1", "b1"):
        core.update_request(app, 2, {"memory-mb": 1024, "vcores": 1}, 1)
    assert [a.app_id for a in core.on_heartbeat("n1", limit=1)] == ["a1"]

def test_among_one_users_apps_priority_comes_first_then_the_leafs_order():
    core = make_core(TWO_USERS.format(order="drf"), {"n1": {"memory-mb": 4 * 1024, "vcores": 4}})
    for app, priority in (("low", 0), ("high", 5)):
        core.submit_app(app, "alice", "research", priority=priority)
        core.update_request(app, 1, {"memory-mb": 1024, "vcores": 1}, 100)
    settle(core)
    assert len(core.apps["high"].containers) == 4 and not core.apps["low"].containers
    core.update_app_priority("low", 9)
    core.container_finished(next(iter(core.apps["high"].containers)))
    assert [a.app_id for a in core.on_heartbeat("n1")] == ["low"]


one_user_script = st.lists(st.tuples(st.integers(0, 3), st.sampled_from([(1, 1024), (2, 512), (1, 3072)]),
                                     st.integers(1, 6)), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(one_user_script, st.sampled_from(["drf", "fifo"]), st.booleans())
def test_a_leaf_with_user_limits_and_one_user_decides_exactly_as_a_leaf_without(script, order, nested):
    """Flat, or with `a` under a parent next to a sibling (so the leaf's share goes into its
    parent's H-DRF sums, compared with `c`'s, and the parent's with `b`'s)."""
    def tree(a: str) -> str:
        if nested:
            a = f"p: {{weight: 2, children: {{{a}, c: {{}}}}}}"
        return f"queues: {{root: {{children: {{{a}, b: {{}}}}}}}}"
    plain, with_users = tree(f"a: {{order: {order}}}"), tree(f"a: {{order: {order}, user-limits: {{}}}}")
    runs = []
    for text in (plain, with_users):
        core = make_core(text, {f"n{i}": {"memory-mb": 8192, "vcores": 6} for i in range(3)})
        for i, (app, (vcores, mem), count) in enumerate(script):
            app_id = f"app{app}"
            if app_id not in core.apps:
                core.submit_app(app_id, "u", "a")
            core.update_request(app_id, i, {"memory-mb": mem, "vcores": vcores}, count)
        for other in ("b", "c") if nested else ("b",):
            core.submit_app(other, "u", other)
            core.update_request(other, 1, {"memory-mb": 1024, "vcores": 1}, 10)
        runs.append([(a.app_id, a.node_id, a.priority) for a in settle(core)])
    assert runs[0] == runs[1]


# ---------------------------------------------------------------- moves and recovery

def test_a_move_to_a_leaf_where_the_user_runs_its_max_running_apps_is_refused_with_the_reason():
    text = limited(None, 1, 1).replace("{research:", "{other: {}, research:")
    core = make_core(text, NODES)
    core.submit_app("a1", "alice", "research")
    core.submit_app("a2", "alice", "other")
    refused = core.move_app("a2", "research", "alice")
    assert not refused.accepted and refused.reason == "user alice runs its max-running-apps in root.research (1 of 1)"
    core.remove_app("a1")
    assert core.move_app("a2", "research", "alice").accepted
    assert core.queues["root.research"].users["alice"].running_apps == 1


def test_recovering_apps_and_containers_in_submission_order_restores_every_users_state():
    text = limited(None, 1, 2)
    live = make_core(text, NODES)
    submitted = [("a1", "alice"), ("b1", "bob"), ("a2", "alice"), ("a3", "alice"), ("b2", "bob")]
    for app, user in submitted:
        live.submit_app(app, user, "research")
        live.update_request(app, 1, {"memory-mb": 2048, "vcores": 1}, 3)
    settle(live)
    restarted = make_core(text, NODES)
    for app, user in submitted:  # what a resync sends: the apps, then their running containers
        assert restarted.recover_app(app, user, "root.research").accepted
    for c in live.containers.values():
        restarted.container_started(c.id, c.app.id, c.node.id, live.types.to_dict(c.resources))
    want, got = live.snapshot()["queues"]["root.research"], restarted.snapshot()["queues"]["root.research"]
    assert got["users"] == want["users"]
    assert {a: app.runnable for a, app in restarted.apps.items()} == {a: app.runnable for a, app in live.apps.items()}


# ---------------------------------------------------------------- configuration

@pytest.mark.parametrize(("text", "error"), [
    ("queues: {root: {children: {a: {user-limits: {weight: 0}}}}}",
     "queues.root.children.a.user-limits.weight: must be > 0, got 0"),
    ("queues: {root: {children: {a: {user-limits: {max-running-apps: -1}}}}}",
     "queues.root.children.a.user-limits.max-running-apps: must be >= 0, got -1"),
    ("queues: {root: {children: {a: {user-limits: {users: {alice: {weight: 2000000}}}}}}}",
     "queues.root.children.a.user-limits.users.alice.weight: must be from 1e-06 to 1e+06"),
    ("queues: {root: {children: {a: {user-limits: {users: {alice: {max-apps: 2}}}}}}}",
     "queues.root.children.a.user-limits.users.alice.max-apps: unknown field"),
    ("queues: {root: {children: {a: {user-limits: {user: {}}}}}}",
     "queues.root.children.a.user-limits.user: unknown field (did you mean 'users'?)"),
    ("queues: {root: {children: {a: {user-limits: {users: {'al ice': {}}}}}}}",
     "user name 'al ice' must be 1 to 256 characters without whitespace"),
    ("queues: {root: {children: {a: {user-limits: {}, children: {b: {}}}}}}",
     "queues.root.children.a.user-limits: only a leaf queue has users"),
    ("queues: {root: {children: {a: {user-limits: 3}}}}",
     "queues.root.children.a.user-limits: must be a mapping, got 3"),
])
def test_a_bad_user_limits_field_is_refused_naming_its_path(text, error):
    with pytest.raises(ConfigError) as refused:
        parse_config(text)
    assert any(error in e for e in refused.value.errors), refused.value.errors


def test_named_users_override_the_default_limit_key_by_key():
    config = parse_config("queues: {root: {children: {a: {user-limits: {max-running-apps: 3, weight: 2, "
                          "users: {alice: {weight: 5}, bob: {max-running-apps: 1}}}}}}}")
    limits = config.queues()["root.a"].user_limits
    assert (limits.of("alice").weight, limits.of("alice").max_running_apps) == (5.0, 3)
    assert (limits.of("bob").weight, limits.of("bob").max_running_apps) == (2.0, 1)
    assert (limits.of("carol").weight, limits.of("carol").max_running_apps) == (2.0, 3)
    assert math.isclose(limits.without_app_limits().of("bob").weight, 2.0)
    assert limits.without_app_limits().of("bob").max_running_apps is None


# ---------------------------------------------------------------- targets

@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([1.0, 2.0, 3.0]), st.sampled_from([(1, 0, 0), (0, 1, 0), (1, 1, 0)])),
                min_size=1, max_size=3))
def test_users_targets_are_where_their_leaf_settles_within_one_container(drawn):
    """On many small identical nodes every container fits anywhere: each user settles at its
    reachable target exactly; when its leaf's users ask for one shape (the pooled fill grows a leaf
    along its whole demand, so only then is the leaf's pooled part what its users can use), at its
    pooled target up to one container."""
    named = ", ".join(f"user{i}: {{weight: {w:g}}}" for i, (w, _) in enumerate(drawn))
    text = (f"resources: [{', '.join(TYPES)}]\nqueues: {{root: {{children: {{other: {{}}, "
            f"research: {{user-limits: {{users: {{{named}}}}}}}}}}}}}\n")
    core = make_core(text, {f"n{i}": dict(zip(TYPES, (2, 2, 2))) for i in range(30)}, resource_types=TYPES)
    for i, (_, shape) in enumerate(drawn):
        core.submit_app(f"app{i}", f"user{i}", "research")
        core.update_request(f"app{i}", 1, dict(zip(TYPES, shape)), 100)
    core.submit_app("rival", "x", "other")
    core.update_request("rival", 1, dict(zip(TYPES, (1, 1, 0))), 100)
    goal = targets(core)["root.research"].users
    settle(core)
    for name, user in core.queues["root.research"].users.items():
        assert tuple(user.usage) == tuple(round(x) for x in goal[name].allocation), name
        if len({shape for _, shape in drawn}) == 1:
            assert all(abs(u - p) <= 1 for u, p in zip(user.usage, goal[name].pooled_allocation)), \
                (name, user.usage, goal[name].pooled_allocation)


def test_check_config_shows_each_leafs_user_limits(tmp_path, capsys):
    path = tmp_path / "queues.yaml"
    path.write_text("queues: {root: {children: {research: {user-limits: {max-running-apps: 3, "
                    "users: {alice: {weight: 2}}}}, adhoc: {}}}}\n")
    assert check_config(argparse.Namespace(file=str(path))) == 0
    out = capsys.readouterr().out
    assert "each user: weight 1, max-running-apps 3; user alice: weight 2, max-running-apps 3" in " ".join(out.split())
    assert "adhoc  weight 1; order drf\n" in out
