/**
 * The replay CLI: reads or generates a session and prints what `cost` and its rivals (the old
 * keep-3 rule, Hermes 20/8/3 and 100/8/3, Anthropic's context editing at its defaults and with
 * clear_at_least, Claude Code's settings) pay the provider's prompt cache, side by side;
 * `--validate` checks the model against logged usage, `--suite` prints the target sessions in one
 * table, `--random N` where `cost` loses to hermes or to the cheapest rival over N random sessions,
 * and why. A thin wrapper: the cache models, rivals, sessions, session files and comparison are
 * the other files of cli/replay/; hermes and cost are the route's own code.
 *
 *   npm run replay -- --turns 40 --images 12
 *   npm run replay -- --session session.jsonl --format openai --json
 *   npm run replay -- --session logged.jsonl --validate
 *   npm run replay -- --suite
 *   npm run replay -- --random 500 --seed 1
 */
import { isMessagesLayout } from "../../shared/llm/formats.catalog";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { CHARS_PER_TOKEN } from "../../shared/llm/estimate";
import { KEEP_FLOOR, resolveLimits } from "../../shared/eviction/policy";
import {
  CACHE_MODELS,
  cacheModelFor,
  DEFAULT_PRICES,
  DEFAULT_THINK_MS,
  OPENAI_PRICES,
  type BreakpointLayout,
  type CacheKind,
  type CacheModel,
  type PolicyReport,
  type ReplayRequest,
} from "./cache.models";
import {
  compare,
  costLosses,
  RAISED_CEILING,
  RIVALS,
  routeModel,
  type Comparison,
  type CostLossReport,
} from "./compare";
import { parseSessionLine, validate, type RequestBody, type SessionLine } from "./jsonl";
import { bestSchedules, type Schedule } from "./schedules";
import { replayTextSession } from "./text";
import {
  DEFAULT_SESSION,
  generateSession,
  imagesIn,
  randomSessions,
  requestsFromTurns,
  requestTimes,
  TIER_SESSIONS,
  type ReplayTurn,
} from "./sessions";

const HELP = `Usage: npm run replay -- [options]

Session (generated unless --session is given):
  --session FILE          JSONL, one request per line: either a full request body
                          ({"messages": [...], "system"?, "tools"?, "format"?}, history included)
                          or a compact turn ({"text_tokens": 800, "images": 1 | [{"tokens","bytes","upload"}]})
  --format F              anthropic | openai, for request-body lines without "format" (anthropic)
  --turns N               turns (${DEFAULT_SESSION.turns})
  --images M              tool screenshots (${DEFAULT_SESSION.images}), one per turn from --first-image-turn
  --image-every K         a screenshot every K turns (${DEFAULT_SESSION.imageEvery})
  --first-image-turn T    first turn with a screenshot, 1-based (${DEFAULT_SESSION.firstImageTurn})
  --text-tokens T         text tokens per turn (${DEFAULT_SESSION.textTokens})
  --image-tokens I        tokens per image (${DEFAULT_SESSION.imageTokens})
  --image-bytes B         base64 characters per image, for the byte ceiling (${DEFAULT_SESSION.imageBytes})
  --system-tokens S       system prompt + tool definitions (${DEFAULT_SESSION.systemTokens})
  --chars-per-token C     for request-body lines: text characters per token (4)

  --think-seconds S       seconds between two requests of a generated session (${DEFAULT_THINK_MS / 1000})
  --pause-every N         a pause after every N requests (none)
  --pause-minutes M       length of each pause, on top of the think time (8 with --pause-every)

Policies:
  --limit N               block ceiling of the batched policy (default from policy.ts)
  --max-bytes N           byte ceiling (default from policy.ts)
  --batch N --floor N     batched policy knobs (defaults from policy.ts)
  --keep N                images the old rule keeps (${KEEP_FLOOR})
  --provider-max-blocks N Hermes's raised ceiling (${RAISED_CEILING}), and the cost strategy's true block
                          ceiling instead of the model table's (Anthropic 100 or 600, OpenAI 500)
  --model NAME            the model whose table row the route applies and the replay bills with
                          (prices, ceilings, TTL, minimum cacheable length; docs/eviction.md);
                          default: the cache model's provider default
  --no-manage-cache       the cost strategy places no breakpoint at the front
  --requests-left H       what the agent tells the cost strategy of the requests left
                          ("requests_left"): guess (default: it is told nothing), known (the
                          session's true length), or N (an iteration budget of N requests,
                          which the session may end before)

Cache model and prices:
  --cache C               openai-breakpoints: OpenAI from GPT-5.6 (an implicit breakpoint at the newest
                          message plus the service's explicit one, no lookback limit, 30 min,
                          writes billed at 1.25x);
                          anthropic (default): entries at cache_control breakpoints, read from a
                          breakpoint or within --lookback blocks before one, expiring after
                          --ttl-minutes idle; openai: automatic prefix caching from
                          --min-cacheable tokens in --step steps; ideal: the first replay's
                          longest unchanged prefix, no time
  --breakpoints B         anthropic: the agent's breakpoints: system_and_3 (default), rolling,
                          or session (the cache_control blocks of --session request bodies)
  --ttl-minutes T         idle minutes before an entry expires (5; 60 = Anthropic's 1-hour TTL,
                          whose writes cost 2x unless --write-multiplier says otherwise)
  --lookback N            anthropic: blocks searched before each breakpoint (20)
  --min-cacheable N       shortest cached prefix in tokens (1024; e.g. 2048 or 4096 for some models)
  --step N                openai: cache hits grow in steps of N tokens (128)
  --granularity G         ideal: cache reads count in whole units of G tokens (1 = exact prefix)
  --placeholder-tokens P  tokens of a retired image's text (10)
  --input-price P         $ per million input tokens (anthropic/ideal ${DEFAULT_PRICES.inputPerMTok}, openai ${OPENAI_PRICES.inputPerMTok})
  --write-multiplier W    cache write price / input price (anthropic ${DEFAULT_PRICES.writeMultiplier}, openai ${OPENAI_PRICES.writeMultiplier})
  --read-multiplier R     cache read price / input price (anthropic ${DEFAULT_PRICES.readMultiplier}, openai ${OPENAI_PRICES.readMultiplier})
  --uncached-multiplier U input neither read nor written / input price (1)

Output:
  --json                  one JSON object {keep3, batched, raised, cost, cost_known, none, session, model}
  --validate              with --session request bodies carrying "usage" (and "at"): modelled
                          vs logged cache writes, reads and uncached input per request
  --text                  a page-text session (one web_extract result of 12,000-20,000 characters a
                          turn; --turns, --model, --think-seconds) sent as written, under context
                          editing at its defaults, the every-15 batch, and retired by cost
                          (proxy.retire_tool_results), through the one prompt-cache model
  --suite                 the target sessions (light, heavy, with and without pauses) side by side,
                          then the sessions on models with a price tier (Haiku 5.5, Sonnet 4.5 1M),
                          each billed at its own model's tier
  --schedules             for the session: the cheapest schedule of one or two moves down to the
                          floor, and the cheapest that stays within 5 % of hermes at every cut
                          after its first move (where a target is out of reach, the best that exists)
  --random N              N random sessions (the property tests' ranges): how often and by how much
                          the cost strategy (as --requests-left says) costs more than hermes 20/8/3
                          or than the cheapest rival + 2 %, and for each such session why;
                          --seed S picks the sessions (1)
`;

const { values } = parseArgs({
  options: {
    session: { type: "string" },
    format: { type: "string", default: "anthropic" },
    turns: { type: "string" },
    images: { type: "string" },
    "image-every": { type: "string" },
    "first-image-turn": { type: "string" },
    "text-tokens": { type: "string" },
    "image-tokens": { type: "string" },
    "image-bytes": { type: "string" },
    "system-tokens": { type: "string" },
    "chars-per-token": { type: "string" },
    limit: { type: "string" },
    "max-bytes": { type: "string" },
    batch: { type: "string" },
    floor: { type: "string" },
    keep: { type: "string" },
    granularity: { type: "string" },
    "placeholder-tokens": { type: "string" },
    "input-price": { type: "string" },
    "write-multiplier": { type: "string" },
    "read-multiplier": { type: "string" },
    "uncached-multiplier": { type: "string" },
    cache: { type: "string", default: "anthropic" },
    breakpoints: { type: "string" },
    "ttl-minutes": { type: "string" },
    lookback: { type: "string" },
    "min-cacheable": { type: "string" },
    step: { type: "string" },
    "think-seconds": { type: "string" },
    "pause-every": { type: "string" },
    "pause-minutes": { type: "string" },
    "provider-max-blocks": { type: "string" },
    model: { type: "string" },
    "no-manage-cache": { type: "boolean", default: false },
    "requests-left": { type: "string" },
    validate: { type: "boolean", default: false },
    suite: { type: "boolean", default: false },
    text: { type: "boolean", default: false },
    schedules: { type: "boolean", default: false },
    random: { type: "string" },
    seed: { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});

if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

function number(name: keyof typeof values, fallback: number, { integer = true, min = 0 } = {}): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    process.stderr.write(`--${name} must be ${integer ? "an integer" : "a number"} >= ${min}, got "${String(raw)}"\n`);
    process.exit(2);
  }
  return n;
}
/** `--requests-left`: guess (default), known (the session's true length), or a budget of N requests. */
function requestsLeftOption(raw: string | undefined): "guess" | "known" | number {
  if (raw === undefined || raw === "guess" || raw === "known") return raw ?? "guess";
  return number("requests-left", 0, { min: 1 });
}
const optional = (name: keyof typeof values, min = 1) =>
  values[name] === undefined ? undefined : number(name, 0, { min });

function choice<T extends string>(name: keyof typeof values, allowed: readonly T[]): T {
  const raw = String(values[name]);
  if (!(allowed as readonly string[]).includes(raw)) {
    process.stderr.write(`--${name} must be one of ${allowed.join(", ")}, got "${raw}"\n`);
    process.exit(2);
  }
  return raw as T;
}

const cacheKind = choice<CacheKind>("cache", ["anthropic", "openai", "openai-breakpoints", "ideal"]);
const routed = routeModel(cacheKind, values.model);
const tabled = cacheModelFor(
  routed.provider,
  routed.model,
  values["ttl-minutes"] !== undefined && Number(values["ttl-minutes"]) >= 60,
);
const base: CacheModel =
  cacheKind === "ideal"
    ? CACHE_MODELS.ideal
    : { ...CACHE_MODELS[cacheKind], ttlMs: tabled.model.ttlMs, minCacheableTokens: tabled.model.minCacheableTokens };
const ttlMinutes = number("ttl-minutes", base.ttlMs / 60_000, { integer: false, min: 0 });
const model = {
  ...base,
  granularity: number("granularity", base.granularity, { min: 1 }),
  placeholderTokens: number("placeholder-tokens", base.placeholderTokens),
  ttlMs: ttlMinutes * 60_000,
  lookback: number("lookback", base.lookback),
  minCacheableTokens: number("min-cacheable", base.minCacheableTokens),
  step: number("step", base.step, { min: 1 }),
  breakpoints:
    values.breakpoints === undefined
      ? base.breakpoints
      : choice<BreakpointLayout>("breakpoints", ["system_and_3", "automatic", "rolling", "session"]),
} as { -readonly [K in keyof CacheModel]: CacheModel[K] };
const basePrices = tabled.prices;
const prices = {
  inputPerMTok: number("input-price", basePrices.inputPerMTok, { integer: false }),
  writeMultiplier: number("write-multiplier", basePrices.writeMultiplier, { integer: false }),
  readMultiplier: number("read-multiplier", basePrices.readMultiplier, { integer: false }),
  uncachedMultiplier: number("uncached-multiplier", basePrices.uncachedMultiplier ?? 1, { integer: false }),
  // The model's price tiers, as factors of whatever input price is given (docs/eviction.md).
  ...(basePrices.tiers === undefined ? {} : { tiers: basePrices.tiers }),
};
const pace = {
  thinkSeconds: number("think-seconds", DEFAULT_THINK_MS / 1000, { integer: false }),
  pauseEvery: number("pause-every", 0),
  pauseMinutes: number("pause-minutes", values["pause-every"] === undefined ? 0 : 8, { integer: false }),
};
const limits = resolveLimits({
  maxBlocks: optional("limit"),
  maxBytes: optional("max-bytes"),
  batch: optional("batch"),
  floor: optional("floor", 0),
});
const keep = number("keep", KEEP_FLOOR);
const providerMaxBlocks = optional("provider-max-blocks");
const raised = providerMaxBlocks ?? RAISED_CEILING;
const manageCache = !values["no-manage-cache"];
const horizon = requestsLeftOption(values["requests-left"]);
const compareOptions = {
  limits,
  keep,
  model,
  prices,
  providerMaxBlocks,
  manageCache,
  horizon,
  ...(values.model === undefined ? {} : { modelName: values.model }),
};
let bodies: RequestBody[] | undefined;

const format = isMessagesLayout(values.format) ? values.format : "anthropic";
const imageTokens = number("image-tokens", DEFAULT_SESSION.imageTokens);
const imageBytes = number("image-bytes", DEFAULT_SESSION.imageBytes);
const systemTokens = number("system-tokens", DEFAULT_SESSION.systemTokens);

let requests: ReplayRequest[];
let times: number[];
let sessionInfo: Record<string, unknown>;
if (values.session) {
  const lines = readFileSync(values.session, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const body = { imageTokens, charsPerToken: number("chars-per-token", CHARS_PER_TOKEN, { integer: false, min: 0.1 }) };
  const parsed = lines.map((line, i) => {
    try {
      return parseSessionLine(line, format, body, { tokens: imageTokens, bytes: imageBytes });
    } catch (error) {
      process.stderr.write(`${values.session}:${i + 1}: ${(error as Error).message}\n`);
      process.exit(2);
    }
  });
  const turns = parsed.flatMap((p) => (p.kind === "turn" ? [p.turn] : []));
  if (turns.length > 0 && turns.length < parsed.length) {
    process.stderr.write("a session file holds either request bodies or compact turns, not both\n");
    process.exit(2);
  }
  const logged = parsed.filter((p): p is Extract<SessionLine, { kind: "request" }> => p.kind === "request");
  // Logged bodies carry the agent's own breakpoints: use them unless told otherwise.
  if (turns.length === 0 && values.breakpoints === undefined) model.breakpoints = "session";
  if (values.validate) {
    if (logged.length === 0 || logged.some((b) => b.usage === undefined)) {
      process.stderr.write('--validate needs request bodies that each carry the provider\'s "usage"\n');
      process.exit(2);
    }
    const validation = validate(logged, model);
    process.stdout.write(values.json ? `${JSON.stringify(validation, null, 2)}\n` : renderValidation(validation));
    process.exit(0);
  }
  requests = turns.length > 0 ? requestsFromTurns(turns, systemTokens) : logged.map((p) => p.segments);
  times = turns.length > 0 ? requestTimes(requests.length, pace) : logged.map((b, i) => b.at ?? i * DEFAULT_THINK_MS);
  if (turns.length === 0) bodies = logged.map((b) => b.body);
  sessionInfo = { file: values.session, requests: requests.length, kind: turns.length > 0 ? "turns" : "requests" };
} else if (values.random !== undefined) {
  const report = costLosses(randomSessions(number("random", 0, { min: 1 }), number("seed", 1)), {
    model,
    prices,
    limits,
    horizon,
    manageCache,
    providerMaxBlocks,
  });
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : renderLosses(report));
  process.exit(0);
} else if (values.suite) {
  process.stdout.write(renderSuite());
  process.exit(0);
} else if (values.text) {
  // A page-text session: 60 turns unless --turns, Claude Sonnet 4.6 unless --model.
  const turns = number("turns", 60);
  const model = values.model ?? "claude-sonnet-4-6";
  const report = replayTextSession(turns, model, number("think-seconds", 30) * 1000);
  if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    const rows = [
      `| the same ${turns} requests (${model}) | cost | vs as sent | cache writes | cache reads |`,
      "|---|---:|---:|---:|---:|",
      ...Object.entries(report).map(
        ([way, r]) =>
          `| ${way} | $${r.usd.toFixed(2)} | ${((r.usd / report.sent.usd - 1) * 100).toFixed(0)} % | ${r.cacheWrites.toLocaleString("en-US")} | ${r.cacheReads.toLocaleString("en-US")} |`,
      ),
    ];
    process.stdout.write(`${rows.join("\n")}\n`);
  }
  process.exit(0);
} else {
  const turns: ReplayTurn[] = generateSession({
    turns: number("turns", DEFAULT_SESSION.turns),
    images: number("images", DEFAULT_SESSION.images),
    imageEvery: number("image-every", DEFAULT_SESSION.imageEvery, { min: 1 }),
    firstImageTurn: number("first-image-turn", DEFAULT_SESSION.firstImageTurn, { min: 1 }),
    textTokens: number("text-tokens", DEFAULT_SESSION.textTokens),
    imageTokens,
    imageBytes,
  });
  requests = requestsFromTurns(turns, systemTokens);
  times = requestTimes(requests.length, pace);
  sessionInfo = {
    generated: true,
    turns: turns.length,
    images: imagesIn(turns),
    image_every: number("image-every", DEFAULT_SESSION.imageEvery, { min: 1 }),
    text_tokens: number("text-tokens", DEFAULT_SESSION.textTokens),
    image_tokens: imageTokens,
    image_bytes: imageBytes,
    system_tokens: systemTokens,
    think_seconds: pace.thinkSeconds,
    ...(pace.pauseEvery > 0 ? { pause_every: pace.pauseEvery, pause_minutes: pace.pauseMinutes } : {}),
  };
}

if (values.schedules) {
  const found = bestSchedules(requests, times, model, prices);
  const line = (s: Schedule | null) =>
    s === null
      ? "none"
      : `moves at requests ${s.moves.join(", ")}: $${s.cost.toFixed(4)}, worst cut ${(s.worst_cut_excess * 100).toFixed(1)} % against hermes`;
  process.stdout.write(
    values.json
      ? `${JSON.stringify(found, null, 2)}\n`
      : `${describeModel()}\n${found.tried} schedules: cheapest ${line(found.best)}; cheapest within 5 % of hermes at every cut ${line(found.safest)}\n`,
  );
  process.exit(0);
}

const result = compare(requests, { ...compareOptions, times, ...(bodies ? { bodies } : {}) });

if (values.json) {
  const modelInfo = {
    ...model,
    prices,
    limits,
    keep,
    provider_max_blocks: providerMaxBlocks,
    manage_cache: manageCache,
  };
  process.stdout.write(`${JSON.stringify({ ...result, session: sessionInfo, model: modelInfo }, null, 2)}\n`);
} else {
  process.stdout.write(renderTable(result, sessionInfo));
}

function describeModel(): string {
  const rules =
    model.kind === "anthropic"
      ? `anthropic: entries at breakpoints (${model.breakpoints}, at most ${model.maxBreakpoints}), read within ${model.lookback} blocks before a breakpoint, TTL ${ttlMinutes} min from last use, min ${model.minCacheableTokens} tokens`
      : model.kind === "openai"
        ? `openai: automatic prefix cache from ${model.minCacheableTokens} tokens in ${model.step}-token steps, idle expiry ${ttlMinutes} min`
        : `ideal: longest unchanged prefix since the previous request (granularity ${model.granularity} tokens), no expiry`;
  const tiers = (prices.tiers ?? []).map(
    (t) => `; prompts over ${int(t.abovePromptTokens)} tokens billed whole at ${t.factor}x`,
  );
  return `model: ${rules}; write ${prices.writeMultiplier}x, read ${prices.readMultiplier}x, uncached ${prices.uncachedMultiplier}x of $${prices.inputPerMTok}/MTok${tiers.join("")}`;
}

function int(n: number): string {
  return n.toLocaleString("en-US");
}

function markdownTable(header: string[], body: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `${"-".repeat(w + 1)}-` : `${"-".repeat(w + 1)}:`)).join("|")}|`;
  return [line(header), rule, ...body.map(line)];
}

function renderTable(r: Comparison, session: Record<string, unknown>): string {
  const rows: Array<[string, (p: PolicyReport) => string]> = [
    ["requests", (p) => int(p.requests)],
    ["input tokens", (p) => int(p.input_tokens)],
    ["cache-write tokens", (p) => int(p.cache_write_tokens)],
    ["cache-read tokens", (p) => int(p.cache_read_tokens)],
    ["uncached input tokens", (p) => int(p.uncached_tokens)],
    ["writes caused by evictions", (p) => int(p.eviction_write_tokens)],
    ["share of writes from evictions", (p) => `${(p.eviction_write_share * 100).toFixed(1)} %`],
    ["prefix collapses (requests)", (p) => int(p.collapses)],
    ["cold requests (cache expired)", (p) => int(p.cold_requests)],
    ["worst request: write tokens", (p) => `${int(p.worst_request_write_tokens)} (#${p.worst_request + 1})`],
    ["worst request: eviction writes", (p) => int(p.worst_request_eviction_write_tokens)],
    ["most images in one request", (p) => int(p.max_image_blocks)],
    ["requests over the ceiling", (p) => int(p.requests_over_ceiling)],
    ["requests over 4 breakpoints", (p) => int(p.requests_over_breakpoints)],
    ...(prices.tiers === undefined
      ? []
      : [
          ["requests over the price tier", (p: PolicyReport) => int(p.requests_over_tier)] as [
            string,
            (p: PolicyReport) => string,
          ],
        ]),
    [`cost ($${prices.inputPerMTok}/MTok input)`, (p) => `$${p.cost.toFixed(4)}`],
  ];
  const header = [
    "",
    `keep-${keep}`,
    `hermes ${limits.maxBlocks}/${limits.batch}/${limits.floor}`,
    `hermes ${raised}/${limits.batch}/${limits.floor}`,
    "context editing",
    "ctx editing, clear_at_least",
    "claude code",
    horizon === "guess" ? "cost" : `cost (requests_left ${horizon})`,
    "cost (length known)",
    "no eviction (ref.)",
  ];
  const policies = [
    r.keep3,
    r.batched,
    r.raised,
    r.context_editing,
    r.context_editing_clear_at_least,
    r.claude_code,
    r.cost,
    r.cost_known,
    r.none,
  ];
  const body = rows.map(([name, cell]) => [name, ...policies.map(cell)]);
  const describe = Object.entries(session)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(" ");
  return [`session: ${describe}`, describeModel(), "", ...markdownTable(header, body), ""].join("\n");
}

function renderValidation(v: ReturnType<typeof validate>): string {
  const cells = (u: { cacheWriteTokens: number; cacheReadTokens: number; inputTokens: number }) => [
    int(u.cacheWriteTokens),
    int(u.cacheReadTokens),
    int(u.inputTokens),
  ];
  const header = [
    "request",
    "modelled write",
    "modelled read",
    "modelled uncached",
    "logged write",
    "logged read",
    "logged uncached",
  ];
  const body = v.rows.map((row) => [`#${row.request + 1}`, ...cells(row.modelled), ...cells(row.logged)]);
  return [
    describeModel(),
    "",
    ...markdownTable(header, body),
    "",
    `total error: ${int(v.total_error_tokens)} tokens (${(v.error_share * 100).toFixed(2)} % of the logged input)`,
    "",
  ].join("\n");
}

/**
 * The targets of docs/eviction.md a comparison misses: `cost` (told nothing) no dearer than the
 * cheapest rival + 2 % and its worst request no larger than the rivals' largest; on a heavy session
 * also 20 % below keep-3, Hermes 20/8/3 and context editing; told the length, below every rival.
 */
function missed(r: Comparison, heavy: boolean): string[] {
  const out: string[] = [];
  const cheapest = Math.min(...RIVALS.map((k) => r[k].cost));
  if (r.cost.cost > cheapest * 1.02) out.push("cheapest + 2 %");
  if (r.cost.worst_request_write_tokens > Math.max(...RIVALS.map((k) => r[k].worst_request_write_tokens)))
    out.push("worst request");
  if (heavy)
    for (const k of ["keep3", "batched", "context_editing"] as const)
      if (r.cost.cost > r[k].cost * 0.8) out.push(`-20 % vs ${k}`);
  if (heavy && r.cost_known.cost > cheapest) out.push("known below every rival");
  return out;
}

/** The issue's target sessions, each with and without pauses, in one table. */
function renderSuite(): string {
  const shapes: Array<[string, { turns: number; images: number; imageEvery?: number }]> = [
    ["light: 12 screenshots, 40 turns", { turns: 40, images: 12 }],
    ["heavy: 60 screenshots, 80 turns", { turns: 80, images: 60 }],
    ["heavy: 36 screenshots, 50 turns", { turns: 50, images: 36 }],
    ["heavy: every 3rd turn, 90 turns", { turns: 90, images: 90, imageEvery: 3 }],
  ];
  const pauseEvery = pace.pauseEvery || 15;
  const pauseMinutes = pace.pauseMinutes || 8;
  const paces = [
    ["", { thinkSeconds: pace.thinkSeconds, pauseEvery: 0, pauseMinutes: 0 }],
    [` + ${pauseMinutes}-min pause every ${pauseEvery}`, { thinkSeconds: pace.thinkSeconds, pauseEvery, pauseMinutes }],
  ] as const;
  const cell = (x: PolicyReport) => `$${x.cost.toFixed(2)} / ${int(x.worst_request_write_tokens)}`;
  const pct = (x: number, of: number) => `${x >= of ? "+" : ""}${(((x - of) / of) * 100).toFixed(0)} %`;
  const body: string[][] = [];
  for (const [name, shape] of shapes) {
    const reqs = requestsFromTurns(
      generateSession({ ...shape, textTokens: DEFAULT_SESSION.textTokens, imageTokens, imageBytes }),
      systemTokens,
    );
    for (const [suffix, p] of paces) {
      const r = compare(reqs, { ...compareOptions, times: requestTimes(reqs.length, p) });
      const cheapest = Math.min(...RIVALS.map((k) => r[k].cost));
      body.push([
        name + suffix,
        ...RIVALS.map((k) => cell(r[k])),
        cell(r.cost),
        `${pct(r.cost.cost, cheapest)} / ${pct(r.cost.cost, r.keep3.cost)} / ${pct(r.cost.cost, r.batched.cost)} / ${pct(r.cost.cost, r.context_editing.cost)}`,
        missed(r, name.startsWith("heavy")).join(", ") || "met",
        cell(r.cost_known),
        pct(r.cost_known.cost, cheapest),
      ]);
    }
  }
  const header = [
    "session",
    `keep-${keep}: cost / worst writes`,
    `hermes ${limits.maxBlocks}/${limits.batch}/${limits.floor}`,
    `hermes ${raised}/${limits.batch}/${limits.floor}`,
    "context editing",
    "ctx editing, clear_at_least 50k",
    "claude code",
    horizon === "guess" ? "cost" : `cost, requests_left ${horizon}`,
    "cost vs cheapest rival / keep-3 / hermes / ctx editing",
    "targets missed",
    "cost, requests_left known",
    "known vs cheapest rival",
  ];
  return [describeModel(), "", ...markdownTable(header, body), "", ...renderTierSuite(), ""].join("\n");
}

/**
 * The sessions on models with a price tier, each billed with its own model's row (prices, tier,
 * minimum cacheable length): cost and requests over the tier's line per rival, and the targets
 * (docs/eviction.md, "Prices as billed").
 */
function renderTierSuite(): string[] {
  const body: string[][] = [];
  for (const session of TIER_SESSIONS) {
    const tabled = cacheModelFor("anthropic", session.model);
    const reqs = requestsFromTurns(generateSession({ ...session.shape, imageBytes }), systemTokens);
    const r = compare(reqs, {
      ...compareOptions,
      model: { ...CACHE_MODELS.anthropic, ...tabled.model },
      prices: tabled.prices,
      modelName: session.model,
      times: requestTimes(reqs.length, pace),
    });
    const cell = (x: PolicyReport) => `$${x.cost.toFixed(3)} / ${x.requests_over_tier}`;
    const cheapest = Math.min(r.none.cost, r.batched.cost, r.keep3.cost);
    const missedTier = [
      ...(r.cost.requests_over_tier > r.keep3.requests_over_tier + 2 ? ["over the line: keep-3 + 2"] : []),
      ...(r.cost.cost > 0.7 * cheapest ? ["0.7x the cheapest"] : []),
    ];
    body.push([
      session.name,
      cell(r.none),
      cell(r.keep3),
      cell(r.batched),
      cell(r.raised),
      cell(r.context_editing),
      cell(r.claude_code),
      cell(r.cost),
      `${(r.cost.cost / cheapest).toFixed(2)}x`,
      missedTier.join(", ") || "met",
      cell(r.cost_known),
    ]);
  }
  const header = [
    "session (its model's tier)",
    "as sent: cost / requests over the line",
    `keep-${keep}`,
    `hermes ${limits.maxBlocks}/${limits.batch}/${limits.floor}`,
    `hermes ${raised}/${limits.batch}/${limits.floor}`,
    "context editing",
    "claude code",
    "cost",
    "cost vs cheapest of as sent, hermes, keep-3",
    "targets missed",
    "cost, requests_left known",
  ];
  return ["Prices as billed (each session at its own model's price tier):", "", ...markdownTable(header, body)];
}

/** Where cost loses to hermes over random sessions: a summary line, then one row per loss with why. */
function renderLosses(r: CostLossReport): string {
  const pct = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)} %`;
  const told = horizon === "guess" ? "told nothing" : `requests_left ${horizon}`;
  const share = (n: number) => `${n} (${((n / Math.max(1, r.sessions)) * 100).toFixed(1)} %)`;
  const dearer = r.losses.filter((loss) => loss.excess > 1e-9).length;
  const summary = [
    `cost (${told}) over ${r.sessions} random sessions:`,
    `- against hermes ${limits.maxBlocks}/${limits.batch}/${limits.floor}: dearer in ${share(dearer)}, worst ${pct(r.worst_excess)}, mean ${pct(r.mean_excess)}`,
    `- against the cheapest rival of each session: over it + 2 % in ${share(r.over_rival)}, worst ${pct(r.worst_excess_over_rival)}`,
  ];
  const body = r.losses.map((loss) => {
    const s = loss.session;
    const shape = `${s.turns} turns, ${imagesIn(generateSession(s))} images every ${s.imageEvery}, text ${s.textTokens}, image ${s.imageTokens}, system ${s.systemTokens}, ${s.thinkSeconds} s${s.pauseEvery ? `, ${s.pauseMinutes}-min pause every ${s.pauseEvery}` : ""}`;
    return [shape, pct(loss.excess), `${loss.rival} ${pct(loss.excess_over_rival)}`, loss.why];
  });
  const table =
    body.length > 0 ? ["", ...markdownTable(["session", "cost vs hermes", "vs cheapest rival", "why"], body)] : [];
  return [describeModel(), "", ...summary, ...table, ""].join("\n");
}
