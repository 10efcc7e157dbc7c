// The yarn-drf dashboard: reads the status server's JSON endpoints (same origin, read-only) every
// few seconds and redraws the queue tree, the share chart, the apps with why they wait, and the
// nodes. No framework and no third-party code: the page is what this file and index.html say.
"use strict";

const params = new URLSearchParams(location.search);
// ?interval=SECONDS sets the refresh period (default 2 s, at least 0.25 s).
const INTERVAL_MS = Math.max(250, 1000 * (parseFloat(params.get("interval")) || 2));
const WINDOW_MS = 10 * 60 * 1000;   // the chart shows the last ten minutes at most
const MAX_LINES = 12;               // queues drawn in the chart: the leaves with the largest shares
const MAX_RECORDED = 50;            // queues whose shares each point of history keeps (a big tree stays small)
const MAX_APPS = 200;               // app rows shown: waiting ones first
const MAX_WHY = 25;                 // apps whose reasons are fetched on each refresh
const UNBOUNDED = 2 ** 62;          // the status server's "no limit" in a queue's max
const HISTORY_KEY = "yarn-drf-share-history";
const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf",
                 "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#393b79", "#637939"];
const SVG = "http://www.w3.org/2000/svg";

// Shares seen since the tab opened (kept across reloads of the tab in sessionStorage):
// [{t: ms since epoch, share: {queue: dominant share}, target: {queue: target share}}].
let history = loadHistory();
const hiddenLines = new Set();      // queues switched off in the chart's legend

// ------------------------------------------------------------------ formatting

const pct = (x) => (x * 100).toFixed(1) + "%";

/** "memory-mb 2048, vcores 2": the non-zero amounts, or a dash. */
function amounts(values) {
  const parts = Object.entries(values || {}).filter(([, v]) => v).map(([k, v]) => `${k} ${v}`);
  return parts.length ? parts.join(", ") : "—";
}

/** One number when every type weighs the same, else the types that do not weigh 1. */
function weight(w, types) {
  if (typeof w !== "object") return String(w);
  const every = types.map((t) => [t, w[t] ?? 1]);
  if (new Set(every.map(([, v]) => v)).size === 1) return String(every[0][1]);
  return every.filter(([, v]) => v !== 1).map(([t, v]) => `${t} ${v}`).join(", ");
}

function limits(q) {
  const parts = Object.entries(q.max || {}).filter(([, v]) => v < UNBOUNDED).map(([k, v]) => `${k} ${v}`);
  if (q.max_running_apps !== null && q.max_running_apps !== undefined) parts.push(`running apps ${q.max_running_apps}`);
  return parts.length ? parts.join(", ") : "—";
}

/** A queue's preemption state (/v1/queues: starved since, containers to take from it and to
 * give it), or, for fields this page does not know, numbers and amounts flattened into one line. */
function preemption(p) {
  if (p === null || p === undefined) return "—";
  if (typeof p !== "object") return String(p);
  if ("victims" in p && "incoming" in p) {
    const parts = [];
    if (p.starved) parts.push(`starved (${p.starved}) ${Math.round(p.starved_for_s)} s`);
    else if (p.below_target_for_s !== null && p.below_target_for_s !== undefined)
      parts.push(`below target ${Math.round(p.below_target_for_s)} s`);
    if (p.victims) parts.push(`${p.victims} to preempt`);
    if (p.incoming) parts.push(`${p.incoming} incoming`);
    return parts.length ? parts.join("; ") : "—";
  }
  return Object.entries(p).map(([k, v]) =>
    `${k} ${v !== null && typeof v === "object" ? amounts(v) : v}`).join("; ");
}

const clock = (t) => new Date(t).toLocaleTimeString([], {hour12: false});

// ------------------------------------------------------------------ DOM helpers

/** An element with attributes (a "field" attribute becomes data-field) and children. */
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k === "class") e.className = v;
    else if (k === "field") e.dataset.field = v;
    else e.setAttribute(k, v);
  }
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function fillTable(id, headers, rows) {
  const table = document.getElementById(id);
  table.tHead.replaceChildren(el("tr", {}, ...headers.map((h) => el("th", {}, h))));
  table.tBodies[0].replaceChildren(...rows);
}

// ------------------------------------------------------------------ queues

function shareBar(share, target) {
  const bar = el("div", {class: "bar", title: `share ${pct(share)}, target ${pct(target)}`});
  const fill = el("div", {class: "fill"});
  fill.style.width = `${Math.min(share, target) * 100}%`;
  bar.append(fill);
  if (share > target) {
    const over = el("div", {class: "fill over"});
    over.style.left = `${target * 100}%`;
    over.style.width = `${(share - target) * 100}%`;
    bar.append(over);
  }
  const mark = el("div", {class: "mark"});
  mark.style.left = `${target * 100}%`;
  bar.append(mark);
  return bar;
}

function renderQueues(doc) {
  const types = doc.resource_types;
  const pooled = doc.queues.some((q) => "pooled_target_share" in q);
  const preempting = doc.queues.some((q) => "preemption" in q);
  const headers = ["queue", "weight", "run/wait", ...types, "dominant share", "share", "target",
                   ...(pooled ? ["pooled target"] : []), "dominant", "pending", "min", "max",
                   ...(preempting ? ["preemption"] : []), "state"];
  const rows = doc.queues.map((q) => {
    const depth = q.name.split(".").length - 1;
    const label = el("td", {field: "name", title: q.name, class: q.leaf ? "leaf" : "parent"},
                     q.name.split(".").pop(), q.dynamic ? el("span", {class: "tag"}, "dynamic") : null);
    label.style.paddingLeft = `${0.4 + 1.2 * depth}em`;
    const state = q.state + (q.reservations ? `, ${q.reservations} reservation(s)` : "");
    return el("tr", {"data-queue": q.name, class: q.state},
      label,
      el("td", {field: "weight", class: "num"}, q.parent ? weight(q.weight, types) : ""),
      el("td", {field: "apps", class: "num"}, `${q.running_apps}/${q.waiting_apps}`),
      ...types.map((r) => el("td", {field: `usage-${r}`, class: "num"}, String(q.usage[r]))),
      el("td", {}, shareBar(q.dominant_share, q.target_share)),
      el("td", {field: "share", class: "num"}, pct(q.dominant_share)),
      el("td", {field: "target", class: "num"}, pct(q.target_share)),
      pooled ? el("td", {field: "pooled-target", class: "num"},
                  "pooled_target_share" in q ? pct(q.pooled_target_share) : "—") : null,
      el("td", {field: "dominant"}, q.dominant_resource || "—"),
      el("td", {field: "pending"}, amounts(q.pending)),
      el("td", {field: "min"}, amounts(q.min)),
      el("td", {field: "max"}, limits(q)),
      preempting ? el("td", {field: "preemption"}, preemption(q.preemption)) : null,
      el("td", {field: "state"}, state));
  });
  fillTable("queues", headers, rows);
}

// ------------------------------------------------------------------ chart

function loadHistory() {
  try {
    return JSON.parse(sessionStorage.getItem(HISTORY_KEY)) || [];
  } catch {
    return [];
  }
}

function record(doc, now) {
  const leaves = doc.queues.filter((q) => q.leaf);
  const charted = [...(leaves.length ? leaves : doc.queues)]
    .sort((a, b) => b.dominant_share - a.dominant_share).slice(0, MAX_RECORDED);
  const point = {t: now, share: {}, target: {}};
  for (const q of charted) {
    point.share[q.name] = q.dominant_share;
    point.target[q.name] = q.target_share;
  }
  history.push(point);
  history = history.filter((p) => p.t >= now - WINDOW_MS);
  try {
    sessionStorage.setItem(HISTORY_KEY, JSON.stringify(history));
  } catch {
    // storage full or unavailable: the chart keeps its history in memory only
  }
}

function renderChart(doc, now) {
  const chart = document.getElementById("chart");
  const [W, H, left, bottom, top] = [960, 260, 44, 22, 8];
  const names = Object.keys(history[history.length - 1].share);
  const leafCount = doc.queues.filter((q) => q.leaf).length || doc.queues.length;
  // The lines drawn: the leaves with the largest shares now; each queue keeps its colour.
  const order = new Map(doc.queues.map((q, i) => [q.name, i]));
  const latest = history[history.length - 1];
  const drawn = [...names].sort((a, b) => latest.share[b] - latest.share[a] || order.get(a) - order.get(b))
    .slice(0, MAX_LINES).sort((a, b) => order.get(a) - order.get(b));
  const color = (name) => PALETTE[(order.get(name) ?? 0) % PALETTE.length];
  const span = Math.min(WINDOW_MS, Math.max(60000, now - history[0].t));
  let peak = 0;
  for (const p of history) for (const n of drawn) peak = Math.max(peak, p.share[n] ?? 0, p.target[n] ?? 0);
  const yMax = Math.min(1, Math.max(0.2, Math.ceil(peak * 5) / 5));
  const yStep = yMax <= 0.4 ? 0.1 : 0.2;
  const x = (t) => left + (W - left - 4) * (1 - (now - t) / span);
  const y = (v) => top + (H - top - bottom) * (1 - v / yMax);

  const parts = [];
  for (let i = 0; i * yStep <= yMax + 1e-9; i++) {
    const v = i * yStep;
    parts.push(svg("line", {x1: left, x2: W - 4, y1: y(v), y2: y(v), class: "grid"}),
               svg("text", {x: left - 6, y: y(v) + 4, class: "axis", "text-anchor": "end"}, `${Math.round(v * 100)}%`));
  }
  const minutes = span / 60000;
  const step = minutes > 5 ? 2 : 1;
  for (let m = 0; m <= minutes; m += step) {
    parts.push(svg("text", {x: x(now - m * 60000), y: H - 6, class: "axis", "text-anchor": m ? "middle" : "end"},
                   m ? `-${m} min` : "now"));
  }
  for (const name of drawn) {
    if (hiddenLines.has(name)) continue;
    const seen = history.filter((p) => name in p.share);
    const line = (key) => seen.map((p) => `${x(p.t).toFixed(1)},${y(p[key][name]).toFixed(1)}`).join(" ");
    parts.push(svg("polyline", {points: line("target"), class: "target", stroke: color(name), "data-queue": name}),
               svg("polyline", {points: line("share"), class: "share", stroke: color(name), "data-queue": name}));
  }
  chart.replaceChildren(...parts);
  document.getElementById("chart-note").textContent =
    `solid: dominant share, dashed: target; ${drawn.length < leafCount
      ? `the ${drawn.length} of ${leafCount} leaf queues with the largest shares` : "every leaf queue"}`;
  document.getElementById("legend").replaceChildren(...drawn.map((name) => {
    const item = el("li", {"data-queue": name, class: hiddenLines.has(name) ? "off" : "",
                           title: "click to show or hide"},
      el("span", {class: "swatch"}), `${name} `,
      el("span", {field: "share"}, pct(latest.share[name])), " / ",
      el("span", {field: "target"}, pct(latest.target[name])));
    item.firstChild.style.background = color(name);
    item.addEventListener("click", () => {
      hiddenLines.has(name) ? hiddenLines.delete(name) : hiddenLines.add(name);
      renderChart(doc, now);
    });
    return item;
  }));
}

// ------------------------------------------------------------------ apps

function why(detail) {
  const waiting = detail.requests.filter((r) => r.pending > 0);
  if (!waiting.length) return "—";
  return el("div", {}, ...waiting.map((r) => el("div", {class: "request"},
    el("div", {class: "ask"},
       `priority ${r.priority}${r.allocation_id ? ` (allocation ${r.allocation_id})` : ""}: ` +
       `${r.pending} × <${amounts(r.resources)}>, waiting ${r.waiting_s} s`),
    el("ul", {}, ...r.reasons.map((reason) => el("li", {class: "reason", "data-code": reason.code},
       el("span", {class: "code"}, `[${reason.code}]`), " ", el("span", {class: "message"}, reason.message)))))));
}

function renderApps(apps, details) {
  const rows = apps.slice(0, MAX_APPS).map((a) => {
    const detail = details.get(a.id);
    const reasons = detail ? why(detail)
      : a.pending ? el("span", {class: "note"}, `yarn-drf why ${a.id}`) : "—";
    return el("tr", {"data-app": a.id},
      el("td", {field: "id"}, a.id),
      el("td", {field: "queue"}, a.queue),
      el("td", {field: "user"}, a.user),
      el("td", {field: "state"}, a.runnable ? "running" : "waiting to run"),
      el("td", {field: "containers", class: "num"}, String(a.containers)),
      el("td", {field: "usage"}, amounts(a.usage)),
      el("td", {field: "pending", class: "num"}, String(a.pending)),
      el("td", {field: "why"}, reasons));
  });
  fillTable("apps", ["app", "queue", "user", "state", "containers", "usage", "pending", "why it waits"], rows);
  const notes = [];
  if (!apps.length) notes.push("no apps");
  if (apps.length > MAX_APPS) notes.push(`the first ${MAX_APPS} of ${apps.length} apps, waiting ones first (all: /v1/apps)`);
  const waiting = apps.filter((a) => a.pending).length;
  if (waiting > MAX_WHY) notes.push(`reasons for the first ${MAX_WHY} of ${waiting} waiting apps; the others: yarn-drf why APP_ID`);
  document.getElementById("apps-note").textContent = notes.join("; ");
}

// ------------------------------------------------------------------ nodes

function renderNodes(doc) {
  const types = doc.resource_types;
  const rows = doc.nodes.map((n) => {
    const res = n.reservation;
    return el("tr", {"data-node": n.id},
      el("td", {field: "id"}, n.id),
      el("td", {field: "rack"}, n.rack),
      el("td", {field: "containers", class: "num"}, String(n.containers)),
      ...types.map((r) => {
        const cell = el("td", {field: `free-${r}`, class: "num free", title: `${n.free[r]} of ${n.capacity[r]} free`},
                        String(n.free[r]));
        cell.style.setProperty("--free", n.capacity[r] ? n.free[r] / n.capacity[r] : 0);
        return cell;
      }),
      el("td", {field: "capacity"}, amounts(n.capacity)),
      el("td", {field: "reservation"},
         res ? `${res.app} (${res.queue}) <${amounts(res.resources)}>` : "—"));
  });
  fillTable("nodes", ["node", "rack", "containers", ...types.map((r) => `free ${r}`), "capacity", "reserved for"], rows);
}

// ------------------------------------------------------------------ header

function renderHealth(h, queues) {
  const beat = h.last_call_age_s === null ? "no call yet" : `last call ${h.last_call_age_s} s ago`;
  const config = h.config ? `; config version ${h.config.version}` : "";
  const health = document.getElementById("health");
  health.replaceChildren(
    el("span", {class: h.bridge_connected ? "ok" : "bad"}, h.bridge_connected ? "bridge connected" : "bridge disconnected"),
    `, ${beat}${config}; ${h.nodes} nodes, ${h.apps} apps, ${h.containers} containers; cluster ${amounts(queues.capacity)}`);
}

// ------------------------------------------------------------------ refresh loop

async function getJSON(path) {
  const r = await fetch(path, {cache: "no-store"});
  if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
  return r.json();
}

async function refresh() {
  const [queues, appList, nodes, health] = await Promise.all(
    ["/v1/queues", "/v1/apps", "/v1/nodes", "/v1/health"].map(getJSON));
  const apps = [...appList.apps].sort((a, b) => (b.pending > 0) - (a.pending > 0));
  const asked = apps.filter((a) => a.pending).slice(0, MAX_WHY);
  // An app that finished between the two reads answers 404: it is simply left without reasons.
  const details = new Map((await Promise.all(asked.map((a) =>
    getJSON(`/v1/apps/${encodeURIComponent(a.id)}`).catch(() => null)))).filter(Boolean).map((d) => [d.app, d]));
  const now = Date.now();
  record(queues, now);
  renderHealth(health, queues);
  renderQueues(queues);
  renderChart(queues, now);
  renderApps(apps, details);
  renderNodes(nodes);
  return now;
}

async function loop() {
  const live = document.getElementById("live");
  if (!document.hidden) {  // a hidden tab costs the scheduler nothing
    try {
      const at = await refresh();
      live.className = "live";
      live.textContent = `updated ${clock(at)}, every ${INTERVAL_MS / 1000} s`;
    } catch (err) {
      live.className = "live error";
      live.textContent = `update failed at ${clock(Date.now())}: ${err.message}; retrying every ${INTERVAL_MS / 1000} s`;
    }
  }
  setTimeout(loop, INTERVAL_MS);
}

loop();
