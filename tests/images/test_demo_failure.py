"""The report the Docker demo prints when it fails (docker/demo.py): the reason (its waits'
failures, tests/waits.py) and each daemon's log lines that matter. On a stand-in cluster: no Docker
needed."""
from __future__ import annotations

import sys
from pathlib import Path

from tests.waits import Stalled

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docker"))
import demo  # noqa: E402


class Wrapped:
    def __init__(self, status: str, broken: bool = False) -> None:
        self.status, self.broken = status, broken

    def reload(self) -> None:
        if self.broken:
            raise ConnectionError("the Docker engine went away")


class Container:
    def __init__(self, log: str, status: str = "running", broken: bool = False) -> None:
        self.log, self.wrapped = log, Wrapped(status, broken)

    def get_wrapped_container(self) -> Wrapped:
        return self.wrapped


class StandInCluster:
    def __init__(self, daemons: list) -> None:
        self._daemons = daemons

    def daemons(self) -> list:
        return self._daemons

    def logs(self, container: Container, tail: int = 60) -> str:
        return "\n".join(container.log.splitlines()[-tail:])


RM_LOG = "\n".join([
    *(f"2026-11-27 07:00:{i:02d} INFO ResourceManager: heartbeat {i}" for i in range(30)),
    "2026-11-27 07:00:31 WARN YarnDrfScheduler: yarn-drf bridge: schedule 12 timed out; resync next",
    "2026-11-27 07:00:32 ERROR ResourceManager: java.io.IOException: disk full",
    "2026-11-27 07:00:33 INFO ResourceManager: heartbeat 31",
])


def test_the_failure_report_gives_the_reason_and_each_daemons_log_lines_that_matter():
    cluster = StandInCluster([("resourcemanager", Container(RM_LOG)),
                              ("cpu", Container("starting\nNodeManager up\n", status="exited")),
                              ("gpu", None),
                              ("mem", Container("", broken=True))])
    failure = Stalled("gave up waiting for every queue's app to run its first tasks: nothing moved for 121 s\n"
                      "apps: ...")
    report = demo.failure_report(failure, cluster)
    assert report.startswith("The demo failed: gave up waiting for every queue's app to run its first tasks: "
                             "nothing moved for 121 s")
    assert "yarn-drf bridge: schedule 12 timed out" in report and "java.io.IOException: disk full" in report
    assert "heartbeat 3" not in report, "routine lines are left out"
    assert "--- cpu (exited)" in report and "NodeManager up" in report  # no line matters: its last ones
    assert "--- gpu: not started" in report
    assert "--- mem: its state and log cannot be read (the Docker engine went away)" in report


class SlowRm:
    """An RM whose REST API times out on the first read and answers the next."""

    def __init__(self) -> None:
        self.reads = 0

    def running_containers(self) -> dict:
        self.reads += 1
        if self.reads == 1:
            raise demo.requests.ReadTimeout("Read timed out. (read timeout=10)")
        return {"c1": {"queue": "root.prod", "resources": {"memory-mb": 1024, "vcores": 1}}}


def test_a_read_the_loaded_rm_answers_too_slowly_skips_one_sample_and_the_next_one_counts():
    rm, capacity = SlowRm(), {"memory-mb": 4096, "vcores": 4, "gpu-mem": 1}
    weights = {q: dict.fromkeys(demo.RES, 1.0) for q in demo.SHOWN}
    assert demo.measure(rm, capacity, weights) is None
    sample = demo.measure(rm, capacity, weights)
    assert sample["root.prod"]["containers"] == 1 and sample["root.prod"]["dominant"] == 0.25
