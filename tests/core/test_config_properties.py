"""Whatever the validator accepts, the core runs and the shim can read: generated valid queue files
(random trees, weights and per-resource weights at the bounds, min/max, ACL texts, placement rules)
are accepted, a core runs submissions, heartbeats and finishes on them, and the queue list the
service sends to the shim is JSON of finite numbers within the bounds QueueSettings checks."""
from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler import parse_config
from scheduler.config import MAX_AMOUNT, MAX_WEIGHT, MIN_WEIGHT
from yarn_bridge.service import CoreService

TYPES = ["memory-mb", "vcores", "gpu-mem"]
NAME = st.text(st.sampled_from("abcxyz019_-"), min_size=1, max_size=4)
ACL = st.text(st.sampled_from(["a", "b", "g", "*", " ", ",", "\n", "\t"]), max_size=8)
WEIGHT = st.one_of(st.sampled_from([MIN_WEIGHT, MAX_WEIGHT, 1.0, 1]),
                   st.floats(MIN_WEIGHT, MAX_WEIGHT), st.integers(1, int(MAX_WEIGHT)))
AMOUNT = st.one_of(st.sampled_from([0, 1, MAX_AMOUNT]), st.integers(0, MAX_AMOUNT))
PERCENT = st.one_of(st.sampled_from(["100%", "0.0001%", "50%"]),
                    st.floats(0.0001, 100).map(lambda p: f"{p:.4f}%").filter(lambda p: float(p[:-1]) > 0))


def min_within_max(q: dict) -> dict:
    limits = q.get("max") if isinstance(q.get("max"), dict) else {}
    if "min" in q:
        q["min"] = {r: min(v, limits[r]) if isinstance(limits.get(r), int) else v for r, v in q["min"].items()}
    return q


SETTINGS = {
    "weight": st.one_of(WEIGHT, st.dictionaries(st.sampled_from(TYPES), WEIGHT, max_size=3)),
    "max": st.one_of(PERCENT, st.dictionaries(st.sampled_from(TYPES), st.one_of(AMOUNT, PERCENT), max_size=3)),
    "min": st.dictionaries(st.sampled_from(TYPES), AMOUNT, max_size=3),
    "max-running-apps": st.one_of(st.integers(0, 3), st.just(MAX_AMOUNT)),
    "submit-acl": ACL,
    "admin-acl": ACL,
}
LEAF = st.fixed_dictionaries({}, optional={**SETTINGS, "order": st.sampled_from(["drf", "fifo"])}).map(min_within_max)


def with_children(below):
    parent = st.fixed_dictionaries({"children": st.dictionaries(NAME, below, max_size=3)}, optional=SETTINGS)
    return st.one_of(LEAF, parent.map(min_within_max))


QUEUE = with_children(with_children(LEAF))  # up to three levels below root


def paths(q: dict, path: str = "root"):
    yield path, isinstance(q.get("children"), dict)
    for name, child in (q.get("children") or {}).items():
        yield from paths(child, f"{path}.{name}")


@st.composite
def queue_file(draw):
    root = {"max-running-apps": draw(st.sampled_from([MAX_AMOUNT, 5])),
            "children": draw(st.dictionaries(NAME, QUEUE, min_size=1, max_size=4))}
    for key in ("submit-acl", "admin-acl"):
        if draw(st.booleans()):
            root[key] = draw(ACL)
    tree = dict(paths(root))
    parents = [p for p, parent in tree.items() if parent]
    leaves = [p for p, parent in tree.items() if not parent]
    rules = [{"rule": "specified", "create": draw(st.booleans())}]
    for kind in draw(st.lists(st.sampled_from(["user", "primary-group"]), max_size=2)):
        rules.append({"rule": kind, "parent": draw(st.sampled_from(parents)), "create": draw(st.booleans())})
    if leaves and draw(st.booleans()):
        rules.append({"rule": "default", "queue": draw(st.sampled_from(leaves))})
    if draw(st.booleans()):
        rules.append({"rule": "reject"})
    doc = {"resources": TYPES, "placement": rules, "queues": {"root": root}}
    if draw(st.booleans()):
        doc["reservation"] = {"starvation-timeout-s": draw(st.sampled_from([None, 0.5, MAX_AMOUNT]))}
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), leaves


def numbers(value):
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, (int, float)):
        yield value
    else:
        for v in value.values() if isinstance(value, dict) else value:
            yield from numbers(v)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(queue_file(), st.data())
def test_what_check_config_accepts_the_core_runs_and_the_shim_can_read(generated, data):
    text, leaves = generated
    parse_config(text)  # accepted: a refusal here fails the test with the errors
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "queues.yaml"
        path.write_text(text, encoding="utf-8")
        service = CoreService(path)
    core = service.core
    big = data.draw(st.sampled_from([1, 10_000, MAX_AMOUNT]))
    core.add_node("n1", {"memory-mb": 8192, "vcores": 8, "gpu-mem": 0})
    core.add_node("n2", {"memory-mb": big, "vcores": big, "gpu-mem": big})
    users = ["a", "b", "g", "*", "b.c", ""]
    for n in range(data.draw(st.integers(1, 6))):
        requested = data.draw(st.one_of(st.none(), st.sampled_from(leaves or ["root"])))
        placed = core.submit_app(f"app{n}", data.draw(st.sampled_from(users)), requested,
                                 data.draw(st.lists(st.sampled_from(users), max_size=2)))
        if placed.accepted:
            core.update_request(f"app{n}", 1, {"memory-mb": data.draw(st.sampled_from([1, 1024, big])),
                                               "vcores": 1, "gpu-mem": data.draw(st.sampled_from([0, 1]))}, 3)
    for now in (0.0, 1.0, 10.0 ** 9):
        for node in ("n1", "n2"):
            for a in core.on_heartbeat(node, now=now):
                core.container_started(f"c{a.assignment_id}", a.app_id, a.node_id, a.resources,
                                       assignment_id=a.assignment_id)
    for cid in list(core.containers)[::2]:
        core.container_finished(cid)
    core.on_heartbeat("n1", now=10.0 ** 9 + 1)

    snapshot = json.dumps(core.snapshot(), allow_nan=False)  # NaN or infinity would raise here
    assert all(math.isfinite(v) for v in numbers(json.loads(snapshot)))
    sent = json.loads(json.dumps(service.queue_list(), allow_nan=False))
    for q in sent:  # what QueueSettings accepts
        weights = q["weight"].values() if isinstance(q["weight"], dict) else [q["weight"]]
        assert all(MIN_WEIGHT <= w <= MAX_WEIGHT for w in weights)
        for v in q["max"].values():
            assert (type(v) is int and 0 <= v <= 2**63 - 1) or (type(v) is float and 0 <= v <= 1)
        assert q["max_fraction"] is None or 0 < q["max_fraction"] <= 1
        assert isinstance(q["submit_acl"], str) and isinstance(q["admin_acl"], str)
