"""A running core behind the real status server on an ephemeral 127.0.0.1 port, for the ops tests."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from scheduler import SchedulerCore, load_config
from tests.secret_files import secret_file
from yarn_bridge.metrics import Metrics
from yarn_bridge.reload import Reloader
from yarn_bridge.status import StatusServer

QUEUES = """\
resources: [memory-mb, vcores, gpu-mem]
reservation:
  starvation-timeout-s: 30
queues:
  root:
    children:
      prod:
        weight: 2
        children:
          etl: {}
          ml:
            max: {gpu-mem: 8000}
      adhoc:
        max-running-apps: 1
      batch:
        max: {vcores: 4}
"""

STATUS_TOKEN = "status-token-for-tests"

NODES = {
    "n1": ({"memory-mb": 16384, "vcores": 8, "gpu-mem": 0}, "/r1"),
    "n2": ({"memory-mb": 16384, "vcores": 8, "gpu-mem": 8000}, "/r2"),
}


class Clock:
    """The core's time source, moved by the tests (reservations wait on it)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Ops:
    core: SchedulerCore
    lock: threading.Lock
    metrics: Metrics
    reloader: Reloader
    server: StatusServer
    queues_file: Path
    clock: Clock
    token_file: Path

    @property
    def url(self) -> str:
        return self.server.url

    def post_reload(self) -> requests.Response:
        return requests.post(self.url + "/v1/reload", headers={"Authorization": f"Bearer {STATUS_TOKEN}"}, timeout=10)

    def get(self, path: str, status: int = 200):
        r = requests.get(self.url + path, timeout=10)
        assert r.status_code == status, (path, r.status_code, r.text)
        return r.json() if r.headers["Content-Type"] == "application/json" else r.text

    def queue(self, name: str) -> dict:
        return next(q for q in self.get("/v1/queues")["queues"] if q["name"] == name)

    def heartbeat(self, node: str) -> list:
        """One node decided the way the service decides a call for it: under the lock, timed into the metrics."""
        with self.lock:
            got = self.core.on_heartbeat(node)
        self.metrics.schedule(0.001, len(got))
        return got

    def settle(self) -> list:
        out = []
        while True:
            got = [a for n in sorted(self.core.nodes) for a in self.heartbeat(n)]
            if not got:
                return out
            out += got


@contextmanager
def running_ops(queues_file: Path, nodes: dict[str, tuple[dict[str, int], str]]) -> Iterator[Ops]:
    """A core on `queues_file` with `nodes`, served by the real status server until the block ends."""
    clock = Clock()
    box = {"core": SchedulerCore(load_config(queues_file), clock=clock)}
    for node_id, (capacity, rack) in nodes.items():
        box["core"].add_node(node_id, capacity, rack)
    lock = threading.Lock()
    metrics = Metrics(lambda: box["core"], lock)
    reloader = Reloader(lambda: box["core"], lock, queues_file, metrics=metrics)
    server = StatusServer(lambda: box["core"], lock, host="127.0.0.1", port=0, metrics=metrics,
                          reloader=reloader, token=STATUS_TOKEN).start()
    try:
        yield Ops(box["core"], lock, metrics, reloader, server, queues_file, clock, secret_file(queues_file.parent / "status-token", STATUS_TOKEN))
    finally:
        server.stop()


@pytest.fixture
def ops(tmp_path: Path):
    queues_file = tmp_path / "queues.yaml"
    queues_file.write_text(QUEUES)
    with running_ops(queues_file, NODES) as running:
        yield running
