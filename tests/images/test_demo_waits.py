"""The Docker demo's and end-to-end tests' waits (tests/docker_cluster/waits.py), whose budget follows the
cluster's progress, and the report the demo prints when it fails (docker/demo.py). On a simulated
clock and a stand-in cluster: no Docker needed."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.docker_cluster.waits import Stalled, wait_for

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docker"))
import demo  # noqa: E402


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_wait_outlasts_its_stall_budget_while_progress_is_made():
    clock = Clock()
    value = wait_for(lambda: clock.now >= 500 and "done", "the slow thing", progress=lambda: int(clock.now // 50),
                     stall_s=100, limit_s=1000, clock=clock, sleep=clock.sleep)
    assert value == "done" and clock.now >= 500  # five times the stall budget, always moving


def test_a_wait_with_nothing_moving_gives_up_after_its_stall_budget_and_says_so():
    clock = Clock()
    with pytest.raises(Stalled) as failed:
        wait_for(lambda: False, "the hung thing", progress=lambda: "same", stall_s=100, limit_s=1000,
                 clock=clock, sleep=clock.sleep, describe=lambda: "apps: none")
    assert 100 < clock.now <= 102
    message = str(failed.value)
    assert "the hung thing" in message and "nothing moved for 10" in message and "apps: none" in message


def test_a_wait_that_keeps_moving_without_arriving_ends_at_its_limit():
    clock = Clock()
    with pytest.raises(Stalled, match="still moving, but not there after 100[0-9] s"):
        wait_for(lambda: False, "churn", progress=lambda: clock.now, stall_s=100, limit_s=1000,
                 clock=clock, sleep=clock.sleep)


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


def test_the_demos_wait_counts_an_error_in_its_condition_as_not_yet():
    answers = iter([RuntimeError("status server restarting"), False, True])

    def cond():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    class Moving:
        n = 0

        def activity(self):
            self.n += 1
            return self.n

    demo.wait(cond, "the reload", Moving(), stall_s=60)
