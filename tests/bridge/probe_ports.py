"""Probes `yarn-drf serve` as another user on the same host would: its bridge port and its status port.

    .venv/bin/python -m tests.bridge.probe_ports

starts `yarn-drf serve` (with --status-port and --status-token-file) on free loopback ports, runs
every case below against it and prints one row per case: which port, what was tried, what the
service must do, what it did. It exits 1 if any case was not refused as specified;
tests/bridge/test_port_probe.py asserts the same. The probe knows the tokens only where a case says
so ("token holder"): those cases check what a holder of the token still cannot do.
"""
from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import requests

from tests.bridge.messages import ping
from tests.bridge.shim_client import NotVerified, ShimClient, closed_by_peer, mac
from tests.ports import free_port
from tests.queues import QUEUES_FILE as QUEUES
from tests.secret_files import secret_file
from tests.waits import Stalled, wait_for
from yarn_bridge import protocol

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Target:
    bridge: int
    status: int
    token: str
    status_token: str
    queues: Path
    secret: Path  # a file the service must never read

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.status}{path}"

    def bridge_works(self) -> bool:
        client = ShimClient(self.bridge, self.token)
        try:
            return json.loads(client.open().call(ping()))["ok"] is True
        finally:
            client.close()


@dataclass
class Case:
    port: str
    attack: str
    expected: str
    run: Callable[[Target], tuple[bool, str]]


# ---------------------------------------------------------------------------- bridge port

def idle_connection(t: Target) -> tuple[bool, str]:
    with socket.create_connection(("127.0.0.1", t.bridge), timeout=30) as s:
        start = time.monotonic()
        closed = closed_by_peer(s)
        return closed and time.monotonic() - start < 8, f"closed after {time.monotonic() - start:.1f} s"


def trickled_hello(t: Target) -> tuple[bool, str]:
    with socket.create_connection(("127.0.0.1", t.bridge), timeout=30) as s:
        start = time.monotonic()
        try:
            for byte in b"yarn-drf-bridge/1 " + b"0" * 32:
                s.sendall(bytes([byte]))
                time.sleep(0.3)  # each read is quick; the whole takes 15 s
        except OSError:
            pass
        return time.monotonic() - start < 8, f"closed after {time.monotonic() - start:.1f} s"


def py4j_auth_first(token_of: Callable[[Target], str]) -> Callable[[Target], tuple[bool, str]]:
    def run(t: Target) -> tuple[bool, str]:
        client = ShimClient(t.bridge, t.token)
        client.send(f"A\n{token_of(t)}\ne\nc\nt\ncall\ns{ping()}\ne\n")
        try:
            answer = client.stream.readline()
        except ConnectionResetError:
            answer = b""
        return answer == b"" and t.bridge_works(), "no answer, connection closed"
    return run


def wrong_proof(t: Target) -> tuple[bool, str]:
    client = ShimClient(t.bridge, "guessed")
    nonce, theirs, proof = client.hello()
    told = proof == mac(t.token, "service", nonce, theirs) and t.token not in proof
    client.send(mac("guessed", "shim", theirs, nonce) + "\n" + f"A\n{t.token}\ne\n")
    return told and client.closed_by_peer(), "service proved itself without the token on the wire; closed"


def another_token_client(t: Target) -> tuple[bool, str]:
    try:
        ShimClient(t.bridge, "guessed").open()
    except NotVerified:
        return True, "the service's proof does not check against another token: the client sends nothing"
    return False, "a client with another token accepted the service"


def endless_line(t: Target) -> tuple[bool, str]:
    with socket.create_connection(("127.0.0.1", t.bridge), timeout=30) as s:
        try:
            s.sendall(b"y" * 1_000_000)
        except OSError:
            pass
        return closed_by_peer(s), "closed at the line limit"


def dropped_of_flood(port: int, count: int = 40, limit: int = 32, window_s: float = 4.0) -> int:
    """Opens `count` silent connections; returns how many were closed at once (refused at connect,
    or closed by the server before any of them could reach its 5 s handshake or idle timeout).
    Polls for the closings rather than waiting a fixed time (a loaded machine accepts slowly), and
    once those beyond `limit` are closed, a little longer for any that should not be."""
    start = time.monotonic()
    flood: list[socket.socket] = []
    refused = 0
    for _ in range(count):
        try:
            flood.append(socket.create_connection(("127.0.0.1", port), timeout=30))
        except (ConnectionResetError, ConnectionRefusedError):
            refused += 1  # the kernel or the server turned it away: closed at once too
    try:
        closed: set[socket.socket] = set()
        end = start + window_s
        while time.monotonic() < end:
            ready, _, _ = select.select([s for s in flood if s not in closed], [], [], 0.1)
            closed.update(s for s in ready if closed_by_peer(s))
            if refused + len(closed) >= count - limit:
                end = min(end, time.monotonic() + 0.5)
        return refused + len(closed)
    finally:
        for s in flood:
            s.close()


def flood_bounded(dropped: int, count: int = 40, limit: int = 32) -> bool:
    """Those beyond the limit were closed at once, not all: within it, silent connections wait for
    their timeout. More than count - limit may be closed when a case before still held a slot
    the server had not yet freed (a loaded machine)."""
    return count - limit <= dropped < count


def pending_flood(t: Target) -> tuple[bool, str]:
    dropped = dropped_of_flood(t.bridge)
    try:
        wait_for(t.bridge_works, "the bridge to admit the shim after the flood", budget_s=10, poll_s=0.1,
                 ignore=(OSError,))
    except Stalled:
        return False, "the bridge did not admit the shim after the flood"
    return flood_bounded(dropped), f"{dropped} of 40 dropped at once (32 may wait); the shim got in after"


def token_holder_call(command: str) -> Callable[[Target], tuple[bool, str]]:
    def run(t: Target) -> tuple[bool, str]:
        client = ShimClient(t.bridge, t.token).open()
        answer = client.command(command)
        still = json.loads(client.call(ping()))["ok"] and t.bridge_works()
        return answer.startswith("!x") and still, f"error reply {answer[:60]!r}; bridge still works"
    return run


def gc_entry_point(t: Target) -> tuple[bool, str]:
    client = ShimClient(t.bridge, t.token).open()
    answer = client.command("g\nt\ne\n")
    still = json.loads(client.call(ping()))["ok"] and t.bridge_works()
    return answer == "!y\n" and still, f"answer {answer.strip()!r}; the entry point still answers"


def reload_another_file(t: Target) -> tuple[bool, str]:
    client = ShimClient(t.bridge, t.token).open()
    epoch = int(time.time() * 1000)
    client.call(json.dumps({"v": protocol.VERSION, "type": "snapshot", "epoch": epoch, "resources": [],
                            "nodes": [], "apps": [], "containers": [], "asks": [], "counts": []}))
    reply = json.loads(client.call(json.dumps({"v": protocol.VERSION, "type": "reload", "epoch": epoch,
                                               "path": str(t.secret)})))
    ok = reply.get("accepted") is False and "not the queue file this service runs" in reply["errors"][0]
    return ok and "TOPSECRET" not in json.dumps(reply), reply["errors"][0][:80] + "..."


# ---------------------------------------------------------------------------- status port

def http(method: str, url: str, **kwargs) -> requests.Response:
    return requests.request(method, url, timeout=30, **kwargs)


def reload_without_token(t: Target) -> tuple[bool, str]:
    r = http("POST", t.url("/v1/reload"))
    return r.status_code == 401, f"HTTP {r.status_code}"


def reload_wrong_token(t: Target) -> tuple[bool, str]:
    r = http("POST", t.url("/v1/reload"), headers={"Authorization": "Bearer guessed"})
    return r.status_code == 401, f"HTTP {r.status_code}"


def cross_origin_text_plain(t: Target) -> tuple[bool, str]:
    r = http("POST", t.url("/v1/reload"), data="x", headers={
        "Content-Type": "text/plain", "Origin": "http://evil.example", "Authorization": f"Bearer {t.status_token}"})
    return r.status_code == 403, f"HTTP {r.status_code} (even with the token)"


def foreign_host(host: Callable[[Target], str]) -> Callable[[Target], tuple[bool, str]]:
    def run(t: Target) -> tuple[bool, str]:
        with socket.create_connection(("127.0.0.1", t.status), timeout=30) as s:
            s.sendall(f"GET /v1/apps HTTP/1.1\r\nHost: {host(t)}\r\nConnection: close\r\n\r\n".encode())
            answer = s.recv(200)
        return answer.startswith(b"HTTP/1.0 403"), answer.split(b"\r\n")[0].decode()
    return run


def foreign_origin_read(t: Target) -> tuple[bool, str]:
    r = http("GET", t.url("/v1/apps"), headers={"Origin": "http://evil.example"})
    return r.status_code == 403, f"HTTP {r.status_code}"


def huge_body(t: Target) -> tuple[bool, str]:
    with socket.create_connection(("127.0.0.1", t.status), timeout=30) as s:
        s.sendall(f"POST /v1/reload HTTP/1.1\r\nHost: 127.0.0.1:{t.status}\r\nContent-Length: 1000000000\r\n"
                  f"Authorization: Bearer {t.status_token}\r\n\r\n".encode())
        answer = s.recv(200)
    return answer.startswith(b"HTTP/1.0 413"), answer.split(b"\r\n")[0].decode()


def idle_http(t: Target) -> tuple[bool, str]:
    with socket.create_connection(("127.0.0.1", t.status), timeout=30) as s:
        s.sendall(b"GET /v1/apps HTTP/1.1\r\n")
        start = time.monotonic()
        closed = closed_by_peer(s)
        return closed and time.monotonic() - start < 15, f"closed after {time.monotonic() - start:.1f} s"


def status_flood(t: Target) -> tuple[bool, str]:
    dropped = dropped_of_flood(t.status)
    r = http("GET", t.url("/v1/health"))
    return flood_bounded(dropped) and r.status_code == 200, f"{dropped} of 40 dropped at once; served again after"


def reload_with_token(t: Target) -> tuple[bool, str]:
    r = http("POST", t.url("/v1/reload"), headers={"Authorization": f"Bearer {t.status_token}"})
    return r.status_code == 200, f"HTTP {r.status_code} (the control case: the token holder may reload)"


SLOW = [  # each waits for a timeout: run side by side
    Case("bridge", "connect and send nothing", "closed within the 5 s handshake timeout", idle_connection),
    Case("bridge", "send the handshake one byte every 0.3 s", "closed at the 5 s deadline", trickled_hello),
    Case("status", "send half a request line, then nothing", "closed after the 10 s request timeout", idle_http),
]
CASES = [
    Case("bridge", "py4j's auth with the right token, then a call", "closed, no answer", py4j_auth_first(lambda t: t.token)),
    Case("bridge", "py4j's auth with a wrong token", "closed, no answer", py4j_auth_first(lambda t: "guessed")),
    Case("bridge", "handshake without the token (a guessed proof)", "closed before py4j's auth is read", wrong_proof),
    Case("bridge", "a client holding another token", "service's proof fails its check", another_token_client),
    Case("bridge", "1 MB without a newline", "closed at the line limit", endless_line),
    Case("bridge", "40 connections that say nothing", "beyond 32 closed at once; shim admitted after", pending_flood),
    Case("bridge", "token holder: t.__init__('x') (replaced the service before)", "error reply",
         token_holder_call("c\nt\n__init__\nsx\ne\n")),
    Case("bridge", "token holder: t.__getattribute__('service')", "error reply",
         token_holder_call("c\nt\n__getattribute__\nsservice\ne\n")),
    Case("bridge", "token holder: call on another object id", "error reply", token_holder_call("c\nj\ncall\nsx\ne\n")),
    Case("bridge", "token holder: call with a non-string argument", "error reply", token_holder_call("c\nt\ncall\ni1\ne\n")),
    Case("bridge", "token holder: garbage-collect the entry point, then call", "acknowledged, nothing removed",
         gc_entry_point),
    Case("bridge", "token holder: reload naming another file", "refused, that file not read", reload_another_file),
    Case("status", "POST /v1/reload without a token", "401", reload_without_token),
    Case("status", "POST /v1/reload with a wrong token", "401", reload_wrong_token),
    Case("status", "cross-origin text/plain POST (a web page)", "403", cross_origin_text_plain),
    Case("status", "GET /v1/apps with Host evil.example:PORT (DNS rebinding)", "403",
         foreign_host(lambda t: f"evil.example:{t.status}")),
    Case("status", "GET /v1/apps with Host 127.0.0.1 and another port", "403",
         foreign_host(lambda t: f"127.0.0.1:{t.status + 1}")),
    Case("status", "GET /v1/apps with a foreign Origin", "403", foreign_origin_read),
    Case("status", "POST with Content-Length 1 GB", "413, body unread", huge_body),
    Case("status", "40 connections that say nothing", "beyond 32 closed at once; served after", status_flood),
    Case("status", "POST /v1/reload with the token", "200", reload_with_token),
]


def start_serve(tmp: Path) -> tuple[subprocess.Popen, Target]:
    queues = tmp / "queues.yaml"
    queues.write_text(QUEUES.read_text())
    target = Target(free_port(), free_port(), os.urandom(16).hex(), os.urandom(16).hex(), queues,
                    secret_file(tmp / "secret.yaml", "TOPSECRET: 1\n"))
    token, status_token = secret_file(tmp / "token", target.token), secret_file(tmp / "status", target.status_token)
    proc = subprocess.Popen([sys.executable, "-m", "yarn_bridge.cli", "serve", "--queues", str(queues),
                             "--port", str(target.bridge), "--token-file", str(token),
                             "--status-port", str(target.status), "--status-token-file", str(status_token)],
                            cwd=REPO, stderr=subprocess.PIPE, text=True)
    def running() -> None:
        if proc.poll() is not None:
            raise RuntimeError(f"yarn-drf serve exited with {proc.returncode}: {proc.stderr.read()}")

    try:
        wait_for(target.bridge_works, "yarn-drf serve to admit the shim", budget_s=30, poll_s=0.1, ignore=(OSError,),
                 alive=running)
    except Stalled as exc:
        proc.kill()
        raise RuntimeError(f"yarn-drf serve did not start: {proc.stderr.read()}") from exc
    return proc, target


def startup_cases(tmp: Path) -> list[tuple[Case, bool, str]]:
    """What `serve` does when it cannot be safe: a taken port, a token file others can read."""
    out = []
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        run = subprocess.run([sys.executable, "-m", "yarn_bridge.cli", "serve", "--queues", str(QUEUES), "--port",
                              str(port), "--token-file", str(secret_file(tmp / "t1", "x"))],
                             capture_output=True, text=True, timeout=60, cwd=REPO)
    out.append((Case("bridge", "another process holds the bridge port", "serve exits 3 naming the port", None),
                run.returncode == 3 and f"127.0.0.1:{port}" in run.stderr, f"exit {run.returncode}"))
    exposed = secret_file(tmp / "t2", "x")
    exposed.chmod(0o644)
    run = subprocess.run([sys.executable, "-m", "yarn_bridge.cli", "serve", "--queues", str(QUEUES), "--port",
                          str(free_port()), "--token-file", str(exposed)],
                         capture_output=True, text=True, timeout=60, cwd=REPO)
    out.append((Case("bridge", "token file mode 644", "serve refuses it, says `chmod 600`", None),
                run.returncode == 2 and "chmod 600" in run.stderr, f"exit {run.returncode}"))
    return out


def probe() -> list[tuple[Case, bool, str]]:
    with tempfile.TemporaryDirectory() as tmp:
        results = startup_cases(Path(tmp))
        proc, target = start_serve(Path(tmp))
        try:
            slow: dict[int, tuple[bool, str]] = {}
            threads = [threading.Thread(target=lambda i=i, c=c: slow.__setitem__(i, _run(c, target)))
                       for i, c in enumerate(SLOW)]
            for th in threads:
                th.start()
            results += [(c, *_run(c, target)) for c in CASES]
            for th in threads:
                th.join()
            results += [(c, *slow[i]) for i, c in enumerate(SLOW)]
            results.append((Case("both", "after all of the above", "the shim is served", None),
                            target.bridge_works(), "status call answered"))
        finally:
            proc.terminate()
            proc.wait(10)
    return results


def _run(case: Case, target: Target) -> tuple[bool, str]:
    try:
        return case.run(target)
    except Exception as exc:  # noqa: BLE001 (a probe that breaks is a failed case, reported as such)
        return False, f"{type(exc).__name__}: {exc}"


def main() -> int:
    results = probe()
    print("| port | tried | must | observed | ok |")
    print("|---|---|---|---|---|")
    for case, ok, observed in results:
        print(f"| {case.port} | {case.attack} | {case.expected} | {observed} | {'yes' if ok else 'NO'} |")
    print(f"\n{sum(ok for _, ok, _ in results)} of {len(results)} cases as specified")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
