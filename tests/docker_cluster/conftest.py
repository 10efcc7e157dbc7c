"""Fixtures of the Docker end-to-end tests: the Docker engine (docker/engine.sh) and a running
mini-cluster (tests/docker_cluster/cluster.py), shared by the whole session.

testcontainers must be configured before it is imported: its Ryuk reaper image cannot be pulled
(no registry), and on these machines it would report an empty host.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tests.docker_cluster.engine import engine_host  # (imports no Docker client)

ROOT = Path(__file__).resolve().parents[2]

_HOST = engine_host()
if _HOST:
    os.environ["DOCKER_HOST"] = _HOST
os.environ["TESTCONTAINERS_RYUK_DISABLED"] = "true"
os.environ["TESTCONTAINERS_CONNECTION_MODE"] = "docker_host"
os.environ["TC_HOST"] = "127.0.0.1"

import docker  # noqa: E402  (after the environment above)
import pytest  # noqa: E402

from tests.docker_cluster.cluster import (  # noqa: E402
    CAPACITY_SCHEDULER, HADOOP_IMAGE, RM_IMAGE, YARN_DRF_SCHEDULER, Cluster,
)

QUEUES = ROOT / "conf" / "docker-queues.yaml"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/docker_cluster/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.docker)


@pytest.fixture(scope="session")
def docker_client() -> docker.DockerClient:
    if not _HOST:
        pytest.fail("no Docker engine answers: run 'make images' (starts a private engine as root) "
                    "or set DOCKER_HOST", pytrace=False)
    client = docker.from_env()
    for image in (HADOOP_IMAGE, RM_IMAGE):
        try:
            client.images.get(image)
        except docker.errors.ImageNotFound:
            pytest.fail(f"image {image} is missing: run 'make images'", pytrace=False)
    return client


def _scheduler_choice(client: docker.DockerClient) -> str:
    """YARN_DRF_E2E_SCHEDULER: yarn-drf | capacity | auto (yarn-drf when the RM image can run
    `yarn-drf serve`, else YARN's CapacityScheduler on the same queues)."""
    choice = os.environ.get("YARN_DRF_E2E_SCHEDULER", "auto")
    if choice == "auto":
        try:
            client.containers.run(RM_IMAGE, ["yarn-drf", "serve", "--help"], remove=True,
                                  network_mode="host", entrypoint=[])
            choice = "yarn-drf"
        except docker.errors.ContainerError:
            choice = "capacity"
    if choice not in ("yarn-drf", "capacity"):
        pytest.fail(f"YARN_DRF_E2E_SCHEDULER must be yarn-drf, capacity or auto, got {choice!r}")
    return choice


@pytest.fixture(scope="session")
def scheduler_name(docker_client) -> str:
    return _scheduler_choice(docker_client)


def scheduler_class(scheduler_name: str) -> str:
    return YARN_DRF_SCHEDULER if scheduler_name == "yarn-drf" else CAPACITY_SCHEDULER


@contextmanager
def running(cluster: Cluster) -> Iterator[Cluster]:
    """The cluster started, and stopped when the block ends, whatever happened in it."""
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def cluster(docker_client, scheduler_name):
    with running(Cluster.create(scheduler_class(scheduler_name), QUEUES)) as c:
        yield c


@pytest.fixture
def idle_cluster(cluster):
    """The cluster with no app running before and after the test."""
    cluster.kill_all_apps()
    yield cluster
    cluster.kill_all_apps()


@pytest.fixture
def requires_yarn_drf(scheduler_name):
    """Tests of yarn-drf's own behaviour; with the CapacityScheduler they cannot pass. In CI
    (YARN_DRF_E2E_REQUIRED=1) that is a failure, elsewhere a skip that says why."""
    if scheduler_name != "yarn-drf":
        msg = ("the RM image cannot run `yarn-drf serve` (or YARN_DRF_E2E_SCHEDULER=capacity): "
               "this test needs the yarn-drf scheduler")
        if os.environ.get("YARN_DRF_E2E_REQUIRED"):
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
