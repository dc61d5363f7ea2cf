/**
 * `GET /dashboard`: one page and its script, served by the service itself on both runtimes
 * (this module is bundled into the Worker and imported by the Deno entry alike). No CDN, font or
 * outside script: the charts are plain SVG drawn by the script below, which asks only this
 * origin's `/v1/stats` and `/v1/stats/sessions` (docs/stats.md "Dashboard" gives the page weight
 * against uPlot's). Everything the ledger holds, a session id included, is set as text
 * (`textContent`), never as HTML. With API_TOKENS set the page asks for a token and keeps it in
 * sessionStorage (this tab only).
 */

/** The page with whether `/v1/stats` takes a token (then it asks for one before any request). */
export function dashboardHtml(tokenRequired: boolean): string {
  return DASHBOARD_HTML.replace("{{token}}", tokenRequired ? "required" : "none");
}

/** No request leaves the origin, and no inline script runs. */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Savings · edge agent tools</title>
<link rel="icon" href="data:,">
<style>
  :root { --ink: #1d2330; --muted: #6b7385; --line: #e3e6ed; --paid: #d9534f; --avoided: #2e9d5b; --accent: #3466c2; --bg: #f7f8fa; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--bg); }
  header { display: flex; align-items: center; justify-content: space-between; padding: 16px 24px; background: #fff; border-bottom: 1px solid var(--line); }
  h1 { font-size: 18px; margin: 0; }
  h2 { font-size: 15px; margin: 20px 0 8px; }
  .windows button { border: 1px solid var(--line); background: #fff; padding: 6px 12px; cursor: pointer; font: inherit; }
  .windows button[aria-pressed="true"] { background: var(--accent); color: #fff; border-color: var(--accent); }
  main { padding: 16px 24px; max-width: 1200px; }
  #range { color: var(--muted); margin: 0 0 12px; }
  .headline { display: grid; grid-template-columns: 2fr 1fr; gap: 12px; margin-bottom: 12px; }
  .tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(200px, 1fr)); gap: 12px; margin-bottom: 16px; }
  .tile { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px; }
  .tile .label { color: var(--muted); font-size: 12px; }
  .tile .value { font-size: 24px; font-weight: 600; margin-top: 4px; }
  .tile.main .value { font-size: 36px; color: var(--avoided); }
  .tile.apart { background: #fafbfc; }
  .tile.apart .value { font-size: 20px; color: var(--muted); }
  .tile .sub { color: var(--muted); font-size: 12px; }
  .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 12px; }
  figure { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px; }
  figcaption { font-weight: 600; margin-bottom: 6px; }
  figcaption small { display: block; font-weight: 400; color: var(--muted); }
  .legend span { display: inline-block; margin-right: 12px; color: var(--muted); font-size: 12px; }
  .legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: middle; }
  svg { width: 100%; height: 180px; display: block; }
  svg text { font-size: 10px; fill: var(--muted); }
  table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
  th, td { padding: 6px 8px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
  th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
  td:first-child { max-width: 320px; overflow: hidden; text-overflow: ellipsis; font-family: ui-monospace, monospace; font-size: 12px; }
  th { color: var(--muted); font-weight: 500; font-size: 12px; }
  #login { max-width: 420px; margin: 48px auto; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 20px; }
  #login input { width: 100%; padding: 8px; font: inherit; margin: 8px 0; }
  #status { color: var(--muted); margin: 8px 0; min-height: 1.4em; }
  #loading { padding: 48px 24px; color: var(--muted); font-size: 16px; }
  #empty { background: #fff; border: 1px dashed var(--muted); border-radius: 6px; padding: 16px; margin-bottom: 16px; }
  code { background: #eef1f6; padding: 1px 4px; border-radius: 3px; }
  [hidden] { display: none !important; }
  main[data-stale] .tiles, main[data-stale] .headline, main[data-stale] .charts, main[data-stale] table { opacity: 0.35; }
</style>
</head>
<body data-token="{{token}}">
<header>
  <h1>Savings</h1>
  <nav class="windows" aria-label="Window">
    <button type="button" data-window="1h" title="The current clock hour so far (the ledger counts by the hour)">This hour</button><button type="button" data-window="24h" title="This clock hour and the 23 before it">24 hours</button><button type="button" data-window="7d" title="This clock hour and the 167 before it">7 days</button><button type="button" data-window="30d" title="This clock hour and the 719 before it">30 days</button>
  </nav>
</header>
<p id="loading" role="status">Loading the savings ledger…</p>
<section id="login" hidden>
  <p>This service needs a token (one of its <code>API_TOKENS</code>). It is kept for this tab only.</p>
  <form id="login-form"><input id="token" type="password" autocomplete="off" placeholder="Bearer token" aria-label="Token"><button type="submit">Show savings</button></form>
</section>
<main id="board" hidden>
  <div id="status" role="status"></div>
  <p id="range"></p>
  <div id="empty" hidden>
    <strong>Nothing was counted in this window.</strong>
    <p>The figures fill in as agents call this service: web searches and extracts, <code>vision_analyze</code>, and LLM calls through its provider proxy (<code>/anthropic/*</code>, <code>/openai/*</code>). To see it work with no keys and no network, run <code>npm run demo -- --serve</code> in the repository: it plays searches, extracts and a screenshot session against local emulators and keeps its own dashboard up.</p>
  </div>
  <div id="figures">
  <div class="headline">
    <div class="tile main"><div class="label">Saved by this service</div><div class="value" id="saved-usd">–</div><div class="sub" id="saved-parts"></div></div>
    <div class="tile apart"><div class="label">The provider's prompt caching (not this service's saving)</div><div class="value" id="cache-saved-usd">–</div><div class="sub">you get this with or without this service</div></div>
  </div>
  <div class="tiles">
    <div class="tile"><div class="label">web_search calls: paid / avoided</div><div class="value"><span id="search-paid">–</span> / <span id="search-avoided">–</span></div><div class="sub" id="search-saved"></div></div>
    <div class="tile"><div class="label">web_extract URLs: paid / avoided</div><div class="value"><span id="extract-paid">–</span> / <span id="extract-avoided">–</span></div><div class="sub" id="extract-saved"></div></div>
    <div class="tile"><div class="label">LLM requests: billed / as sent</div><div class="value"><span id="llm-billed">–</span> / <span id="llm-as-sent">–</span></div><div class="sub" id="llm-images"></div></div>
    <div class="tile"><div class="label">LLM cache read share</div><div class="value" id="llm-read-share">–</div><div class="sub" id="llm-share-of"></div></div>
    <div class="tile"><div class="label">Request bytes not sent (images fitted or retired)</div><div class="value" id="image-bytes-saved">–</div><div class="sub" id="image-bytes-parts"></div></div>
  </div>
  <h2>Sessions</h2>
  <table id="sessions"><thead><tr><th>Session</th><th>Model</th><th>Requests</th><th>Images fitted</th><th>Images retired</th><th>Billed</th><th>As sent</th><th>Saved</th><th>Last request</th></tr></thead><tbody></tbody></table>
  <p class="sub" id="sessions-note"></p>
  <h2>Per hour</h2>
  <div class="charts">
    <figure><figcaption>Saved by this service per hour (USD)<small>web calls avoided + LLM requests as sent − billed</small></figcaption><svg id="chart-saved" role="img" aria-label="Saved by this service per hour"></svg></figure>
    <figure><figcaption>web_search: provider calls per hour</figcaption><div class="legend"><span><i style="background:var(--paid)"></i>paid</span><span><i style="background:var(--avoided)"></i>avoided (hits + coalesced)</span></div><svg id="chart-search" role="img" aria-label="web_search calls paid and avoided"></svg></figure>
    <figure><figcaption>web_extract: provider calls per hour (URLs)</figcaption><div class="legend"><span><i style="background:var(--paid)"></i>paid</span><span><i style="background:var(--avoided)"></i>avoided (hits + coalesced)</span></div><svg id="chart-extract" role="img" aria-label="web_extract calls paid and avoided"></svg></figure>
    <figure><figcaption>LLM cache read share per hour<small>cache reads ÷ (uncached input + cache writes + cache reads)</small></figcaption><svg id="chart-llm" role="img" aria-label="LLM cache read share"></svg></figure>
    <figure><figcaption>Request bytes not sent per hour<small>bytes of images fitted or retired, kept out of requests</small></figcaption><svg id="chart-images" role="img" aria-label="Request bytes not sent"></svg></figure>
  </div>
  </div>
</main>
<script src="/dashboard/app.js"></script>
</body>
</html>
`;

/** The page's script: fetch /v1/stats and its sessions, fill the tiles and the table, draw the charts as SVG. */
export const DASHBOARD_JS = `"use strict";
(() => {
  const TOKEN_KEY = "edge-tools-token";
  const HOUR = 3600000;
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  let windowName = ["1h", "24h", "7d", "30d"].includes(params.get("window")) ? params.get("window") : "24h";
  // What each window spans: the ledger counts by the clock hour, so "1h" is this hour so far.
  const SPANS = {
    "1h": "this clock hour so far",
    "24h": "this clock hour and the 23 before it",
    "7d": "this clock hour and the 167 before it (7 days)",
    "30d": "this clock hour and the 719 before it (30 days)",
  };

  // A negative figure (a change that cost more than it saved) keeps its sign, a minus sign before
  // the unit as the page writes "as sent − billed": −$3.00, −2.9 KiB. One that rounds to zero
  // shows none ($0.0000, not −$0.0000).
  const signed = (n, text) => (n < 0 && /[1-9]/.test(text) ? "\u2212" : "") + text;
  const usd = (n) => {
    const a = Math.abs(n);
    return signed(n, "$" + (a >= 100 ? a.toFixed(0) : a >= 1 ? a.toFixed(2) : a.toFixed(4)));
  };
  const int = (n) => Math.round(n).toLocaleString("en-US");
  const bytes = (n) => {
    const size = Math.abs(n);
    return signed(n, size >= 1048576 ? (size / 1048576).toFixed(1) + " MiB" : size >= 1024 ? (size / 1024).toFixed(1) + " KiB" : int(size) + " B");
  };
  // Request bytes an image saving kept out: vision's bytes as the base64 they travel in, and the
  // proxy's request bytes; signed (a fit that came out larger is a negative saving).
  const visionSaved = (vision) => Math.round((((vision.bytes_in || 0) - (vision.bytes_out || 0)) * 4) / 3);
  const imageSaved = (vision, llm) => visionSaved(vision) + (llm.bytes_saved || 0);
  const pct = (n) => (n * 100).toFixed(1) + "%";
  const clock = (ms) => {
    const d = new Date(ms);
    return d.toLocaleDateString("en-US", { month: "short", day: "numeric" }) + " " + String(d.getHours()).padStart(2, "0") + ":" + String(d.getMinutes()).padStart(2, "0");
  };

  // Each load takes a number; an answer that is not the latest one's is dropped, so a slow answer
  // for an earlier window never replaces the window chosen since.
  let latest = 0;

  async function read(path, headers) {
    const res = await fetch(path, { headers });
    const text = await res.text();
    let body = null;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON (a platform's or a proxy's error page): reported by its status.
    }
    return { res, body };
  }

  async function load() {
    const requested = windowName;
    const ticket = ++latest;
    for (const b of document.querySelectorAll("[data-window]")) b.setAttribute("aria-pressed", String(b.dataset.window === requested));
    const token = sessionStorage.getItem(TOKEN_KEY);
    // The service says whether /v1/stats takes a token: without one, ask before any request.
    if (!token && document.body.dataset.token === "required") return askForToken();
    const headers = token ? { authorization: "Bearer " + token } : {};
    $("status").textContent = "Loading…";
    let stats, sessions;
    try {
      [stats, sessions] = await Promise.all([
        read("/v1/stats?window=" + requested, headers),
        read("/v1/stats/sessions?window=" + requested, headers).catch((error) => ({ error })),
      ]);
    } catch (error) {
      if (ticket === latest) failed("the service could not be reached (" + error.message + ")");
      return;
    }
    if (ticket !== latest) return;
    const { res, body } = stats;
    if (res.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      return askForToken();
    }
    if (!res.ok || !body || !body.success) {
      failed((body && body.error && body.error.message) || "HTTP " + res.status);
      return;
    }
    $("loading").hidden = true;
    $("login").hidden = true;
    $("board").hidden = false;
    delete $("board").dataset.stale;
    render(body, requested);
    renderSessions(sessions);
    $("status").textContent = "";
    document.body.dataset.loaded = requested;
  }

  /** Says why the figures could not be read; figures already shown are dimmed, not passed off as the new window's. */
  function failed(why) {
    $("loading").hidden = true;
    $("login").hidden = true;
    $("board").hidden = false;
    $("board").dataset.stale = "true";
    $("status").textContent = "Could not read /v1/stats: " + why;
    delete document.body.dataset.loaded;
  }

  function askForToken() {
    $("loading").hidden = true;
    $("board").hidden = true;
    $("login").hidden = false;
    $("token").focus();
  }

  /** Whether the window counted anything at all. */
  function counted(t) {
    return t.web_search.requests + t.web_extract.requests + t.vision.loads + t.vision.cap_refusals + t.evict.requests + t.llm.requests > 0;
  }

  function render(s, requested) {
    const t = s.totals;
    const from = Date.parse(s.from), to = Date.parse(s.to);
    $("range").textContent = "Showing " + SPANS[requested] + ": since " + clock(from) + ", to now (the ledger counts by the clock hour).";
    const empty = !counted(t);
    $("empty").hidden = !empty;
    $("figures").hidden = empty;
    document.body.dataset.empty = String(empty);
    if (empty) return;

    // The headline is the service's own saving: web calls avoided plus the LLM's as sent − billed
    // (signed); the provider's caching is apart (docs/stats.md).
    const webSaved = t.web_search.saved_usd + t.web_extract.saved_usd;
    $("saved-usd").textContent = usd(s.saved_usd);
    $("saved-parts").textContent = "web calls avoided " + usd(webSaved) + " + LLM requests as sent − billed " + usd(t.llm.saved_usd);
    $("cache-saved-usd").textContent = usd(t.llm.cache_saved_usd);
    $("search-paid").textContent = int(t.web_search.provider_calls);
    $("search-avoided").textContent = int(t.web_search.hits + t.web_search.coalesced);
    $("search-saved").textContent = usd(t.web_search.saved_usd) + " saved of " + int(t.web_search.requests) + " requests";
    $("extract-paid").textContent = int(t.web_extract.provider_calls);
    $("extract-avoided").textContent = int(t.web_extract.hits + t.web_extract.coalesced);
    $("extract-saved").textContent = usd(t.web_extract.saved_usd) + " saved of " + int(t.web_extract.requests) + " URLs";
    $("llm-billed").textContent = usd(t.llm.cost_usd);
    $("llm-as-sent").textContent = usd(t.llm.cost_as_sent_usd);
    $("llm-images").textContent = int(t.llm.requests) + " requests; " + int(t.llm.images_fitted) + " images fitted (" +
      int(t.llm.image_blocks_fitted) + " blocks sent fitted), " + int(t.llm.images_retired) + " images retired";
    $("llm-read-share").textContent = pct(readShare(t.llm));
    $("llm-share-of").textContent = "of " + int(promptTokens(t.llm)) + " prompt tokens";
    $("image-bytes-saved").textContent = bytes(imageSaved(t.vision, t.llm));
    $("image-bytes-parts").textContent = "by the LLM proxy " + bytes(t.llm.bytes_saved || 0) + ", by vision_analyze " + bytes(visionSaved(t.vision)) + " (as base64)";

    // One slot per hour of the window, so quiet hours show as gaps, not as missing time.
    const hours = [];
    for (let h = from; h < to; h += HOUR) hours.push(h);
    const at = new Map(s.series.map((p) => [Date.parse(p.t), p]));
    const of = (h, tool) => (at.get(h) || {})[tool] || {};
    // A series point answers only the tools counted in its hour: a tool absent saved nothing there.
    const savedPerHour = hours.map((h) => (of(h, "web_search").saved_usd || 0) + (of(h, "web_extract").saved_usd || 0) + (of(h, "llm").saved_usd || 0));
    bars($("chart-saved"), hours, [savedPerHour], ["#3466c2"], "usd");
    for (const [tool, id] of [["web_search", "chart-search"], ["web_extract", "chart-extract"]]) {
      const paid = hours.map((h) => of(h, tool).provider_calls || 0);
      const avoided = hours.map((h) => (of(h, tool).hits || 0) + (of(h, tool).coalesced || 0));
      bars($(id), hours, [paid, avoided], ["#d9534f", "#2e9d5b"], "count");
    }
    line($("chart-llm"), hours, hours.map((h) => { const l = of(h, "llm"); return l.requests ? readShare(l) : null; }));
    bars($("chart-images"), hours, [hours.map((h) => imageSaved(of(h, "vision"), of(h, "llm")))], ["#3466c2"], "bytes");
  }

  /** The sessions table: every cell set as text (a session id is the caller's). */
  function renderSessions(answer) {
    const body = $("sessions").tBodies[0];
    body.replaceChildren();
    const note = $("sessions-note");
    if (!answer || answer.error || !answer.res.ok || !answer.body || !Array.isArray(answer.body.sessions)) {
      note.textContent = "The sessions could not be read (" + (answer && answer.res ? "HTTP " + answer.res.status : "no answer") + ").";
      return;
    }
    const sessions = answer.body.sessions;
    note.textContent = sessions.length === 0
      ? "No request went through the LLM proxy in this window."
      : "Keyed by the caller's X-Session-Id, else the session the proxy derived (X-Edge-Session). Saved = as sent − billed.";
    for (const s of sessions) {
      const row = body.insertRow();
      row.dataset.session = s.session;
      const cells = [s.session, s.model, int(s.requests), int(s.images_fitted), int(s.images_retired), usd(s.cost_usd), usd(s.cost_as_sent_usd), usd(s.saved_usd), clock(Date.parse(s.last_at))];
      for (const text of cells) row.insertCell().textContent = text;
      row.cells[0].title = s.session;
    }
  }

  function promptTokens(l) {
    return (l.input_tokens || 0) + (l.cache_write_tokens || 0) + (l.cache_read_tokens || 0);
  }
  function readShare(l) {
    const prompt = promptTokens(l);
    return prompt ? (l.cache_read_tokens || 0) / prompt : 0;
  }

  /**
   * "Nice" gridlines from lo (0 or below) to hi (0 or above): steps of 1, 2 or 5 times a power of
   * ten, whole numbers for counts, at most about five intervals; the axis ends on a gridline, so
   * every gridline, the top one included, carries its value.
   */
  function ticks(lo, hi, whole) {
    if (hi <= lo) hi = lo + (whole ? 1 : 0.01);
    const rough = (hi - lo) / 5;
    const power = Math.pow(10, Math.floor(Math.log10(rough)));
    let step = [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= rough);
    if (whole) step = Math.max(1, Math.ceil(step));
    const first = Math.floor(lo / step + 1e-9), last = Math.ceil(hi / step - 1e-9);
    const values = [];
    for (let i = first; i <= last; i++) values.push(Number((i * step).toPrecision(12)));
    return { values, step };
  }
  const BYTE_UNITS = [[1073741824, "GiB"], [1048576, "MiB"], [1024, "KiB"], [1, "B"]];
  /** The gridlines of a chart of kind over [lo, hi], each with its label. */
  function axis(kind, lo, hi) {
    if (kind === "share") return [0, 0.25, 0.5, 0.75, 1].map((v) => ({ v, label: (v * 100).toFixed(0) + "%" }));
    if (kind === "bytes") {
      const [unit, name] = BYTE_UNITS.find(([u]) => Math.max(Math.abs(lo), Math.abs(hi)) >= u) || [1, "B"];
      const { values, step } = ticks(lo / unit, hi / unit, unit === 1);
      const decimals = unit === 1 ? 0 : Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
      return values.map((v) => ({ v: v * unit, label: signed(v, Math.abs(v).toFixed(decimals) + " " + name) }));
    }
    const { values, step } = ticks(lo, hi, kind === "count");
    if (kind === "count") return values.map((v) => ({ v, label: int(v) }));
    const decimals = Math.max(2, -Math.floor(Math.log10(step) + 1e-9));
    return values.map((v) => ({ v, label: signed(v, "$" + Math.abs(v).toFixed(decimals)) }));
  }

  const NS = "http://www.w3.org/2000/svg";
  const W = 600, H = 180, L = 64, B = 20, T = 8;
  function el(name, attrs, text) {
    const node = document.createElementNS(NS, name);
    for (const k in attrs) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  /** Draws the frame: a labelled gridline per tick, the hours below; returns the y of a value. */
  function frame(svg, hours, grid) {
    svg.replaceChildren();
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("preserveAspectRatio", "none");
    const min = grid[0].v, max = grid[grid.length - 1].v;
    const yOf = (v) => T + ((H - T - B) * (max - v)) / (max - min);
    for (const { v, label } of grid) {
      const y = yOf(v);
      svg.append(el("line", { class: "grid", x1: L, x2: W, y1: y, y2: y, stroke: v === 0 && min < 0 ? "#9aa3b5" : "#e3e6ed" }));
      svg.append(el("text", { class: "tick", x: L - 4, y: y + 3, "text-anchor": "end" }, label));
    }
    const step = Math.max(1, Math.ceil(hours.length / 6));
    hours.forEach((h, i) => {
      if (i % step) return;
      const d = new Date(h);
      const label = hours.length > 48 ? (d.getMonth() + 1) + "/" + d.getDate() : String(d.getHours()).padStart(2, "0") + ":00";
      svg.append(el("text", { class: "hour", x: L + ((W - L) * (i + 0.5)) / hours.length, y: H - 6, "text-anchor": "middle" }, label));
    });
    return yOf;
  }
  /** Stacked bars: one stack per hour, one layer per series; negative values hang below zero. */
  function bars(svg, hours, layers, colors, kind) {
    const sum = (i, sign) => layers.reduce((total, layer) => total + (Math.sign(layer[i]) === sign ? layer[i] : 0), 0);
    const max = Math.max(0, ...hours.map((_, i) => sum(i, 1)));
    const min = Math.min(0, ...hours.map((_, i) => sum(i, -1)));
    const yOf = frame(svg, hours, axis(kind, min, max));
    const slot = (W - L) / hours.length;
    hours.forEach((_, i) => {
      let up = 0, down = 0;
      layers.forEach((layer, k) => {
        const v = layer[i];
        if (!v) return;
        const from = v > 0 ? up : down;
        const to = from + v;
        if (v > 0) up = to;
        else down = to;
        const top = yOf(Math.max(from, to)), bottom = yOf(Math.min(from, to));
        svg.append(el("rect", { x: L + i * slot + slot * 0.1, y: top, width: Math.max(1, slot * 0.8), height: bottom - top, fill: colors[k], "data-value": v }));
      });
    });
  }
  /** A line of shares (0..1); null where the hour had no request. */
  function line(svg, hours, values) {
    const yOf = frame(svg, hours, axis("share"));
    const slot = (W - L) / hours.length;
    let path = "";
    values.forEach((v, i) => {
      if (v === null) return;
      const x = L + slot * (i + 0.5), y = yOf(v);
      path += (path ? " L" : "M") + x.toFixed(1) + " " + y.toFixed(1);
      svg.append(el("circle", { cx: x, cy: y, r: 3, fill: "#3466c2" }));
    });
    if (path) svg.append(el("path", { d: path, fill: "none", stroke: "#3466c2", "stroke-width": 2 }));
  }

  for (const b of document.querySelectorAll("[data-window]")) {
    b.addEventListener("click", () => {
      windowName = b.dataset.window;
      history.replaceState(null, "", "?window=" + windowName);
      load();
    });
  }
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const token = $("token").value.trim();
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    $("token").value = "";
    load();
  });
  load();
})();
`;
