"""The JVM cluster's tests start real Hadoop daemons on this machine: they need a JDK and the shim
built (`make shim`), and carry the `jvm` marker."""
from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.jvm_cluster.cluster import REPO, Cluster
from tests.queues import QUEUES_FILE as QUEUES


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/jvm_cluster" in str(item.fspath):
            item.add_marker(pytest.mark.jvm)


@pytest.fixture(scope="session", autouse=True)
def _shim_built():
    if not (REPO / "java_shim" / "target" / "classpath.txt").exists():
        pytest.fail("java_shim is not built: run `make shim` (make test does it)")


def new_cluster(tmp_root: Path, queues_text: str | None = None, kind: type[Cluster] = Cluster, **kwargs) -> Cluster:
    """A cluster (of class `kind`) on the tests' queue file, or on `queues_text`."""
    queues = tmp_root / "queues.yaml"
    queues.write_text(QUEUES.read_text() if queues_text is None else queues_text)
    return kind(tmp_root, queues, **kwargs)


@contextmanager
def started_cluster(queues_yaml: str | None = None, kind: type[Cluster] = Cluster, **kwargs) -> Iterator[Cluster]:
    """A cluster (of class `kind`) started on the integration queues, or on the `queues_yaml`
    text; stopped and removed after."""
    root = Path(tempfile.mkdtemp(prefix="yarn-drf-it-"))
    queues = root / "queues.yaml"
    queues.write_text(QUEUES.read_text() if queues_yaml is None else queues_yaml)
    c = kind(root, queues, **kwargs)
    try:
        c.start()
        yield c
    finally:
        c.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def cluster_factory():
    made: list[Cluster] = []
    roots: list[Path] = []

    def make(**kwargs) -> Cluster:
        root = Path(tempfile.mkdtemp(prefix="yarn-drf-it-"))
        roots.append(root)
        c = new_cluster(root, **kwargs)
        made.append(c)
        c.start()
        return c

    yield make
    for c in made:
        c.stop()
    for root in roots:
        shutil.rmtree(root, ignore_errors=True)
