"""What Java is told of each queue, and what the core inherits down the tree, equal what the file's
settings say, read root first (the oracle), for the queues of the file and those placement creates,
after any sequence of schedule calls that create them: a queue's entry (its max-container in force
merged from the root down, its labels and default label, its own settings) in the list Java holds,
and its live locality delays and labels. Queue creation takes shortcuts here (an entry looks only at
the ancestors that set a max-container; a leaf with no delays or labels of its own shares its
parent's pair), which these check against the long way round."""
from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.config import ALL_LABELS
from scheduler.locality import DEFAULT_NODE_DELAY_S, DEFAULT_RACK_DELAY_S
from scheduler.model import Queue
from tests.bridge.test_queue_list import applied, call
from yarn_bridge.service import CoreService

TREE = """\
placement:
  - {rule: specified, create: true}
  - {rule: user, parent: root.users, create: true}
  - {rule: primary-group, parent: root.teams.gpu, create: true}
  - {rule: reject}
queues:
  root:
    max-container: {memory-mb: 8192}
    node-locality-delay-s: 2
    children:
      users: {children: {}, max-container: {vcores: 4}, rack-locality-delay-s: 5}
      teams:
        accessible-node-labels: [gpu]
        children:
          gpu: {children: {}, default-node-label-expression: gpu, max-container: {memory-mb: 4096},
                node-locality-delay-s: 0}
          plain: {children: {}, accessible-node-labels: "*", max-container: {vcores: 2}}
"""
USERS = ["alice", "bob", "carol", "a.b", "x_y"]
GROUPS = ["ml", "ops"]
ASKED = [None, "root.teams.plain.etl", "root.users.dave", "root.teams.gpu.ml", "root.teams.plain.x.y"]
calls = st.lists(st.lists(st.tuples(st.sampled_from(USERS), st.lists(st.sampled_from(GROUPS), max_size=1),
                                    st.sampled_from(ASKED)), min_size=1, max_size=5), max_size=8)


def inherited(q: Queue) -> tuple[dict[str, int], frozenset[str], str, tuple[float, float]]:
    """Its max-container in force, labels, default label and locality delays: each ancestor's from
    the root down, a queue's own over its parent's."""
    chain: list[Queue] = []
    while q is not None:
        chain.append(q)
        q = q.parent
    max_container, accessible, default = {}, frozenset({ALL_LABELS}), ""
    node_s, rack_s = DEFAULT_NODE_DELAY_S, DEFAULT_RACK_DELAY_S
    for spec in (above.spec for above in reversed(chain)):
        max_container.update(spec.max_container)
        accessible = accessible if spec.accessible_labels is None else spec.accessible_labels
        default = default if spec.default_label is None else spec.default_label
        node_s = node_s if spec.node_locality_delay_s is None else spec.node_locality_delay_s
        rack_s = rack_s if spec.rack_locality_delay_s is None else spec.rack_locality_delay_s
    return max_container, accessible, default, (node_s, rack_s)


def expected_entry(q: Queue) -> dict:
    spec, (max_container, accessible, default, _) = q.spec, inherited(q)
    return {"name": q.path, "leaf": q.is_leaf, "weight": spec.weight, "max": dict(spec.max),
            "max_fraction": spec.max_fraction, "submit_acl": spec.submit_acl.text,
            "admin_acl": spec.admin_acl.text, "draining": q.draining,
            **({"max_container": max_container} if max_container else {}),
            **({"labels": sorted(accessible)} if ALL_LABELS not in accessible else {}),
            **({"default_label": default} if default else {})}


def started(tmp: str) -> CoreService:
    queues = Path(tmp) / "queues.yaml"
    queues.write_text(TREE)
    return CoreService(queues)


@settings(max_examples=60, deadline=None)
@given(calls)
def test_every_queue_java_holds_and_the_core_runs_has_the_settings_its_path_in_the_file_gives_it(sequence):
    with TemporaryDirectory() as tmp:
        service = started(tmp)
        java = call(service, type="snapshot", resources=["memory-mb", "vcores", "gpu-mem"])["queues"]
        apps = 0
        for seq, submissions in enumerate(sequence, start=1):
            subs = [{"app": f"application_1_{apps + i:04d}", "user": user, "groups": groups,
                     **({"queue": asked} if asked else {})} for i, (user, groups, asked) in enumerate(submissions)]
            apps += len(subs)
            reply = call(service, type="schedule", seq=seq, submissions=subs)
            java = applied(java, reply)
        core = service.core
    assert {e["name"]: e for e in java} == {p: expected_entry(q) for p, q in core.queues.items()}
    for q in core.queues.values():
        _, accessible, default, delays = inherited(q)
        assert (q.labels, q.locality_delays) == ((accessible, default), delays), q.path


def test_the_tree_of_this_test_creates_queues_under_parents_that_set_each_setting():
    """(The property above says something only if placement creates queues where settings are inherited.)"""
    with TemporaryDirectory() as tmp:
        service = started(tmp)
        java = call(service, type="snapshot", resources=["memory-mb", "vcores", "gpu-mem"])["queues"]
        reply = call(service, type="schedule", seq=1, submissions=[
            {"app": "application_1_0001", "user": "alice", "groups": []},
            {"app": "application_1_0002", "user": "bob", "groups": ["ml"], "queue": "root.teams.gpu.ml"},
            {"app": "application_1_0003", "user": "carol", "groups": [], "queue": "root.teams.plain.etl"}])
        built = {e["name"]: e for e in applied(java, reply)}
    assert built["root.users.alice"]["max_container"] == {"memory-mb": 8192, "vcores": 4}
    assert built["root.teams.gpu.ml"]["max_container"] == {"memory-mb": 4096}
    assert built["root.teams.gpu.ml"]["labels"] == ["gpu"] and built["root.teams.gpu.ml"]["default_label"] == "gpu"
    assert "labels" not in built["root.teams.plain.etl"]
    assert built["root.teams.plain.etl"]["max_container"] == {"memory-mb": 8192, "vcores": 2}
