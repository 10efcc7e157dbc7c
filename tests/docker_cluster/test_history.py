"""The container history the H-DRF oracle judges failovers with (history.py): the window each
container's end is known in, from listings alone (no cluster: `record` is fed what the watcher reads)."""
from __future__ import annotations

from tests.docker_cluster.history import ContainerHistory


def _row(app: str) -> dict:
    return {"app": app, "queue": "root.q", "user": "u", "node": "n1", "resources": {"vcores": 1}, "started": 1}


def test_an_end_is_known_between_the_last_listing_that_showed_it_and_the_first_that_did_not():
    h = ContainerHistory(cluster=None)
    h.record({"c1": _row("a1"), "c2": _row("a1")}, {"a1": "RUNNING"}, 100, 110)
    h.record({"c1": _row("a1"), "c2": _row("a1")}, {"a1": "RUNNING"}, 200, 210)
    h.record({"c1": _row("a1")}, {"a1": "RUNNING"}, 300, 310)
    h.record({"c1": _row("a1")}, {"a1": "RUNNING"}, 400, 410)
    ended = h.ended({"c1": _row("a1")})
    assert set(ended) == {"c2"}
    assert (ended["c2"]["seen"], ended["c2"]["ended"]) == (200, 310)


def test_absence_while_the_app_is_recovered_says_nothing_and_a_finished_app_ends_its_containers():
    h = ContainerHistory(cluster=None)
    h.record({"c1": _row("a1"), "c2": _row("a2")}, {"a1": "RUNNING", "a2": "RUNNING"}, 100, 110)
    # A failover: both apps ACCEPTED until their AMs register again; nothing listed.
    h.record({}, {"a1": "ACCEPTED", "a2": "ACCEPTED"}, 200, 210)
    # a1 runs again with c1; a2 finished meanwhile.
    h.record({"c1": _row("a1")}, {"a1": "RUNNING", "a2": "FINISHED"}, 300, 310)
    ended = h.ended({"c1": _row("a1")})
    assert set(ended) == {"c2"}
    assert (ended["c2"]["seen"], ended["c2"]["ended"]) == (100, 310)


def test_a_container_listed_again_after_a_gap_is_not_ended():
    h = ContainerHistory(cluster=None)
    h.record({"c1": _row("a1")}, {"a1": "RUNNING"}, 100, 110)
    h.record({}, {"a1": "RUNNING"}, 200, 210)  # a listing that missed it
    h.record({"c1": _row("a1")}, {"a1": "RUNNING"}, 300, 310)
    assert h.ended({"c1": _row("a1")}) == {}
    h.record({}, {"a1": "RUNNING"}, 400, 410)
    ended = h.ended({})
    assert (ended["c1"]["seen"], ended["c1"]["ended"]) == (300, 410)
