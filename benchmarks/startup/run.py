"""How long `yarn-drf serve` takes from its start to listening and to its first answer (a snapshot),
as the shim waits for it at every ResourceManager start and every failover: this tree's service
next to a baseline revision's, started alternately in the same run, so both meet the same load.

    .venv/bin/python benchmarks/startup/run.py [--baseline REV] [--runs 7] [--status]

The baseline is REV's `scheduler` and `yarn_bridge` (git archive), run by the same interpreter and
venv; it uses the compiled decision path (build/mypyc) when REV's hot modules are this tree's.
Each start is a fresh process on a free loopback port: "bind" is the first moment a connection is
accepted, "answer" the moment the first snapshot's reply arrives (the shim's handshake and py4j
call, tests/bridge/shim_client.py). `--status` adds `--status-port` (the status server and its
metrics), as the Docker cluster runs it. Prints, per variant, the median and the fastest start,
then the ratio baseline/this tree of the medians.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
from tests.bridge.shim_client import ShimClient  # noqa: E402
from tests.waits import wait_for  # noqa: E402

QUEUES = REPO / "tests" / "bridge" / "contract" / "queues.yaml"
SNAPSHOT = REPO / "tests" / "bridge" / "contract" / "snapshot.request.json"
GIVE_UP_S = 120.0
POLL_S = 0.005


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def baseline_tree(rev: str, into: Path) -> Path:
    """REV's Python packages in `into`, with this tree's compiled modules beside them."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev, "scheduler", "yarn_bridge"],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    build = REPO / "build"
    if build.exists():
        (into / "build").symlink_to(build)  # used only if REV's hot modules digest like this tree's
    return into


def first_answer(port: int, token: str, snapshot: str, proc: subprocess.Popen) -> tuple[float, float]:
    """Seconds (monotonic clock) at which the port first accepted and the snapshot was answered."""
    def running() -> None:
        if proc.poll() is not None:
            raise RuntimeError(f"yarn-drf serve exited with status {proc.returncode}")

    client = wait_for(lambda: ShimClient(port, token, timeout=GIVE_UP_S), "a connection to yarn-drf serve",
                      budget_s=GIVE_UP_S, poll_s=POLL_S, ignore=(OSError,), alive=running)
    bound = time.monotonic()
    with client.sock:
        reply = json.loads(client.open().call(snapshot))
    if not reply.get("ok"):
        raise RuntimeError(f"snapshot refused: {reply}")
    return bound, time.monotonic()


def one_start(root: Path, token_file: Path, token: str, snapshot: str, status: bool) -> tuple[float, float]:
    port = free_port()
    cmd = [sys.executable, "-m", "yarn_bridge.cli", "serve", "--queues", str(QUEUES), "--port", str(port),
           "--token-file", str(token_file)]
    if status:
        cmd += ["--status-port", str(free_port())]
    env = dict(os.environ, PYTHONPATH=str(root))
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        bound, answered = first_answer(port, token, snapshot, proc)
    finally:
        proc.kill()
        proc.wait()
    return bound - start, answered - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", metavar="REV", help="git revision to compare with (e.g. main)")
    ap.add_argument("--runs", type=int, default=7, help="starts per variant (default 7), after one to warm caches")
    ap.add_argument("--status", action="store_true", help="run with a status server (--status-port)")
    args = ap.parse_args()
    snapshot = json.dumps(json.loads(SNAPSHOT.read_text())["examples"][0]["message"], separators=(",", ":"))
    with tempfile.TemporaryDirectory() as tmp:
        token, token_file = "startup-benchmark-token", Path(tmp) / "token"
        token_file.touch(mode=0o600)
        token_file.write_text(token)
        variants = {"this tree": REPO}
        if args.baseline:
            variants[f"baseline {args.baseline}"] = baseline_tree(args.baseline, Path(tmp) / "baseline")
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
        for run in range(args.runs + 1):
            for name, root in variants.items():
                t = one_start(root, token_file, token, snapshot, args.status)
                if run > 0:  # the first start of each compiles its bytecode
                    times[name].append(t)
    print(f"yarn-drf serve start, {args.runs} runs each{' with --status-port' if args.status else ''} "
          f"(seconds from spawn; median / fastest)")
    print(f"{'variant':<28} {'bind':>15} {'first answer':>15}")
    medians = {}
    for name, ts in times.items():
        binds, answers = [b for b, _ in ts], [a for _, a in ts]
        medians[name] = statistics.median(answers)
        print(f"{name:<28} {statistics.median(binds):7.3f} /{min(binds):6.3f} "
              f"{statistics.median(answers):7.3f} /{min(answers):6.3f}")
    if args.baseline:
        base = medians[f"baseline {args.baseline}"]
        print(f"first answer, baseline / this tree: {base / medians['this tree']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
