"""Which engine the Docker tests talk to (engine.py): the one `make images` built the images in."""
from __future__ import annotations

from tests.docker_cluster.engine import engine_host

GONE = "unix:///nonexistent/yarn-drf-engine/docker.sock"


def test_a_docker_host_that_does_not_answer_is_not_the_engine_the_tests_use(monkeypatch):
    # A shell can keep DOCKER_HOST from an engine stopped since; make images then builds in the
    # private engine, and the tests must look there too (or say no engine answers), not at the gone one.
    monkeypatch.setenv("DOCKER_HOST", GONE)
    assert engine_host() != GONE
