"""Every container a cluster runs while a test watches, and for each that ends, the window its end
fell in: what the H-DRF oracle (hdrf.py) needs to judge decisions taken while containers ended, as
the maps of a MapReduce job running through a failover end while the queues compete.

A watcher thread lists the running containers again and again through the RM REST API (the active
RM's, after a failover). A container listed by a listing that began at `a` ran at `a` or later, so
it ended after the start of the last listing that showed it; it had ended by the end of the first
listing that did not while its app was RUNNING or had ended. While its app is being recovered
(ACCEPTED until its AM registers with the new RM) the RM does not list its containers, so their
absence then says nothing. Listings that fail (no RM active) leave both as they were.
"""
from __future__ import annotations

import threading
import time
from typing import Any

import requests

POLL_S = 0.5


def _ms() -> int:
    return int(time.time() * 1000)  # the RM's clock: it runs on this kernel (host networking)


class ContainerHistory:
    """`with ContainerHistory(cluster) as h:` ... `h.ended(running_now)`."""

    def __init__(self, cluster) -> None:
        self.cluster = cluster
        self._seen: dict[str, dict[str, Any]] = {}  # id -> as running_containers has it, "seen": ms
        self._gone: dict[str, int] = {}  # id -> ms by which it had ended
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="container-history", daemon=True)

    def __enter__(self) -> "ContainerHistory":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.is_set():
            began = _ms()
            try:
                states = {a["id"]: a["state"] for a in self.cluster.apps()}
                now = self.cluster.running_containers()
            except (requests.RequestException, ValueError, KeyError):
                now = None  # no RM answers (a failover): nothing learnt
            if now is not None:
                self.record(now, states, began, _ms())
            self._stop.wait(POLL_S)

    def record(self, listing: dict[str, dict[str, Any]], states: dict[str, str], began: int, done: int) -> None:
        """One listing of the running containers, begun at `began` and answered by `done` (ms), after
        the apps' states (`states`, app id -> state) were read."""
        with self._lock:
            for cid, v in listing.items():
                self._seen[cid] = {**v, "seen": began}
                self._gone.pop(cid, None)
            for cid in self._seen.keys() - listing.keys():
                if states.get(self._seen[cid]["app"], "FINISHED") not in ("NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED"):
                    self._gone.setdefault(cid, done)

    def ended(self, running: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Every container seen that is not in `running` (a listing taken now): as running_containers
        has it, with "seen" (ms, last seen running) and "ended" (ms, by when it had surely ended)."""
        now = _ms()
        with self._lock:
            return {cid: {**v, "ended": self._gone.get(cid, now)}
                    for cid, v in self._seen.items() if cid not in running}
