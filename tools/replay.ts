/**
 * The replay CLI: reads or generates a session and prints what the old keep-3 rule and the batched
 * eviction policy pay the provider's prompt cache, side by side. A thin wrapper: the model is in
 * shared/eviction/replay.ts, the policy in shared/eviction/policy.ts.
 *
 *   npm run replay -- --turns 40 --images 12
 *   npm run replay -- --session session.jsonl --format openai --json
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { KEEP_FLOOR, resolveLimits } from "../shared/eviction/policy";
import {
  compare,
  DEFAULT_CACHE_MODEL,
  DEFAULT_PRICES,
  DEFAULT_SESSION,
  generateSession,
  imagesIn,
  parseSessionLine,
  requestsFromTurns,
  type PolicyReport,
  type ReplayRequest,
  type ReplayTurn,
} from "../shared/eviction/replay";

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

Policies:
  --limit N               block ceiling of the batched policy (default from policy.ts)
  --max-bytes N           byte ceiling (default from policy.ts)
  --batch N --floor N     batched policy knobs (defaults from policy.ts)
  --keep N                images the old rule keeps (${KEEP_FLOOR})

Cache model and prices:
  --granularity G         cache reads count in whole units of G tokens (${DEFAULT_CACHE_MODEL.granularity} = exact prefix)
  --placeholder-tokens P  tokens of a retired image's text (${DEFAULT_CACHE_MODEL.placeholderTokens})
  --input-price P         $ per million input tokens (${DEFAULT_PRICES.inputPerMTok})
  --write-multiplier W    cache write price / input price (${DEFAULT_PRICES.writeMultiplier})
  --read-multiplier R     cache read price / input price (${DEFAULT_PRICES.readMultiplier})

Output:
  --json                  one JSON object {keep3, batched, none, session, model}
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
const optional = (name: keyof typeof values, min = 1) => (values[name] === undefined ? undefined : number(name, 0, { min }));

const format = values.format === "openai" ? "openai" : "anthropic";
const imageTokens = number("image-tokens", DEFAULT_SESSION.imageTokens);
const imageBytes = number("image-bytes", DEFAULT_SESSION.imageBytes);
const systemTokens = number("system-tokens", DEFAULT_SESSION.systemTokens);

let requests: ReplayRequest[];
let sessionInfo: Record<string, unknown>;
if (values.session) {
  const lines = readFileSync(values.session, "utf8").split("\n").filter((l) => l.trim() !== "");
  const body = { imageTokens, charsPerToken: number("chars-per-token", 4, { integer: false, min: 0.1 }) };
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
  requests = turns.length > 0 ? requestsFromTurns(turns, systemTokens) : parsed.map((p) => (p.kind === "request" ? p.segments : []));
  sessionInfo = { file: values.session, requests: requests.length, kind: turns.length > 0 ? "turns" : "requests" };
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
  sessionInfo = {
    generated: true,
    turns: turns.length,
    images: imagesIn(turns),
    image_every: number("image-every", DEFAULT_SESSION.imageEvery, { min: 1 }),
    text_tokens: number("text-tokens", DEFAULT_SESSION.textTokens),
    image_tokens: imageTokens,
    image_bytes: imageBytes,
    system_tokens: systemTokens,
  };
}

const limits = resolveLimits({
  maxBlocks: optional("limit"),
  maxBytes: optional("max-bytes"),
  batch: optional("batch"),
  floor: optional("floor", 0),
});
const model = {
  granularity: number("granularity", DEFAULT_CACHE_MODEL.granularity, { min: 1 }),
  placeholderTokens: number("placeholder-tokens", DEFAULT_CACHE_MODEL.placeholderTokens),
};
const prices = {
  inputPerMTok: number("input-price", DEFAULT_PRICES.inputPerMTok, { integer: false }),
  writeMultiplier: number("write-multiplier", DEFAULT_PRICES.writeMultiplier, { integer: false }),
  readMultiplier: number("read-multiplier", DEFAULT_PRICES.readMultiplier, { integer: false }),
};
const keep = number("keep", KEEP_FLOOR);
const result = compare(requests, { limits, keep, model, prices });

if (values.json) {
  const modelInfo = { ...model, prices, limits, keep };
  process.stdout.write(`${JSON.stringify({ ...result, session: sessionInfo, model: modelInfo }, null, 2)}\n`);
} else {
  process.stdout.write(renderTable(result, sessionInfo, limits, keep, model.granularity, prices.inputPerMTok));
}

function renderTable(
  r: { keep3: PolicyReport; batched: PolicyReport; none: PolicyReport },
  session: Record<string, unknown>,
  l: typeof limits,
  keepN: number,
  granularity: number,
  price: number,
): string {
  const int = (n: number) => n.toLocaleString("en-US");
  const rows: Array<[string, (p: PolicyReport) => string]> = [
    ["requests", (p) => int(p.requests)],
    ["input tokens", (p) => int(p.input_tokens)],
    ["cache-write tokens", (p) => int(p.cache_write_tokens)],
    ["cache-read tokens", (p) => int(p.cache_read_tokens)],
    ["writes caused by evictions", (p) => int(p.eviction_write_tokens)],
    ["share of writes from evictions", (p) => `${(p.eviction_write_share * 100).toFixed(1)} %`],
    ["prefix collapses (requests)", (p) => int(p.collapses)],
    ["worst request: write tokens", (p) => `${int(p.worst_request_write_tokens)} (#${p.worst_request + 1})`],
    ["worst request: eviction writes", (p) => int(p.worst_request_eviction_write_tokens)],
    ["most images in one request", (p) => int(p.max_image_blocks)],
    ["requests over the ceiling", (p) => int(p.requests_over_ceiling)],
    [`cost ($${price}/MTok input)`, (p) => `$${p.cost.toFixed(4)}`],
  ];
  const header = ["", `keep-${keepN}`, `batched (${l.maxBlocks}/${l.batch}/${l.floor})`, "no eviction (ref.)"];
  const body = rows.map(([name, cell]) => [name, cell(r.keep3), cell(r.batched), cell(r.none)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `${"-".repeat(w + 1)}-` : `${"-".repeat(w + 1)}:`)).join("|")}|`;
  const describe = Object.entries(session)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(" ");
  return [
    `session: ${describe}`,
    `model: cache read = longest unchanged prefix since the previous request (granularity ${granularity} tokens), write = the rest; write ${prices.writeMultiplier}x, read ${prices.readMultiplier}x input`,
    "",
    line(header),
    rule,
    ...body.map(line),
    "",
  ].join("\n");
}
