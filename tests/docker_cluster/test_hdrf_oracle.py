"""The H-DRF oracle of the e2e tests (tests/docker_cluster/hdrf.py) judged without Docker: the core's own
decisions on the Docker cluster's tree and nodes pass it, and the same workload divided by flat
weighted DRF (the leaves as siblings under root) does not, so a real RM that ignored the tree would
fail test_drf."""
from __future__ import annotations

from pathlib import Path

from scheduler import SchedulerCore, parse_config
from tests.docker_cluster.cluster import SHAPES
from tests.docker_cluster.hdrf import HDRF, Node, Placed, add_users, load_tree, starved_unlawfully, unfair_choices, user_key
from tests.docker_cluster.test_drf import DEV, JOBS, QUEUES, USERS_PARENT
from tests.drf import RESOURCES

# The default tree's leaves as siblings under root, with the same weights and users.
FLAT = """
resources: [memory-mb, vcores, gpu-mem]
placement:
  - rule: specified
  - rule: user
    parent: root.users
    create: true
queues:
  root:
    children:
      prod: {weight: 2}
      dev: {weight: 1, user-limits: {users: {alice: {weight: 2}}}}
      ml: {weight: {gpu-mem: 2, vcores: 1, memory-mb: 1}}
      users: {children: {}}
"""
TREE_PATH = {"root.dev": DEV, "root.ml": "root.research.ml"}  # the flat leaves' places in the tree


def settled(queues_yaml: str, jobs=JOBS) -> SchedulerCore:
    """The jobs' apps (as the core places them, "default" for a job that names no queue) on the
    Docker cluster's nodes, every node offered in turn until nothing more fits. `jobs`: anything
    with test_drf.Job's name, queue, user, shape and count."""
    core = SchedulerCore(parse_config(queues_yaml))
    for shape in SHAPES:
        core.add_node(shape.name, shape.capacity())
    for job in jobs:
        assert core.submit_app(job.name, job.user or "hadoop", job.queue or "default").accepted
        core.update_request(job.name, 1, job.shape, job.count)
    for round_ in range(1000):
        nodes = list(core.nodes)
        if not [a for n in nodes[round_ % 3:] + nodes[:round_ % 3] for a in core.on_heartbeat(n, now=0)]:
            return core
    raise AssertionError("never settled")


def judged(core: SchedulerCore, jobs=JOBS) -> list[str]:
    """The oracle's verdict on the core's containers, in the order it placed them."""
    tree = load_tree(QUEUES, {USERS_PARENT: ["carol"]})
    add_users(tree, {DEV: ["alice", "bob"]})

    def bottom(app) -> str:
        path = TREE_PATH.get(app.queue.path, app.queue.path)
        return user_key(path, app.user) if path == DEV else path

    usage: dict[str, dict[str, float]] = {}
    tasks: dict[str, list[Placed]] = {}
    placed = []
    for order, c in enumerate(core.containers.values()):
        b = bottom(c.app)
        resources = core.types.to_dict(c.resources)
        usage[b] = {r: usage.get(b, {}).get(r, 0) + resources.get(r, 0) for r in RESOURCES}
        placed.append(Placed(c.node.id, resources, order))
        tasks.setdefault(b, []).append(placed[-1])
    asking = {bottom(core.apps[job.name]): job.shape for job in jobs}
    free = {n.id: core.types.to_dict(core.types.sub(n.capacity, n.allocated)) for n in core.nodes.values()}
    capacity = {r: sum(s.capacity()[r] for s in SHAPES) for r in RESOURCES}
    return unfair_choices(HDRF(tree, capacity), usage, asking, tasks, placed, free)


def test_the_cores_decisions_on_the_default_tree_pass_the_oracle():
    core = settled(QUEUES.read_text())
    assert {a.queue.path for a in core.apps.values()} == {
        "root.prod", "root.research.dev", "root.research.ml", "root.users.carol"}
    assert judged(core) == []


def test_flat_weighted_drf_of_the_same_leaves_fails_the_oracle():
    unfair = judged(settled(FLAT))
    assert any(line.startswith("root.research ") for line in unfair), unfair


def test_a_queue_starved_on_a_node_it_could_use_while_lower_is_named_and_one_that_fits_nowhere_is_not():
    one = dict.fromkeys(RESOURCES, 1.0)
    tree = Node("root", one, [Node("root.a", one), Node("root.b", one)])
    capacity = dict.fromkeys(RESOURCES, 10)
    ams = {"root.a": [Placed("n1", {"vcores": 1}, 0)], "root.b": [Placed("n1", {"vcores": 1}, 0)]}
    b_tasks = [Placed("n1", {"vcores": 1}, t) for t in (1, 2, 3)]
    held = {"root.a": ams["root.a"], "root.b": ams["root.b"] + b_tasks}
    free = {"n1": {"memory-mb": 10, "vcores": 5, "gpu-mem": 10}}  # 10 vcores: 2 AMs, 3 tasks
    tasks = {"root.b": b_tasks}
    small = {"root.a": {"vcores": 1}, "root.b": {"vcores": 1}}
    unfair = starved_unlawfully(HDRF(tree, capacity), small, tasks, held, free)
    assert len(unfair) == 2 and all(line.startswith("root.b got a container on n1") for line in unfair), unfair
    too_big = {"root.a": {"vcores": 9}, "root.b": {"vcores": 1}}  # a never fits the room left
    assert starved_unlawfully(HDRF(tree, capacity), too_big, tasks, held, free) == []
