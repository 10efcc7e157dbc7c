"""Who may ask the status server what: read-only without a token, the token for POST /v1/reload,
no foreign Host or Origin (DNS rebinding, cross-origin posts from a browser), idle and oversized
requests cut short."""
from __future__ import annotations

import socket
import time

import pytest
import requests

from tests.ops.conftest import QUEUES, STATUS_TOKEN
from tests.waits import wait_for
from yarn_bridge import status
from yarn_bridge.status import StatusServer


def raw(port: int, request: bytes) -> bytes:
    """Sends `request` as is (requests would fix the Host header) and returns the whole answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out


def changed_file(ops) -> None:
    ops.queues_file.write_text(QUEUES.replace("weight: 2", "weight: 3"))


@pytest.fixture
def read_only(ops):
    server = StatusServer(lambda: ops.core, ops.lock, port=0, metrics=ops.metrics, reloader=ops.reloader).start()
    yield server
    server.stop()


def test_without_a_token_the_server_is_read_only(ops, read_only):
    changed_file(ops)
    for headers in ({}, {"Authorization": f"Bearer {STATUS_TOKEN}"}):
        r = requests.post(read_only.url + "/v1/reload", headers=headers, timeout=10)
        assert r.status_code == 403 and "read-only" in r.json()["error"] and "--status-token-file" in r.json()["error"]
    assert requests.get(read_only.url + "/v1/queues", timeout=10).status_code == 200
    assert ops.reloader.version == 1 and ops.queue("root.prod")["weight"] == 2.0


@pytest.mark.parametrize("authorization", [None, "Bearer wrong", f"Basic {STATUS_TOKEN}", f"Bearer {STATUS_TOKEN}x",
                                           "Bearer", f"bearer {STATUS_TOKEN[:-1]}"])
def test_reload_needs_the_token(ops, authorization):
    changed_file(ops)
    headers = {} if authorization is None else {"Authorization": authorization}
    r = requests.post(ops.url + "/v1/reload", headers=headers, timeout=10)
    assert r.status_code == 401 and "Authorization: Bearer TOKEN" in r.json()["error"]
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    assert ops.reloader.version == 1
    assert ops.post_reload().status_code == 200 and ops.reloader.version == 2


def test_a_cross_origin_post_from_a_browser_is_refused_even_as_text_plain(ops):
    """A page on another origin can POST text/plain without a preflight; the browser adds Origin."""
    changed_file(ops)
    for origin in ("http://evil.example", f"http://127.0.0.1:{ops.server.port + 1}", "null"):
        r = requests.post(ops.url + "/v1/reload", data="x", timeout=10,
                          headers={"Content-Type": "text/plain", "Origin": origin,
                                   "Authorization": f"Bearer {STATUS_TOKEN}"})
        assert r.status_code == 403 and "cross-origin" in r.json()["error"], origin
    assert ops.reloader.version == 1
    same = requests.post(ops.url + "/v1/reload", timeout=10, headers={
        "Origin": f"http://127.0.0.1:{ops.server.port}", "Authorization": f"Bearer {STATUS_TOKEN}"})
    assert same.status_code == 200, "the server's own origin is fine"


def test_a_foreign_host_header_gets_nothing_so_dns_rebinding_reads_no_apps(ops):
    port = ops.server.port
    with ops.lock:
        ops.core.submit_app("app_secret", "alice", "root.prod.etl")
    for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}", "127.0.0.1", f"192.0.2.1:{port}"):
        answer = raw(port, f"GET /v1/apps HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        assert answer.startswith(b"HTTP/1.0 403") and b"app_secret" not in answer, host
    answer = raw(port, b"GET /v1/apps HTTP/1.0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.0 403") and b"is not this server" in answer, "no Host header at all"
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}"):
        answer = raw(port, f"GET /v1/apps HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        assert answer.startswith(b"HTTP/1.0 200") and b"app_secret" in answer, host


def test_an_oversized_body_is_refused_unread(ops):
    head = (f"POST /v1/reload HTTP/1.1\r\nHost: 127.0.0.1:{ops.server.port}\r\nContent-Length: 1000000000\r\n"
            f"Authorization: Bearer {STATUS_TOKEN}\r\n\r\n").encode()
    answer = raw(ops.server.port, head)
    assert answer.startswith(b"HTTP/1.0 413")
    assert raw(ops.server.port, head.replace(b"1000000000", b"12x")).startswith(b"HTTP/1.0 400")


@pytest.fixture
def strict(ops, monkeypatch):
    monkeypatch.setattr(status, "REQUEST_TIMEOUT_S", 0.5)
    monkeypatch.setattr(status, "MAX_CONNECTIONS", 2)
    server = StatusServer(lambda: ops.core, ops.lock, port=0).start()
    yield server
    server.stop()


def test_an_idle_connection_is_closed_after_the_request_timeout(strict):
    with socket.create_connection(("127.0.0.1", strict.port), timeout=10) as idle:
        start = time.monotonic()
        assert idle.recv(1) == b""
        assert time.monotonic() - start < 5
    with socket.create_connection(("127.0.0.1", strict.port), timeout=10) as slow:
        slow.sendall(b"GET /v1/health HTTP/1.1\r\n")  # and then nothing more
        start = time.monotonic()
        assert slow.recv(1) == b"" and time.monotonic() - start < 5


def test_connections_beyond_the_limit_are_closed_and_service_resumes_after(strict):
    idle = [socket.create_connection(("127.0.0.1", strict.port), timeout=10) for _ in range(2)]
    time.sleep(0.1)
    with pytest.raises(requests.ConnectionError):
        requests.get(strict.url + "/v1/health", timeout=10)
    for s in idle:
        s.close()
    health = wait_for(lambda: requests.get(strict.url + "/v1/health", timeout=10),
                      "the server to serve again after the idle connections closed", budget_s=5, poll_s=0.05,
                      ignore=(requests.ConnectionError,))
    assert health.status_code == 200
