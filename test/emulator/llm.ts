/**
 * LLM provider emulator: Anthropic Messages and OpenAI Chat Completions / Responses, plain and
 * streamed in their own server-sent event formats, billing prompt caching by the documented rules
 * of the model table (shared/llm/models.table.ts), with fault injection. Mounted by server.ts
 * under `/llm/anthropic` and `/llm/openai`; point the service at it with
 * `PROVIDERS_ANTHROPIC_BASE_URL={url}/llm/anthropic`, `PROVIDERS_OPENAI_BASE_URL={url}/llm/openai`.
 *
 * Tokens: text ceil(chars / 4), or with the request header `x-emulator-tokenizer: words` a
 * word-piece count that is not (wordTokens); an image ceil(width × height / 750), at most 1,600
 * (Anthropic's published estimate), its size read from its own header here. A model whose name
 * contains `dense-vision` (a gateway's model that counts images its own way) bills an image at
 * ceil(width × height / 300), uncapped, and is served though the model table does not know it
 * (any other unknown model is a 404, as the providers answer).
 * Anthropic cache: an entry is written at each `cache_control` breakpoint (a top-level one sits on
 * the last block), at most 4 a request (more is the provider's 400), only for a prefix of at least
 * the model's minimum cacheable length; a request reads the longest entry found at a block within
 * 20 blocks before one of its breakpoints, while the entry is fresh (5 minutes after its last use,
 * or 1 hour with `"ttl": "1h"`). Writes are billed per TTL between the read point and each
 * breakpoint. Entries are per key and model.
 * OpenAI cache: automatic, the longest earlier prefix (at message boundaries) of at least 1,024
 * tokens, read in 128-token steps, kept 5 minutes after its last use; no writes reported.
 *
 * Markers in the text of the last message steer one call: [fail:429] (with retry-after),
 * [fail:529], [fail:400], [fail:500], [fail:401] (OpenAI's names the key it refused, masked, as
 * OpenAI does), [fail-once:STATUS:ID] (only the first call naming ID fails), [fail-big:STATUS] (an
 * error body of 100 KiB), [fail-stall:STATUS] (an error body that stops after its first bytes),
 * [hang] (never answers), [slowstream:MS] (a pause before each streamed event after the first),
 * [use_tool] (the answer calls the first tool), [usage:N] (a hostile or broken upstream: N, e.g. 1e15,
 * -5 or 12.5, reported as the input and the output tokens, plain and streamed), [leak:FORM] or [leak:FORM:STATUS] (an answer, 200 unless
 * STATUS, that echoes the key it received as FORM in an `x-echo-key` header and in its body: `plain`,
 * `escaped` (each character a JSON \u escape), `ellipsis` (its first 13 characters, `…`, its last 4),
 * `stars` (7, `***`, 4), `dots` (3, `...`, 4), `x` (8, `xxxxxxxx`, 4), `base64` (the key's standard base64),
 * `basic` (`Basic ` and the base64 of `api:KEY`), `jwt` (a token whose url-safe base64 payload is
 * `{"key":"KEY"}`), `percent` (every byte of the key as `%XX`); streamed, the key is cut in two
 * writes 25 ms apart, and with [stall] the stream stops after its first event, left open).
 * [redirect:STATUS] (a 3xx whose Location is the
 * emulator's other listener, `elsewhere`, which records what reaches it), [set-cookie] (the answer
 * sets a cookie, as a provider's load balancer does), [fail-midstream] (a stream whose connection
 * drops after its first event), [gate:ID] (the answer is held until POST /__gate/ID/open, or until
 * `?after=N` calls named ID have arrived; server.ts). An Anthropic image whose media_type is not what its
 * bytes are is refused (400), as the Messages API refuses it. Control: GET /llm/__calls?contains=TEXT (calls
 * whose system prompt, last message or path and query contains TEXT).
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { modelRules } from "../../shared/llm/models.table";

export interface LlmUsageRecord {
  input: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
  output: number;
}

/** One request the emulator answered (keys are kept as their SHA-256 only). */
export interface LlmCall {
  provider: "anthropic" | "openai";
  path: string;
  method: string;
  model: string | null;
  stream: boolean;
  status: number;
  key_sha256: string | null;
  /** Header names as received (lower case). */
  headers: string[];
  /** Inline image blocks and their base64 / data-URL characters. */
  images: number;
  image_bytes: number;
  /** Image blocks the retired-image text replaced (the service's placeholder). */
  placeholders: number;
  /** cache_control breakpoints (a top-level one included). */
  breakpoints: number;
  body_bytes: number;
  /** SHA-256 of the body as received: what a test compares with what it sent. */
  body_sha256: string;
  usage: LlmUsageRecord | null;
  /**
   * The prompt as the cache saw it, block by block: tokens, an id of the prefix up to the block
   * (16 hex characters of its hash), and the blocks carrying a breakpoint. What a replay of the
   * same requests needs, without the bodies.
   */
  prompt: { tokens: number[]; ids: string[]; breakpoints: number[] } | null;
  /** What /__calls?contains= matches against. */
  probe: string;
  at: number;
}

interface CacheEntry {
  tokens: number;
  expiresAt: number;
  ttlMs: number;
}

export interface LlmEmulator {
  handle(req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer): Promise<void>;
  reset(): void;
}

const FIVE_MINUTES = 5 * 60_000;

export interface LlmEmulatorOptions {
  /** The emulator's other listener (another port), where `[redirect:STATUS]` points. */
  elsewhere?: () => string;
  /** Waits while the gate a `[gate:ID]` names is held (server.ts). */
  gate?: (subject: string) => Promise<void>;
}

export function createLlmEmulator(options: LlmEmulatorOptions = {}): LlmEmulator {
  const calls: LlmCall[] = [];
  const cache = new Map<string, CacheEntry>();
  const failedOnce = new Set<string>();

  async function handle(req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer): Promise<void> {
    res.on("error", () => {});
    const path = url.pathname;
    if (path === "/llm/__calls") {
      const contains = url.searchParams.get("contains") ?? "";
      const found = calls.filter((c) => c.probe.includes(contains));
      return json(res, 200, { count: found.length, calls: found });
    }
    const match = /^\/llm\/(anthropic|openai)(\/.*)$/.exec(path);
    if (!match) return json(res, 404, { error: `no emulated LLM API at ${path}` });
    const provider = match[1] as "anthropic" | "openai";
    const sub = match[2]!;
    const key = provider === "anthropic" ? (header(req, "x-api-key") ?? bearer(req)) : bearer(req);
    const call: LlmCall = {
      provider,
      path: `${sub}${url.search}`,
      method: req.method ?? "GET",
      model: null,
      stream: false,
      status: 200,
      key_sha256: key ? sha256(key) : null,
      headers: Object.keys(req.headers).map((name) => name.toLowerCase()),
      images: 0,
      image_bytes: 0,
      placeholders: 0,
      breakpoints: 0,
      body_bytes: body.length,
      body_sha256: createHash("sha256").update(body).digest("hex"),
      usage: null,
      prompt: null,
      probe: `${sub}${url.search}`,
      at: Date.now(),
    };
    calls.push(call);
    const fail = (status: number, message: string, headers: Record<string, string> = {}) => {
      call.status = status;
      json(res, status, errorBody(provider, status, message), {
        [ID_HEADER[provider]]: `req_emu_${Date.now()}`,
        ...headers,
      });
    };
    // A CORS preflight carries no key; the provider answers it (Anthropic lets browsers call it).
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "access-control-allow-origin": header(req, "origin") ?? "*",
        "access-control-allow-methods": "POST, GET, OPTIONS",
        "access-control-allow-headers": header(req, "access-control-request-headers") ?? "*",
      });
      return void res.end();
    }
    if (!key) return fail(401, "x-api-key header is required");

    if (req.method === "GET" && sub.startsWith("/v1/models")) {
      return json(res, 200, {
        data: [{ id: provider === "anthropic" ? "claude-sonnet-4-5" : "gpt-4o", type: "model" }],
        has_more: false,
        query: url.search,
      });
    }
    // The Files API's upload (multipart): what it was sent, as a file object counting the bytes.
    if (provider === "openai" && sub === "/v1/files" && req.method === "POST") {
      return json(res, 200, { id: `file-emu${calls.length}`, object: "file", bytes: body.length, purpose: "batch" });
    }
    if (sub.startsWith("/v1/echo")) {
      return json(res, 200, { method: req.method, path: sub, query: url.search, body: body.toString("utf8") });
    }
    const route = provider === "anthropic" ? ANTHROPIC_ROUTES[sub] : OPENAI_ROUTES[sub];
    if (!route || req.method !== "POST") return fail(404, `Not found: ${req.method} ${sub}`);
    if (!/json/i.test(header(req, "content-type") ?? "")) return fail(400, "Content-Type must be application/json");
    let parsed: Record<string, unknown>;
    try {
      const value: unknown = JSON.parse(body.toString("utf8"));
      if (!isRecord(value)) return fail(400, "the body must be a JSON object");
      parsed = value;
    } catch {
      return fail(400, "There was an error parsing the body as JSON");
    }
    const model = typeof parsed.model === "string" ? parsed.model : null;
    call.model = model;
    call.stream = parsed.stream === true;
    const conversation = route.read(parsed, TOKENIZERS[header(req, "x-emulator-tokenizer") ?? "chars"] ?? charTokens);
    call.probe = `${sub} ${conversation.system.slice(0, 2_000)} ${conversation.lastText.slice(0, 2_000)}`;
    call.images = conversation.images.length;
    call.image_bytes = conversation.images.reduce((sum, image) => sum + image.bytes, 0);
    call.placeholders = conversation.placeholders;
    call.breakpoints = conversation.breakpoints.length;
    call.prompt = {
      tokens: conversation.blocks.map((b) => b.tokens),
      ids: conversation.blocks.map((b) => b.hash.slice(0, 16)),
      breakpoints: conversation.breakpoints.map((b) => b.index),
    };

    // Faults first: a client's retry must see them before any validation.
    const markers = conversation.lastText;
    if (markers.includes("[hang]")) return; // the socket stays open until the emulator closes
    await options.gate?.(markers);
    const moved = /\[redirect:(3\d\d)\]/.exec(markers);
    if (moved && options.elsewhere) {
      call.status = Number(moved[1]);
      const location = `${options.elsewhere()}/moved?from=${encodeURIComponent(markers.slice(0, 200))}`;
      res.writeHead(call.status, { location, "content-length": "0", [ID_HEADER[provider]]: "req_emu_moved" });
      return void res.end();
    }
    if (markers.includes("[set-cookie]"))
      res.setHeader("set-cookie", "__cf_bm=emulated-balancer-cookie; path=/; HttpOnly");
    const once = /\[fail-once:(\d{3}):([^\]]+)\]/.exec(markers);
    if (once && !failedOnce.has(once[2]!)) {
      failedOnce.add(once[2]!);
      return fail(Number(once[1]), "emulated failure (once)", { "retry-after": "0", "retry-after-ms": "20" });
    }
    const odd = /\[fail-(big|stall):(\d{3})\]/.exec(markers);
    if (odd) {
      call.status = Number(odd[2]);
      const bytes = Buffer.from(JSON.stringify(errorBody(provider, call.status, "x".repeat(100 * 1024))), "utf8");
      res.writeHead(call.status, { "content-type": "application/json", "content-length": String(bytes.length) });
      if (odd[1] === "big") return void res.end(bytes);
      return void res.write(bytes.subarray(0, 200)); // the rest never comes; the socket stays open
    }
    const failure = /\[fail:(\d{3})\]/.exec(markers);
    if (failure) {
      const status = Number(failure[1]);
      return fail(
        status,
        status === 529
          ? "Overloaded"
          : status === 429
            ? "Number of request tokens has exceeded your rate limit"
            : status === 401 && provider === "openai"
              ? `Incorrect API key provided: ${key.slice(0, 8)}${"*".repeat(Math.max(0, key.length - 12))}${key.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`
              : status === 401
                ? "invalid x-api-key"
                : "emulated failure",
        status === 429 || status === 529 ? { "retry-after": "1", "retry-after-ms": "20" } : {},
      );
    }
    const leak = /\[leak:(plain|escaped|ellipsis|stars|dots|x|base64|basic|jwt|percent)(?::(\d{3}))?\]/.exec(markers);
    if (leak) {
      call.status = Number(leak[2] ?? 200);
      return leakKey(res, provider, call.status, keyEchoed(key, leak[1]!), call.stream, markers.includes("[stall]"));
    }
    if (!model) return fail(400, "model: Field required");
    const rules = modelRules(provider, model);
    // A model the table does not know is refused, unless it is one of the gateway's dense-vision models.
    if (!rules.known && !model.includes("dense-vision")) return fail(404, `model: ${model}`);
    const refusal = imageRefusal(conversation.images, rules.images, body.length);
    if (refusal) return fail(refusal.status, refusal.message);
    if (provider === "anthropic" && conversation.breakpoints.length > 4) {
      return fail(
        400,
        `A maximum of 4 blocks with cache_control may be provided. Found ${conversation.breakpoints.length}.`,
      );
    }
    if (sub === "/v1/messages/count_tokens") return json(res, 200, { input_tokens: conversation.total });

    const scope = `${provider}|${call.key_sha256}|${model}`;
    const billed =
      provider === "anthropic"
        ? billAnthropic(conversation, rules.minCacheableTokens, scope)
        : billOpenAI(conversation, scope);
    const tool = markers.includes("[use_tool]") ? conversation.firstTool : null;
    const text = tool ? "" : `Emulated answer to ${conversation.turns} messages.`;
    const hostile = /\[usage:(-?\d+(?:\.\d+)?(?:e\d+)?)\]/.exec(markers);
    const usage = hostile
      ? { input: Number(hostile[1]), cacheWrite5m: 0, cacheWrite1h: 0, cacheRead: 0, output: Number(hostile[1]) }
      : { ...billed, output: tool ? 12 : Math.ceil(text.length / 4) };
    call.usage = usage;
    const pause = Number(/\[slowstream:(\d{1,5})\]/.exec(markers)?.[1] ?? 0);
    const streamUsage = isRecord(parsed.stream_options) && parsed.stream_options.include_usage === true;
    const answer: Answer = {
      model,
      text,
      tool,
      usage,
      streamUsage,
      id: `${provider === "anthropic" ? "msg" : "chatcmpl"}_emu${calls.length}`,
    };
    // The first event (Anthropic's message_start bills the prompt), then the connection drops.
    if (call.stream && markers.includes("[fail-midstream]")) CUT_AFTER_FIRST_EVENT.add(res);
    if (call.stream) return route.stream(res, answer, pause);
    return json(res, 200, route.answer(answer), { [ID_HEADER[provider]]: `req_emu${calls.length}` });
  }

  /** Anthropic's cache rules over the request's blocks (see the module note). */
  function billAnthropic(
    conversation: Conversation,
    minCacheable: number,
    scope: string,
  ): Omit<LlmUsageRecord, "output"> {
    const now = Date.now();
    const { blocks, breakpoints } = conversation;
    const cumulative: number[] = [];
    let sum = 0;
    for (const block of blocks) cumulative.push((sum += block.tokens));
    const fresh = (index: number) => {
      const entry = cache.get(`${scope}|${blocks[index]!.hash}`);
      return entry !== undefined && entry.expiresAt > now ? entry : undefined;
    };
    let read = -1;
    for (const bp of breakpoints) {
      for (let i = bp.index; i >= 0 && i > bp.index - 20 && i > read; i--) {
        if (fresh(i)) {
          read = i;
          break;
        }
      }
    }
    if (read >= 0) {
      const entry = fresh(read)!;
      entry.expiresAt = now + entry.ttlMs;
    }
    const readTokens = read >= 0 ? cumulative[read]! : 0;
    let written5m = 0;
    let written1h = 0;
    let from = readTokens;
    for (const bp of [...breakpoints].sort((a, b) => a.index - b.index)) {
      const upTo = cumulative[bp.index]!;
      if (upTo < minCacheable) continue;
      const ttlMs = bp.ttl === "1h" ? 60 * 60_000 : FIVE_MINUTES;
      const key = `${scope}|${blocks[bp.index]!.hash}`;
      const existing = cache.get(key);
      cache.set(key, { tokens: upTo, ttlMs, expiresAt: now + ttlMs });
      if (bp.index <= read || (existing && existing.expiresAt > now)) {
        from = Math.max(from, upTo);
        continue;
      }
      if (upTo > from) {
        if (bp.ttl === "1h") written1h += upTo - from;
        else written5m += upTo - from;
        from = upTo;
      }
    }
    return {
      input: sum - readTokens - written5m - written1h,
      cacheWrite5m: written5m,
      cacheWrite1h: written1h,
      cacheRead: readTokens,
    };
  }

  /** OpenAI's automatic prefix caching at message boundaries (see the module note). */
  function billOpenAI(conversation: Conversation, scope: string): Omit<LlmUsageRecord, "output"> {
    const now = Date.now();
    let matched = 0;
    let sum = 0;
    for (const block of conversation.blocks) {
      sum += block.tokens;
      const key = `${scope}|${block.hash}`;
      const entry = cache.get(key);
      if (entry && entry.expiresAt > now) {
        matched = sum;
        entry.expiresAt = now + FIVE_MINUTES;
      }
    }
    sum = 0;
    for (const block of conversation.blocks) {
      sum += block.tokens;
      if (sum >= 1_024)
        cache.set(`${scope}|${block.hash}`, { tokens: sum, ttlMs: FIVE_MINUTES, expiresAt: now + FIVE_MINUTES });
    }
    const cached = matched >= 1_024 ? 1_024 + Math.floor((matched - 1_024) / 128) * 128 : 0;
    // Prompt tokens reported as a whole: the uncached part is what remains.
    return { input: sum - cached, cacheWrite5m: 0, cacheWrite1h: 0, cacheRead: cached };
  }

  return {
    handle,
    reset() {
      calls.length = 0;
      cache.clear();
      failedOnce.clear();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Reading a request

/** Text tokens of a string, as one emulated tokenizer counts them. */
type Tokenizer = (text: string) => number;

/** The default: ceil(chars / 4). */
const charTokens: Tokenizer = (text) => Math.ceil(text.length / 4);

/**
 * `x-emulator-tokenizer: words`: a word-piece count that is not chars / 4 (what a real tokenizer's
 * count of the same text is not either): each run of letters is one token, or one per 5 letters
 * past 7; each digit and each punctuation mark is one; spaces are free. English prose comes out
 * near chars / 5, numbers and JSON far above chars / 4.
 */
const wordTokens: Tokenizer = (text) => {
  let count = 0;
  for (const match of text.matchAll(/[A-Za-z]+|\d|[^\sA-Za-z\d]/g))
    count += match[0].length > 7 ? Math.ceil(match[0].length / 5) : 1;
  return count;
};

const TOKENIZERS: Record<string, Tokenizer> = { chars: charTokens, words: wordTokens };

interface Block {
  tokens: number;
  /** Hash of the whole prefix up to and including this block (cache_control left out). */
  hash: string;
}

interface ImageSeen {
  bytes: number;
  width: number;
  height: number;
  /** An Anthropic block whose media_type is not what its bytes are: the type declared. */
  mislabeled?: string;
}

interface Conversation {
  blocks: Block[];
  breakpoints: { index: number; ttl: "5m" | "1h" }[];
  images: ImageSeen[];
  placeholders: number;
  total: number;
  system: string;
  lastText: string;
  turns: number;
  firstTool: string | null;
}

interface Route {
  read(body: Record<string, unknown>, tokens?: Tokenizer): Conversation;
  answer(answer: Answer): unknown;
  stream(res: ServerResponse, answer: Answer, pauseMs: number): Promise<void>;
}

interface Answer {
  id: string;
  model: string;
  text: string;
  tool: string | null;
  usage: LlmUsageRecord;
  /** Chat Completions streams: the caller asked for a usage chunk (stream_options.include_usage). */
  streamUsage: boolean;
}

/** Builds the block list with prefix hashes, token counts and images as the blocks are added. */
class BlockList {
  readonly blocks: Block[] = [];
  readonly images: ImageSeen[] = [];
  readonly breakpoints: Conversation["breakpoints"] = [];
  placeholders = 0;
  private chain = createHash("sha256");

  /** `dense`: the model counts images at width × height / 300, uncapped (see the header). */
  constructor(
    private readonly tokens: Tokenizer = charTokens,
    private readonly dense = false,
  ) {}

  add(value: unknown, marker?: unknown): void {
    // A cache_control marker is not content: it changes neither the block's tokens nor the prefix.
    const content = stripMarkers(value);
    const tokens = this.tokensOf(content);
    this.chain.update(JSON.stringify(content));
    this.chain.update("\u0000");
    this.blocks.push({ tokens, hash: this.chain.copy().digest("hex") });
    if (isRecord(marker))
      this.breakpoints.push({ index: this.blocks.length - 1, ttl: marker.ttl === "1h" ? "1h" : "5m" });
  }

  /** Tokens of one block: its text, its images, and nested content (a tool result's parts). */
  private tokensOf(value: unknown): number {
    if (typeof value === "string") {
      if (value.includes("[screenshot removed to save context")) this.placeholders += 1;
      return this.tokens(value);
    }
    if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + this.tokensOf(item), 0);
    if (!isRecord(value)) return 0;
    const image = imageOf(value);
    if (image) {
      this.images.push(image);
      if (this.dense) return Math.max(1, Math.ceil((Math.max(1, image.width) * Math.max(1, image.height)) / 300));
      return image.width > 0 ? Math.min(1_600, Math.max(1, Math.ceil((image.width * image.height) / 750))) : 1_600;
    }
    if (image === null && (value.type === "image" || value.type === "image_url" || value.type === "input_image"))
      return 0; // a URL reference
    if (typeof value.text === "string") return this.tokensOf(value.text);
    if (value.content !== undefined && value.content !== null)
      return this.tokensOf(value.content) + (value.type === "tool_result" ? 4 : 0);
    if (typeof value.output === "string" || Array.isArray(value.output) || isRecord(value.output))
      return this.tokensOf(value.output); // a computer_call_output's screenshot is an object
    return Math.ceil(JSON.stringify(value).length / 4);
  }
}

/** An inline image's size and bytes; undefined for a block that is no image; null for an image by reference. */
function imageOf(block: Record<string, unknown>): ImageSeen | null | undefined {
  let data: string | null = null;
  if (block.type === "image") {
    const source = isRecord(block.source) ? block.source : null;
    if (source?.type !== "base64" || typeof source.data !== "string") return null;
    data = source.data;
  } else if (block.type === "image_url" || block.type === "input_image" || block.type === "computer_screenshot") {
    const field = block.image_url;
    const url = typeof field === "string" ? field : isRecord(field) && typeof field.url === "string" ? field.url : "";
    if (!url.startsWith("data:")) return null;
    data = url;
  } else return undefined;
  const payload = data.startsWith("data:") ? data.slice(data.indexOf(",") + 1) : data;
  const head = Buffer.from(payload.slice(0, 65_536), "base64");
  const size = pixelSize(head);
  const seen: ImageSeen = { bytes: data.length, width: size?.width ?? 0, height: size?.height ?? 0 };
  const declared = block.type === "image" && isRecord(block.source) ? block.source.media_type : undefined;
  const actual = magicType(head);
  if (typeof declared === "string" && actual && declared !== actual) seen.mislabeled = declared;
  return seen;
}

/** The media type a file's first bytes say it is (what Anthropic checks a declared media_type against). */
function magicType(bytes: Buffer): string | null {
  if (bytes[0] === 0x89 && bytes[1] === 0x50) return "image/png";
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return "image/jpeg";
  if (bytes.toString("latin1", 0, 3) === "GIF") return "image/gif";
  if (bytes.toString("latin1", 0, 4) === "RIFF" && bytes.toString("latin1", 8, 12) === "WEBP") return "image/webp";
  return null;
}

/** PNG, GIF, JPEG and WebP sizes from their headers (what the emulator needs to bill an image). */
function pixelSize(bytes: Buffer): { width: number; height: number } | null {
  if (bytes.length >= 30 && bytes.toString("latin1", 0, 4) === "RIFF" && bytes.toString("latin1", 8, 12) === "WEBP") {
    const chunk = bytes.toString("latin1", 12, 16);
    if (chunk === "VP8X") return { width: bytes.readUIntLE(24, 3) + 1, height: bytes.readUIntLE(27, 3) + 1 };
    if (chunk === "VP8L") {
      const bits = bytes.readUInt32LE(21);
      return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
    }
    if (chunk === "VP8 ") return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
    return null;
  }
  if (bytes.length >= 24 && bytes[0] === 0x89 && bytes[1] === 0x50)
    return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  if (bytes.length >= 10 && bytes.toString("latin1", 0, 3) === "GIF")
    return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
  if (bytes[0] === 0xff && bytes[1] === 0xd8) {
    let at = 2;
    while (at + 9 < bytes.length) {
      if (bytes[at] !== 0xff) return null;
      const marker = bytes[at + 1]!;
      const length = bytes.readUInt16BE(at + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
        return { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) };
      at += 2 + length;
    }
  }
  return null;
}

function stripMarkers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripMarkers);
  if (!isRecord(value)) return value;
  const { cache_control: _marker, ...rest } = value;
  if (Array.isArray(rest.content)) rest.content = rest.content.map(stripMarkers);
  return rest;
}

/** The visible text of a message's content (strings, text parts, tool result text). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) =>
      isRecord(part)
        ? typeof part.text === "string"
          ? part.text
          : typeof part.content === "string"
            ? part.content
            : textOf(part.content ?? part.output)
        : "",
    )
    .join("\n");
}

function readAnthropic(body: Record<string, unknown>, tokens?: Tokenizer): Conversation {
  const list = new BlockList(tokens);
  const tools = Array.isArray(body.tools) ? body.tools : [];
  for (const tool of tools) list.add(tool, isRecord(tool) ? tool.cache_control : undefined);
  let system = "";
  if (typeof body.system === "string") {
    list.add(body.system);
    system = body.system;
  } else if (Array.isArray(body.system)) {
    for (const block of body.system) list.add(block, isRecord(block) ? block.cache_control : undefined);
    system = textOf(body.system);
  }
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const message of messages) {
    if (!isRecord(message)) continue;
    const content = message.content;
    if (typeof content === "string") list.add({ role: message.role, text: content });
    else if (Array.isArray(content)) {
      for (const block of content) {
        const nested =
          isRecord(block) && Array.isArray(block.content)
            ? block.content.find((part) => isRecord(part) && isRecord(part.cache_control))
            : undefined;
        list.add(
          block,
          isRecord(block) ? (block.cache_control ?? (isRecord(nested) ? nested.cache_control : undefined)) : undefined,
        );
      }
    }
  }
  // Automatic caching: one top-level cache_control puts a breakpoint on the last block.
  if (isRecord(body.cache_control) && list.blocks.length > 0)
    list.breakpoints.push({ index: list.blocks.length - 1, ttl: body.cache_control.ttl === "1h" ? "1h" : "5m" });
  const last =
    messages.length > 0 && isRecord(messages[messages.length - 1])
      ? (messages[messages.length - 1] as Record<string, unknown>)
      : null;
  const firstTool = tools.length > 0 && isRecord(tools[0]) && typeof tools[0].name === "string" ? tools[0].name : null;
  return { ...finish(list), system, lastText: textOf(last?.content), turns: messages.length, firstTool };
}

function finish(list: BlockList): Pick<Conversation, "blocks" | "breakpoints" | "images" | "placeholders" | "total"> {
  return {
    blocks: list.blocks,
    breakpoints: list.breakpoints,
    images: list.images,
    placeholders: list.placeholders,
    total: list.blocks.reduce((sum, b) => sum + b.tokens, 0),
  };
}

/** OpenAI: one block per tool definition and per message (chat) or input item (responses). */
function readOpenAI(
  items: unknown[],
  tools: unknown,
  instructions: string,
  model: unknown,
  tokens?: Tokenizer,
): Conversation {
  const list = new BlockList(tokens, typeof model === "string" && model.includes("dense-vision"));
  const toolList = Array.isArray(tools) ? tools : [];
  for (const tool of toolList) list.add(tool);
  if (instructions) list.add(instructions);
  let system = instructions;
  for (const item of items) {
    list.add(item);
    if (isRecord(item) && (item.role === "system" || item.role === "developer")) system += textOf(item.content);
  }
  const last =
    items.length > 0 && isRecord(items[items.length - 1]) ? (items[items.length - 1] as Record<string, unknown>) : null;
  const first = toolList[0];
  const firstTool = isRecord(first)
    ? typeof first.name === "string"
      ? first.name
      : isRecord(first.function) && typeof first.function.name === "string"
        ? first.function.name
        : null
    : null;
  return { ...finish(list), system, lastText: textOf(last?.content ?? last?.output), turns: items.length, firstTool };
}

// ---------------------------------------------------------------------------------------------
// Answers

const anthropicUsage = (u: LlmUsageRecord) => ({
  input_tokens: u.input,
  cache_creation_input_tokens: u.cacheWrite5m + u.cacheWrite1h,
  cache_read_input_tokens: u.cacheRead,
  cache_creation: { ephemeral_5m_input_tokens: u.cacheWrite5m, ephemeral_1h_input_tokens: u.cacheWrite1h },
  output_tokens: u.output,
  service_tier: "standard",
});

const ANTHROPIC_MESSAGES: Route = {
  read: readAnthropic,
  answer: (a) => ({
    id: a.id,
    type: "message",
    role: "assistant",
    model: a.model,
    content: a.tool
      ? [{ type: "tool_use", id: `toolu_${a.id}`, name: a.tool, input: { n: 1 } }]
      : [{ type: "text", text: a.text }],
    stop_reason: a.tool ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: anthropicUsage(a.usage),
  }),
  async stream(res, a, pause) {
    const send = sse(res, pause, true, ID_HEADER.anthropic);
    await send("message_start", {
      type: "message_start",
      message: {
        id: a.id,
        type: "message",
        role: "assistant",
        model: a.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...anthropicUsage(a.usage), output_tokens: 1 },
      },
    });
    if (a.tool) {
      await send("content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: `toolu_${a.id}`, name: a.tool, input: {} },
      });
      await send("ping", { type: "ping" });
      for (const piece of ['{"n"', ": 1}"])
        await send("content_block_delta", {
          type: "content_block_delta",
          index: 0,
          delta: { type: "input_json_delta", partial_json: piece },
        });
    } else {
      await send("content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "text", text: "" },
      });
      await send("ping", { type: "ping" });
      for (const piece of pieces(a.text))
        await send("content_block_delta", {
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text: piece },
        });
    }
    await send("content_block_stop", { type: "content_block_stop", index: 0 });
    await send("message_delta", {
      type: "message_delta",
      delta: { stop_reason: a.tool ? "tool_use" : "end_turn", stop_sequence: null },
      // As the Messages API streams it: every count again, cumulative, and the cache write without its TTL split.
      usage: {
        input_tokens: a.usage.input,
        cache_creation_input_tokens: a.usage.cacheWrite5m + a.usage.cacheWrite1h,
        cache_read_input_tokens: a.usage.cacheRead,
        output_tokens: a.usage.output,
      },
    });
    await send("message_stop", { type: "message_stop" });
    res.end();
  },
};

const ANTHROPIC_COUNT: Route = { ...ANTHROPIC_MESSAGES };

const ANTHROPIC_ROUTES: Record<string, Route> = {
  "/v1/messages": ANTHROPIC_MESSAGES,
  "/v1/messages/count_tokens": ANTHROPIC_COUNT,
};

const chatUsage = (u: LlmUsageRecord) => ({
  prompt_tokens: u.input + u.cacheRead,
  completion_tokens: u.output,
  total_tokens: u.input + u.cacheRead + u.output,
  prompt_tokens_details: { cached_tokens: u.cacheRead, audio_tokens: 0 },
  completion_tokens_details: {
    reasoning_tokens: 0,
    audio_tokens: 0,
    accepted_prediction_tokens: 0,
    rejected_prediction_tokens: 0,
  },
});

const created = () => Math.floor(Date.now() / 1000);

const CHAT: Route = {
  read: (body, tokens) =>
    readOpenAI(Array.isArray(body.messages) ? body.messages : [], body.tools, "", body.model, tokens),
  answer: (a) => ({
    id: a.id,
    object: "chat.completion",
    created: created(),
    model: a.model,
    choices: [
      {
        index: 0,
        message: a.tool
          ? {
              role: "assistant",
              content: null,
              refusal: null,
              tool_calls: [{ id: `call_${a.id}`, type: "function", function: { name: a.tool, arguments: '{"n": 1}' } }],
            }
          : { role: "assistant", content: a.text, refusal: null },
        logprobs: null,
        finish_reason: a.tool ? "tool_calls" : "stop",
      },
    ],
    usage: chatUsage(a.usage),
    system_fingerprint: "fp_emulator",
  }),
  async stream(res, a, pause) {
    const send = sse(res, pause, false, ID_HEADER.openai);
    const chunk = (delta: unknown, finish: string | null) => ({
      id: a.id,
      object: "chat.completion.chunk",
      created: created(),
      model: a.model,
      system_fingerprint: "fp_emulator",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      // With include_usage, OpenAI puts `"usage": null` on every chunk before the last.
      ...(a.streamUsage ? { usage: null } : {}),
    });
    await send(null, chunk({ role: "assistant", content: a.tool ? null : "", refusal: null }, null));
    if (a.tool) {
      await send(
        null,
        chunk(
          {
            tool_calls: [{ index: 0, id: `call_${a.id}`, type: "function", function: { name: a.tool, arguments: "" } }],
          },
          null,
        ),
      );
      for (const piece of ['{"n"', ": 1}"])
        await send(null, chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null));
    } else for (const piece of pieces(a.text)) await send(null, chunk({ content: piece }, null));
    await send(null, chunk({}, a.tool ? "tool_calls" : "stop"));
    // Usage comes only when the caller asked (stream_options.include_usage), as OpenAI sends it.
    if (a.streamUsage)
      await send(null, {
        id: a.id,
        object: "chat.completion.chunk",
        created: created(),
        model: a.model,
        choices: [],
        usage: chatUsage(a.usage),
      });
    res.write("data: [DONE]\n\n");
    res.end();
  },
};

const responsesUsage = (u: LlmUsageRecord) => ({
  input_tokens: u.input + u.cacheRead,
  input_tokens_details: { cached_tokens: u.cacheRead },
  output_tokens: u.output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: u.input + u.cacheRead + u.output,
});

function responseObject(a: Answer, status: "in_progress" | "completed") {
  const done = status === "completed";
  const output = !done
    ? []
    : a.tool
      ? [
          {
            type: "function_call",
            id: `fc_${a.id}`,
            call_id: `call_${a.id}`,
            name: a.tool,
            arguments: '{"n": 1}',
            status: "completed",
          },
        ]
      : [
          {
            type: "message",
            id: `msg_${a.id}`,
            status: "completed",
            role: "assistant",
            content: [{ type: "output_text", text: a.text, annotations: [] }],
          },
        ];
  return {
    id: `resp_${a.id}`,
    object: "response",
    created_at: created(),
    status,
    model: a.model,
    output,
    usage: done ? responsesUsage(a.usage) : null,
    error: null,
    incomplete_details: null,
  };
}

const RESPONSES: Route = {
  read: (body, tokens) => {
    const input =
      typeof body.input === "string"
        ? [{ role: "user", content: body.input }]
        : Array.isArray(body.input)
          ? body.input
          : [];
    return readOpenAI(
      input,
      body.tools,
      typeof body.instructions === "string" ? body.instructions : "",
      body.model,
      tokens,
    );
  },
  answer: (a) => responseObject(a, "completed"),
  async stream(res, a, pause) {
    const send = sse(res, pause, true, ID_HEADER.openai);
    let sequence = 0;
    const event = (type: string, data: Record<string, unknown>) =>
      send(type, { type, sequence_number: sequence++, ...data });
    await event("response.created", { response: responseObject(a, "in_progress") });
    await event("response.in_progress", { response: responseObject(a, "in_progress") });
    const final = responseObject(a, "completed");
    const item = final.output[0]!;
    if (a.tool) {
      await event("response.output_item.added", {
        output_index: 0,
        item: { ...item, arguments: "", status: "in_progress" },
      });
      await event("response.function_call_arguments.delta", { output_index: 0, item_id: item.id, delta: '{"n": 1}' });
      await event("response.function_call_arguments.done", {
        output_index: 0,
        item_id: item.id,
        arguments: '{"n": 1}',
      });
    } else {
      await event("response.output_item.added", {
        output_index: 0,
        item: { ...item, status: "in_progress", content: [] },
      });
      await event("response.content_part.added", {
        output_index: 0,
        item_id: item.id,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      });
      for (const piece of pieces(a.text))
        await event("response.output_text.delta", {
          output_index: 0,
          item_id: item.id,
          content_index: 0,
          delta: piece,
          logprobs: [],
        });
      await event("response.output_text.done", {
        output_index: 0,
        item_id: item.id,
        content_index: 0,
        text: a.text,
        logprobs: [],
      });
      await event("response.content_part.done", {
        output_index: 0,
        item_id: item.id,
        content_index: 0,
        part: { type: "output_text", text: a.text, annotations: [] },
      });
    }
    await event("response.output_item.done", { output_index: 0, item });
    await event("response.completed", { response: final });
    res.end();
  },
};

const OPENAI_ROUTES: Record<string, Route> = { "/v1/chat/completions": CHAT, "/v1/responses": RESPONSES };

/** Words of an answer, each a streamed delta. */
const pieces = (text: string) => text.match(/\S+\s*/g) ?? [text];

/** An SSE writer: `event:` lines when `named`, a pause before every event after the first. */
/** The header each provider names its request id in (Anthropic `request-id`, OpenAI `x-request-id`). */
const ID_HEADER = { anthropic: "request-id", openai: "x-request-id" } as const;

/** Streams `[fail-midstream]` breaks off after their first event. */
const CUT_AFTER_FIRST_EVENT = new WeakSet<ServerResponse>();

function sse(res: ServerResponse, pauseMs: number, named: boolean, idHeader: string) {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    [idHeader]: `req_emu_stream_${Date.now()}`,
  });
  let first = true;
  return async (event: string | null, data: unknown) => {
    if (!first && pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    const cut = CUT_AFTER_FIRST_EVENT.has(res);
    if (!first && cut) return;
    first = false;
    if (res.destroyed) return;
    const line = `${named && event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;
    // A cut stream's connection drops once its first event is on the wire.
    res.write(line, cut ? () => res.destroy() : undefined);
  };
}

// ---------------------------------------------------------------------------------------------
// Refusals and helpers

/** What the provider refuses of images (the model table's ceilings), or null. */
function imageRefusal(
  images: readonly ImageSeen[],
  ceilings: ReturnType<typeof modelRules>["images"],
  bodyBytes: number,
): { status: number; message: string } | null {
  if (bodyBytes > ceilings.maxRequestBytes)
    return {
      status: 413,
      message: `Request exceeds the maximum allowed number of bytes (${ceilings.maxRequestBytes})`,
    };
  if (images.length > ceilings.maxImages)
    return { status: 400, message: `Too many images in the request: ${images.length} (at most ${ceilings.maxImages})` };
  for (const [i, image] of images.entries()) {
    if (image.mislabeled)
      return { status: 400, message: `image ${i}: Image does not match the provided media type ${image.mislabeled}` };
    if (image.bytes > ceilings.maxImageBytes)
      return {
        status: 400,
        message: `image ${i}: image exceeds ${Math.round(ceilings.maxImageBytes / 1_048_576)} MB maximum: ${image.bytes} bytes > ${ceilings.maxImageBytes} bytes`,
      };
    const edge = Math.max(image.width, image.height);
    if (edge > ceilings.maxEdge)
      return { status: 400, message: `image ${i}: dimensions exceed max allowed size: ${ceilings.maxEdge} pixels` };
    if (images.length > ceilings.manyImages && edge > ceilings.maxEdgeWhenMany) {
      return {
        status: 400,
        message: `image ${i}: dimensions exceed max allowed size for many-image requests: ${ceilings.maxEdgeWhenMany} pixels`,
      };
    }
  }
  return null;
}

function errorBody(provider: "anthropic" | "openai", status: number, message: string): unknown {
  if (provider === "openai")
    return {
      error: {
        message,
        type: status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error",
        param: null,
        code: null,
      },
    };
  const type =
    status === 401
      ? "authentication_error"
      : status === 404
        ? "not_found_error"
        : status === 413
          ? "request_too_large"
          : status === 429
            ? "rate_limit_error"
            : status === 529
              ? "overloaded_error"
              : status >= 500
                ? "api_error"
                : "invalid_request_error";
  return { type: "error", error: { type, message } };
}

/** `key` as an answer would echo it (see the module note, [leak:FORM]). */
function keyEchoed(key: string, form: string): string {
  if (form === "escaped") return [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
  if (form === "ellipsis") return `${key.slice(0, 13)}…${key.slice(-4)}`;
  if (form === "stars") return `${key.slice(0, 7)}***${key.slice(-4)}`;
  if (form === "dots") return `${key.slice(0, 3)}...${key.slice(-4)}`;
  if (form === "x") return `${key.slice(0, 8)}xxxxxxxx${key.slice(-4)}`;
  if (form === "base64") return Buffer.from(key).toString("base64");
  if (form === "basic") return `Basic ${Buffer.from(`api:${key}`).toString("base64")}`;
  if (form === "jwt")
    return `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify({ key })).toString("base64url")}.c2lnbmF0dXJl`;
  if (form === "percent")
    return [...Buffer.from(key)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("");
  return key;
}

/**
 * An answer that echoes the key (`echoed`, already as the JSON text it is written as): in a header
 * (a header cannot carry a JSON escape: there the plain key), and in the body's text, a whole JSON
 * answer or a stream whose key is cut across two writes.
 */
async function leakKey(
  res: ServerResponse,
  provider: "anthropic" | "openai",
  status: number,
  echoed: string,
  stream: boolean,
  stall: boolean,
): Promise<void> {
  // Header values are bytes: the key's UTF-8 (an ellipsis is 3 bytes), written as latin-1 characters.
  const plain: string = echoed.includes("\\u") ? JSON.parse(`"${echoed}"`) : echoed;
  const inHeader = Buffer.from(plain, "utf8").toString("latin1");
  const text = (part: string) =>
    provider === "anthropic"
      ? `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${part}"}}`
      : `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${part}"}}]}`;
  if (!stream) {
    const body =
      provider === "anthropic"
        ? `{"type":"message","role":"assistant","content":[{"type":"text","text":"your key: ${echoed}"}]}`
        : `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"your key: ${echoed}"}}]}`;
    res.writeHead(status, { "content-type": "application/json", "x-echo-key": inHeader });
    return void res.end(body);
  }
  res.writeHead(status, { "content-type": "text/event-stream", "x-echo-key": inHeader });
  const event = (data: string) => `${provider === "anthropic" ? "event: content_block_delta\n" : ""}data: ${data}\n\n`;
  res.write(event(text("first event")));
  if (stall) return; // the socket stays open until the caller goes
  await new Promise((resolve) => setTimeout(resolve, 25));
  const cut = Math.floor(echoed.length / 2);
  const [head, tail] = event(text(`your key: ${echoed}`)).split(echoed);
  res.write(`${head}${echoed.slice(0, cut)}`);
  await new Promise((resolve) => setTimeout(resolve, 25));
  res.write(`${echoed.slice(cut)}${tail}`);
  res.end(event(text("last event")));
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.writableEnded) return;
  const bytes = Buffer.from(JSON.stringify(body), "utf8");
  const named = Object.keys(headers).some((name) => name === ID_HEADER.anthropic || name === ID_HEADER.openai);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(bytes.length),
    ...(named ? {} : { "request-id": `req_emu_${Date.now()}` }),
    ...headers,
  });
  res.end(bytes);
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

function bearer(req: IncomingMessage): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header(req, "authorization") ?? "");
  return match ? match[1]! : null;
}
