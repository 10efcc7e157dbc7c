"""A reload's parse and validation run in a worker process (yarn_bridge.reload_worker): what it
accepts is exactly what this process parses from the same file, what it refuses it refuses with
the same errors, and a worker that hangs or dies refuses the reload with the reason while the
running configuration stays in force."""
from __future__ import annotations

import os
import threading

from hypothesis import HealthCheck, given, settings

from scheduler import parse_config
from yarn_bridge.validation import validate
from yarn_bridge.reload_worker import ParseWorker
from yarn_bridge.service import CoreService
from tests.core.test_config_properties import queue_file
from tests.waits import wait_for

AGAINST = (("memory-mb", "vcores", "gpu-mem"), "drf")
GOOD = "queues: {root: {children: {a: {}}}}\n"
WORKER = ParseWorker()  # one for the module's examples, as a service keeps one for its reloads


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(queue_file())
def test_what_the_worker_accepts_equals_the_file_parsed_in_this_process(tmp_path, generated):
    text, _leaves = generated
    path = tmp_path / "queues.yaml"
    path.write_text(text)
    config, errors = WORKER.check(str(path), AGAINST)
    assert errors == [] and config == parse_config(text, source=str(path))
    path.write_text(text + "\nbogus-key: 1\n")  # the same file with a key the format lacks
    refused, errors = WORKER.check(str(path), AGAINST)
    assert refused is None and errors and errors == validate(path, AGAINST)[1]


def service_on(tmp_path, timeout_s: float = 60.0) -> tuple[CoreService, os.PathLike]:
    good = tmp_path / "queues.yaml"
    good.write_text(GOOD)
    service = CoreService(good)
    service.reloader.worker = ParseWorker(timeout_s=timeout_s)
    return service, good


def test_a_reload_whose_worker_hangs_is_refused_and_the_old_configuration_stays(tmp_path):
    service, good = service_on(tmp_path, timeout_s=1)
    config = service.core.config
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)  # opening it for reading blocks until a writer comes: none does
    result = service.reloader.reload(fifo)
    assert not result.accepted and result.version == 1
    assert result.errors == [f"{fifo}: (top level): the check did not finish within 1 s; its worker process was killed"]
    assert service.core.config is config and service.reloader.worker.pid is None
    good.write_text(GOOD.replace("a: {}", "a: {}, b: {}"))  # the next reload gets a new worker
    assert service.reloader.reload().accepted and "root.b" in service.core.queues


def test_a_reload_whose_worker_dies_is_refused_with_its_exit_code_and_the_old_configuration_stays(tmp_path):
    service, good = service_on(tmp_path)
    config = service.core.config
    fifo = tmp_path / "never-written"
    os.mkfifo(fifo)
    worker = service.reloader.worker
    done: dict = {}
    thread = threading.Thread(target=lambda: done.setdefault("result", service.reloader.reload(fifo)))
    thread.start()
    # the reload starts the worker, which then blocks opening the FIFO
    wait_for(lambda: worker.pid, "the reload to start its worker", budget_s=30, poll_s=0.01)
    os.kill(worker.pid, 9)
    thread.join(30)
    result = done["result"]
    assert not result.accepted and result.version == 1
    assert result.errors == [f"{fifo}: (top level): the process checking the file ended (exit code -9) "
                             "before it answered"]
    assert service.core.config is config
    assert service.reloader.reload(good).accepted  # a new worker for the next reload
