"""GPU cards on the real cluster: a NodeManager declares two 10 GiB cards in its configuration (docs/deploy.md,
"GPU cards on the NodeManagers"; no real GPU), yarn-drf places each container's gpu-mem on one card, and the container
learns its card: distributed-shell containers print CUDA_VISIBLE_DEVICES, which must be the cards
the core charged. A request no single card can hold stays pending, and `yarn-drf why` says so."""
from __future__ import annotations

import re
import uuid

import pytest

from tests.docker_cluster.cluster import GPU, YARN_DRF_SCHEDULER, Cluster, NodeShape
from tests.docker_cluster.conftest import QUEUES

CARD = 10240
# One NodeManager: YARN's node attributes are per host, and here every NodeManager shares one.
SHAPES = (NodeShape("nm-cards", vcores=8, memory_mb=16384, gpu_mem=2 * CARD, cards=(CARD, CARD)),)
# The NodeManager runs it as `bash -c "COMMAND 1>LOGDIR/stdout ..."`: one command, so the echo's
# output goes to the container's stdout too, and no double quote.
PRINT_CARDS = "sh -c 'echo cards=/$CUDA_VISIBLE_DEVICES/; sleep 3600'"


@pytest.fixture(scope="module")
def card_cluster(docker_client, scheduler_name):
    if scheduler_name != "yarn-drf":
        pytest.skip("GPU cards are yarn-drf's: the RM image cannot run `yarn-drf serve`")
    c = Cluster.create(YARN_DRF_SCHEDULER, QUEUES, shapes=SHAPES)
    try:
        c.start()
        yield c
    finally:
        c.stop()


def card_node(c: Cluster) -> str:
    """The card node's id as the core has it, once the core has its cards."""
    def found():
        nodes = c.core_status()["nodes"]
        return next((n for n, info in nodes.items() if info.get("cards")), None)
    return c.wait_for(found, 60, "the core to have the NodeManager's cards")


def printed_cards(c: Cluster) -> dict[str, str]:
    """What each container on the card node printed: {container id: CUDA_VISIBLE_DEVICES}."""
    script = ("find / -xdev -name stdout -path '*userlogs*container_*' 2>/dev/null "
              "| while read f; do echo \"$f $(cat \"$f\")\"; done")
    res = c.nms["nm-cards"].get_wrapped_container().exec_run(["bash", "-c", script])
    out = {}
    for line in res.output.decode(errors="replace").splitlines():
        m = re.search(r"/(container_[0-9_e]+)/stdout cards=/([0-9,]*)/", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def why(c: Cluster, app_id: str) -> str:
    """`yarn-drf why APP` as an operator runs it in the RM container (wide, so no line wraps)."""
    code, out = c.exec(["bash", "-c", f"COLUMNS=400 yarn-drf why {app_id} "
                                      f"--url http://127.0.0.1:{c.status_port()}"])
    assert code == 0, out
    return out


def run_printing_cards(c: Cluster, count: int, gpu_mem: int) -> tuple[str, str]:
    """A distributed-shell app of `count` containers of `gpu_mem` MiB each that print their cards,
    running (its AM at least): the card node's id and the app's."""
    node = card_node(c)
    name = f"cards-{uuid.uuid4().hex[:6]}"
    code, out = c.submit_dshell(name, "dev", count, {"memory-mb": 256, "vcores": 1, GPU: gpu_mem},
                                command=PRINT_CARDS)
    assert code == 0, out
    return node, c.wait_app(name, ("RUNNING",), 180)["id"]


def test_each_container_sees_the_card_the_core_charged_and_no_card_is_overfilled(card_cluster):
    c = card_cluster
    node, app = run_printing_cards(c, 3, 6144)

    def two_printed():
        gpu = {cid for cid, info in c.running_containers().items() if info["resources"].get(GPU)}
        seen = {cid: v for cid, v in printed_cards(c).items() if cid in gpu}
        return seen if len(seen) == 2 else None
    seen = c.wait_for(two_printed, 180, "two GPU containers printing their cards", describe=lambda: (
        f"{c.explain()}\nprinted: {printed_cards(c)}\nNodeManager log:\n{c.logs(c.nms['nm-cards'])}"))

    # the third 6 GiB container fits on no card (each has 4 GiB left), though the node has 8 GiB
    cards = c.core_status()["nodes"][node]["cards"]
    assert sorted(seen.values()) == ["0", "1"], seen
    for i, card in enumerate(cards):
        on_card = 6144 * sum(v.split(",").count(str(i)) for v in seen.values())
        assert on_card == card["size"] - card["free"] <= card["size"], (i, seen, cards)
    text = why(c, app)
    assert f"no single card on node {node} has 6144 MiB free (largest free: 4096)" in text, text
    c.kill_app(app)


def test_a_request_larger_than_any_card_stays_pending_saying_so(card_cluster):
    c = card_cluster
    node, app = run_printing_cards(c, 1, 12288)
    said = f"no single card on node {node} has 12288 MiB free (largest free: {CARD})"

    def naming_the_cards():
        text = why(c, app)
        return text if said in text else None
    c.wait_for(naming_the_cards, 60, f"`yarn-drf why` to say: {said}")
    assert not [cid for cid, info in c.running_containers().items() if info["resources"].get(GPU)], \
        "12 GiB is on no card of 10 GiB, though the node has 20 GiB"
    c.kill_app(app)
