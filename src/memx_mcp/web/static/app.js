"use strict";
// memx ui: plain JavaScript, no build step, no network beyond this page's own origin.
const TOKEN = new URLSearchParams(location.search).get("token") || "";
const $ = (sel) => document.querySelector(sel);
const SECTIONS = ["COMMANDS", "DEBUGGING", "ARCHITECTURE", "WORKFLOW", "TOOLS", "PATTERNS", "PREFERENCES", "GENERAL"];
const TYPES = ["METHOD", "TRICK", "PITFALL", "PREFERENCE", "KNOWLEDGE"];
let current = null; // the bullet open in the detail panel

async function api(path, body) {
  const init = { headers: { "X-Memx-Token": TOKEN } };
  if (body !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function say(text) { $("#status").textContent = text; }
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "style") Object.assign(node.style, v); // CSSOM: allowed by the page's content policy
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}
function num(x, digits = 2) { return (x === null || x === undefined) ? "–" : Number(x).toFixed(digits); }
function svg(tag, attrs) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

// -- views -----------------------------------------------------------------------------------------
function show(view) {
  for (const tab of document.querySelectorAll("nav button")) {
    const on = tab.dataset.view === view;
    tab.setAttribute("aria-selected", on);
    $("#view-" + tab.dataset.view).hidden = !on;
  }
  if (view === "bullets") loadBullets();
  if (view === "conflicts") loadConflicts();
  if (view === "stats") loadStats();
  if (view === "search") $("#q").focus();
}

async function loadScopes() {
  const stats = await api("/api/stats");
  for (const select of [$("#f-scope"), $("#s-scope")]) {
    for (const scope of Object.keys(stats.by_scope).sort()) select.append(el("option", { value: scope }, scope));
  }
  $("#conflict-count").textContent = stats.open_conflicts ? `(${stats.open_conflicts})` : "";
}

async function loadBullets() {
  const params = new URLSearchParams(new FormData($("#filters")));
  const data = await api("/api/bullets?" + params);
  const body = $("#bullets tbody");
  body.replaceChildren();
  for (const b of data.bullets) {
    const row = el("tr", { tabindex: "0", "data-id": b.id },
      el("td", {}, b.content),
      el("td", {}, b.scope),
      el("td", {}, `${b.section} / ${b.knowledge_type}`),
      el("td", { class: "num" }, num(b.instructivity_score, 0)),
      el("td", { class: "num" }, b.recall_count),
      el("td", { class: "num" }, el("span", { class: "weight", style: { width: `${Math.round(40 * (b.decay_weight || 0))}px` } }), num(b.decay_weight)));
    row.addEventListener("click", () => openBullet(b.id));
    row.addEventListener("keydown", (e) => { if (e.key === "Enter") openBullet(b.id); });
    body.append(row);
  }
  say(`${data.bullets.length} bullet(s)`);
}

async function openBullet(id) {
  const data = await api("/api/bullets/" + id);
  current = data.bullet;
  $("#detail").hidden = false;
  $("#d-id").textContent = current.id;
  $("#d-meta").textContent = `${current.status} · ${current.scope} · ${current.section}/${current.knowledge_type} · ` +
    `recalled ${current.recall_count}× · created ${current.created_at.slice(0, 10)} · decay ${num(current.decay_weight)}`;
  $("#d-content").value = current.content;
  $("#d-tags").value = current.tags.join(", ");
  $("#d-archive").hidden = current.status !== "active";
  $("#d-restore").hidden = current.status === "active";
  for (const row of document.querySelectorAll("#bullets tr")) row.classList.toggle("selected", row.dataset.id === id);
  drawCurve(data);
}

function drawCurve(data) {
  const box = $("#d-curve");
  box.replaceChildren();
  const W = 320, H = 140, L = 28, B = 20, days = data.points.map((p) => p.day);
  const minD = Math.min(...days), maxD = Math.max(...days);
  const x = (d) => L + (W - L - 6) * (d - minD) / ((maxD - minD) || 1);
  const y = (w) => 6 + (H - B - 6) * (1 - w);
  box.append(svg("line", { x1: L, y1: y(0), x2: W - 6, y2: y(0), stroke: "#ccc" }));
  box.append(svg("line", { x1: L, y1: y(data.archive_below), x2: W - 6, y2: y(data.archive_below), stroke: "#b3261e", "stroke-dasharray": "3 3" }));
  const past = data.points.filter((p) => p.day <= 0), ahead = data.points.filter((p) => p.day >= 0);
  const line = (pts, dash) => svg("polyline", { points: pts.map((p) => `${x(p.day)},${y(p.weight)}`).join(" "), fill: "none", stroke: "#2c5fd6", "stroke-width": 2, ...(dash ? { "stroke-dasharray": "4 3" } : {}) });
  if (past.length) box.append(line(past, false));
  if (ahead.length) box.append(line(ahead, true));
  box.append(svg("line", { x1: x(0), y1: 4, x2: x(0), y2: H - B, stroke: "#999" }));
  const label = (tx, ty, text) => { const t = svg("text", { x: tx, y: ty }); t.textContent = text; box.append(t); };
  label(2, y(1) + 4, "1.0"); label(2, y(0) + 4, "0"); label(x(0) - 12, H - 6, "today"); label(L, H - 6, `${Math.round(minD)} d`); label(W - 40, H - 6, `+${Math.round(maxD)} d`);
  $("#d-curve-note").textContent = data.permanent ? "Permanent: recalled often enough never to fade." :
    "Solid: the past at today's recall count; dashed: projected if never recalled again; red: where gc archives.";
}

async function act(what) {
  if (!current) return;
  const id = current.id;
  try {
    if (what === "save") {
      const tags = $("#d-tags").value.split(",").map((t) => t.trim()).filter(Boolean);
      await api("/api/bullets/" + id, { content: $("#d-content").value, tags });
    } else {
      if (what === "forget" && !confirm("Erase this bullet for good?")) return;
      await api(`/api/bullets/${id}/${what}`, {});
      if (what === "forget") { $("#detail").hidden = true; current = null; }
    }
    await loadBullets();
    if (current) await openBullet(id);
    say(`${what === "save" ? "Saved" : what}: ${id}`);
  } catch (e) { say("Error: " + e.message); }
}

async function search(event) {
  event.preventDefault();
  const q = $("#q").value.trim();
  if (!q) { say("Type a query first."); return; }
  try {
    const params = new URLSearchParams({ q, scope: $("#s-scope").value });
    const r = await api("/api/search?" + params);
    $("#search-info").textContent = `${r.results.length} result(s) in ${r.scope} (${r.mode}; ${r.candidates} candidates)` +
      (r.notes.length ? " · " + r.notes.join("; ") : "");
    const body = $("#results tbody");
    body.replaceChildren();
    r.results.forEach((h, i) => {
      const s = h.score;
      body.append(el("tr", { "data-id": h.id }, el("td", {}, i + 1), el("td", {}, h.content),
        ...[s.l1, s.l2, s.l3, s.semantic, s.blended, s.decay, s.recency, s.scope, s.final].map((v, k) => el("td", { class: "num" }, num(v, k < 3 ? 1 : 2)))));
    });
    say("");
  } catch (e) { say("Error: " + e.message); }
}

async function loadConflicts() {
  const data = await api("/api/conflicts" + ($("#c-all").checked ? "?all=1" : ""));
  const box = $("#conflicts");
  box.replaceChildren();
  if (!data.conflicts.length) box.append(el("p", { class: "muted" }, "No open conflicts."));
  for (const c of data.conflicts) {
    const side = (key, b) => el("div", { class: "side" + (c.recommended === key ? " recommended" : "") },
      el("strong", {}, key.toUpperCase() + " "), el("span", { class: "muted" }, `${b.id} · recalled ${b.recall_count}×`), el("p", {}, b.content));
    const resolve = (keep) => async () => {
      try { await api(`/api/conflicts/${c.id}/resolve`, { keep }); say(`Resolved ${c.id}: kept ${keep}`); await loadConflicts(); }
      catch (e) { say("Error: " + e.message); }
    };
    box.append(el("div", { class: "conflict", "data-id": c.id },
      el("p", {}, el("span", { class: "kind-" + c.kind }, c.kind), ` · similarity ${num(c.similarity)} · ${c.scope}`),
      el("div", { class: "sides" }, side("a", c.a), side("b", c.b)),
      el("p", {}, "Evidence: " + (c.evidence.join("; ") || "similar content")),
      el("p", { class: "muted" }, `Recommended: keep ${c.recommended} (${c.reason})`),
      el("div", { class: "bar" },
        el("button", { onclick: resolve("a"), "data-keep": "a" }, "Keep A"),
        el("button", { onclick: resolve("b"), "data-keep": "b" }, "Keep B"),
        el("button", { onclick: resolve("both"), "data-keep": "both" }, "Keep both"),
        el("button", { onclick: resolve("merge"), "data-keep": "merge" }, "Merge"))));
  }
  $("#conflict-count").textContent = data.conflicts.length ? `(${data.conflicts.length})` : "";
}

async function loadStats() {
  const s = await api("/api/stats");
  const list = (title, counts) => el("div", {}, el("h3", {}, title),
    el("ul", {}, ...Object.entries(counts).map(([k, v]) => el("li", {}, `${k}: ${v}`))));
  $("#stats").replaceChildren(
    el("p", {}, `${s.total} bullets (${s.active} active, ${s.archived} archived) · ${s.open_conflicts} open conflict(s) · ` +
      `model ${s.model} · ${(s.store_bytes / 1048576).toFixed(1)} MiB`),
    el("div", { class: "sides" }, list("By scope", s.by_scope), list("By section", s.by_section)),
    el("div", { class: "sides" }, list("By type", s.by_type), list("Context injections", s.injections)));
  const box = $("#histogram");
  box.replaceChildren();
  const bands = Object.entries(s.decay_histogram), top = Math.max(1, ...bands.map(([, v]) => v));
  bands.forEach(([band, count], i) => {
    const h = 170 * count / top, x = 10 + i * 58;
    box.append(svg("rect", { x, y: 180 - h, width: 44, height: h, fill: band.startsWith("<") ? "#b3261e" : "#2c5fd6" }));
    const t = svg("text", { x, y: 195 }); t.textContent = band.replace(" (new)", "").replace(" (gc)", ""); box.append(t);
    const c = svg("text", { x, y: 175 - h }); c.textContent = count; box.append(c);
  });
}

// -- wiring ------------------------------------------------------------------------------------------
for (const [select, values] of [[$("#f-section"), SECTIONS], [$("#f-type"), TYPES]]) {
  for (const v of values) select.append(el("option", { value: v }, v));
}
for (const tab of document.querySelectorAll("nav button")) tab.addEventListener("click", () => show(tab.dataset.view));
$("#filters").addEventListener("change", loadBullets);
$("#search-form").addEventListener("submit", search);
$("#c-all").addEventListener("change", loadConflicts);
for (const what of ["save", "archive", "restore", "forget"]) $("#d-" + what).addEventListener("click", () => act(what));
document.addEventListener("keydown", (e) => {
  if (e.key === "/" && !["INPUT", "TEXTAREA"].includes(document.activeElement.tagName)) { e.preventDefault(); show("search"); }
});
loadScopes().then(loadBullets).catch((e) => say("Error: " + e.message));
