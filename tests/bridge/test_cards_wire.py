"""GPU cards on the wire (protocol version 6): a node's cards come in with the node, each
assignment on a node with cards names the cards it goes on, and a card list the core cannot take
leaves the node in without cards, with the reason logged, rather than out. A running container's
row names its cards: the core charges those, or, when they cannot be its cards, logs it and
counts the container where its own rule puts it."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.bridge.invariants import check_accounting
from tests.bridge.messages import NODE, ask, call, schedule, snapshot, started
from yarn_bridge.service import CoreService

APP = {"app": "app_1", "user": "alice", "queue": "root.mem", "groups": []}
CARD_NODE = {"node": "n1:1", "capacity": NODE, "rack": "/r1", "cards": [4096, 4096]}


def card_use(assignments: list[dict], sizes: list[int]) -> list[int]:
    """The gpu-mem the assignments put on each card (a multi-card one fills each card but the last)."""
    used = [0] * len(sizes)
    for a in assignments:
        left = a["resources"]["gpu-mem"]
        for n, card in enumerate(a["cards"]):
            part = left if n == len(a["cards"]) - 1 else min(sizes[card], left)
            used[card] += part
            left -= part
    return used


def test_each_assignment_on_a_node_with_cards_names_its_card_and_no_card_is_overfilled(queues_file):
    svc = CoreService(queues_file)
    assert snapshot(svc, nodes=[CARD_NODE], apps=[APP])["ok"]
    gpu = schedule(svc, asks=[ask(1, "app_1", 3, gpu=3072)])["assignments"]
    assert sorted(tuple(a["cards"]) for a in gpu) == [(0,), (1,)], "a third 3 GiB container fits no 4 GiB card"
    assert all(u <= s for u, s in zip(card_use(gpu, [4096, 4096]), [4096, 4096]))
    cpu = schedule(svc, seq=2, asks=[ask(2, "app_1", 1, gpu=0)])["assignments"]
    assert len(cpu) == 1 and "cards" not in cpu[0], "a container without gpu-mem goes on no card"
    check_accounting(svc.core)


def test_a_whole_multiple_of_equal_cards_names_every_card_it_takes(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc, nodes=[CARD_NODE], apps=[APP])
    [a] = schedule(svc, asks=[ask(1, "app_1", 1, gpu=8192)])["assignments"]
    assert a["cards"] == [0, 1]


@pytest.mark.parametrize("cards, said", [
    ([-1, 8193], "cards[0]: must be a positive integer"),
    ([10 ** 30], "cards[0]: must be a positive integer"),
    ([128] * 65, "at most 64 cards per node, got 65"),
    ([4096, 4095], "gpu-mem 8192 is not the sum of its cards (8191 MiB"),
    ([4096.0, 4096.0], "cards[0]: must be a positive integer"),
    ([True, 8191], "cards[0]: must be a positive integer"),
    ("8192", "cards must be a non-empty list"),
    ({"0": 8192}, "cards must be a non-empty list"),
])
def test_a_card_list_the_core_cannot_take_leaves_the_node_in_without_cards_saying_why(queues_file, caplog, cards,
                                                                                      said):
    svc = CoreService(queues_file)
    bad = {**CARD_NODE, "cards": cards}
    assert snapshot(svc, nodes=[bad, {"node": "n2:1", "capacity": NODE, "cards": [8192]}], apps=[APP])["ok"]
    assert svc.core.nodes["n1:1"].cards is None, "the node is in, its gpu-mem one node total"
    assert svc.core.nodes["n2:1"].cards is not None, "the node after it still gets its cards"
    assert svc.counters["bad_deltas"] == 1 and said in caplog.text and "n1:1" in caplog.text
    reply = call(svc, type="schedule", epoch=5, seq=2,
                 deltas=[{"op": "node_added", "node": "n3:1", "capacity": NODE, "cards": cards}])
    assert reply["ok"] and svc.core.nodes["n3:1"].cards is None and svc.counters["bad_deltas"] == 2
    check_accounting(svc.core)


def test_node_updated_gives_a_node_cards_takes_them_away_or_leaves_them(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc, nodes=[{"node": "n1:1", "capacity": NODE}], apps=[APP])
    update = {"op": "node_updated", "node": "n1:1", "capacity": NODE}
    schedule(svc, nodes=(), deltas=[{**update, "cards": [4096, 4096]}])
    assert svc.core.nodes["n1:1"].cards.sizes == (4096, 4096)
    [a] = schedule(svc, asks=[ask(1, "app_1", 1, gpu=1024)])["assignments"]
    schedule(svc, nodes=(), deltas=[update])
    assert svc.core.nodes["n1:1"].cards.sizes == (4096, 4096), "no cards field: they stay"
    schedule(svc, nodes=(), deltas=[{**update, "cards": []}])
    assert svc.core.nodes["n1:1"].cards is None, "[]: the node declares none any more"
    assert a["assignment_id"] in svc.core.containers, "the running container stays, on the node total"
    schedule(svc, nodes=(), deltas=[{**update, "cards": [1, 2]}])
    assert svc.core.nodes["n1:1"].cards is None and svc.counters["bad_deltas"] == 1
    check_accounting(svc.core)


# A running container's row ends with its cards (its allocation tag), so a core rebuilt from a
# snapshot, or told of containers recovered after an RM restart, charges the cards they use.
FOUR_CARDS = {"node": "n1:1", "capacity": {**NODE, "gpu-mem": 16384}, "rack": "/r1", "cards": [4096] * 4}


def on_cards(container: str, gpu: int, cards: object) -> list:
    return started(container, "app_1", gpu=gpu, memory=1, vcores=0) + [cards]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(per_card=st.lists(st.lists(st.integers(1, 2048), max_size=2).filter(lambda xs: sum(xs) <= 4096),
                         min_size=4, max_size=4),
       whole=st.booleans())
def test_a_snapshot_charges_each_running_container_to_the_cards_its_row_names(queues_file, per_card, whole):
    svc = CoreService(queues_file)
    rows = [on_cards(f"c{card}_{n}", gpu, [card]) for card, amounts in enumerate(per_card)
            for n, gpu in enumerate(amounts)]
    if whole and not per_card[2] and not per_card[3]:
        rows.append(on_cards("c_whole", 8192, [2, 3]))  # a multi-card container: both cards whole
    assert snapshot(svc, nodes=[FOUR_CARDS], apps=[APP], containers=rows)["ok"]
    used = [sum(amounts) for amounts in per_card]
    if any(r[0] == "c_whole" for r in rows):
        used[2] = used[3] = 4096
    assert svc.core.nodes["n1:1"].cards.free == [4096 - u for u in used]
    assert svc.counters["bad_deltas"] == 0
    check_accounting(svc.core)


def test_a_container_recovered_after_an_rm_restart_keeps_its_cards_and_new_ones_go_around_it(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc, nodes=[CARD_NODE], apps=[APP])
    # the rule would put a lone 3 GiB container on card 0; the NodeManager says it runs on card 1
    schedule(svc, nodes=(), started=[started("c1", "app_1", gpu=3072) + [[1]]])
    assert svc.core.nodes["n1:1"].cards.free == [4096, 1024] and svc.core.containers["c1"].cards == (1,)
    [a] = schedule(svc, seq=2, asks=[ask(1, "app_1", 2, gpu=3072)])["assignments"]
    assert a["cards"] == [0], "the one card with 3 GiB free, not the full card 1"
    check_accounting(svc.core)


@pytest.mark.parametrize("cards, gpu, said", [
    ([2], 1024, "not distinct card indices of a node with 2 cards"),
    ([0, 0], 1024, "not distinct card indices"),
    ([-1], 1024, "not distinct card indices"),
    ("1", 1024, "not distinct card indices"),
    ([1.0], 1024, "not distinct card indices"),
    ([True], 1024, "not distinct card indices"),
    ([[1]], 1024, "not distinct card indices"),
    ([], 1024, "not distinct card indices"),
    (list(range(100_000)), 1024, "not distinct card indices"),
    ([1], 6144, "card 1 of 4096 MiB, less than 6144 MiB"),
    ([0, 1], 1024, "1024 MiB is not 2 whole cards of one size"),
])
def test_cards_a_running_container_cannot_be_on_are_logged_and_it_is_counted_by_the_rule(queues_file, caplog,
                                                                                          cards, gpu, said):
    svc = CoreService(queues_file)
    rows = [on_cards("c_bad", gpu, cards), on_cards("c_good", 1024, [1])]
    assert snapshot(svc, nodes=[CARD_NODE], apps=[APP], containers=rows)["ok"]
    assert set(svc.core.containers) == {"c_bad", "c_good"}, "nothing lost"
    assert svc.core.apps["app_1"].usage[2] == gpu + 1024, "both counted in full"
    assert svc.core.containers["c_good"].cards == (1,), "the row after it keeps its own cards"
    assert svc.counters["bad_deltas"] == 1
    assert "container c_bad on node n1:1: its cards" in caplog.text and said in caplog.text
    assert "counted where the core's rule places it" in caplog.text
    check_accounting(svc.core)


def test_a_row_with_cards_on_a_node_without_cards_counts_gpu_memory_on_the_node_total(queues_file):
    svc = CoreService(queues_file)
    snapshot(svc, nodes=[{"node": "n1:1", "capacity": NODE, "rack": "/r1"}], apps=[APP],
             containers=[on_cards("c1", 1024, [0])])
    assert svc.core.containers["c1"].cards == () and svc.core.nodes["n1:1"].allocated[2] == 1024
    assert svc.counters["bad_deltas"] == 0
    check_accounting(svc.core)
