"""Operator commands against a running scheduler service's status server.

  yarn-drf status [--url URL] [--watch [SECONDS]]   the queue tree: usage bars, dominant share vs target
  yarn-drf why APP_ID [--url URL]                   each pending request of the app and why it waits
  yarn-drf reload [--url URL] [--token-file F]     re-read the queue file (validated; errors listed)

The URL defaults to $YARN_DRF_STATUS_URL, else http://127.0.0.1:25335; the reload token file to
$YARN_DRF_STATUS_TOKEN_FILE (the file given to `yarn-drf serve --status-token-file`).
"""
from __future__ import annotations

import argparse
import os
import time
from typing import Any

import requests
from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from yarn_bridge.status import DEFAULT_STATUS_PORT
from yarn_bridge.token_file import TokenFileError, read_token

BAR_WIDTH = 20
MIN_BAR = 10
QUEUE_WIDTH = 20  # an indented queue name longer than this may be cut when the terminal is narrow
UNBOUNDED = 1 << 62  # a max the status server reports for "no limit"
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
    reload.add_argument("--token-file", default=None,
                        help="file with the status server's token (default $YARN_DRF_STATUS_TOKEN_FILE)")
    reload.set_defaults(func=run_reload)


class Unreachable(Exception):
    pass


def _call(method: str, url: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    try:
        r = requests.request(method, url.rstrip("/") + path, headers=headers, timeout=TIMEOUT_S)
    except requests.RequestException as exc:
        raise Unreachable(f"cannot reach the yarn-drf status server at {url}: {exc.__class__.__name__}"
                          f" (is `yarn-drf serve` running with its status port?)") from exc
    try:
        return r.status_code, r.json()
    except ValueError:
        raise Unreachable(f"{url}{path} did not answer JSON (HTTP {r.status_code}): is it a yarn-drf status "
                          "server?") from None


class _Console(Console):
    def on_broken_pipe(self) -> None:
        raise BrokenPipeError  # rich would exit 1 itself; `yarn-drf` handles a closed stdout in one place


def _console() -> Console:
    return _Console(highlight=False)


# ---------------------------------------------------------------------------- status

def run_status(args: argparse.Namespace, console: Console | None = None) -> int:
    console = console or _console()
    url = args.url or default_url()
    try:
        if args.watch is None:
            console.print(StatusView(*_fetch_status(url)))
            return 0
        with Live(console=console, auto_refresh=False) as live:
            while True:
                live.update(StatusView(*_fetch_status(url)), refresh=True)
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


class StatusView:
    """The `status` screen, laid out for the width it is printed at.

    The fairness columns (weight, apps, share and target as percentages, dominant resource) are
    never cut. The usage bar takes the room left (10 to 20 cells); a queue name longer than
    QUEUE_WIDTH gives way first, with an ellipsis; the state column (only there when a queue is
    draining or holds reservations) moves below the table when the bar would be too short. What
    is pending and the limits follow the table, one queue a row, wrapping under their own text."""

    GAP = 2  # between columns: a simple head rule, no edges, collapsed padding
    FIXED = ("weight", "run/wait", "share", "target", "dominant")

    def __init__(self, queues: dict, health: dict) -> None:
        self.queues = queues
        self.health = health
        self.rows: list[dict[str, Any]] = []
        depth: dict[str, int] = {}
        for q in queues["queues"]:
            depth[q["name"]] = 0 if q["parent"] is None else depth[q["parent"]] + 1
            notes = ["draining"] if q["draining"] else []
            if q["reservations"]:
                notes.append(f"{q['reservations']} reserved")
            notes += _preemption_notes(q.get("preemption"))
            self.rows.append({
                "queue": "  " * depth[q["name"]] + q["name"].rsplit(".", 1)[-1],
                "weight": _weight(q["weight"], queues["resource_types"]) if q["parent"] else "",
                "run/wait": f"{q['running_apps']}/{q['waiting_apps']}",
                "share": f"{q['dominant_share']:.1%}", "target": f"{q['target_share']:.1%}",
                "dominant": q["dominant_resource"] or "-",
                "state": ", ".join(notes),
                "q": q,
            })

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self._summary()
        columns, queue_width, bar = self._layout(options.max_width)
        yield self._table(columns, queue_width, bar)
        if any(isinstance(r["q"]["weight"], dict) for r in self.rows if r["weight"]):
            yield Text("weight: per-resource weights show the types that do not weigh 1", style="dim")
        yield Text("target: the share its demand settles at on these nodes in whole containers; pooled "
                   "target (below): its fair share if the cluster were one pool", style="dim")
        yield from self._details(options.max_width, state_shown="state" in columns)

    def _summary(self) -> list[Text]:
        lines = []
        if self.health:
            age = self.health.get("last_call_age_s")
            bridge = "[green]connected[/green]" if self.health.get("bridge_connected") else "[red]disconnected[/red]"
            lines.append(Text.from_markup(
                f"bridge {bridge}, last call {'never' if age is None else f'{age:.1f} s ago'}; "
                f"{self.health.get('nodes', 0)} nodes, {self.health.get('apps', 0)} apps"))
            if config := self.health.get("config"):
                lines.append(Text(f"config version {config.get('version', '?')} ({config.get('path', '?')})"))
        lines.append(Text("cluster " + _amounts(self.queues["capacity"], keep_zero=True)))
        return lines

    def _layout(self, width: int) -> tuple[dict[str, int], int, int]:
        """The columns after the queue name with their widths, the queue column's width, the bar's."""
        def room(columns: dict[str, int]) -> int:  # what the queue name and the bar share
            return width - sum(columns.values()) - self.GAP * (len(columns) + 1)

        wanted = ("queue", *self.FIXED, "state") if any(r["state"] for r in self.rows) else ("queue", *self.FIXED)
        widths = {c: max(len(c), *(len(r[c]) for r in self.rows)) for c in wanted}
        queue = min(widths.pop("queue"), QUEUE_WIDTH)
        if "state" in widths and room(widths) - queue < MIN_BAR:
            del widths["state"]  # listed below the table instead
        bar = max(MIN_BAR, min(BAR_WIDTH, room(widths) - queue))
        return widths, max(len("queue"), room(widths) - bar), bar

    def _table(self, columns: dict[str, int], queue_width: int, bar: int) -> Table:
        table = Table(title="queues: dominant share vs target (bar: share, '|' target)",
                      title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                      collapse_padding=True)
        table.add_column("queue", no_wrap=True, overflow="ellipsis", max_width=queue_width)
        for name in ("weight", "run/wait"):
            table.add_column(name, justify="right", no_wrap=True, width=columns[name])
        table.add_column("usage", no_wrap=True, width=bar)
        for name in ("share", "target", "dominant", "state"):
            if name in columns:
                table.add_column(name, justify="right" if name in ("share", "target") else "left",
                                 no_wrap=True, width=columns[name])
        for r in self.rows:
            q = r["q"]
            over = q["dominant_share"] > q["target_share"] + 1e-6
            cells = [r["queue"], r["weight"], r["run/wait"], _bar(q["dominant_share"], q["target_share"], bar),
                     Text(r["share"], style="yellow" if over else "green"), r["target"], r["dominant"]]
            if "state" in columns:
                cells.append(Text(r["state"], style="red" if q["draining"] else ""))
            table.add_row(*cells)
        return table

    def _details(self, width: int, state_shown: bool) -> list[RenderableType]:
        """Per queue with something to say: its full name, then one line each for its state (when
        not in the table), what it has pending and its limits. A name longer than a third of the
        width takes a line of its own, so that the lines after it keep their room."""
        entries = []
        for r in self.rows:
            q = r["q"]
            lines = [] if state_shown or not r["state"] else [r["state"]]
            if _pooled_differs(q):
                lines.append(f"pooled target {q['pooled_target_share']:.1%}")
            if pending := _amounts(q["pending"]):
                lines.append(f"pending {pending}")
            lines += _limits(q)
            if lines:
                entries.append((q["name"], "\n".join(lines)))
        if not entries:
            return []
        name_width = min(max(len(name) for name, _ in entries), width // 3)
        out: list[RenderableType] = [Text(), Text("pending and limits", style="bold")]
        for name, text in entries:
            if len(name) > name_width:
                out.append(Text(name))
                name = ""
            grid = Table.grid(padding=(0, 2))
            grid.add_column(no_wrap=True, width=name_width)
            grid.add_column()
            grid.add_row(name, text)
            out.append(grid)
        return out


def _preemption_notes(p: dict | None) -> list[str]:
    """A queue's preemption state in a few words: starved, containers to take from it / give it."""
    if p is None:
        return []
    notes = [f"starved {p['starved_for_s']:.0f}s"] if p["starved"] else []
    if p["victims"]:
        notes.append(f"{p['victims']} to preempt")
    if p["incoming"]:
        notes.append(f"{p['incoming']} incoming")
    return notes


def _pooled_differs(q: dict) -> bool:
    """Whether whole containers on these nodes cannot reach the queue's pooled fair share."""
    return round(q["target_share"], 3) != round(q["pooled_target_share"], 3)


def _target(q: dict) -> str:
    """The reachable target, with the pooled one beside it where they differ."""
    target = f"{q['target_share']:.1%}"
    return f"{target} (pooled {q['pooled_target_share']:.1%})" if _pooled_differs(q) else target


def _bar(share: float, target: float, width: int) -> Text:
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


def _weight(weight: float | dict, types: list[str]) -> str:
    """One number when every type weighs the same, else the per-resource weights other than 1
    (a type a queue file does not list weighs 1)."""
    if not isinstance(weight, dict):
        return f"{weight:g}"
    every = {t: weight.get(t, 1) for t in types}
    if len(set(every.values())) == 1:
        return f"{next(iter(every.values())):g}"
    return ", ".join(f"{k} {v:g}" for k, v in every.items() if v != 1)


def _amounts(values: dict | None, keep_zero: bool = False) -> str:
    return ", ".join(f"{k} {v}" for k, v in (values or {}).items() if v or keep_zero)


def _limits(q: dict) -> list[str]:
    parts = []
    if q["min"]:
        parts.append("min " + _amounts(q["min"]))
    if q["max"]:
        parts.append("max " + ", ".join(f"{k} {v}" for k, v in q["max"].items() if v < UNBOUNDED))
    if q["max_running_apps"] is not None:
        parts.append(f"max-running-apps {q['max_running_apps']}")
    return parts


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
    """The app, then each pending request with its reasons; long lines wrap under their own text."""
    parts: list[Any] = [
        Text.from_markup(f"app [bold]{doc['app']}[/bold] of {doc['user']} in queue {doc['queue']}"
                         f"{' [red](draining: no new apps, running ones finish)[/red]' if doc['queue_draining'] else ''}"),
        Padding(Text(f"{'running' if doc['runnable'] else 'waiting to run'}, {doc['containers']} container(s), "
                     f"using {_amounts(doc['usage']) or 'nothing'}"), (0, 0, 0, 2))]
    if queue is not None:
        parts.append(Padding(Text(f"queue {queue['name']}: dominant share {queue['dominant_share']:.1%}, target "
                                  f"{_target(queue)}"), (0, 0, 0, 2)))
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
        request = Table.grid(padding=(0, 1))  # grids: a long text wraps under itself, not under its label
        request.add_column(no_wrap=True)
        request.add_column()
        key = f"priority {r['priority']}" + (f", allocation {r['allocation_id']}" if r["allocation_id"] else "")
        request.add_row(Text(f"{key}:", style="bold"),  # allocation 0 is YARN's default: not worth a word
                        f"{r['pending']} x <{_amounts(r['resources'])}>{loc}, waiting {r.get('waiting_s', 0):.0f} s")
        reasons = Table.grid(padding=(0, 1))
        reasons.add_column(no_wrap=True)
        reasons.add_column()
        for reason in r["reasons"]:
            style = "green" if reason["code"] == "ready" else "yellow"
            reasons.add_row(Text(f"[{reason['code']}]", style=style), reason["message"])
        parts += [Text(), request, Padding(reasons, (0, 0, 0, 2))]
    return Group(*parts)


# ---------------------------------------------------------------------------- reload

def run_reload(args: argparse.Namespace, console: Console | None = None) -> int:
    console = console or _console()
    url = args.url or default_url()
    token_file = args.token_file or os.environ.get("YARN_DRF_STATUS_TOKEN_FILE")
    try:
        headers = {"Authorization": f"Bearer {read_token(token_file, 'the token file')}"} if token_file else {}
        code, doc = _call("POST", url, "/v1/reload", headers)
    except (Unreachable, TokenFileError) as exc:
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
    if code == 401:
        hint = ("the token was refused" if token_file else
                "no token was given: pass --token-file FILE or set YARN_DRF_STATUS_TOKEN_FILE")
        console.print(f"[red]error:[/red] {hint} (the file given to `yarn-drf serve --status-token-file`)")
        return 2
    console.print(f"[red]error:[/red] HTTP {code}: {doc.get('error', doc)}")
    return 2
