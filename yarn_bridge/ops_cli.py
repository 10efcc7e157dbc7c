"""Operator commands against a running scheduler service's status server.

  yarn-drf status [--url URL] [--watch [SECONDS]]   the queue tree: usage bars, dominant share vs target
  yarn-drf why APP_ID [--url URL]                   each pending request of the app and why it waits
  yarn-drf reload [--url URL]                       re-read the queue file (validated; errors listed)

The URL defaults to $YARN_DRF_STATUS_URL, else http://127.0.0.1:25335.
"""
from __future__ import annotations

import argparse
import os
import time
from typing import Any

import requests
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from yarn_bridge.status import DEFAULT_STATUS_PORT

BAR_WIDTH = 20
TIMEOUT_S = 10


def default_url() -> str:
    return os.environ.get("YARN_DRF_STATUS_URL", f"http://127.0.0.1:{DEFAULT_STATUS_PORT}")


def register(subparsers: argparse._SubParsersAction) -> None:
    url_help = "status server of `yarn-drf serve` (default $YARN_DRF_STATUS_URL or http://127.0.0.1:%d)" \
               % DEFAULT_STATUS_PORT
    status = subparsers.add_parser("status", help="show the queue tree: usage, dominant share vs fair target")
    status.add_argument("--url", default=None, help=url_help)
    status.add_argument("--watch", nargs="?", type=float, const=2.0, default=None, metavar="SECONDS",
                        help="refresh every SECONDS (default 2) until interrupted")
    status.set_defaults(func=run_status)

    why = subparsers.add_parser("why", help="explain why an app's requests are pending")
    why.add_argument("app_id", metavar="APP_ID")
    why.add_argument("--url", default=None, help=url_help)
    why.set_defaults(func=run_why)

    reload = subparsers.add_parser("reload", help="reload the service's queue file (validated; the old "
                                                  "configuration stays if it has errors)")
    reload.add_argument("--url", default=None, help=url_help)
    reload.set_defaults(func=run_reload)


class Unreachable(Exception):
    pass


def _call(method: str, url: str, path: str) -> tuple[int, Any]:
    try:
        r = requests.request(method, url.rstrip("/") + path, timeout=TIMEOUT_S)
    except requests.RequestException as exc:
        raise Unreachable(f"cannot reach the yarn-drf status server at {url}: {exc.__class__.__name__}"
                          f" (is `yarn-drf serve` running with its status port?)") from exc
    try:
        return r.status_code, r.json()
    except ValueError:
        raise Unreachable(f"{url}{path} did not answer JSON (HTTP {r.status_code}): is it a yarn-drf status "
                          "server?") from None


def _console() -> Console:
    return Console(highlight=False)


# ---------------------------------------------------------------------------- status

def run_status(args: argparse.Namespace, console: Console | None = None) -> int:
    console = console or _console()
    url = args.url or default_url()
    try:
        if args.watch is None:
            console.print(render_status(*_fetch_status(url)))
            return 0
        with Live(console=console, auto_refresh=False) as live:
            while True:
                live.update(render_status(*_fetch_status(url)), refresh=True)
                time.sleep(args.watch)
    except Unreachable as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    except KeyboardInterrupt:
        return 0


def _fetch_status(url: str) -> tuple[dict, dict]:
    code, queues = _call("GET", url, "/v1/queues")
    if code != 200:
        raise Unreachable(f"{url}/v1/queues answered HTTP {code}: {queues.get('error', queues)}")
    code, health = _call("GET", url, "/v1/health")
    return queues, (health if code == 200 else {})


def render_status(queues: dict, health: dict) -> Group:
    cap = queues["capacity"]
    lines = []
    if health:
        age = health.get("last_heartbeat_age_s")
        config = health.get("config") or {}
        bridge = "[green]connected[/green]" if health.get("bridge_connected") else "[red]disconnected[/red]"
        lines.append(Text.from_markup(
            f"bridge {bridge}, last heartbeat {'never' if age is None else f'{age:.1f} s ago'}; "
            f"{health.get('nodes', 0)} nodes, {health.get('apps', 0)} apps; "
            f"config version {config.get('version', '?')} ({config.get('path', '?')})"))
    lines.append(Text("cluster " + ", ".join(f"{k} {v}" for k, v in cap.items())))
    table = Table(title="queues: dominant share vs target, the share its demand settles at on the nodes "
                        "(bar: share, '|' target; pooled: the fair share if the cluster were one pool)",
                  title_justify="left")
    table.add_column("queue", no_wrap=True)
    table.add_column("weight", justify="right", no_wrap=True)
    table.add_column("apps run/wait", justify="right")
    table.add_column("usage", no_wrap=True, min_width=BAR_WIDTH)
    table.add_column("share", justify="right", no_wrap=True)
    table.add_column("target", justify="right", no_wrap=True)
    table.add_column("dominant", overflow="fold")
    table.add_column("pending", overflow="fold")
    table.add_column("limits", overflow="fold")
    table.add_column("state", overflow="fold")
    depth = {}
    for q in queues["queues"]:
        depth[q["name"]] = 0 if q["parent"] is None else depth[q["parent"]] + 1
        name = "  " * depth[q["name"]] + q["name"].rsplit(".", 1)[-1]
        share, target = q["dominant_share"], q["target_share"]
        over = share > target + 1e-6
        table.add_row(
            name,
            _weight(q["weight"]) if q["parent"] else "",
            f"{q['running_apps']}/{q['waiting_apps']}",
            _bar(share, target),
            Text(f"{share:.1%}", style="yellow" if over else "green"),
            _target(q),
            q["dominant_resource"] or "-",
            _amounts(q["pending"]) or "-",
            _limits(q),
            Text(q["state"] + (f", {q['reservations']} reserved" if q["reservations"] else ""),
                 style="red" if q["draining"] else ""),
        )
    return Group(*lines, table)


def _target(q: dict) -> str:
    """The reachable target, with the pooled one beside it where whole containers on real nodes
    cannot reach it."""
    target, pooled = q["target_share"], q["pooled_target_share"]
    return f"{target:.1%}" if round(target, 3) == round(pooled, 3) else f"{target:.1%} (pooled {pooled:.1%})"


def _bar(share: float, target: float, width: int = BAR_WIDTH) -> Text:
    """A bar of the dominant share with a '|' at the target; the part above the target in yellow."""
    filled = min(width, round(share * width))
    mark = min(width - 1, round(target * width)) if target > 0 else None
    bar = Text()
    for i in range(width):
        if i == mark:
            bar.append("|", style="bold")
        elif i < filled:
            bar.append("█", style="yellow" if mark is not None and i > mark else "green")
        else:
            bar.append("·", style="dim")
    return bar


def _weight(weight) -> str:
    if isinstance(weight, dict):
        return ",".join(f"{k}={v:g}" for k, v in weight.items())
    return f"{weight:g}"


def _amounts(values: dict | None) -> str:
    return ", ".join(f"{k} {v}" for k, v in (values or {}).items() if v)


def _limits(q: dict) -> str:
    parts = []
    if q["min"]:
        parts.append("min " + _amounts(q["min"]))
    if q["max"]:
        parts.append("max " + ", ".join(f"{k} {v}" for k, v in q["max"].items() if v < (1 << 62)))
    if q["max_running_apps"] is not None:
        parts.append(f"apps<={q['max_running_apps']}")
    return "; ".join(parts)


# ---------------------------------------------------------------------------- why

def run_why(args: argparse.Namespace, console: Console | None = None) -> int:
    console = console or _console()
    url = args.url or default_url()
    try:
        code, doc = _call("GET", url, f"/v1/apps/{requests.utils.quote(args.app_id, safe='')}")
    except Unreachable as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    if code == 404:
        console.print(f"[red]error:[/red] {doc.get('error', 'unknown app')} (the scheduler does not know it: "
                      "finished, rejected, or a typo)")
        return 1
    if code != 200:
        console.print(f"[red]error:[/red] HTTP {code}: {doc.get('error', doc)}")
        return 2
    code, queues = _call("GET", url, "/v1/queues")
    queue = next((q for q in queues.get("queues", ()) if q["name"] == doc["queue"]), None) if code == 200 else None
    console.print(render_why(doc, queue))
    return 0


def render_why(doc: dict, queue: dict | None = None) -> Group:
    head = Text.from_markup(
        f"app [bold]{doc['app']}[/bold] of {doc['user']} in queue {doc['queue']}"
        f"{' [red](draining: no new apps, running ones finish)[/red]' if doc['queue_draining'] else ''}: "
        f"{'running' if doc['runnable'] else 'waiting to run'}, {doc['containers']} container(s), "
        f"using {_amounts(doc['usage']) or 'nothing'}")
    parts: list[Any] = [head]
    if queue is not None:
        parts.append(Text(f"queue {queue['name']}: dominant share {queue['dominant_share']:.1%}, target "
                          f"{_target(queue)}"))
    pending = [r for r in doc["requests"] if r["pending"] > 0]
    if not pending:
        parts.append(Text("no pending requests: nothing is waiting"))
    for r in pending:
        where = []
        if r["nodes"]:
            where.append("nodes " + ", ".join(r["nodes"]))
        if r["racks"]:
            where.append("racks " + ", ".join(r["racks"]))
        loc = f" on {'; '.join(where)}{'' if r['relax_locality'] else ' only'}" if where else ""
        parts.append(Text.from_markup(
            f"\n[bold]priority {r['priority']}, allocation {r['allocation_id']}[/bold]: {r['pending']} x "
            f"<{_amounts(r['resources'])}>{loc}, waiting {r.get('waiting_s', 0):.0f} s"))
        for reason in r["reasons"]:
            style = "green" if reason["code"] == "ready" else "yellow"
            parts.append(Text.assemble("  ", (f"[{reason['code']}]", style), " ", reason["message"]))
    return Group(*parts)


# ---------------------------------------------------------------------------- reload

def run_reload(args: argparse.Namespace, console: Console | None = None) -> int:
    console = console or _console()
    url = args.url or default_url()
    try:
        code, doc = _call("POST", url, "/v1/reload")
    except Unreachable as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    if code == 200:
        console.print(f"reloaded {doc['path']}: configuration version {doc['version']}")
        for line in doc["diff"] or ["no changes"]:
            console.print(f"  {line}", markup=False)
        return 0
    if code == 422:
        console.print(f"[red]refused[/red] {doc['path']}: the running configuration (version {doc['version']}) "
                      f"stays. {len(doc['errors'])} error(s):")
        for err in doc["errors"]:
            console.print(f"  {err}", markup=False)
        return 1
    console.print(f"[red]error:[/red] HTTP {code}: {doc.get('error', doc)}")
    return 2

