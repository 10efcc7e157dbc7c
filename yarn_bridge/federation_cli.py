"""`yarn-drf federation-policy`: the federation-wide DRF policy service (docs/federation.md).

  yarn-drf federation-policy --subcluster SC-1=http://127.0.0.1:25335 --subcluster SC-2=http://... \
      [--once | --interval SECONDS] [--dry-run] [--routeradmin 'yarn routeradmin'] [--headroom-alpha A]

Each round reads every sub-cluster core's `/v1/queues` and `/v1/demand` (reads: the status server
needs no token for them), computes each active leaf's shape-aware target and weights
(yarn_bridge.federation_policy), prints them, and
saves each with `ROUTERADMIN -policy -s 'QUEUE;ROUTER;AMRM;ALPHA'` under the leaf's path and its
short name. A round whose reads or documents fail changes no policy; the loop goes on to the next.
"""
from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time

import requests

from yarn_bridge.federation_policy import (QueuePlan, StatusError, SubClusterDemand, SubClusterStatus, parse_demand,
                                           parse_status, plan, policy_names, policy_spec)

MAX_STATUS_BYTES = 8 << 20
TIMEOUT_S = 10
ROUTERADMIN_TIMEOUT_S = 120
SAVED = "save policy success"  # what routeradmin prints when the Router stored the policy


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("federation-policy",
                              help="set YARN Federation router and AMRM weights per queue toward federation-wide DRF")
    p.add_argument("--subcluster", action="append", required=True, metavar="ID=URL", type=_subcluster,
                   help="a sub-cluster id and its yarn-drf status server URL (repeat for each sub-cluster)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true", help="one round, then exit (exit 2 if it failed)")
    mode.add_argument("--interval", type=float, default=30.0, metavar="SECONDS",
                      help="seconds between rounds in loop mode (default 30)")
    p.add_argument("--dry-run", action="store_true", help="print the weights and commands; save nothing")
    p.add_argument("--routeradmin", default="yarn routeradmin", metavar="COMMAND",
                   help="the routeradmin command, e.g. 'docker exec CLIENT yarn routeradmin' (default 'yarn routeradmin')")
    p.add_argument("--headroom-alpha", type=float, default=0.0, metavar="A",
                   help="the AMRM policy's headroom alpha: 0 splits asks by weight alone (default), 1 by headroom alone")
    p.set_defaults(func=run)


def _subcluster(text: str) -> tuple[str, str]:
    sc_id, sep, url = text.partition("=")
    if not sep or not sc_id or not url.startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"{text!r} is not ID=URL (e.g. SC-1=http://127.0.0.1:25335)")
    return sc_id, url


def run(args: argparse.Namespace) -> int:
    applied: dict[str, str] = {}  # queue name -> the spec saved last (an unchanged one is not saved again)
    seen: dict[str, frozenset[int]] = {}  # leaf -> the resources its demand has used (federation_policy.plan)
    while True:
        ok = one_round(args.subcluster, args.routeradmin, args.headroom_alpha, args.dry_run, applied, seen)
        if args.once:
            return 0 if ok else 2
        time.sleep(args.interval)


def one_round(subclusters: list[tuple[str, str]], routeradmin: str, alpha: float, dry_run: bool,
              applied: dict[str, str], seen: dict[str, frozenset[int]] | None = None) -> bool:
    try:
        statuses = [fetch_status(sc_id, url) for sc_id, url in subclusters]
        demands = [fetch_demand(s, url) for s, (_, url) in zip(statuses, subclusters)]
        plans, unfit = plan(statuses, demands, seen)
    except StatusError as exc:
        print(f"error: {exc}; no policy changed", file=sys.stderr)
        return False
    print(weights_table(plans, [sc for sc, _ in subclusters]))
    for n in unfit:
        print(f"{n}: its demand fits no sub-cluster (a resource no sub-cluster has); no policy", file=sys.stderr)
    ok = True
    for leaf, names in policy_names(plans).items():
        for name in names:
            spec = policy_spec(name, plans[leaf].router, plans[leaf].weights, alpha)
            if applied.get(name) == spec:
                continue
            cmd = routeradmin_command(routeradmin, spec)
            if dry_run:
                print(shlex.join(cmd))
                continue
            code, out = save(cmd)
            if code == 0:
                applied[name] = spec
            else:
                ok = False
                print(f"error: {shlex.join(cmd)} failed (exit {code}):\n{out[-2000:]}", file=sys.stderr)
    return ok


def fetch_status(sc_id: str, url: str) -> SubClusterStatus:
    """A sub-cluster core's /v1/queues, read up to MAX_STATUS_BYTES and checked."""
    return parse_status(sc_id, fetch(sc_id, url, "/v1/queues"))


def fetch_demand(status: SubClusterStatus, url: str) -> SubClusterDemand:
    """A sub-cluster core's /v1/demand, read up to MAX_STATUS_BYTES and checked."""
    return parse_demand(status.id, fetch(status.id, url, "/v1/demand"), status.types)


def fetch(sc_id: str, url: str, path: str) -> object:
    where = f"{url.rstrip('/')}{path}"
    try:
        with requests.get(where, timeout=TIMEOUT_S, stream=True) as r:
            body = r.raw.read(MAX_STATUS_BYTES + 1, decode_content=True)
            code = r.status_code
    except requests.RequestException as exc:
        raise StatusError(f"sub-cluster {sc_id}: cannot read {where}: {exc.__class__.__name__}") from None
    if len(body) > MAX_STATUS_BYTES:
        raise StatusError(f"sub-cluster {sc_id}: {where} answered more than {MAX_STATUS_BYTES} bytes")
    if code != 200:
        raise StatusError(f"sub-cluster {sc_id}: {where} answered HTTP {code}")
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise StatusError(f"sub-cluster {sc_id}: {where} did not answer JSON") from None


def routeradmin_command(routeradmin: str, spec: str) -> list[str]:
    return [*shlex.split(routeradmin), "-policy", "-s", spec]


def save(cmd: list[str]) -> tuple[int, str]:
    """Runs routeradmin; success is exit 0 with the Router's confirmation in its output."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=ROUTERADMIN_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 1, str(exc)
    out = r.stdout + r.stderr
    return (r.returncode if SAVED in out else r.returncode or 1), out


def weights_table(plans: dict[str, QueuePlan], subclusters: list[str]) -> str:
    """Each leaf's share, target, and AMRM then router weights per sub-cluster."""
    def cells(w: dict[str, float]) -> str:
        return "  ".join(f"{w.get(sc, 0.0):8.4f}" for sc in subclusters)
    names = "  ".join(f"{sc:>8}" for sc in subclusters)
    head = f"{'queue':<28} {'share':>7} {'target':>7}  AMRM {names}  router {names}"
    rows = [f"{p.name:<28} {p.share:7.3f} {p.target_share:7.3f}       {cells(p.weights)}         {cells(p.router)}"
            for p in plans.values()]
    return "\n".join([head, *rows])
