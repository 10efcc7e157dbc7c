"""The H-DRF oracle of the e2e tests (tests/docker_cluster/hdrf.py) judged without Docker: the core's own
decisions on the Docker cluster's tree and nodes pass it, and the same workload divided by flat
weighted DRF (the leaves as siblings under root) does not, so a real RM that ignored the tree would
fail test_drf."""
from __future__ import annotations

import random
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


def test_a_decision_lawful_only_while_a_container_since_ended_held_its_room_passes_with_it_counted():
    one = dict.fromkeys(RESOURCES, 1.0)
    tree = Node("root", one, [Node("root.a", one), Node("root.b", one)])
    capacity = dict.fromkeys(RESOURCES, 10)
    asking = {"root.a": {"vcores": 1}, "root.b": {"vcores": 1}}
    # a held 4 vcores (ended at 10, last seen running at 9) when b got its task at 5; now a holds 1.
    big = Placed("n1", {"vcores": 4}, 1, ended=10, seen=9)
    a_am, b_am = Placed("n1", {"vcores": 1}, 0), Placed("n1", {"vcores": 1}, 0)
    b_first, b_task = Placed("n1", {"vcores": 1}, 3), Placed("n1", {"vcores": 1}, 5)
    usage = {"root.a": {"vcores": 1}, "root.b": {"vcores": 3}}
    free = {"n1": {"memory-mb": 10, "vcores": 6, "gpu-mem": 10}}
    tasks, placed = {"root.b": [b_first, b_task]}, [a_am, b_am, b_first, b_task]
    oracle = HDRF(tree, capacity)
    assert unfair_choices(oracle, usage, asking, tasks, placed, free, {"root.a": [big]}) == []
    assert unfair_choices(oracle, usage, asking, tasks, placed, free)  # blind to it: b looks unfair
    # Had it ended before b's task (last seen at 2, gone by 4), the choice was unfair after all.
    early = Placed("n1", {"vcores": 4}, 1, ended=4, seen=2)
    assert unfair_choices(oracle, usage, asking, tasks, placed, free, {"root.a": [early]})
    # Had it ended somewhere between 3 and 7, nobody can tell: the decision is not judged.
    unsure = Placed("n1", {"vcores": 4}, 1, ended=7, seen=3)
    assert unfair_choices(oracle, usage, asking, tasks, placed, free, {"root.a": [unsure]}) == []
    held = {"root.a": [a_am], "root.b": [b_am, b_first, b_task]}
    assert starved_unlawfully(oracle, asking, tasks, held, free, {"root.a": [early]})
    assert starved_unlawfully(oracle, asking, tasks, held, free, {"root.a": [big]}) == []


def test_a_container_since_ended_leaves_the_room_it_held_out_of_the_node_then():
    one = dict.fromkeys(RESOURCES, 1.0)
    tree = Node("root", one, [Node("root.a", one), Node("root.b", one)])
    capacity = dict.fromkeys(RESOURCES, 10)
    asking = {"root.a": {"vcores": 3}, "root.b": {"vcores": 1}}  # a's request fits only the room now
    b_am, b_task = Placed("n1", {"vcores": 1}, 0), Placed("n1", {"vcores": 1}, 5)
    gone = {"root.b": [Placed("n1", {"vcores": 3}, 1, ended=8, seen=8)]}  # b held 3 of n1 at 5
    held = {"root.b": [b_am, b_task]}
    free = {"n1": {"memory-mb": 10, "vcores": 3, "gpu-mem": 10}}  # n1 has 5 vcores
    oracle = HDRF(tree, capacity)
    assert starved_unlawfully(oracle, asking, {"root.b": [b_task]}, held, free, gone) == []
    assert starved_unlawfully(oracle, asking, {"root.b": [b_task]}, held, free)  # blind: a would have fitted


def test_the_cores_decisions_while_containers_end_pass_the_oracle_with_the_ended_ones_counted():
    """Property: the core's decisions on the default tree, with task containers ending at random
    between heartbeats and their room going to the queues again, pass the oracle when it is told
    when each ended, for every seed; blind to the ended ones it misjudges some seeds."""
    blind_failures = 0
    for seed in range(24):
        core, started, ended = _competing_while_containers_end(random.Random(seed))
        usage, tasks, placed, gone = _oracle_inputs(core, started, ended)
        asking = {_bottom(core.apps[job.name]): job.shape for job in JOBS}
        free = {n.id: core.types.to_dict(core.types.sub(n.capacity, n.allocated)) for n in core.nodes.values()}
        capacity = {r: sum(s.capacity()[r] for s in SHAPES) for r in RESOURCES}
        oracle = HDRF(_tree(), capacity)
        assert unfair_choices(oracle, usage, asking, tasks, placed, free, gone) == [], seed
        blind_failures += bool(unfair_choices(oracle, usage, asking, tasks, placed, free))
    assert blind_failures > 0


def _tree() -> Node:
    tree = load_tree(QUEUES, {USERS_PARENT: ["carol"]})
    add_users(tree, {DEV: ["alice", "bob"]})
    return tree


def _bottom(app) -> str:
    return user_key(app.queue.path, app.user) if app.queue.path == DEV else app.queue.path


def _competing_while_containers_end(rng: random.Random):
    """The jobs compete on the Docker cluster's nodes, offered in turn; between rounds, eight times,
    a random container ends (at an odd time: placements take the even ones). Returns the core, each
    container's start time and each ended container's (node, resources, app, start, end)."""
    core = SchedulerCore(parse_config(QUEUES.read_text()))
    for shape in SHAPES:
        core.add_node(shape.name, shape.capacity())
    for job in JOBS:
        assert core.submit_app(job.name, job.user or "hadoop", job.queue or "default").accepted
        core.update_request(job.name, 1, job.shape, job.count)
    started: dict[str, int] = {}
    ended: dict[str, tuple] = {}
    t = 0
    for _ in range(1000):
        placed_any = False
        for node in list(core.nodes):
            for a in core.on_heartbeat(node, now=0):
                t += 2
                started[a.assignment_id] = t
                placed_any = True
        if len(ended) < 8 and rng.random() < 0.5:
            cid = rng.choice(sorted(core.containers))
            c = core.containers[cid]
            t += 1
            ended[cid] = (c.node.id, core.types.to_dict(c.resources), c.app, started[cid], t)
            core.container_finished(cid)
        elif len(ended) == 8 and not placed_any:
            return core, started, ended
    raise AssertionError("never settled")


def _oracle_inputs(core: SchedulerCore, started: dict[str, int], ended: dict[str, tuple]):
    usage: dict[str, dict[str, float]] = {}
    tasks: dict[str, list[Placed]] = {}
    placed = []
    for cid, c in core.containers.items():
        b = _bottom(c.app)
        resources = core.types.to_dict(c.resources)
        usage[b] = {r: usage.get(b, {}).get(r, 0) + resources.get(r, 0) for r in RESOURCES}
        placed.append(Placed(c.node.id, resources, started[cid]))
        tasks.setdefault(b, []).append(placed[-1])
    gone: dict[str, list[Placed]] = {}
    for node, resources, app, start, end in ended.values():
        gone.setdefault(_bottom(app), []).append(Placed(node, resources, start, ended=end, seen=end))
    return usage, tasks, placed, gone
