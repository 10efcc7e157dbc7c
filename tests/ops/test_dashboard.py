"""The dashboard at /ui/, read by a real headless Chromium against a running status server.

The service runs the Docker demo's queue tree (conf/docker-queues.yaml) on the demo's three node
shapes with the demo's three kinds of work; the page's numbers are compared with the JSON API's,
then usage changes (a NodeManager joins and its heartbeats assign containers) and the page must
follow without a reload. Without Chromium the browser tests skip, except in CI
(YARN_DRF_E2E_REQUIRED=1), where they fail.
"""
from __future__ import annotations

import http.client
import os
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
import requests

import yaml

from tests import browser
from tests.ops.conftest import Ops, running_ops
from yarn_bridge.status import UI_HEADERS, StatusServer

ROOT = Path(__file__).resolve().parents[2]
DEMO_QUEUES = ROOT / "conf" / "docker-queues.yaml"
# queue -> (app, container shape, containers asked): the demo's CPU-, memory- and GPU-memory-heavy work.
WORKLOAD = {
    "root.prod": ("app-prod", {"memory-mb": 512, "vcores": 1}, 120),
    "root.research.dev": ("app-dev", {"memory-mb": 3072, "vcores": 1}, 60),
    "root.research.ml": ("app-ml", {"memory-mb": 1024, "vcores": 1, "gpu-mem": 1024}, 60),
}
UNBOUNDED = 1 << 62
WAIT_S = 10  # how long the page may take to show a state (it refreshes every 0.25 s here)


# ---------------------------------------------------------------- the page's formats, independently

def pct(x: float) -> str:
    """A share as the page shows it: a percentage with one decimal, halves rounded up (JavaScript's toFixed)."""
    return f"{Decimal(x * 100).quantize(Decimal('0.1'), ROUND_HALF_UP)}%"


def amounts(values: dict | None) -> str:
    parts = [f"{k} {v}" for k, v in (values or {}).items() if v]
    return ", ".join(parts) or "—"


def weight(w: float | dict, types: list[str]) -> str:
    """One number when every type weighs the same, else each type that does not weigh 1."""
    if not isinstance(w, dict):
        return f"{w:g}"
    every = {t: w.get(t, 1) for t in types}
    if len(set(every.values())) == 1:
        return f"{every[types[0]]:g}"
    return ", ".join(f"{t} {v:g}" for t, v in every.items() if v != 1)


def limits(q: dict) -> str:
    parts = [f"{k} {v}" for k, v in (q["max"] or {}).items() if v < UNBOUNDED]
    if q["max_running_apps"] is not None:
        parts.append(f"running apps {q['max_running_apps']}")
    return ", ".join(parts) or "—"


# ---------------------------------------------------------------- fixtures

def demo_nodes() -> dict[str, tuple[dict[str, int], str]]:
    """The Docker demo's NodeManagers, as docker/compose.yaml defines them."""
    services = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())["services"]
    return {name: ({"memory-mb": int(env["NM_MEMORY_MB"]), "vcores": int(env["NM_VCORES"]),
                    "gpu-mem": int(env["NM_GPU_MEM"])}, "/default-rack")
            for name, service in services.items() if "NM_VCORES" in (env := service.get("environment") or {})}


@pytest.fixture(scope="module")
def chromium():
    why = browser.missing()
    if why is not None:
        if os.environ.get("YARN_DRF_E2E_REQUIRED"):
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    with browser.headless_chromium() as driver:
        yield driver


@pytest.fixture
def demo(tmp_path: Path):
    """The demo's queue tree and nodes, each queue's app asking for more than the cluster holds,
    served until the test ends; the nodes have heartbeated until nothing more fits."""
    queues_file = tmp_path / "queues.yaml"
    queues_file.write_text(DEMO_QUEUES.read_text())
    with running_ops(queues_file, demo_nodes()) as ops:
        with ops.lock:
            for queue, (app, shape, count) in WORKLOAD.items():
                assert ops.core.submit_app(app, "alice", queue).accepted
                ops.core.update_request(app, 1, shape, count)
        assert ops.settle()
        yield ops


def open_dashboard(driver, ops: Ops) -> None:
    driver.get(f"{ops.url}/ui/?interval=0.25")


def until(driver, what: str, check):
    """Waits for `check(driver)` to hold (truthy), re-reading the page; fails naming `what`."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    def attempt(d):
        try:
            return check(d)
        except StaleElementReferenceException:  # the page redrew the table while it was read
            return False

    return WebDriverWait(driver, WAIT_S, poll_frequency=0.1).until(attempt, message=f"the page never showed {what}")


def until_shows(driver, what: str, read, want) -> None:
    """Waits for `read(driver)` to equal `want`; on a timeout the failure shows both."""
    from selenium.common.exceptions import TimeoutException

    try:
        until(driver, what, lambda d: read(d) == want)
    except TimeoutException:
        assert read(driver) == want, f"the page never showed {what}"


# ---------------------------------------------------------------- reading the page

def cells(driver, table: str, key: str) -> dict[str, dict[str, str]]:
    """{row key: {field: text}} for every row of a table, in one script call (one consistent redraw)."""
    return driver.execute_script("""
        const out = {};
        for (const row of document.querySelectorAll(`#${arguments[0]} tbody tr`)) {
          const fields = {};
          for (const cell of row.querySelectorAll('[data-field]')) fields[cell.dataset.field] = cell.textContent;
          out[row.dataset[arguments[1]]] = fields;
        }
        return out;""", table, key)


def queue_rows(driver) -> list[str]:
    return driver.execute_script(
        "return [...document.querySelectorAll('#queues tbody tr')].map(r => r.dataset.queue)")


def reasons_shown(driver) -> dict[str, list[str]]:
    return driver.execute_script("""
        const out = {};
        for (const row of document.querySelectorAll('#apps tbody tr'))
          out[row.dataset.app] = [...row.querySelectorAll('.reason')].map(r => r.textContent);
        return out;""")


def chart_points(driver, queue: str) -> int:
    return driver.execute_script(
        "const l = document.querySelector(`#chart polyline.share[data-queue='${arguments[0]}']`);"
        "return l ? l.points.numberOfItems : 0;", queue)


def shown(rows: dict[str, dict[str, str]], like: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
    """The page's rows cut to the fields `like` names (the page shows more columns than compared)."""
    return {key: {f: row.get(f) for f in like.get(key, row)} for key, row in rows.items()}


def table_shows(driver, what: str, table: str, key: str, want: dict[str, dict[str, str]]) -> None:
    """Waits for the table's rows, cut to the fields `want` names, to equal `want`."""
    until_shows(driver, what, lambda d: shown(cells(d, table, key), want), want)


# ---------------------------------------------------------------- what the page must show, from the API

def expected_queues(ops: Ops) -> dict[str, dict[str, str]]:
    doc = ops.get("/v1/queues")
    out = {}
    for q in doc["queues"]:
        row = {
            "name": q["name"].rsplit(".", 1)[-1],
            "weight": weight(q["weight"], doc["resource_types"]) if q["parent"] else "",
            "apps": f"{q['running_apps']}/{q['waiting_apps']}",
            **{f"usage-{r}": str(q["usage"][r]) for r in doc["resource_types"]},
            "share": pct(q["dominant_share"]),
            "target": pct(q["target_share"]),
            "dominant": q["dominant_resource"] or "—",
            "pending": amounts(q["pending"]),
            "min": amounts(q["min"]),
            "max": limits(q),
            "state": q["state"],
        }
        if "pooled_target_share" in q:
            row["pooled-target"] = pct(q["pooled_target_share"])
        out[q["name"]] = row
    return out


def expected_nodes(ops: Ops) -> dict[str, dict[str, str]]:
    doc = ops.get("/v1/nodes")
    return {n["id"]: {"id": n["id"], "rack": n["rack"], "containers": str(n["containers"]),
                      **{f"free-{r}": str(n["free"][r]) for r in doc["resource_types"]}}
            for n in doc["nodes"]}


def expected_reasons(ops: Ops, app_id: str) -> list[str]:
    doc = ops.get(f"/v1/apps/{app_id}")
    return [f"[{r['code']}] {r['message']}" for req in doc["requests"] if req["pending"] for r in req["reasons"]]


# ---------------------------------------------------------------- tests

@pytest.mark.browser
def test_the_queue_tree_shows_the_json_apis_names_weights_usage_shares_and_targets(chromium, demo):
    open_dashboard(chromium, demo)
    want = expected_queues(demo)
    assert list(want) == ["root", "root.prod", "root.research", "root.research.dev", "root.research.ml", "root.users"]
    until_shows(chromium, "the demo's queue tree in the API's order", queue_rows, list(want))
    table_shows(chromium, "the API's figures in every queue row", "queues", "queue", want)
    # The numbers are the workload's, not blanks: every leaf runs containers and still waits for more.
    for leaf in ("root.prod", "root.research.dev", "root.research.ml"):
        assert want[leaf]["pending"] != "—" and want[leaf]["share"] != "0.0%"
    assert want["root.prod"]["weight"] == "2" and want["root.research.ml"]["weight"] == "gpu-mem 2"


@pytest.mark.browser
def test_each_waiting_app_shows_why_in_the_words_of_the_api(chromium, demo):
    open_dashboard(chromium, demo)
    want = {app: expected_reasons(demo, app) for app, _, _ in WORKLOAD.values()}
    assert all(want.values()), want  # every app waits, for at least one stated reason
    until_shows(chromium, "each app's reasons from /v1/apps/{id}", reasons_shown, want)


@pytest.mark.browser
def test_nodes_show_their_free_room_as_the_api_reports_it(chromium, demo):
    open_dashboard(chromium, demo)
    want = expected_nodes(demo)
    assert set(want) == {"nm-cpu", "nm-mem", "nm-gpu"}
    table_shows(chromium, "each node's free room from /v1/nodes", "nodes", "node", want)


@pytest.mark.browser
def test_the_page_follows_usage_changes_without_a_reload(chromium, demo):
    open_dashboard(chromium, demo)
    before = expected_queues(demo)
    table_shows(chromium, "the starting figures", "queues", "queue", before)
    points = until(chromium, "a chart line for root.prod", lambda d: chart_points(d, "root.prod"))
    chromium.execute_script("window.loadedOnce = true")  # gone if the page reloads

    # A fourth NodeManager joins; its heartbeats assign it containers from the waiting apps.
    with demo.lock:
        demo.core.add_node("nm-extra", {"memory-mb": 16384, "vcores": 16, "gpu-mem": 10240}, "/default-rack")
    assert demo.heartbeat("nm-extra") + demo.settle()
    after = expected_queues(demo)
    assert after["root"]["usage-vcores"] != before["root"]["usage-vcores"]
    table_shows(chromium, "the new usage and shares", "queues", "queue", after)
    nodes = expected_nodes(demo)
    table_shows(chromium, "the new node with its free room", "nodes", "node", nodes)
    until(chromium, "more points on the chart", lambda d: chart_points(d, "root.prod") > points)
    assert chromium.execute_script("return window.loadedOnce") is True


class FieldsToCome(StatusServer):
    """The status server with a pooled target beside the reachable one and a preemption state in
    every queue (a live plan needs starved queues), to show that the page renders them."""

    def queues(self) -> dict:
        doc = super().queues()
        for i, q in enumerate(doc["queues"]):
            q["pooled_target_share"] = round(q["target_share"] + 0.01 * i, 6)
            q["preemption"] = {"starved": "fair-share" if i % 2 else None, "starved_for_s": 40.4 if i % 2 else None,
                               "below_target_for_s": 40.4 if i % 2 else (3.6 if i == 2 else None),
                               "share": 0.1, "target_share": 0.5, "victims": i // 2, "incoming": i % 3,
                               "planned": []}
        return doc


def preemption_text(p: dict) -> str:
    """What the page shows for a queue's preemption state, written out independently of app.js."""
    parts = []
    if p["starved"]:
        parts.append(f"starved ({p['starved']}) {round(p['starved_for_s'])} s")
    elif p["below_target_for_s"] is not None:
        parts.append(f"below target {round(p['below_target_for_s'])} s")
    parts += [f"{p['victims']} to preempt"] if p["victims"] else []
    parts += [f"{p['incoming']} incoming"] if p["incoming"] else []
    return "; ".join(parts) or "—"


@pytest.mark.browser
def test_a_pooled_target_and_preemption_state_show_when_the_api_carries_them(chromium, demo):
    server = FieldsToCome(lambda: demo.core, demo.lock, port=0, metrics=demo.metrics).start()
    try:
        chromium.get(f"{server.url}/ui/?interval=0.25")
        doc = requests.get(f"{server.url}/v1/queues", timeout=10).json()
        want = {q["name"]: {"pooled-target": pct(q["pooled_target_share"]), "preemption": preemption_text(q["preemption"])}
                for q in doc["queues"]}
        assert want["root"]["preemption"] == "—" and "starved (fair-share) 40 s" in want[doc["queues"][1]["name"]]["preemption"]
        table_shows(chromium, "the pooled target and preemption columns", "queues", "queue", want)
    finally:
        server.stop()


# ---------------------------------------------------------------- the routes, without a browser

def test_the_dashboard_files_are_served_with_their_types_and_a_same_origin_policy(ops):
    for path, kind in (("/ui/", "text/html"), ("/ui", "text/html"), ("/ui/app.js", "text/javascript"),
                       ("/ui/style.css", "text/css")):
        r = requests.get(ops.url + path, timeout=10)
        assert r.status_code == 200 and r.headers["Content-Type"].startswith(kind), (path, r.headers)
        assert r.headers["Content-Security-Policy"] == UI_HEADERS["Content-Security-Policy"]
        assert "default-src 'self'" in r.headers["Content-Security-Policy"]
        assert r.headers["X-Content-Type-Options"] == "nosniff"
    page = requests.get(ops.url + "/ui/", timeout=10).text
    assert '<script src="/ui/app.js"' in page and "://" not in page  # nothing loaded from elsewhere


def test_only_the_dashboards_own_files_are_served_under_ui(ops):
    for path in ("/ui/__init__.py", "/ui/../status.py", "/ui/%2e%2e/status.py", "/ui/index.html/x", "/uix"):
        conn = http.client.HTTPConnection("127.0.0.1", ops.server.port, timeout=10)
        conn.request("GET", path)  # sent as written: no client-side clean-up of the path
        r = conn.getresponse()
        assert r.status == 404, (path, r.status)
        assert r.getheader("Content-Type") == "application/json" and b"def " not in r.read()
        conn.close()


def test_the_dashboard_is_refused_to_a_foreign_host_like_every_endpoint(ops):
    r = requests.get(ops.url + "/ui/", headers={"Host": f"attacker.example:{ops.server.port}"}, timeout=10)
    assert r.status_code == 403 and "Host" in r.json()["error"]
