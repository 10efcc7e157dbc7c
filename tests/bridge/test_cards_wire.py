"""GPU cards on the wire (protocol version 6): a node's cards come in with the node, each
assignment on a node with cards names the cards it goes on, and a card list the core cannot take
leaves the node in without cards, with the reason logged, rather than out."""
from __future__ import annotations

import pytest

from tests.bridge.invariants import check_accounting
from tests.bridge.messages import NODE, ask, call, schedule, snapshot
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
