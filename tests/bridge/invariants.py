"""The core's accounting, checked from its raw records: every derived number (node allocation, app
and queue usage, running and waiting apps, shape counts, heaps, the ask registry) recomputed here
from the containers, apps and requests themselves, never through the core's own code."""
from __future__ import annotations

from collections import Counter

from scheduler import SchedulerCore

LIMIT = 1 << 63


def _sum(vectors, width: int) -> tuple:
    total = [0] * width
    for v in vectors:
        for i, x in enumerate(v):
            total[i] += x
    return tuple(total)


def _amounts_ok(vector, width: int) -> bool:
    return len(vector) == width and all(type(x) is int and 0 <= x < LIMIT for x in vector)


def check_accounting(core: SchedulerCore) -> None:
    """Raises AssertionError naming the first broken rule."""
    width = len(core.types.names)
    containers = core.containers

    # containers: each on exactly one known node and one known app, with amounts in range
    for cid, c in containers.items():
        assert c.id == cid, f"container {cid} recorded as {c.id}"
        assert core.nodes.get(c.node.id) is c.node, f"container {cid} on unknown node {c.node.id}"
        assert core.apps.get(c.app.id) is c.app, f"container {cid} of unknown app {c.app.id}"
        assert cid in c.node.containers and cid in c.app.containers, f"container {cid} not listed by its node/app"
        assert _amounts_ok(c.resources, width), f"container {cid} amounts {c.resources}"
    assert sum(len(n.containers) for n in core.nodes.values()) == len(containers), "a node lists a stray container"
    assert sum(len(a.containers) for a in core.apps.values()) == len(containers), "an app lists a stray container"

    # nodes: allocation = their containers; cluster capacity = their capacities
    for node in core.nodes.values():
        assert _amounts_ok(node.capacity, width), f"node {node.id} capacity {node.capacity}"
        expected = _sum((containers[c].resources for c in node.containers), width)
        assert node.allocated == expected, f"node {node.id} allocated {node.allocated}, its containers {expected}"
        if node.reserved is not None:  # (preemption may hold several nodes for one request: it names one)
            held = core.preemption.holds.get(node)
            assert node.reserved.reserved_node is node or (held is not None and held.request is node.reserved), \
                f"node {node.id} reservation not mirrored"
    assert core.capacity == _sum((n.capacity for n in core.nodes.values()), width), "cluster capacity"
    for node in core.nodes.values():
        _check_cards(node, [containers[c] for c in node.containers])

    # apps: usage = their containers; in their leaf; pending = requests with count > 0, in key order
    for app_id, app in core.apps.items():
        assert app.id == app_id
        assert core.queues.get(app.queue.path) is app.queue, f"app {app_id} in a queue outside the tree"
        assert app.queue.apps.get(app_id) is app, f"app {app_id} not listed by its queue"
        assert app.queue.is_leaf, f"app {app_id} in parent queue {app.queue.path}"
        expected = _sum((containers[c].resources for c in app.containers), width)
        assert app.usage == expected, f"app {app_id} usage {app.usage}, its containers {expected}"
        wanted = sorted((r for r in app.requests.values() if r.count > 0), key=lambda r: r.key)
        assert list(app.pending) == wanted, f"app {app_id} pending requests out of step"
        assert len(app.pending) == len(wanted) and bool(app.pending) == bool(wanted)
        am = _sum((containers[c].resources for c in app.containers if containers[c].am), width)
        assert app.am_usage == am, f"app {app_id} AM usage {app.am_usage}, its AM containers {am}"
        for req in app.requests.values():
            assert type(req.count) is int and 0 <= req.count < LIMIT, f"app {app_id} count {req.count}"
            assert _amounts_ok(req.capability, width), f"app {app_id} request amounts {req.capability}"

    # queues: usage = own apps + children; running/waiting apps; shapes; heaps
    for path, q in core.queues.items():
        assert q.path == path
        if q.parent is not None:
            assert q.parent.children.get(path.rsplit(".", 1)[1]) is q, f"queue {path} not a child of its parent"
        for app_id, app in q.apps.items():
            assert core.apps.get(app_id) is app and app.queue is q, f"queue {path} lists stray app {app_id}"
        below = [a for x in _below(q) for a in x.apps.values()]
        usage = _sum([a.usage for a in q.apps.values()] + [c.usage for c in q.children.values()], width)
        assert q.usage == usage, f"queue {path} usage {q.usage}, its apps and children {usage}"
        am = _sum([a.am_usage for a in q.apps.values()], width)
        assert q.am_usage == am, f"queue {path} AM usage {q.am_usage}, its apps' {am}"
        assert q.running_apps == sum(a.runnable for a in below), f"queue {path} running_apps {q.running_apps}"
        shapes = Counter(r.capability for a in below if a.runnable for r in a.pending)
        assert q.shapes == shapes and all(v > 0 for v in q.shapes.values()), f"queue {path} shapes"
        waiting = sorted((a for a in q.apps.values() if not a.runnable), key=lambda a: a.seq)
        assert list(q.waiting) == waiting, f"queue {path} waiting apps out of step"
        for app in waiting:  # held back only while some max-running-apps above it (or its user's) is reached
            held = any(x.max_apps is not None and x.running_apps >= x.max_apps for x in app.queue.ancestors_and_self())
            assert held or (app.owner is not None and app.owner.full), \
                f"app {app.id} waits in {path} though no max-running-apps holds it back"
        in_heap = set(q.heap.items())
        if q.children:
            assert in_heap == {c for c in q.children.values() if c.shapes}, f"queue {path} heap of children"
        elif q.users is None:
            assert in_heap == {a for a in q.apps.values() if a.runnable and a.pending}, f"queue {path} heap of apps"
        else:
            _check_users(q, width)

    # the ask registry: every id names a request of a live app, listed by that app
    for ask_id, req in core.asks.items():
        assert core.apps.get(req.app.id) is req.app and req.app.requests.get(req.key) is req, f"ask {ask_id} stray"
        assert ask_id in req.app.ask_ids, f"ask {ask_id} not listed by app {req.app.id}"
    for ask_id, (req, _) in core.located_asks.items():
        assert core.apps.get(req.app.id) is req.app and ask_id in req.app.ask_ids, f"located ask {ask_id} stray"


def _check_users(leaf, width: int) -> None:
    """A leaf with user-limits: a record per user of its apps, holding their usage, counts, waiting
    apps and heap; the leaf's heap holds the users with an app that asks."""
    path = leaf.path
    assert set(leaf.users) == {a.user for a in leaf.apps.values()}, f"queue {path} users out of step"
    assert set(leaf.heap.items()) == {u for u in leaf.users.values() if u.heap}, f"queue {path} heap of users"
    for name, user in leaf.users.items():
        mine = [a for a in leaf.apps.values() if a.user == name]
        assert all(a.owner is user for a in mine), f"user {name} of {path}: an app under another record"
        assert user.usage == _sum([a.usage for a in mine], width), f"user {name} of {path} usage {user.usage}"
        assert user.apps == len(mine) and user.running_apps == sum(a.runnable for a in mine), f"user {name} counts"
        assert list(user.waiting) == sorted((a for a in mine if not a.runnable), key=lambda a: a.seq), \
            f"user {name} of {path} waiting apps out of step"
        assert set(user.heap.items()) == {a for a in mine if a.runnable and a.pending}, f"user {name} heap of apps"


def _check_cards(node, running) -> None:
    """A node with cards: each container with gpu-mem on distinct cards of the node, and each
    card's free memory its size less what its containers put on it (a multi-card container fills
    each card but its last); a node without cards: no container on a card."""
    if node.cards is None:
        assert all(c.cards == () for c in running), f"node {node.id} has no cards, a container names some"
        return
    sizes, gpu = node.cards.sizes, node.cards.index
    used = [0] * len(sizes)
    for c in running:
        amount = c.resources[gpu]
        assert bool(c.cards) == bool(amount), f"container {c.id} ({amount} MiB gpu-mem) on cards {c.cards}"
        assert len(set(c.cards)) == len(c.cards) and all(0 <= i < len(sizes) for i in c.cards), \
            f"container {c.id} on cards {c.cards}, not distinct cards of node {node.id}"
        for n, card in enumerate(c.cards):
            part = amount if n == len(c.cards) - 1 else min(sizes[card], amount)
            used[card] += part
            amount -= part
    assert node.cards.free == [s - u for s, u in zip(sizes, used)], \
        f"node {node.id} cards free {node.cards.free}, its containers leave {[s - u for s, u in zip(sizes, used)]}"


def _below(q):
    yield q
    for child in q.children.values():
        yield from _below(child)
