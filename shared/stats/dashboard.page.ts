/**
 * `GET /dashboard`: one page and its script, served by the service itself on both runtimes
 * (this module is bundled into the Worker and imported by the Deno entry alike). No CDN, font or
 * outside script: the charts are plain SVG drawn by the script below, which asks only this
 * origin's `/v1/stats` (docs/stats.md "Dashboard" gives the page weight against uPlot's).
 * With API_TOKENS set the page asks for a token and keeps it in sessionStorage (this tab only).
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
  .windows button { border: 1px solid var(--line); background: #fff; padding: 6px 12px; cursor: pointer; font: inherit; }
  .windows button[aria-pressed="true"] { background: var(--accent); color: #fff; border-color: var(--accent); }
  main { padding: 16px 24px; max-width: 1200px; }
  .tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(180px, 1fr)); gap: 12px; margin-bottom: 16px; }
  .tile { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px; }
  .tile .label { color: var(--muted); font-size: 12px; }
  .tile .value { font-size: 24px; font-weight: 600; margin-top: 4px; }
  .tile .sub { color: var(--muted); font-size: 12px; }
  .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 12px; }
  figure { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 12px; }
  figcaption { font-weight: 600; margin-bottom: 6px; }
  .legend span { display: inline-block; margin-right: 12px; color: var(--muted); font-size: 12px; }
  .legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: middle; }
  svg { width: 100%; height: 180px; display: block; }
  svg text { font-size: 10px; fill: var(--muted); }
  #login { max-width: 420px; margin: 48px auto; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 20px; }
  #login input { width: 100%; padding: 8px; font: inherit; margin: 8px 0; }
  #status { color: var(--muted); margin: 8px 0; min-height: 1.4em; }
  [hidden] { display: none !important; }
  main[data-stale] .tiles, main[data-stale] .charts { opacity: 0.35; }
</style>
</head>
<body data-token="{{token}}">
<header>
  <h1>Savings</h1>
  <nav class="windows" aria-label="Window">
    <button type="button" data-window="1h">1h</button><button type="button" data-window="24h">24h</button><button type="button" data-window="7d">7d</button><button type="button" data-window="30d">30d</button>
  </nav>
</header>
<section id="login" hidden>
  <p>This service needs a token (one of its <code>API_TOKENS</code>). It is kept for this tab only.</p>
  <form id="login-form"><input id="token" type="password" autocomplete="off" placeholder="Bearer token" aria-label="Token"><button type="submit">Show savings</button></form>
</section>
<main id="board" hidden>
  <div id="status" role="status"></div>
  <div class="tiles">
    <div class="tile"><div class="label">Money saved</div><div class="value" id="saved-usd">–</div><div class="sub" id="range"></div></div>
    <div class="tile"><div class="label">web_search calls: paid / avoided</div><div class="value"><span id="search-paid">–</span> / <span id="search-avoided">–</span></div><div class="sub" id="search-saved"></div></div>
    <div class="tile"><div class="label">web_extract calls: paid / avoided</div><div class="value"><span id="extract-paid">–</span> / <span id="extract-avoided">–</span></div><div class="sub" id="extract-saved"></div></div>
    <div class="tile"><div class="label">LLM cache read share</div><div class="value" id="llm-read-share">–</div><div class="sub" id="llm-saved"></div></div>
    <div class="tile"><div class="label">Image bytes saved</div><div class="value" id="image-bytes-saved">–</div><div class="sub" id="image-loads"></div></div>
  </div>
  <div class="charts">
    <figure><figcaption>Money saved per hour (USD)</figcaption><svg id="chart-saved" role="img" aria-label="Money saved per hour"></svg></figure>
    <figure><figcaption>web_search: provider calls per hour</figcaption><div class="legend"><span><i style="background:var(--paid)"></i>paid</span><span><i style="background:var(--avoided)"></i>avoided (hits + coalesced)</span></div><svg id="chart-search" role="img" aria-label="web_search calls paid and avoided"></svg></figure>
    <figure><figcaption>web_extract: provider calls per hour</figcaption><div class="legend"><span><i style="background:var(--paid)"></i>paid</span><span><i style="background:var(--avoided)"></i>avoided (hits + coalesced)</span></div><svg id="chart-extract" role="img" aria-label="web_extract calls paid and avoided"></svg></figure>
    <figure><figcaption>LLM cache read share per hour</figcaption><svg id="chart-llm" role="img" aria-label="LLM cache read share"></svg></figure>
    <figure><figcaption>Image bytes saved per hour</figcaption><svg id="chart-images" role="img" aria-label="Image bytes saved"></svg></figure>
  </div>
</main>
<script src="/dashboard/app.js"></script>
</body>
</html>
`;

/** The page's script: fetch /v1/stats, fill the tiles, draw the charts as SVG. */
export const DASHBOARD_JS = `"use strict";
(() => {
  const TOKEN_KEY = "edge-tools-token";
  const HOUR = 3600000;
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(location.search);
  let windowName = ["1h", "24h", "7d", "30d"].includes(params.get("window")) ? params.get("window") : "24h";

  // A negative figure (cache writes that cost more than their reads saved) keeps its sign: -$3.00.
  const usd = (n) => {
    const a = Math.abs(n);
    return (n < 0 ? "-$" : "$") + (a >= 100 ? a.toFixed(0) : a >= 1 ? a.toFixed(2) : a.toFixed(4));
  };
  const int = (n) => Math.round(n).toLocaleString("en-US");
  const bytes = (n) => {
    const size = Math.abs(n), sign = n < 0 ? "-" : "";
    return sign + (size >= 1048576 ? (size / 1048576).toFixed(1) + " MiB" : size >= 1024 ? (size / 1024).toFixed(1) + " KiB" : int(size) + " B");
  };
  // Request bytes an image saving took out: vision's bytes as the base64 they travel in, and the
  // proxy's request bytes; signed (a fit that came out larger is a negative saving).
  const imageSaved = (vision, llm) =>
    Math.round((((vision.bytes_in || 0) - (vision.bytes_out || 0)) * 4) / 3) + (llm.bytes_saved || 0);
  const pct = (n) => (n * 100).toFixed(1) + "%";

  // Each load takes a number; an answer that is not the latest one's is dropped, so a slow answer
  // for an earlier window never replaces the window chosen since.
  let latest = 0;

  async function load() {
    const requested = windowName;
    const ticket = ++latest;
    for (const b of document.querySelectorAll("[data-window]")) b.setAttribute("aria-pressed", String(b.dataset.window === requested));
    const token = sessionStorage.getItem(TOKEN_KEY);
    // The service says whether /v1/stats takes a token: without one, ask before any request.
    if (!token && document.body.dataset.token === "required") return askForToken();
    const headers = token ? { authorization: "Bearer " + token } : {};
    $("status").textContent = "Loading…";
    let res, body = null;
    try {
      res = await fetch("/v1/stats?window=" + requested, { headers });
      const text = await res.text();
      try {
        body = JSON.parse(text);
      } catch {
        // Not JSON (a platform's or a proxy's error page): reported below by its status.
      }
    } catch (error) {
      if (ticket === latest) failed("the service could not be reached (" + error.message + ")");
      return;
    }
    if (ticket !== latest) return;
    if (res.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      return askForToken();
    }
    if (!res.ok || !body || !body.success) {
      failed((body && body.error && body.error.message) || "HTTP " + res.status);
      return;
    }
    $("login").hidden = true;
    $("board").hidden = false;
    delete $("board").dataset.stale;
    render(body);
    $("status").textContent = "";
    document.body.dataset.loaded = requested;
  }

  /** Says why the figures could not be read; figures already shown are dimmed, not passed off as the new window's. */
  function failed(why) {
    $("login").hidden = true;
    $("board").hidden = false;
    $("board").dataset.stale = "true";
    $("status").textContent = "Could not read /v1/stats: " + why;
    delete document.body.dataset.loaded;
  }

  function askForToken() {
    $("board").hidden = true;
    $("login").hidden = false;
    $("token").focus();
  }

  function render(s) {
    const t = s.totals;
    $("saved-usd").textContent = usd(s.saved_usd);
    $("range").textContent = new Date(s.from).toLocaleString() + " – " + new Date(s.to).toLocaleString();
    $("search-paid").textContent = int(t.web_search.provider_calls);
    $("search-avoided").textContent = int(t.web_search.hits + t.web_search.coalesced);
    $("search-saved").textContent = usd(t.web_search.saved_usd) + " saved of " + int(t.web_search.requests) + " requests";
    $("extract-paid").textContent = int(t.web_extract.provider_calls);
    $("extract-avoided").textContent = int(t.web_extract.hits + t.web_extract.coalesced);
    $("extract-saved").textContent = usd(t.web_extract.saved_usd) + " saved of " + int(t.web_extract.requests) + " URLs";
    $("llm-read-share").textContent = pct(readShare(t.llm));
    $("llm-saved").textContent = usd(t.llm.saved_usd) + " saved of " + int(t.llm.requests) + " requests";
    $("image-bytes-saved").textContent = bytes(imageSaved(t.vision, t.llm));
    $("image-loads").textContent = int(t.vision.loads) + " loads, " + int(t.vision.cap_refusals) + " embeds avoided";

    // One slot per hour of the window, so quiet hours show as gaps, not as missing time.
    const from = Date.parse(s.from), to = Date.parse(s.to);
    const hours = [];
    for (let h = from; h < to; h += HOUR) hours.push(h);
    const at = new Map(s.series.map((p) => [Date.parse(p.t), p]));
    const of = (h, tool) => (at.get(h) || {})[tool] || {};
    const savedPerHour = hours.map((h) => ["web_search", "web_extract", "llm"].reduce((sum, tool) => sum + (of(h, tool).saved_usd || 0), 0));
    bars($("chart-saved"), hours, [savedPerHour], ["#3466c2"], usd);
    for (const [tool, id] of [["web_search", "chart-search"], ["web_extract", "chart-extract"]]) {
      const paid = hours.map((h) => of(h, tool).provider_calls || 0);
      const avoided = hours.map((h) => (of(h, tool).hits || 0) + (of(h, tool).coalesced || 0));
      bars($(id), hours, [paid, avoided], ["#d9534f", "#2e9d5b"], int);
    }
    line($("chart-llm"), hours, hours.map((h) => { const l = of(h, "llm"); return l.requests ? readShare(l) : null; }), pct);
    bars($("chart-images"), hours, [hours.map((h) => imageSaved(of(h, "vision"), of(h, "llm")))], ["#3466c2"], bytes);
  }

  function readShare(l) {
    const prompt = (l.input_tokens || 0) + (l.cache_write_tokens || 0) + (l.cache_read_tokens || 0);
    return prompt ? (l.cache_read_tokens || 0) / prompt : 0;
  }

  const NS = "http://www.w3.org/2000/svg";
  const W = 600, H = 180, L = 56, B = 20, T = 8;
  function el(name, attrs, text) {
    const node = document.createElementNS(NS, name);
    for (const k in attrs) node.setAttribute(k, attrs[k]);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  /** The y of value v on a chart whose axis runs from min (0 or below) to max (above 0). */
  const yOf = (v, min, max) => T + ((H - T - B) * (max - v)) / (max - min);
  function frame(svg, hours, max, fmt, min = 0) {
    svg.replaceChildren();
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("preserveAspectRatio", "none");
    // Gridlines at the bottom, zero (or the middle) and the top; a label that reads as the one
    // below it (an empty chart's 0, 0.5 and 1 as whole numbers) is not repeated.
    let last = null;
    for (const v of min < 0 ? [min, 0, max] : [0, max / 2, max]) {
      const y = yOf(v, min, max);
      svg.append(el("line", { x1: L, x2: W, y1: y, y2: y, stroke: v === 0 && min < 0 ? "#9aa3b5" : "#e3e6ed" }));
      const label = fmt(v);
      if (label !== last) svg.append(el("text", { x: L - 4, y: y + 3, "text-anchor": "end" }, label));
      last = label;
    }
    const step = Math.max(1, Math.ceil(hours.length / 6));
    hours.forEach((h, i) => {
      if (i % step) return;
      const d = new Date(h);
      const label = hours.length > 48 ? (d.getMonth() + 1) + "/" + d.getDate() : String(d.getHours()).padStart(2, "0") + ":00";
      svg.append(el("text", { x: L + ((W - L) * (i + 0.5)) / hours.length, y: H - 6, "text-anchor": "middle" }, label));
    });
  }
  /** Stacked bars: one stack per hour, one layer per series; negative values hang below zero. */
  function bars(svg, hours, layers, colors, fmt) {
    const sum = (i, sign) => layers.reduce((total, layer) => total + (Math.sign(layer[i]) === sign ? layer[i] : 0), 0);
    const max = Math.max(0, ...hours.map((_, i) => sum(i, 1))) || 1;
    const min = Math.min(0, ...hours.map((_, i) => sum(i, -1)));
    frame(svg, hours, max, fmt, min);
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
        const top = yOf(Math.max(from, to), min, max), bottom = yOf(Math.min(from, to), min, max);
        svg.append(el("rect", { x: L + i * slot + slot * 0.1, y: top, width: Math.max(1, slot * 0.8), height: bottom - top, fill: colors[k] }));
      });
    });
  }
  /** A line of shares (0..1); null where the hour had no request. */
  function line(svg, hours, values, fmt) {
    frame(svg, hours, 1, fmt);
    const slot = (W - L) / hours.length;
    let path = "";
    values.forEach((v, i) => {
      if (v === null) return;
      const x = L + slot * (i + 0.5), y = yOf(v, 0, 1);
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
