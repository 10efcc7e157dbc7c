"""GPU memory per card: a container's gpu-mem goes on one card (best fit), or, as a whole multiple
of the card size of a node of equal cards, on that many whole free cards; nodes without cards
keep one node total. Checked against an oracle
written here from the rule in docs/library.md ("GPU cards"), not from scheduler.cards."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler import SchedulerCore, parse_config
from scheduler.explain import why_pending
from tests.core.helpers import settle

TWO_QUEUES = "queues:\n  root:\n    children:\n      a: {}\n      b: {}\n"
TYPES = ["vcores", "memory-mb", "gpu-mem"]
CPU = {"vcores": 64, "memory-mb": 1 << 20}


class Oracle:
    """Each node's cards as (size, used) lists, updated from what the core reports."""

    def __init__(self, cards: dict[str, list[int] | None], totals: dict[str, int]) -> None:
        self.sizes = cards
        self.used = {n: [0] * len(c) for n, c in cards.items() if c}
        self.totals = totals  # gpu-mem of each node
        self.gpu_used = dict.fromkeys(cards, 0)
        self.where: dict[str, tuple[str, tuple[int, ...], int]] = {}

    def expected_cards(self, node: str, amount: int) -> tuple[int, ...] | None:
        """The rule: the card with the least free memory that holds `amount`, lowest index first;
        beyond one card on a node of equal cards, the first ceil(amount / size) entirely free cards."""
        sizes, used = self.sizes[node], self.used[node]
        free = [s - u for s, u in zip(sizes, used)]
        holding = [(f, i) for i, f in enumerate(free) if f >= amount]
        if holding:
            return (min(holding)[1],)
        if len(set(sizes)) == 1 and amount % sizes[0] == 0:
            whole = [i for i, f in enumerate(free) if f == sizes[0]]
            k = amount // sizes[0]
            return tuple(whole[:k]) if len(whole) >= k else None
        return None

    def fits(self, node: str, amount: int) -> bool:
        if self.sizes[node]:
            return amount == 0 or self.expected_cards(node, amount) is not None
        return self.gpu_used[node] + amount <= self.totals[node]

    def take(self, cid: str, node: str, cards: tuple[int, ...], amount: int) -> None:
        self.where[cid] = (node, cards, amount)
        self.gpu_used[node] += amount
        self._spread(node, cards, amount, 1)

    def give(self, cid: str) -> None:
        node, cards, amount = self.where.pop(cid)
        self.gpu_used[node] -= amount
        self._spread(node, cards, amount, -1)

    def _spread(self, node: str, cards: tuple[int, ...], amount: int, sign: int) -> None:
        left = amount
        for n, i in enumerate(cards):
            part = left if n == len(cards) - 1 else min(self.sizes[node][i], left)
            self.used[node][i] += sign * part
            left -= part


card_lists = st.one_of(
    st.builds(lambda size, n: [size] * n, st.sampled_from([1024, 2048, 4096]), st.integers(1, 4)),
    st.lists(st.sampled_from([1024, 1536, 2048, 4096]), min_size=1, max_size=4))
nodes_st = st.lists(st.one_of(card_lists, st.none()), min_size=1, max_size=4)
gpu_amounts = st.sampled_from([0, 256, 512, 1000, 1024, 1536, 2048, 3000, 4096, 6144, 8192, 20000])


def build(node_cards: list[list[int] | None]) -> tuple[SchedulerCore, Oracle]:
    core = SchedulerCore(parse_config(TWO_QUEUES), resource_types=TYPES)
    cards, totals = {}, {}
    for i, sizes in enumerate(node_cards):
        name = f"n{i}"
        total = sum(sizes) if sizes else 4096
        core.add_node(name, {**CPU, "gpu-mem": total}, cards=sizes)
        cards[name], totals[name] = sizes, total
    core.submit_app("A", "u", "a")
    core.submit_app("B", "u", "b")
    return core, Oracle(cards, totals)


def check_state(core: SchedulerCore, oracle: Oracle) -> None:
    for node_id, node in core.nodes.items():
        sizes = oracle.sizes[node_id]
        if sizes:
            assert list(node.cards.sizes) == sizes
            assert [s - f for s, f in zip(node.cards.sizes, node.cards.free)] == oracle.used[node_id]
            assert all(u <= s for u, s in zip(oracle.used[node_id], sizes))
        else:
            assert node.cards is None
            assert oracle.gpu_used[node_id] <= oracle.totals[node_id]
    for cid, c in core.containers.items():
        node, cards, amount = oracle.where[cid]
        assert c.cards == cards and c.node.id == node
        assert len(set(cards)) == len(cards)


def heartbeat(core: SchedulerCore, oracle: Oracle, node_id: str) -> int:
    """One heartbeat of the node; each assignment checked against the oracle, in order."""
    got = core.on_heartbeat(node_id, now=0.0)
    for a in got:
        amount = a.resources["gpu-mem"]
        if oracle.sizes[node_id]:
            expected = () if amount == 0 else oracle.expected_cards(node_id, amount)
            assert a.cards == expected, (node_id, amount, oracle.used[node_id])
        else:
            assert a.cards == ()
            assert oracle.fits(node_id, amount)
        oracle.take(a.assignment_id, node_id, a.cards, amount)
    check_state(core, oracle)
    return len(got)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node_cards=nodes_st, data=st.data())
def test_after_any_assigns_and_releases_every_container_is_on_best_fit_cards_and_no_card_is_over(node_cards, data):
    core, oracle = build(node_cards)
    for step in range(data.draw(st.integers(1, 8))):
        for app in ("A", "B"):
            shape = {"vcores": 1, "memory-mb": 256, "gpu-mem": data.draw(gpu_amounts)}
            core.update_request(app, step + 1, shape, data.draw(st.integers(0, 4)), now=0.0)
        for node_id in core.nodes:
            heartbeat(core, oracle, node_id)
        running = sorted(core.containers)
        for cid in data.draw(st.lists(st.sampled_from(running), unique=True)) if running else []:
            core.container_finished(cid)
            oracle.give(cid)
        check_state(core, oracle)
    # once heartbeats place nothing more, nothing still asked for fits any node by the rule:
    # the cards' reach is exact, nothing that a card could hold is left waiting
    while sum(heartbeat(core, oracle, node_id) for node_id in core.nodes):
        pass
    for app in core.apps.values():
        for req in app.pending:
            gpu = req.capability[2]
            assert not any(oracle.fits(n, gpu) for n in core.nodes), (gpu, oracle.used)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=st.lists(st.sampled_from([1024, 2048, 4096]), min_size=2, max_size=4).filter(
    lambda s: len(set(s)) > 1), extra=st.integers(1, 2048))
def test_a_request_larger_than_every_card_stays_pending_and_why_names_each_node(sizes, extra):
    core = SchedulerCore(parse_config(TWO_QUEUES), resource_types=TYPES)
    core.add_node("gpu1", {**CPU, "gpu-mem": sum(sizes)}, cards=sizes)
    core.add_node("gpu2", {**CPU, "gpu-mem": sum(sizes)}, cards=sizes)
    core.submit_app("A", "u", "a")
    amount = max(sizes) + extra  # the node total holds it; no card does
    core.update_request("A", 1, {"vcores": 1, "gpu-mem": amount}, 1)

    assert settle(core) == []

    reasons = why_pending(core, "A")["requests"][0]["reasons"]
    messages = {r["message"] for r in reasons if r["code"] == "no-card-room"}
    assert messages == {f"no single card on node {n} has {amount} MiB free (largest free: {max(sizes)})"
                        for n in ("gpu1", "gpu2")}


def test_a_node_without_cards_holds_a_request_of_its_total_gpu_memory_as_before():
    core = SchedulerCore(parse_config(TWO_QUEUES), resource_types=TYPES)
    core.add_node("plain", {**CPU, "gpu-mem": 20480})
    core.add_node("carded", {**CPU, "gpu-mem": 20480}, cards=[10240, 10240])
    core.submit_app("A", "u", "a")
    core.update_request("A", 1, {"vcores": 1, "gpu-mem": 15360}, 2)

    got = settle(core)

    assert [(a.node_id, a.cards) for a in got] == [("plain", ())]  # not two cards: 15360 is no 2 x 10240
    why = why_pending(core, "A")["requests"][0]["reasons"]
    assert any(r["message"] == "no single card on node carded has 15360 MiB free (largest free: 10240)"
               for r in why)


def test_two_whole_cards_serve_a_request_of_two_cards_and_its_release_frees_both():
    core = SchedulerCore(parse_config(TWO_QUEUES), resource_types=TYPES)
    core.add_node("g", {**CPU, "gpu-mem": 4 * 8192}, cards=[8192] * 4)
    core.submit_app("A", "u", "a")
    core.update_request("A", 1, {"vcores": 1, "gpu-mem": 2048}, 1)
    core.update_request("A", 2, {"vcores": 1, "gpu-mem": 16384}, 1)
    got = {a.priority: a for a in settle(core)}
    assert got[1].cards == (0,) and got[2].cards == (1, 2)
    assert core.nodes["g"].cards.free == [6144, 0, 0, 8192]

    core.container_finished(got[2].assignment_id)

    assert core.nodes["g"].cards.free == [6144, 8192, 8192, 8192]


def test_a_recovered_container_goes_back_on_the_card_the_snapshot_recorded():
    core = SchedulerCore(parse_config(TWO_QUEUES), resource_types=TYPES)
    core.add_node("g", {**CPU, "gpu-mem": 20480}, cards=[10240, 10240])
    core.recover_app("A", "u", "root.a")
    core.container_started("c1", "A", "g", {"vcores": 1, "gpu-mem": 4096}, cards=[1])
    core.container_started("c2", "A", "g", {"vcores": 1, "gpu-mem": 4096})  # none recorded: best fit
    assert core.containers["c1"].cards == (1,) and core.containers["c2"].cards == (1,)
    assert core.nodes["g"].cards.free == [10240, 2048]
    assert core.snapshot()["nodes"]["g"]["cards"] == [{"size": 10240, "free": 10240}, {"size": 10240, "free": 2048}]

    core.container_finished("c1")

    assert core.nodes["g"].cards.free == [10240, 6144]


def test_a_card_list_that_disagrees_with_the_nodes_gpu_memory_is_refused_and_the_node_not_added():
    core = SchedulerCore(parse_config(TWO_QUEUES), resource_types=TYPES)
    core.add_node("g", {**CPU, "gpu-mem": 20000}, cards=[10240, 10240])
    core.add_node("h", {**CPU, "gpu-mem": 0}, cards=[0])
    assert core.nodes == {} and core.counters["ignored_events"] == 2


def test_a_node_resized_with_the_same_gpu_total_keeps_its_cards_and_containers_on_them():
    core = SchedulerCore(parse_config(TWO_QUEUES), resource_types=TYPES)
    core.add_node("g", {**CPU, "gpu-mem": 20480}, cards=[10240, 10240])
    core.submit_app("A", "u", "a")
    core.update_request("A", 1, {"vcores": 1, "gpu-mem": 8192}, 1)
    (a,) = settle(core)

    core.update_node("g", {"vcores": 128, "memory-mb": 1 << 20, "gpu-mem": 20480})
    assert core.nodes["g"].cards.free == [2048, 10240] and core.containers[a.assignment_id].cards == (0,)
    assert core.nodes["g"].cards.limit[0] == 128  # fit tests see the new capacity

    core.update_node("g", {**CPU, "gpu-mem": 30000})  # no longer their sum: one node total again
    assert core.nodes["g"].cards is None and core.containers[a.assignment_id].cards == ()
    core.container_finished(a.assignment_id)
    assert core.nodes["g"].allocated == (0, 0, 0)
