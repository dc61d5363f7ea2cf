/**
 * Loopback provider emulator: one real HTTP server speaking every provider's API under its own
 * path prefix, counting calls, so tests pay nothing and nothing leaves the machine.
 * Markers in a query or URL steer single calls, so concurrent test files never step on each other.
 *
 * Point the service at it with `PROVIDERS_<NAME>_BASE_URL={url}/<name>` for every provider of the
 * table (scripts/local-stack.ts emulatorVars does), `AUXILIARY_VISION_BASE_URL={url}/openai/v1` and
 * `SECURITY_DNS_RESOLVER_URL={url}/dns-query`. Test pages live under `{url}/pages/...`
 * (article, huge?chars=N, latin1, latin1-meta, redirect?to=URL&status=302, empty, text, json, anything else).
 *
 * Markers: [fail:503] that status · [slow:1500] answer late · [empty] no results / empty page ·
 * [badjson] a non-JSON 200 · [auth] 401 unless the key is EMULATOR_API_KEY · [failed] extract APIs
 * report the URL as failed in-band, Firecrawl search answers a 200 `success: false` · [malformed:KIND] a 200 that breaks the documented shape
 * (empty-object, error, results-string, results-null, bad-items; an unrecognisable HTML page for
 * keyless) · [challenge:VENDOR] the page is a bot wall (cloudflare, cloudflare-blocked, hcaptcha,
 * recaptcha, akamai, datadome, perimeterx): served with its status to the direct provider, and as
 * the hosted readers render it by tavily, firecrawl and jina. /pages/contact is an ordinary page
 * with a captcha on its form. [bloat:N] pads search results' snippets to about N characters in all.
 * LLM APIs (Anthropic, OpenAI) under /llm/: test/emulator/llm.ts.
 * [gate:ID] holds the answer until the gate opens: POST /__gate/ID/open opens it, POST
 * /__gate/ID?after=N makes it open by itself once N calls naming it have arrived, GET /__gate/ID says
 * {arrived, open} (a test waits for its callers' calls there instead of sleeping), DELETE /__gate/ID
 * lets the calls held there through and closes it again with no arrivals (for the next round).
 * Control: GET /__calls?provider=&contains= · GET /__chat?contains= · POST /__dns {name, A, AAAA,
 * status, httpStatus, delayMs, ttl} (or an array) · POST /__reset (clears everything: not for shared runs).
 * `elsewhere`: a second listener (another port) that answers 404 to everything and records each
 * request as a call of provider "elsewhere" (its URL, whether it carried a key): where the LLM
 * emulator's `[redirect:STATUS]` points, so a test sees that nothing followed it.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { deflateSync } from "node:zlib";
import { DEFAULT_BASE_URLS, type ProviderBaseName } from "../../shared/web/providers/providers.catalog";
import { pathToFileURL } from "node:url";
import {
  ARTICLE_HTML,
  CHALLENGE_PAGES,
  MALFORMED_ANSWERS,
  MALFORMED_HTML,
  PAGE_WITH_CAPTCHA_FORM,
  duckDuckGoPage,
  escapeHtml,
  finalUrlFor,
  genericPage,
  hugePage,
  latin1PageBytes,
  pageMarkdownFor,
  readMarkers,
  resultsFor,
  RESULTS_PER_QUERY,
} from "./fixtures";
import { READER_PAGES } from "../fixtures/reader-pages";
import { createLlmEmulator, type LlmEmulator } from "./llm";
import { type DnsAnswer, startPlainDns } from "./dns.udp";

/** /pages/webforms: an ASP.NET WebForms article, the whole page in one <form> after its view state. */
const WEBFORMS_PAGE = READER_PAGES.find((page) => page.html.includes('id="aspnetForm"'))!;

/** The key `[auth]` calls must carry. Any other key (or none) gets a 401. */
export const EMULATOR_API_KEY = "emu-test-key-7c41d9a2";

export interface EmulatorCall {
  provider: string;
  path: string;
  method: string;
  query?: string;
  url?: string;
  count?: number;
  /** The request carried some credential (header or body field). The key itself is never kept. */
  has_key: boolean;
  /** The credential was EMULATOR_API_KEY. */
  key_ok: boolean;
  at: number;
}

export interface ChatRecord {
  model: string | null;
  image_data_url_length: number | null;
  media_type: string | null;
  question: string;
  has_key: boolean;
  at: number;
}

export interface DnsEntry {
  name: string;
  A?: string[];
  AAAA?: string[];
  /** DNS RCODE to answer with (0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN). */
  status?: number;
  /** Answer with this HTTP status instead of a DNS answer (resolver outage). */
  httpStatus?: number;
  delayMs?: number;
  /** TTL of every record in the answer, seconds (default 300). */
  ttl?: number;
  /**
   * What the plain DNS server (`dnsPort`, the runtime's own resolver) answers instead of `A` and
   * `AAAA`: a split-horizon or rebinding name, public over DoH and private here.
   */
  plain?: { A?: string[]; AAAA?: string[] };
}

export interface RunningEmulator {
  url: string;
  port: number;
  /** The second listener (see the module note). */
  elsewhere: string;
  /** The plain DNS server on 127.0.0.1 (UDP), answering from the same table (`DENO_DNS_SERVER`). */
  dnsPort: number;
  close(): Promise<void>;
}

interface State {
  calls: EmulatorCall[];
  chats: ChatRecord[];
  dns: Map<string, DnsEntry>;
  llm: LlmEmulator;
  gates: Map<string, Gate>;
}

/** A `[gate:ID]`: calls naming it wait until it opens (by POST /__gate/ID/open, or at `after` arrivals). */
interface Gate {
  arrived: number;
  after: number | null;
  open: boolean;
  opened: Promise<void>;
  release(): void;
}

interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  body: Buffer;
  state: State;
}

/** Over the service's own 64 MiB, so a body the proxy streams through unread (a file upload) arrives. */
const MAX_BODY_BYTES = 128 * 1024 * 1024;

/**
 * Start the emulator on 127.0.0.1 (port 0 picks a free one).
 *
 * @example
 * const emulator = await startEmulator();
 * // PROVIDERS_TAVILY_BASE_URL = `${emulator.url}/tavily`
 * await emulator.close();
 */
export async function startEmulator(opts: { port?: number } = {}): Promise<RunningEmulator> {
  let elsewhereUrl = "";
  const gates = new Map<string, Gate>();
  const state: State = {
    calls: [],
    chats: [],
    dns: new Map(),
    gates,
    llm: createLlmEmulator({ elsewhere: () => elsewhereUrl, gate: (subject) => passGate(gates, subject) }),
  };
  const elsewhere = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const keyed = Boolean(req.headers.authorization || req.headers["x-api-key"] || req.headers.cookie);
      state.calls.push({
        provider: "elsewhere",
        path: new URL(req.url ?? "/", "http://elsewhere.local").pathname,
        method: req.method ?? "GET",
        url: req.url ?? "/",
        has_key: keyed,
        key_ok: false,
        at: Date.now(),
      });
      sendJson(res, 404, { error: "nothing here" });
    });
  });
  await new Promise<void>((resolve, reject) => {
    elsewhere.once("error", reject);
    elsewhere.listen(0, "127.0.0.1", () => resolve());
  });
  elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
  const server = createServer((req, res) => {
    res.on("error", () => {});
    req.on("error", () => {});
    void handle(req, res, state).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: "emulator failure" });
      else res.destroy();
    });
  });
  // An idle connection is kept a minute, as the providers' load balancers keep it, not Node's 5 s:
  // between two calls the proxy may fit images for longer than 5 s, and a connection the server
  // closed just as workerd reused it failed the call (502) in the proxy bench.
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 61_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const plainDns = await startPlainDns((name, type) => tableAnswer(state, name, type, "plain"));
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    elsewhere: elsewhereUrl,
    dnsPort: plainDns.port,
    close: async () => {
      await plainDns.close();
      for (const gate of gates.values()) gate.release();
      await new Promise<void>((resolve) => {
        elsewhere.closeAllConnections();
        elsewhere.close(() => resolve());
      });
      await new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      });
    },
  };
}

/**
 * Each provider's emulated API by its path under `/<name>`, keyed by the provider table
 * (shared/web/providers/providers.catalog.ts): a provider added there without an emulation here
 * fails the typecheck. null: no such path.
 */
const PROVIDER_APIS: Record<ProviderBaseName, (ex: Exchange, path: string) => Promise<void> | null> = {
  tavily: (ex, path) => (path === "/search" ? tavilySearch(ex) : path === "/extract" ? tavilyExtract(ex) : null),
  brave: (ex, path) => (path === "/res/v1/web/search" ? braveSearch(ex) : null),
  exa: (ex, path) => (path === "/search" ? exaSearch(ex) : null),
  firecrawl: (ex, path) =>
    path === "/v1/search" ? firecrawlSearch(ex) : path === "/v1/scrape" ? firecrawlScrape(ex) : null,
  searxng: (ex, path) => (path === "/search" ? searxngSearch(ex) : null),
  keyless: (ex, path) => (path === "/html/" || path === "/html" ? keylessSearch(ex) : null),
  jina: (ex, path) => (path.startsWith("/") ? jinaRead(ex) : null),
};

async function handle(req: IncomingMessage, res: ServerResponse, state: State): Promise<void> {
  const url = new URL(req.url ?? "/", "http://emulator.local");
  const body = await readBody(req);
  if (body === null) return sendJson(res, 413, { error: "body too large" });
  const ex: Exchange = { req, res, url, body, state };
  const path = url.pathname;

  if (path.startsWith("/__")) return control(ex);
  if (path.startsWith("/llm/")) return state.llm.handle(req, res, url, body); // test/emulator/llm.ts
  const prefix = path.split("/")[1] ?? "";
  if (Object.hasOwn(PROVIDER_APIS, prefix)) {
    const answered = PROVIDER_APIS[prefix as ProviderBaseName](ex, path.slice(prefix.length + 1));
    if (answered) return answered;
  }
  if (path === "/openai/v1/chat/completions") return chatCompletion(ex);
  if (path === "/dns-query") return dnsQuery(ex);
  if (path === "/pages" || path.startsWith("/pages/")) return testPage(ex);
  return sendJson(res, 404, { error: `no emulated API at ${path}` });
}

// ---------------------------------------------------------------------------------------------
// Control API

function control(ex: Exchange): void {
  const { url, req, res, state } = ex;
  if (url.pathname === "/__calls" && req.method === "GET") {
    const provider = url.searchParams.get("provider");
    const contains = url.searchParams.get("contains");
    const calls = state.calls.filter(
      (c) =>
        (!provider || c.provider === provider) &&
        (!contains || (c.query ?? "").includes(contains) || (c.url ?? "").includes(contains)),
    );
    return sendJson(res, 200, { count: calls.length, calls });
  }
  if (url.pathname === "/__chat" && req.method === "GET") {
    const contains = url.searchParams.get("contains");
    const requests = state.chats.filter((c) => !contains || c.question.includes(contains));
    return sendJson(res, 200, { count: requests.length, requests });
  }
  if (url.pathname === "/__reset" && req.method === "POST") {
    for (const gate of state.gates.values()) gate.release();
    state.gates.clear();
    state.calls.length = 0;
    state.chats.length = 0;
    state.dns.clear();
    state.llm.reset();
    return sendJson(res, 200, { ok: true });
  }
  if (url.pathname === "/__dns" && req.method === "POST") {
    const parsed = parseJson(ex.body);
    const entries = Array.isArray(parsed) ? parsed : [parsed];
    for (const entry of entries) {
      if (!isRecord(entry) || typeof entry.name !== "string" || !entry.name)
        return sendJson(res, 400, { error: "each entry needs a name" });
      const name = normalizeDnsName(entry.name);
      state.dns.set(name, {
        name,
        A: stringList(entry.A),
        AAAA: stringList(entry.AAAA),
        status: typeof entry.status === "number" ? entry.status : undefined,
        httpStatus: typeof entry.httpStatus === "number" ? entry.httpStatus : undefined,
        delayMs: typeof entry.delayMs === "number" ? entry.delayMs : undefined,
        ttl: typeof entry.ttl === "number" ? entry.ttl : undefined,
        plain: isRecord(entry.plain) ? { A: stringList(entry.plain.A), AAAA: stringList(entry.plain.AAAA) } : undefined,
      });
    }
    return sendJson(res, 200, { ok: true, names: state.dns.size });
  }
  const gateCall = /^\/__gate\/([\w-]{1,64})(\/open)?$/.exec(url.pathname);
  if (gateCall) {
    if (req.method === "DELETE" && !gateCall[2]) {
      state.gates.get(gateCall[1]!)?.release();
      state.gates.delete(gateCall[1]!);
    }
    const gate = gateOf(state.gates, gateCall[1]!);
    if (req.method === "POST" && gateCall[2]) gate.release();
    else if (req.method === "POST") {
      gate.after = Math.max(1, intParam(url, "after", 1));
      if (gate.arrived >= gate.after) gate.release();
    }
    return sendJson(res, 200, { arrived: gate.arrived, open: gate.open });
  }
  if (url.pathname === "/__health") return sendJson(res, 200, { ok: true });
  return sendJson(res, 404, { error: `unknown control path ${url.pathname}` });
}

// ---------------------------------------------------------------------------------------------
// Search APIs

async function tavilySearch(ex: Exchange): Promise<void> {
  const body = jsonBody(ex);
  if (!body) return sendJson(ex.res, 400, { detail: { error: "Invalid JSON body" } });
  const key = bearer(ex.req) ?? str(body.api_key);
  const query = str(body.query) ?? "";
  const count = typeof body.max_results === "number" ? body.max_results : 5;
  if (!(await gate(ex, { provider: "tavily", query, count, key }, query))) return;
  if (count < 0 || count > 20)
    return sendJson(ex.res, 400, { detail: { error: "max_results must be between 0 and 20" } });
  const results = resultsFor(query, 0, count).map((r, i) => ({
    title: r.title,
    url: r.url,
    content: r.snippet,
    score: round(0.99 - i * 0.01),
    raw_content: null,
  }));
  sendJson(ex.res, 200, { query, follow_up_questions: null, answer: null, images: [], results, response_time: 0.42 });
}

async function braveSearch(ex: Exchange): Promise<void> {
  const query = ex.url.searchParams.get("q") ?? "";
  const count = intParam(ex.url, "count", 20);
  const offset = intParam(ex.url, "offset", 0);
  const key = header(ex.req, "x-subscription-token");
  if (!(await gate(ex, { provider: "brave", query, count, key }, query))) return;
  if (count < 1 || count > 20 || offset < 0 || offset > 9) {
    return sendJson(ex.res, 422, {
      type: "ErrorResponse",
      error: { code: "VALIDATION", detail: "count must be 1..20 and offset 0..9", status: 422 },
    });
  }
  const page = resultsFor(query, offset * count, count);
  const more = !readMarkers(query).empty && (offset + 1) * count < RESULTS_PER_QUERY;
  sendJson(ex.res, 200, {
    type: "search",
    query: { original: query, more_results_available: more },
    mixed: { type: "mixed", main: page.map((_, index) => ({ type: "web", index, all: false })) },
    web: {
      type: "search",
      family_friendly: true,
      results: page.map((r) => ({
        type: "search_result",
        title: escapeHtml(r.title),
        url: r.url,
        description: `Snippet ${r.n}: what the web says about <strong>${escapeHtml(query)}</strong>.`,
        is_source_local: false,
        language: "en",
        profile: { name: "Example", url: "https://example.com", long_name: "example.com" },
      })),
    },
  });
}

async function exaSearch(ex: Exchange): Promise<void> {
  const body = jsonBody(ex);
  if (!body) return sendJson(ex.res, 400, { error: "Invalid JSON body" });
  const query = str(body.query) ?? "";
  const count = typeof body.numResults === "number" ? body.numResults : 10;
  const key = header(ex.req, "x-api-key") ?? bearer(ex.req);
  if (!(await gate(ex, { provider: "exa", query, count, key }, query))) return;
  if (count < 1 || count > 100) return sendJson(ex.res, 400, { error: "numResults must be between 1 and 100" });
  const contents = isRecord(body.contents) ? body.contents : {};
  const results = resultsFor(query, 0, count).map((r, i) => ({
    id: r.url,
    title: r.title,
    url: r.url,
    publishedDate: "2025-01-15T00:00:00.000Z",
    author: null,
    score: round(0.9 - i * 0.005),
    ...(contents.text ? { text: r.snippet } : {}),
  }));
  sendJson(ex.res, 200, {
    requestId: `req-${Date.now()}`,
    resolvedSearchType: "neural",
    results,
    costDollars: { total: 0.005 },
  });
}

async function firecrawlSearch(ex: Exchange): Promise<void> {
  const body = jsonBody(ex);
  if (!body) return sendJson(ex.res, 400, { success: false, error: "Invalid JSON body" });
  const query = str(body.query) ?? "";
  const count = typeof body.limit === "number" ? body.limit : 5;
  if (!(await gate(ex, { provider: "firecrawl", query, count, key: bearer(ex.req) }, query))) return;
  if (count < 1 || count > 100)
    return sendJson(ex.res, 400, { success: false, error: "limit must be between 1 and 100" });
  if (readMarkers(query).failed)
    return sendJson(ex.res, 200, { success: false, error: "upstream-body-detail: search engine unavailable" });
  const data = resultsFor(query, 0, count).map((r) => ({ url: r.url, title: r.title, description: r.snippet }));
  sendJson(ex.res, 200, { success: true, data, warning: null });
}

/** SearXNG decides its own page size; 10 per page, `pageno` from 1. */
async function searxngSearch(ex: Exchange): Promise<void> {
  const query = ex.url.searchParams.get("q") ?? "";
  const pageno = intParam(ex.url, "pageno", 1);
  if (!(await gate(ex, { provider: "searxng", query, count: 10, key: bearer(ex.req) }, query))) return;
  if (ex.url.searchParams.get("format") !== "json") return sendText(ex.res, 403, "text/html", "<h1>403 Forbidden</h1>");
  const results = resultsFor(query, (Math.max(1, pageno) - 1) * 10, 10).map((r, i) => ({
    url: r.url,
    title: r.title,
    content: r.snippet,
    engine: "duckduckgo",
    engines: ["duckduckgo", "brave"],
    positions: [i + 1],
    score: round(2 - i * 0.1),
    category: "general",
  }));
  sendJson(ex.res, 200, {
    query,
    number_of_results: 0,
    results,
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: [],
    unresponsive_engines: [],
  });
}

async function keylessSearch(ex: Exchange): Promise<void> {
  const form = ex.req.method === "POST" ? new URLSearchParams(ex.body.toString("utf8")) : ex.url.searchParams;
  const query = form.get("q") ?? "";
  if (!(await gate(ex, { provider: "keyless", query, key: undefined }, query))) return;
  sendText(ex.res, 200, "text/html; charset=UTF-8", duckDuckGoPage(query, resultsFor(query, 0, 30)));
}

// ---------------------------------------------------------------------------------------------
// Extract APIs

async function tavilyExtract(ex: Exchange): Promise<void> {
  const body = jsonBody(ex);
  if (!body) return sendJson(ex.res, 400, { detail: { error: "Invalid JSON body" } });
  const urls = typeof body.urls === "string" ? [body.urls] : (stringList(body.urls) ?? []);
  const subject = urls.join(" ");
  if (
    !(await gate(
      ex,
      { provider: "tavily", url: subject, count: urls.length, key: bearer(ex.req) ?? str(body.api_key) },
      subject,
    ))
  )
    return;
  const results: unknown[] = [];
  const failed: unknown[] = [];
  for (const url of urls) {
    const wall = challengeOf(url);
    if (readMarkers(url).failed) failed.push({ url, error: "Failed to fetch url" });
    else if (wall) results.push({ url, raw_content: `# ${wall.title}\n\n${wall.markdown}`, images: [] });
    else results.push({ url, raw_content: pageMarkdownFor(url).markdown, images: [] });
  }
  sendJson(ex.res, 200, { results, failed_results: failed, response_time: 0.8 });
}

async function firecrawlScrape(ex: Exchange): Promise<void> {
  const body = jsonBody(ex);
  if (!body) return sendJson(ex.res, 400, { success: false, error: "Invalid JSON body" });
  const url = str(body.url) ?? "";
  if (!(await gate(ex, { provider: "firecrawl", url, key: bearer(ex.req) }, url))) return;
  if (readMarkers(url).failed) return sendJson(ex.res, 200, { success: false, error: "Failed to scrape the page" });
  const wall = challengeOf(url);
  if (wall) {
    return sendJson(ex.res, 200, {
      success: true,
      data: { markdown: wall.markdown, metadata: { title: wall.title, sourceURL: url, url, statusCode: wall.status } },
    });
  }
  const page = pageMarkdownFor(url);
  sendJson(ex.res, 200, {
    success: true,
    data: {
      markdown: page.markdown,
      metadata: {
        title: page.title,
        language: "en",
        sourceURL: url,
        url: finalUrlFor(url),
        statusCode: 200,
      },
    },
  });
}

/** Jina Reader: the target URL is the rest of the path, as given. */
async function jinaRead(ex: Exchange): Promise<void> {
  // Kept exactly as sent: Jina reads everything after the first slash as the target URL.
  const url = (ex.req.url ?? "").slice("/jina/".length);
  if (!(await gate(ex, { provider: "jina", url, key: bearer(ex.req) }, url))) return;
  if (readMarkers(url).failed)
    return sendJson(ex.res, 422, {
      data: null,
      code: 422,
      name: "AssertionFailureError",
      status: 42206,
      message: "Failed to fetch the page",
    });
  const wall = challengeOf(url);
  const page = wall ? { title: wall.title, markdown: wall.markdown } : pageMarkdownFor(url);
  if ((header(ex.req, "accept") ?? "").includes("application/json")) {
    return sendJson(ex.res, 200, {
      code: 200,
      status: 20000,
      data: {
        title: page.title,
        description: "",
        url,
        content: page.markdown,
        usage: { tokens: Math.ceil(page.markdown.length / 4) },
      },
    });
  }
  sendText(
    ex.res,
    200,
    "text/plain; charset=utf-8",
    `Title: ${page.title}\n\nURL Source: ${url}\n\nMarkdown Content:\n${page.markdown}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Auxiliary vision model (OpenAI-compatible chat completions)

async function chatCompletion(ex: Exchange): Promise<void> {
  const body = jsonBody(ex);
  if (!body) return sendJson(ex.res, 400, { error: { message: "Invalid JSON body", type: "invalid_request_error" } });
  const model = str(body.model) ?? null;
  const { question, imageUrl } = readChatMessages(body.messages);
  const key = bearer(ex.req);
  const dataUrl = imageUrl && /^data:([^;,]+)[;,]/i.exec(imageUrl);
  const record: ChatRecord = {
    model,
    image_data_url_length: imageUrl ? imageUrl.length : null,
    media_type: dataUrl ? (dataUrl[1] ?? null) : null,
    question,
    has_key: Boolean(key),
    at: Date.now(),
  };
  ex.state.chats.push(record);
  if (!(await gate(ex, { provider: "openai", query: question, key }, question))) return;
  const description = imageUrl
    ? `Emulated description: received one ${record.media_type ?? "linked"} image as a data URL of ${record.image_data_url_length} characters. Question: ${question || "(none)"}`
    : `Emulated description: no image received. Question: ${question || "(none)"}`;
  sendJson(ex.res, 200, {
    id: `chatcmpl-emu-${ex.state.chats.length}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: model ?? "emulated-vision",
    choices: [{ index: 0, message: { role: "assistant", content: description }, finish_reason: "stop" }],
    usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  });
}

function readChatMessages(messages: unknown): { question: string; imageUrl: string | null } {
  const texts: string[] = [];
  let imageUrl: string | null = null;
  for (const message of Array.isArray(messages) ? messages : []) {
    if (!isRecord(message) || message.role === "system") continue;
    const parts =
      typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : Array.isArray(message.content)
          ? message.content
          : [];
    for (const part of parts) {
      if (!isRecord(part)) continue;
      if (part.type === "text" && typeof part.text === "string") texts.push(part.text);
      if (part.type === "image_url") {
        const image = part.image_url;
        imageUrl ??= typeof image === "string" ? image : isRecord(image) ? (str(image.url) ?? null) : null;
      }
    }
  }
  return { question: texts.join("\n"), imageUrl };
}

// ---------------------------------------------------------------------------------------------
// DNS over HTTPS (JSON), answers from the table set through POST /__dns

/** Names the emulated DNS answers with a public address by default (RFC 2606 example domains). */
export const PUBLIC_TEST_DOMAIN = /(^|\.)example\.(com|org|net)$/;
const PUBLIC_TEST_ADDRESS = "93.184.215.14";

const DNS_TYPES: Record<string, number> = { A: 1, AAAA: 28, "1": 1, "28": 28 };

async function dnsQuery(ex: Exchange): Promise<void> {
  const rawName = ex.url.searchParams.get("name") ?? "";
  const type = DNS_TYPES[(ex.url.searchParams.get("type") ?? "A").toUpperCase()];
  const name = normalizeDnsName(rawName);
  ex.state.calls.push({
    provider: "dns",
    path: ex.url.pathname,
    method: ex.req.method ?? "GET",
    query: name,
    has_key: false,
    key_ok: false,
    at: Date.now(),
  });
  if (!name || type === undefined)
    return sendJson(ex.res, 400, { Status: 1, Comment: "name and type A or AAAA are required" });
  const entry = ex.state.dns.get(name);
  if (entry?.delayMs) await sleep(entry.delayMs);
  if (entry?.httpStatus) return sendJson(ex.res, entry.httpStatus, { error: "resolver unavailable" });
  const question = [{ name: `${name}.`, type }];
  const base = { TC: false, RD: true, RA: true, AD: false, CD: false, Question: question };
  const answer = tableAnswer(ex.state, name, type === 1 ? "A" : "AAAA", "doh");
  const Answer = answer.addresses.map((data) => ({ name: `${name}.`, type, TTL: answer.ttl, data }));
  sendDnsJson(ex.res, { Status: answer.rcode, ...base, ...(answer.rcode === 0 && Answer.length ? { Answer } : {}) });
}

/**
 * What the table says of `name`, for DNS-over-HTTPS or for the plain DNS server (`plain`: an
 * entry's `plain` addresses where it has them). A name not in the table is public when it is an
 * example.com/.org/.net name (the emulated internet), else NXDOMAIN.
 */
function tableAnswer(state: State, name: string, type: "A" | "AAAA", server: "doh" | "plain"): DnsAnswer {
  const entry = state.dns.get(normalizeDnsName(name));
  if (!entry) {
    if (!PUBLIC_TEST_DOMAIN.test(name)) return { rcode: 3, addresses: [], ttl: 300 };
    return { rcode: 0, addresses: type === "A" ? [PUBLIC_TEST_ADDRESS] : [], ttl: 300 };
  }
  const addresses = ((server === "plain" ? entry.plain : undefined) ?? entry)[type] ?? [];
  return { rcode: entry.status ?? 0, addresses, ttl: entry.ttl ?? 300 };
}

function normalizeDnsName(name: string): string {
  return name.trim().toLowerCase().replace(/\.+$/, "");
}

function sendDnsJson(res: ServerResponse, body: unknown): void {
  sendText(res, 200, "application/dns-json", JSON.stringify(body));
}

// ---------------------------------------------------------------------------------------------
// Test pages for the direct extractor

async function testPage(ex: Exchange): Promise<void> {
  const { url, res } = ex;
  const target = url.pathname + url.search;
  if (!(await gate(ex, { provider: "pages", url: target, key: undefined }, target))) return;
  const markers = readMarkers(target);
  const name = url.pathname.replace(/^\/pages\/?/, "");
  if (markers.empty || name === "empty") return sendText(res, 200, "text/html; charset=utf-8", "");
  const wall = challengeOf(target);
  if (wall) return sendText(res, wall.status, "text/html; charset=UTF-8", wall.html);
  if (name === "contact") return sendText(res, 200, "text/html; charset=utf-8", PAGE_WITH_CAPTCHA_FORM);
  if (name === "webforms") return sendText(res, 200, "text/html; charset=utf-8", WEBFORMS_PAGE.html);
  if (name === "article") return sendText(res, 200, "text/html; charset=utf-8", ARTICLE_HTML);
  if (name === "huge") {
    const chars = Math.min(Math.max(intParam(url, "chars", 100_000), 0), 50_000_000);
    return sendText(res, 200, "text/html; charset=utf-8", hugePage(chars));
  }
  if (name === "latin1") return sendBytes(res, 200, "text/html; charset=windows-1252", latin1PageBytes(false));
  if (name === "latin1-meta") return sendBytes(res, 200, "text/html", latin1PageBytes(true));
  if (name === "loop") {
    res.writeHead(302, { location: target, "content-length": "0" });
    return void res.end();
  }
  if (name === "hops") {
    // /pages/hops?n=K redirects K times (relative Location), then serves the article.
    const left = intParam(url, "n", 0);
    if (left <= 0) return sendText(res, 200, "text/html; charset=utf-8", ARTICLE_HTML);
    const next = new URLSearchParams(url.search);
    next.set("n", String(left - 1));
    res.writeHead(302, { location: `/pages/hops?${next}`, "content-length": "0" });
    return void res.end();
  }
  if (name === "redirect") {
    const to = url.searchParams.get("to") ?? "/pages/article";
    const status = intParam(url, "status", 302);
    res.writeHead([301, 302, 303, 307, 308].includes(status) ? status : 302, { location: to, "content-length": "0" });
    return void res.end();
  }
  if (name === "image.png")
    return sendBytes(res, 200, "image/png", gradientPng(intParam(url, "w", 640), intParam(url, "h", 400)));
  if (name === "junk.bin") return sendBytes(res, 200, "application/octet-stream", new Uint8Array(2048).fill(0x5a));
  // Plain text with what markdown and HTML would read as markup, and a UTF-8 é under a header with no charset.
  if (name === "text")
    return sendText(
      res,
      200,
      "text/plain",
      'Plain text page: 2*3*4, __init__.py, [x](y) and <meta charset="iso-8859-1"> caf\u00e9.\nSecond line.',
    );
  if (name === "json") return sendJson(res, 200, { page: "json", ok: true });
  return sendText(res, 200, "text/html; charset=utf-8", genericPage(url.pathname));
}

// ---------------------------------------------------------------------------------------------
// Shared behaviour: record the call, then apply the markers

interface CallFacts {
  provider: string;
  query?: string;
  url?: string;
  count?: number;
  key: string | undefined;
}

/** Records the call and applies `[slow]`, `[auth]`, `[fail]`, `[badjson]`. False when it already answered. */
async function gate(ex: Exchange, facts: CallFacts, subject: string): Promise<boolean> {
  const { res } = ex;
  const hasKey = Boolean(facts.key);
  const keyOk = facts.key === EMULATOR_API_KEY;
  const call: EmulatorCall = {
    provider: facts.provider,
    path: ex.url.pathname,
    method: ex.req.method ?? "GET",
    has_key: hasKey,
    key_ok: keyOk,
    at: Date.now(),
  };
  if (facts.query !== undefined) call.query = facts.query;
  if (facts.url !== undefined) call.url = facts.url;
  if (facts.count !== undefined) call.count = facts.count;
  ex.state.calls.push(call);

  await passGate(ex.state.gates, subject);
  const markers = readMarkers(subject, facts.provider);
  if (markers.slowMs) await sleep(markers.slowMs);
  if (markers.auth && !keyOk) {
    // Like some real providers, the refusal repeats what it was sent: adapters must not echo it.
    sendJson(res, 401, {
      error: "Unauthorized: invalid API key",
      received_key: facts.key ?? null,
      detail: "upstream-body-detail",
    });
    return false;
  }
  if (markers.failStatus) {
    sendJson(res, markers.failStatus, {
      error: `emulated failure ${markers.failStatus}`,
      detail: "upstream-body-detail",
      received_key: facts.key ?? null,
    });
    return false;
  }
  if (markers.badJson) {
    sendText(res, 200, "application/json", "<html><body>upstream-body-detail: this is not JSON</body></html>");
    return false;
  }
  if (markers.malformed && facts.provider !== "pages") {
    if (facts.provider === "keyless") sendText(res, 200, "text/html; charset=UTF-8", MALFORMED_HTML);
    else sendJson(res, 200, MALFORMED_ANSWERS[markers.malformed] ?? {});
    return false;
  }
  return true;
}

function gateOf(gates: Map<string, Gate>, id: string): Gate {
  let gate = gates.get(id);
  if (!gate) {
    let release = () => {};
    const opened = new Promise<void>((resolve) => {
      release = resolve;
    });
    const made: Gate = {
      arrived: 0,
      after: null,
      open: false,
      opened,
      release: () => {
        made.open = true;
        release();
      },
    };
    gate = made;
    gates.set(id, gate);
  }
  return gate;
}

/** Counts a call that names `[gate:ID]` and waits until that gate opens (at once when none is named). */
async function passGate(gates: Map<string, Gate>, subject: string): Promise<void> {
  const id = /\[gate:([\w-]{1,64})\]/.exec(subject)?.[1];
  if (!id) return;
  const gate = gateOf(gates, id);
  gate.arrived++;
  if (gate.after !== null && gate.arrived >= gate.after) gate.release();
  await gate.opened;
}

/** The bot wall a `[challenge:VENDOR]` marker asks for, if any. */
function challengeOf(subject: string) {
  const vendor = readMarkers(subject).challenge;
  return vendor ? CHALLENGE_PAGES[vendor] : undefined;
}

// ---------------------------------------------------------------------------------------------
// Small HTTP helpers

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(null);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendText(res, status, "application/json", JSON.stringify(body));
}

function sendText(res: ServerResponse, status: number, contentType: string, text: string): void {
  sendBytes(res, status, contentType, Buffer.from(text, "utf8"));
}

function sendBytes(res: ServerResponse, status: number, contentType: string, bytes: Uint8Array): void {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(status, { "content-type": contentType, "content-length": String(bytes.byteLength) });
  res.end(bytes);
}

function jsonBody(ex: Exchange): Record<string, unknown> | null {
  const parsed = parseJson(ex.body);
  return isRecord(parsed) ? parsed : null;
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first || undefined;
}

function bearer(req: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(header(req, "authorization") ?? "");
  return match?.[1]?.trim() || undefined;
}

function intParam(url: URL, name: string, fallback: number): number {
  const value = url.searchParams.get(name);
  if (value === null || value.trim() === "") return fallback;
  const n = Number(value);
  return Number.isFinite(n) ? Math.trunc(n) : fallback;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The variables that point the service at the emulator: every provider, the DNS resolver, the auxiliary model. */
export function emulatorVars(emulatorUrl: string): Record<string, string> {
  return {
    // Every provider reached at a base URL, at the emulator's /<name> (the provider table).
    ...Object.fromEntries(
      Object.keys(DEFAULT_BASE_URLS).map((name) => [
        `PROVIDERS_${name.toUpperCase()}_BASE_URL`,
        `${emulatorUrl}/${name}`,
      ]),
    ),
    SECURITY_DNS_RESOLVER_URL: `${emulatorUrl}/dns-query`,
    AUXILIARY_VISION_BASE_URL: `${emulatorUrl}/openai/v1`,
    PROVIDERS_ANTHROPIC_BASE_URL: `${emulatorUrl}/llm/anthropic`,
    PROVIDERS_OPENAI_BASE_URL: `${emulatorUrl}/llm/openai`,
    // A key for the emulator only: it proves the key is sent, and that no message echoes it.
    TAVILY_API_KEY: "emulator-tavily-key-0000000000",
  };
}

/**
 * What the CLI prints for a person trying the service offline (README, "No keys, no network"): the
 * test variables, plus an auxiliary model name (so the descriptor path answers) and private
 * addresses opened, so an image URL on the emulator (`{url}/pages/image.png`) can be fetched. The
 * tests keep `emulatorVars`: they prove the refusals those two lines would lift.
 */
export function offlineDevVars(emulatorUrl: string): Record<string, string> {
  return { ...emulatorVars(emulatorUrl), AUXILIARY_VISION_MODEL: "emu-vision", SECURITY_ALLOW_PRIVATE_URLS: "true" };
}

// ---------------------------------------------------------------------------------------------
// CLI: `npx tsx test/emulator/server.ts --port 9100` prints the .dev.vars lines that point the
// service at it (every provider, so nothing, not even the keyless rescue, tries the internet) and
// runs until killed.

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const portFlag = process.argv.indexOf("--port");
  const port = portFlag >= 0 ? Number(process.argv[portFlag + 1]) : 9100;
  const emulator = await startEmulator({ port: Number.isFinite(port) ? port : 9100 });
  console.log(
    `# The emulator answers on ${emulator.url}. For npm run dev, put these lines in .dev.vars (then restart it);\n# for npm run dev:deno, in .dev.vars or the environment:`,
  );
  for (const [name, value] of Object.entries(offlineDevVars(emulator.url))) {
    if (name === "SECURITY_ALLOW_PRIVATE_URLS")
      console.log("# Lets vision_analyze fetch an image from the emulator (a loopback address); never in production:");
    console.log(`${name}=${value}`);
  }
  const stop = () => void emulator.close().finally(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

/** A gradient PNG of the given size (RGB, 8 bits), for vision tests that fetch images by URL. */
export function gradientPng(width: number, height: number): Uint8Array {
  const w = Math.max(1, Math.min(width, 8000));
  const h = Math.max(1, Math.min(height, 8000));
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++) {
    const row = y * (w * 3 + 1);
    for (let x = 0; x < w; x++) {
      raw[row + 1 + x * 3] = (x * 255) / w;
      raw[row + 2 + x * 3] = (y * 255) / h;
      raw[row + 3 + x * 3] = (x ^ y) & 0xff;
    }
  }
  const chunk = (type: string, data: Buffer) => {
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    out.write(type, 4, "ascii");
    data.copy(out, 8);
    out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return new Uint8Array(
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk("IHDR", ihdr),
      chunk("IDAT", deflateSync(raw)),
      chunk("IEND", Buffer.alloc(0)),
    ]),
  );
}

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}
