"use strict";
// memx ui: plain JavaScript, no build step, no network beyond this page's own origin.
const TOKEN = new URLSearchParams(location.search).get("token") || "";
const $ = (sel) => document.querySelector(sel);
const SECTIONS = ["COMMANDS", "DEBUGGING", "ARCHITECTURE", "WORKFLOW", "TOOLS", "PATTERNS", "PREFERENCES", "GENERAL"];
const TYPES = ["METHOD", "TRICK", "PITFALL", "PREFERENCE", "KNOWLEDGE"];
const PAGE = 200;
const fmt = new Intl.NumberFormat("en");
let current = null; // the bullet open in the detail dialog
let opener = null; // the element focus returns to when the dialog closes
let offset = 0, total = 0;
let context = { scope: "", scopes: {}, bands: [] };
let firstPageMeasured = false;

async function api(path, body) {
  const init = { headers: { "X-Memx-Token": TOKEN } };
  if (body !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let res;
  try { res = await fetch(path, init); } catch (e) { throw new Error("the memx ui server does not answer (stopped?)"); }
  let data;
  try { data = await res.json(); } catch (e) { throw new Error(`the server answered ${res.status} without JSON`); }
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function say(text) { $("#status").textContent = text; }
// Each view and the dialog have their own error line: a failure is reported where it happened.
function fail(where, error) {
  const box = $("#" + where + "-error");
  box.textContent = error ? "Error: " + (error.message || error) : "";
  box.hidden = !error;
}
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
// a term of final = blended × decay × recency × scope, as the CLI prints it: 1.15, not 1.1 or 1.2
function factor(x) { return (x === null || x === undefined) ? "–" : Number(x).toFixed(4).replace(/\.?0+$/, ""); }
function svg(tag, attrs) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}
// A scope breaks after its separators (project:main@commit-…/workspace:…), never inside a part; a part
// longer than the line still wraps rather than widening the page (.seg: inline-block, max-width 100%).
function scopeText(scope) {
  return el("span", { class: "scope" }, ...String(scope).split(/(?<=[:\/@])/).flatMap((part) => [el("span", { class: "seg" }, part), el("wbr")]));
}
// A line of text whose scopes (the detected one, or those named) break the same way.
function withScopes(text, ...names) {
  const scopes = [context.scope, ...names].filter((n) => n && n.length > 1).sort((a, b) => b.length - a.length);
  if (!scopes.length) return [String(text)];
  const pattern = new RegExp("(" + scopes.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|") + ")");
  return String(text).split(pattern).filter(Boolean).map((part) => scopes.includes(part) ? scopeText(part) : part);
}
// Flags and commands (--abort-on-container-exit, docker-compose) do not break at their hyphens unless the
// token alone is wider than the line: short hyphenated tokens are kept whole (.seg); the rest is plain text.
function keepTokens(text) {
  return String(text).split(/(\s+)/).filter(Boolean).map((t) =>
    /\S-\S|^-/.test(t) && !/\s/.test(t) && t.length <= 40 ? el("span", { class: "seg" }, t) : document.createTextNode(t));
}
function scopeLabel(value) { return value === "*" ? "all scopes" : value === "" ? `${context.scope} (detected)` : value; }

// Long unbroken paths wrap anywhere (CSS); past three lines the text is clamped and a button expands it. The
// button follows the real clamping, measured in the page at its width (is the text cut?), not the text's
// length: it is there whenever a phone cuts a bullet and never where nothing is cut.
function clamped(text) {
  const content = el("span", { class: "content" }, ...keepTokens(text));
  const button = el("button", {
    type: "button", class: "expand", "aria-expanded": "false",
    onclick: (e) => {
      e.stopPropagation();
      const open = box.classList.toggle("open");
      button.setAttribute("aria-expanded", open);
      button.textContent = open ? "less" : "more";
    },
    onkeydown: (e) => e.stopPropagation(),
  }, "more");
  button.hidden = true;
  const box = el("div", { class: "clamp" }, content, button);
  new ResizeObserver(() => {  // laid out, and again whenever the width changes
    if (!box.classList.contains("open")) button.hidden = content.scrollHeight <= content.clientHeight;
  }).observe(content);
  return box;
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
  if (view === "review") loadReview();
  if (view === "search") $("#q").focus();
}

async function loadContext() {
  try {
    context = await api("/api/context");
    $("#scope-now").replaceChildren("Detected scope: ", ...withScopes(context.scope_why || context.scope));
    $("#s-scope option[value='']").textContent = `detected (${context.scope})`;
    $("#c-scope option[value='']").textContent = `detected (${context.scope})`;
    for (const select of [$("#f-scope"), $("#s-scope"), $("#c-scope")]) {
      for (const scope of Object.keys(context.scopes)) select.append(el("option", { value: scope }, scope));
    }
    for (const band of context.bands) $("#f-band").append(el("option", { value: band }, band));
    fail("context", null);
  } catch (e) { fail("context", e); }
}

async function loadBullets() {
  const params = new URLSearchParams(new FormData($("#filters")));
  params.set("offset", offset);
  params.set("limit", PAGE);
  const measure = !firstPageMeasured;
  if (measure) performance.mark("bullets-start");
  try {
    const data = await api("/api/page?" + params);
    const body = $("#bullets tbody");
    const rows = data.bullets.map((b) => {
      const row = el("tr", { tabindex: "0", "data-id": b.id, "aria-label": "open bullet " + b.id },
        el("td", { class: "c-content" }, ...(b.tags.includes("stale") ? [el("span", { class: "badge-stale" }, "stale"), " "] : []), clamped(b.content)),
        el("td", { "data-label": "scope" }, scopeText(b.scope)),
        el("td", { "data-label": "kind" }, `${b.section} / ${b.knowledge_type}`),
        el("td", { class: "num", "data-label": "score" }, num(b.instructivity_score, 0)),
        el("td", { class: "num", "data-label": "recalls" }, b.recall_count),
        el("td", { class: "num", "data-label": "decay" }, el("span", { class: "weight", style: { width: `${Math.round(40 * (b.decay_weight || 0))}px` } }), num(b.decay_weight)));
      row.addEventListener("click", () => openBullet(b.id, row));
      row.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); openBullet(b.id, row); } });
      return row;
    });
    body.replaceChildren(...rows);
    total = data.total;
    const first = total ? data.offset + 1 : 0, last = data.offset + data.bullets.length;
    $("#range").textContent = `${fmt.format(first)}–${fmt.format(last)} of ${fmt.format(total)}`;
    $("#prev").disabled = data.offset === 0;
    $("#next").disabled = last >= total;
    const scope = params.get("scope");
    $("#bullets-info").textContent = `${fmt.format(total)} ${params.get("status")} bullet(s) ` +
      (scope === "*" ? "in all scopes" : `visible from ${scope} (its own and the scopes above it)`) +
      (params.get("band") ? ` · decay band ${params.get("band")}` : "");
    if (!total) body.append(el("tr", {}, el("td", { colspan: "6", class: "muted" }, "No bullets match these filters.")));
    fail("bullets", null);
    if (measure) {
      firstPageMeasured = true;
      performance.measure("bullets-first-page", "bullets-start");
    }
  } catch (e) { fail("bullets", e); }
}

function provenance(b) {
  const items = [
    ["origin", b.origin || "–"], ["source rule", b.source || "–"], ["scope", scopeText(b.scope)],
    ["created", b.created_at.slice(0, 10)], ["updated", b.updated_at.slice(0, 10)],
    ["last recalled", b.last_recalled_at ? b.last_recalled_at.slice(0, 10) : "never"],
    ["recalled", `${b.recall_count}×`], ["tools", b.tools.join(", ") || "–"], ["entities", b.entities.join(", ") || "–"],
  ];
  return items.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]);
}

async function openBullet(id, from) {
  opener = from || document.activeElement;
  const dialog = $("#detail");
  try {
    const data = await api("/api/bullets/" + id);
    fail("d", null);
    fill(data);
  } catch (e) {
    current = { id };
    $("#d-id").textContent = id;
    for (const node of ["#d-meta", "#d-curve-note"]) $(node).textContent = "";
    $("#d-prov").replaceChildren();
    $("#d-curve").replaceChildren();
    fail("d", e);
  }
  for (const row of document.querySelectorAll("tbody tr")) row.classList.toggle("selected", row.dataset.id === id);
  if (!dialog.open) dialog.showModal();
  $("#d-close").focus();
}

function fill(data) {
  current = data.bullet;
  $("#d-id").textContent = current.id;
  $("#d-meta").textContent = `${current.status} · ${current.section}/${current.knowledge_type} · decay ${num(current.decay_weight)}`;
  $("#d-prov").replaceChildren(...provenance(current));
  $("#d-content").value = current.content;
  $("#d-tags").value = current.tags.join(", ");
  $("#d-stale").hidden = !current.tags.includes("stale") || current.status !== "active";
  $("#d-archive").hidden = current.status !== "active";
  $("#d-restore").hidden = current.status === "active";
  drawCurve(data, current.status === "active");
}

function closeDetail() {
  const dialog = $("#detail");
  if (dialog.open) dialog.close();
}

function drawCurve(data, active) {
  const box = $("#d-curve");
  box.replaceChildren();
  if (!active) {
    // Archived knowledge is out of recall and its clock is stopped: no curve to draw.
    $("#d-curve-note").textContent = "Archived: not recalled and not decaying. Restore brings it back with a fresh clock.";
    return;
  }
  const W = 320, H = 150, L = 30, B = 34, days = data.points.map((p) => p.day);
  const minD = Math.min(...days), maxD = Math.max(...days);
  const x = (d) => L + (W - L - 8) * (d - minD) / ((maxD - minD) || 1);
  const y = (w) => 8 + (H - B - 8) * (1 - w);
  box.append(svg("line", { x1: L, y1: y(0), x2: W - 8, y2: y(0), class: "axis" }));
  box.append(svg("line", { x1: L, y1: y(data.archive_below), x2: W - 8, y2: y(data.archive_below), class: "gc-line" }));
  const past = data.points.filter((p) => p.day <= 0), ahead = data.points.filter((p) => p.day >= 0);
  const line = (pts, dash) => svg("polyline", { points: pts.map((p) => `${x(p.day)},${y(p.weight)}`).join(" "), class: dash ? "curve ahead" : "curve" });
  if (past.length) box.append(line(past, false));
  if (ahead.length) box.append(line(ahead, true));
  box.append(svg("line", { x1: x(0), y1: 4, x2: x(0), y2: H - B, class: "today" }));
  const label = (tx, ty, text, anchor = "start") => { const t = svg("text", { x: tx, y: ty, "text-anchor": anchor }); t.textContent = text; box.append(t); };
  // Two label rows under the axis so "today" never collides with the ends of the range.
  label(L - 4, y(1) + 4, "1.0", "end"); label(L - 4, y(0) + 4, "0", "end");
  label(L, H - B + 14, `${Math.round(minD)} d`); label(W - 8, H - B + 14, `+${Math.round(maxD)} d`, "end");
  label(x(0), H - 4, "today", "middle");
  $("#d-curve-note").textContent = data.permanent ? "Permanent: recalled often enough never to fade." :
    "Solid: the past at today's recall count; dashed: projected if never recalled again; red: where gc archives.";
}

async function act(what) {
  if (!current) return;
  const id = current.id;
  try {
    if (what === "confirm") {
      fill(await api(`/api/bullets/${id}/confirm`, {}));
    } else if (what === "save") {
      const tags = $("#d-tags").value.split(",").map((t) => t.trim()).filter(Boolean);
      fill(await api("/api/bullets/" + id, { content: $("#d-content").value, tags }));
    } else {
      if (what === "forget" && !confirm("Erase this bullet for good?")) return;
      const data = await api(`/api/bullets/${id}/${what}`, {});
      if (data.bullet) fill(data);
      else if (what === "forget") { current = null; closeDetail(); }
      else fill(await api("/api/bullets/" + id));
    }
    fail("d", null);
    say(`${{ save: "Saved", forget: "Forgotten", archive: "Archived", confirm: "Confirmed" }[what] || "Restored"}: ${id}`);
    await loadBullets();
  } catch (e) { fail("d", e); }
}

async function search(event) {
  if (event) event.preventDefault();
  const q = $("#q").value.trim();
  if (!q) { fail("search", "type a query first"); return; }
  try {
    const scope = $("#s-scope").value;
    const r = await api("/api/search-marked?" + new URLSearchParams({ q, scope }));
    const limits = `recall returns at most ${r.max_results} bullet(s) within ${r.token_budget} tokens`;
    $("#search-info").replaceChildren(...withScopes(`${r.results.length} hit(s) in ${scopeLabel(scope)} · ` +
      (r.returned === null ? `${limits}; pick one scope to see which it would return` :
        `${limits}: the ${r.returned} marked ✓ are what the assistant would get`) +
      (r.omitted_by_budget ? ` (${r.omitted_by_budget} left out by the budget)` : "") +
      (r.notes && r.notes.length ? " · " + r.notes.join("; ") : ""), scope));
    const body = $("#results tbody");
    const rows = r.results.map((h, i) => {
      const s = h.score;
      const mark = h.returned === true ? "✓" : "";
      const row = el("tr", { "data-id": h.id, tabindex: "0", class: h.returned ? "returned" : "", "aria-label": "open bullet " + h.id },
        el("td", { "data-label": "rank" }, `${i + 1}${mark ? " " + mark : ""}`),
        el("td", { class: "c-content" }, clamped(h.content), el("div", { class: "muted small" }, `${h.id} · `, scopeText(h.scope), h.returned === true ? " · returned by recall" : h.returned === false ? " · not returned" : "")),
        // blended × decay (its effect on the ranking, not the weight) × recency × scope = final, as used
        ...[s.l1, s.l2, s.l3, s.semantic, s.blended, s.decay_effect, s.recency, s.scope, s.final].map((v, k) =>
          el("td", { class: "num", "data-label": ["L1", "L2", "L3", "semantic", "blended", "decay", "recency", "scope", "final"][k] }, k < 3 ? num(v, 1) : k === 3 ? num(v, 2) : factor(v))));
      row.addEventListener("click", () => openBullet(h.id, row));
      row.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); openBullet(h.id, row); } });
      return row;
    });
    body.replaceChildren(...rows);
    fail("search", null);
  } catch (e) { fail("search", e); }
}

function conflictQuery() { return new URLSearchParams({ scope: $("#c-scope").value, kind: $("#c-kind").value }); }

async function loadConflicts(render = true) {
  try {
    const data = await api("/api/conflicts-in?" + conflictQuery());
    // The badge counts exactly the cards this view shows with its current filters.
    $("#conflict-count").textContent = data.conflicts.length ? `(${data.conflicts.length})` : "";
    if (!render) return;
    $("#conflicts-info").replaceChildren(...withScopes(`${data.conflicts.length} open ${data.kind === "any" ? "contradiction(s) and overlap(s)" : data.kind + "(s)"} between active bullets in ${scopeLabel($("#c-scope").value)} (Stats counts all scopes, both kinds)`, $("#c-scope").value));
    const box = $("#conflicts");
    box.replaceChildren();
    $("#c-select-all").checked = false;
    if (!data.conflicts.length) box.append(el("p", { class: "muted" }, "No open conflicts."));
    for (const c of data.conflicts) {
      const side = (key, b) => el("div", { class: "side" + (c.recommended === key ? " recommended" : "") },
        el("strong", {}, key.toUpperCase() + " "), el("span", { class: "muted" }, `${b.id} · recalled ${b.recall_count}×`), clamped(b.content));
      const err = el("p", { class: "error", role: "alert", hidden: "" });
      const resolve = (keep) => async () => {
        try { await api(`/api/conflicts/${c.id}/resolve`, { keep }); say(`Resolved ${c.id}: kept ${keep}`); await loadConflicts(); }
        catch (e) { err.textContent = "Error: " + e.message; err.hidden = false; }
      };
      box.append(el("div", { class: "conflict", "data-id": c.id, "data-recommended": c.recommended },
        el("p", {}, el("input", { type: "checkbox", class: "pick", "aria-label": "select conflict " + c.id }), " ",
          el("span", { class: "kind-" + c.kind }, c.kind), ` · similarity ${num(c.similarity)} · `, scopeText(c.scope)),
        el("div", { class: "sides" }, side("a", c.a), side("b", c.b)),
        el("p", { class: "evidence" }, "Evidence: " + (c.evidence.join("; ") || "similar content")),
        el("p", { class: "muted" }, `Recommended: keep ${c.recommended} (${c.reason})`),
        err,
        el("div", { class: "bar" },
          el("button", { type: "button", onclick: resolve("a"), "data-keep": "a" }, "Keep A"),
          el("button", { type: "button", onclick: resolve("b"), "data-keep": "b" }, "Keep B"),
          el("button", { type: "button", onclick: resolve("both"), "data-keep": "both" }, "Keep both"),
          el("button", { type: "button", onclick: resolve("merge"), "data-keep": "merge" }, "Merge"))));
    }
    fail("conflicts", null);
  } catch (e) { fail("conflicts", e); }
}

async function bulk(recommended) {
  const picked = [...document.querySelectorAll("#conflicts .conflict")].filter((c) => c.querySelector(".pick").checked);
  if (!picked.length) { fail("conflicts", "select at least one conflict first"); return; }
  const failed = [];
  for (const card of picked) {
    const keep = recommended ? card.dataset.recommended : "both";
    try { await api(`/api/conflicts/${card.dataset.id}/resolve`, { keep }); }
    catch (e) { failed.push(`${card.dataset.id}: ${e.message}`); }
  }
  await loadConflicts();
  if (failed.length) fail("conflicts", failed.join("; "));
  say(`${picked.length - failed.length} conflict(s) ${recommended ? "resolved as recommended" : "dismissed"}`);
}

async function loadStats() {
  try {
    const [s, gc] = await Promise.all([api("/api/stats"), api("/api/gc-preview")]);
    // Each list says what it counts: the store's columns count every bullet (active and archived), the
    // histogram only the active ones (what recall sees), as the Bullets tab does.
    const list = (id, title, counts, none, scoped = false) => el("div", { id }, el("h3", {}, title),
      Object.keys(counts).length ?
        el("ul", {}, ...Object.entries(counts).map(([k, v]) => el("li", {}, ...(scoped ? [scopeText(k)] : [k]), `: ${fmt.format(v)}`))) :
        el("p", { class: "muted" }, none));
    const all = `all ${fmt.format(s.total)}: active and archived`;
    $("#stats").replaceChildren(
      el("p", {}, ...keepTokens(`${fmt.format(s.total)} bullets (${fmt.format(s.active)} active, ${fmt.format(s.archived)} archived) · ` +
        `${s.open_contradictions} open contradiction(s) and ${s.open_overlaps} overlap(s) between active bullets, all scopes · model ${s.model} · ${(s.store_bytes / 1048576).toFixed(1)} MiB`)),
      el("div", { class: "sides" }, list("by-scope", `By scope (${all})`, s.by_scope, "no bullets yet", true),
        list("by-section", `By section (${all})`, s.by_section, "no bullets yet")),
      el("div", { class: "sides" }, list("by-type", `By type (${all})`, s.by_type, "no bullets yet"),
        list("injections", "Context injections", s.injections, "None yet: no hook has injected context.")));
    $("#histogram-title").textContent = `Decay histogram of the ${fmt.format(s.active)} active bullets`;
    const bands = Object.entries(s.decay_histogram), top = Math.max(1, ...bands.map(([, v]) => v));
    $("#histogram").replaceChildren(...bands.map(([band, count]) =>
      el("button", { type: "button", class: "band" + (band.startsWith("<") ? " gc" : ""), "data-band": band,
        "aria-label": `${count} bullet(s) in band ${band}: list them`, onclick: () => filterBand(band) },
        el("span", { class: "count" }, fmt.format(count)),
        el("span", { class: "bar-fill", style: { height: `${Math.round(150 * count / top)}px` } }),
        el("span", { class: "band-label" }, ...band.split(" ").flatMap((w, i) => [...(i ? [" "] : []), el("span", { class: "word" }, w)])))));
    $("#gc-preview").replaceChildren(gc.would_archive ?
      el("span", {}, `These ${fmt.format(gc.would_archive)} would be archived by memx gc now. `,
        el("button", { type: "button", id: "gc-show", onclick: () => filterBand(gc.band) }, "Show them")) :
      el("span", { class: "muted" }, "memx gc would archive nothing now."));
    fail("stats", null);
  } catch (e) { fail("stats", e); }
}

function filterBand(band) {
  $("#f-band").value = band;
  $("#f-status").value = "active";
  $("#f-sort").value = "stalest";
  offset = 0;
  show("bullets");
}


// -- review: learned notes memx holds until the user says yes -------------------------------------------
const VOICES = {
  user: "the user's own words",
  assistant: "the assistant's actions and what it observed",
  content: "content: a tool's output, a fetched page or a file read",
};

async function loadReview(render = true, focusIndex = 0) {
  try {
    const data = await api("/api/review");
    $("#review-count").textContent = data.pending.length ? `(${data.pending.length})` : "";
    if (!render) return;
    $("#review-info").textContent = data.pending.length ?
      `${data.pending.length} learned note(s) wait for your review` : "Nothing waits for review.";
    $("#review-help").hidden = !data.pending.length;  // the explanation only above notes to answer
    const cards = data.pending.map(reviewCard);
    $("#review").replaceChildren(...cards);
    fail("review", null);
    if (cards.length) cards[Math.min(focusIndex, cards.length - 1)].focus();
  } catch (e) { fail("review", e); }
}

function reviewCard(p, index) {
  const b = p.bullet;
  const err = el("p", { class: "error", role: "alert", hidden: "" });
  const text = el("textarea", { rows: "4", "aria-label": "edited text of " + b.id });
  const editor = el("div", { class: "p-edit", hidden: "" }, el("label", {}, "Edited text (approved when saved)", text));
  const reasons = p.reasons.length ? el("ul", {}, ...p.reasons.map((r) => el("li", {}, r))) : "–";
  const card = el("article", { class: "pending", tabindex: "0", "data-id": b.id, "aria-label": "waiting note " + b.id },
    el("p", { class: "muted small" }, `${b.id} · `, scopeText(b.scope), ` · ${b.section}/${b.knowledge_type}`),
    el("p", { class: "p-content" }, ...keepTokens(b.content)),
    el("dl", { class: "p-prov" },
      el("dt", {}, "from"), el("dd", {}, p.said_by),
      el("dt", {}, "who said it"), el("dd", { class: p.voice === "content" ? "voice-content" : "" }, VOICES[p.voice] || "not known"),
      el("dt", {}, "held because"), el("dd", {}, reasons),
      el("dt", {}, "origin"), el("dd", {}, b.origin || "–")),
    el("details", { open: "" }, el("summary", {}, "Transcript excerpt (quoted, masked)"),
      el("pre", { class: "excerpt" }, p.excerpt || "(no excerpt kept)")),
    editor, err);
  const answer = async (action) => {
    try {
      const body = action === "edit" ? { content: text.value } : {};
      const done = await api(`/api/review/${b.id}/${action}`, body);
      const merged = done.result && done.result.action === "merged" ? ` (merged into ${done.result.merged_into})` : "";
      say(`${{ approve: "Approved", edit: "Edited and approved", reject: "Rejected" }[action]}: ${b.id}${merged}`);
      await loadReview(true, index);
    } catch (e) { err.textContent = "Error: " + e.message; err.hidden = false; }
  };
  const approve = el("button", { type: "button", class: "approve", onclick: () => answer("approve") }, "Approve ", el("kbd", {}, "a"));
  const edit = el("button", { type: "button", class: "edit" }, "Edit ", el("kbd", {}, "e"));
  const save = el("button", { type: "button", class: "save", hidden: "", onclick: () => answer("edit") }, "Save and approve");
  const cancel = el("button", { type: "button", class: "cancel", hidden: "" }, "Cancel");
  const reject = el("button", { type: "button", class: "reject danger", onclick: () => answer("reject") }, "Reject ", el("kbd", {}, "r"));
  const editing = (on) => {
    editor.hidden = !on; save.hidden = !on; cancel.hidden = !on; approve.hidden = on; edit.hidden = on;
    if (on) { text.value = b.content; text.focus(); } else card.focus();
  };
  edit.addEventListener("click", () => editing(true));
  cancel.addEventListener("click", () => editing(false));
  card.append(el("div", { class: "bar" }, approve, edit, save, cancel, reject));
  card.addEventListener("keydown", (e) => {
    if (e.target !== card || e.ctrlKey || e.metaKey || e.altKey) return;  // typing in the editor is typing
    if (e.key === "a") { e.preventDefault(); answer("approve"); }
    if (e.key === "e") { e.preventDefault(); editing(true); }
    if (e.key === "r") { e.preventDefault(); answer("reject"); }
  });
  text.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.preventDefault(); editing(false); } });
  return card;
}

// -- wiring ------------------------------------------------------------------------------------------
for (const [select, values] of [[$("#f-section"), SECTIONS], [$("#f-type"), TYPES]]) {
  for (const v of values) select.append(el("option", { value: v }, v));
}
for (const tab of document.querySelectorAll("nav button")) tab.addEventListener("click", () => show(tab.dataset.view));
let typing = null;
$("#filters").addEventListener("change", () => { offset = 0; loadBullets(); });
$("#filters").addEventListener("submit", (e) => { e.preventDefault(); offset = 0; loadBullets(); });
$("#f-text").addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(() => { offset = 0; loadBullets(); }, 250); });
$("#prev").addEventListener("click", () => { offset = Math.max(0, offset - PAGE); loadBullets(); });
$("#next").addEventListener("click", () => { if (offset + PAGE < total) { offset += PAGE; loadBullets(); } });
$("#search-form").addEventListener("submit", search);
$("#s-scope").addEventListener("change", () => { if ($("#q").value.trim()) search(); });
$("#c-filters").addEventListener("change", () => loadConflicts());
$("#c-select-all").addEventListener("change", (e) => { for (const box of document.querySelectorAll("#conflicts .pick")) box.checked = e.target.checked; });
$("#c-bulk-recommended").addEventListener("click", () => bulk(true));
$("#c-bulk-dismiss").addEventListener("click", () => bulk(false));
for (const what of ["save", "archive", "restore", "forget"]) $("#d-" + what).addEventListener("click", () => act(what));
$("#d-close").addEventListener("click", closeDetail);
$("#d-confirm").addEventListener("click", () => act("confirm"));
$("#d-stale-forget").addEventListener("click", () => act("archive"));  // memx's forget: archived, not erased
// A click on the backdrop (outside the dialog's box) closes it; Escape closes it natively.
$("#detail").addEventListener("click", (e) => {
  const r = e.currentTarget.getBoundingClientRect();
  const outside = e.clientX < r.left || e.clientX > r.right || e.clientY < r.top || e.clientY > r.bottom;
  if (e.target === e.currentTarget && outside) closeDetail();
});
$("#detail").addEventListener("close", () => {
  for (const row of document.querySelectorAll("tbody tr.selected")) row.classList.remove("selected");
  const back = opener && opener.isConnected ? opener : (opener && opener.dataset && document.querySelector(`tr[data-id='${opener.dataset.id}']`)) || $("#bullets");
  if (back === $("#bullets")) back.setAttribute("tabindex", "-1");
  back.focus();
});
document.addEventListener("keydown", (e) => {
  // a stale bullet open: one key confirms it still holds (c) or forgets it (f, archived)
  if ($("#detail").open && !$("#d-stale").hidden && !["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName)) {
    if (e.key === "c") { e.preventDefault(); act("confirm"); return; }
    if (e.key === "f") { e.preventDefault(); act("archive"); return; }
  }
  if (e.key === "/" && !$("#detail").open && !["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName)) { e.preventDefault(); show("search"); }
});
// The list first: the server answers one call at a time, and the badge can wait for it.
loadContext().then(loadBullets).then(() => loadConflicts(false)).then(() => loadReview(false));
