"""The Docker demo's verdict (docker/demo.py) on the default tree, judged without Docker: the core
settles the demo's own workload on the demo's three nodes; the H-DRF oracle of the e2e tests
(tests/docker_cluster/hdrf.py) finds those decisions hierarchical DRF's, and the demo, measuring them as it
measures YARN's containers and reading the targets the status server serves, says AT THE TARGETS
for every queue it shows, parents included. The same workload divided by flat weighted DRF (the
leaves as siblings under root) is OFF its tree targets, so a verdict that ignored the tree fails."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from scheduler.core import SchedulerCore
from scheduler.targets import targets
from tests.docker_cluster.cluster import SHAPES
from tests.docker_cluster.test_drf import QUEUES
from tests.docker_cluster.test_hdrf_oracle import FLAT, TREE_PATH, judged, settled
from tests.drf import RESOURCES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docker"))
import demo  # noqa: E402

CAPACITY = {r: sum(s.capacity()[r] for s in SHAPES) for r in RESOURCES}


class SettledCluster:
    """What demo.measure reads of a cluster (its running containers, as the RM REST API gives
    them), from a core's containers; `moved` maps the core's leaves to the tree's."""

    def __init__(self, core: SchedulerCore, moved: dict[str, str] | None = None) -> None:
        self.core, self.moved = core, moved or {}

    def running_containers(self) -> dict[str, dict]:
        return {f"c{i}": {"queue": self.moved.get(c.app.queue.path, c.app.queue.path),
                          "resources": self.core.types.to_dict(c.resources)}
                for i, c in enumerate(self.core.containers.values())}


def goals(core: SchedulerCore) -> dict[str, tuple[float, float]]:
    """What demo.targets reads from the status server: each queue's target and pooled target share."""
    return {path: (t.dominant_share, t.pooled_dominant_share) for path, t in targets(core).items()}


@pytest.fixture(scope="module")
def tree_core() -> SchedulerCore:
    return settled(QUEUES.read_text(), demo.submissions("t"))


def test_the_demo_shows_the_default_trees_queues_parents_and_created_leaf_included(tree_core):
    assert demo.SHOWN == ["root.prod", "root.research", "root.research.dev", "root.research.ml",
                          "root.users", "root.users.carol"]
    assert {a.queue.path for a in tree_core.apps.values()} == {
        "root.prod", "root.research.dev", "root.research.ml", "root.users.carol"}
    weights = demo.queue_weights(QUEUES)
    assert weights["root.research.ml"] == {"memory-mb": 1.0, "vcores": 1.0, "gpu-mem": 2.0}
    assert weights["root.prod"] == dict.fromkeys(RESOURCES, 2.0) and "root.users.carol" in weights


def test_the_cores_decisions_on_the_demos_workload_are_hdrf_and_at_the_demos_targets(tree_core):
    assert judged(tree_core, demo.submissions("t")) == []
    sample = demo.measure(SettledCluster(tree_core), CAPACITY, demo.queue_weights(QUEUES))
    verdict = demo.verdict([(sample, goals(tree_core))], CAPACITY)
    assert verdict.ok, verdict.off
    assert all(sample[q]["containers"] > 0 for q in demo.SHOWN), sample


def test_flat_weighted_drf_of_the_same_leaves_is_off_the_demos_tree_targets(tree_core):
    flat = settled(FLAT, demo.submissions("t"))
    sample = demo.measure(SettledCluster(flat, TREE_PATH), CAPACITY, demo.queue_weights(QUEUES))
    verdict = demo.verdict([(sample, goals(tree_core))], CAPACITY)
    assert not verdict.ok and verdict.off["root.research"] > 1, verdict.off


def test_a_queue_one_container_off_a_target_rounded_as_the_status_server_rounds_it_is_at_it(tree_core):
    sample = demo.measure(SettledCluster(tree_core), CAPACITY, demo.queue_weights(QUEUES))
    exact = {q: sample[q]["dominant"] for q in demo.SHOWN}
    one = demo.verdict([(sample, goals(tree_core))], CAPACITY).one["root.prod"]

    def served(prod_off: float) -> dict[str, tuple[float, float]]:  # yarn_bridge/status.py: round(share, 6)
        return {q: (round(exact[q] + (prod_off * one if q == "root.prod" else 0), 6), 0.0) for q in demo.SHOWN}

    for off in (1.0, -1.0):
        verdict = demo.verdict([(sample, served(off))], CAPACITY)
        assert verdict.ok, (off, verdict.off)
    assert not demo.verdict([(sample, served(1.01))], CAPACITY).ok
