/**
 * Times the eviction policy where it runs: on every outbound request. A 2,000-message conversation
 * with 300 tool screenshots (60 KB of base64 each, so the block ceiling binds) in both formats;
 * prints the median µs per request of the whole `evictContext` and of its parts, for the default
 * strategy (hermes) and for `cost` (which also reads each image's header and estimates tokens;
 * Anthropic with manage_cache, so the front breakpoint is placed too).
 *
 *   npx tsx bench/eviction.bench.ts [--runs 500]
 */
import { ANTHROPIC_MESSAGES } from "../shared/llm/anthropic.messages";
import { evictContext } from "../shared/eviction/evict.service";
import type { WireFormat } from "../shared/llm/format";
import { OPENAI_CHAT } from "../shared/llm/openai.chat";
import { imageSteps, retirementFront } from "../shared/eviction/policy";
import { conversation, pngBase64, type Format, type Turn } from "../test/node/eviction.fixtures";

const MESSAGES = 2_000;
const IMAGES = 300;
const IMAGE_BYTES = 60_000;
const runsFlag = process.argv.indexOf("--runs");
const RUNS = runsFlag > 0 ? Number(process.argv[runsFlag + 1]) : 500;
const WARMUP = 100;

/** 300 tool turns (2 messages each) spread evenly among 1,400 text messages. */
function session(): Turn[] {
  const turns: Turn[] = [];
  const textMessages = MESSAGES - 2 * IMAGES;
  for (let i = 0; i < IMAGES; i++) {
    turns.push({ kind: "tool", images: [IMAGE_BYTES] });
    const texts = Math.floor(((i + 1) * textMessages) / IMAGES) - Math.floor((i * textMessages) / IMAGES);
    for (let j = 0; j < texts; j++) turns.push({ kind: "text", text: `step ${i}.${j}: ${"reasoning ".repeat(20)}` });
  }
  return turns;
}

function medianMicros(fn: () => unknown): number {
  for (let i = 0; i < WARMUP; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    fn();
    samples.push((performance.now() - start) * 1_000);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

const adapters: Record<Format, WireFormat> = { anthropic: ANTHROPIC_MESSAGES, openai: OPENAI_CHAT };
const rows: string[][] = [];
for (const format of ["anthropic", "openai"] as const) {
  const messages = conversation(format, session());
  if (messages.length !== MESSAGES) throw new Error(`built ${messages.length} messages, wanted ${MESSAGES}`);
  const adapter = adapters[format];
  const result = evictContext({ format, messages });
  const inventory = adapter.inventory(messages);
  const steps = imageSteps(inventory);
  const retired = inventory.carriers.slice(0, result.retired);

  rows.push([
    format,
    String(result.retired),
    medianMicros(() => evictContext({ format, messages })).toFixed(1),
    medianMicros(() => adapter.inventory(messages)).toFixed(1),
    medianMicros(() => retirementFront(steps)).toFixed(1),
    medianMicros(() => adapter.retire(messages, retired)).toFixed(1),
  ]);
}

/** The same conversation with real PNG headers (1280 × 800) in every image, so `cost` reads real sizes. */
function withPngHeaders(messages: Record<string, unknown>[]): Record<string, unknown>[] {
  const png = pngBase64(1_280, 800, IMAGE_BYTES);
  return messages.map((message) => {
    const content = message.content;
    if (!Array.isArray(content)) return message;
    const swap = (part: any): any =>
      part?.type === "image" && part.source?.type === "base64"
        ? { ...part, source: { ...part.source, data: png } }
        : part?.type === "image_url"
          ? { ...part, image_url: { url: `data:image/png;base64,${png}` } }
          : part?.type === "tool_result" && Array.isArray(part.content)
            ? { ...part, content: part.content.map(swap) }
            : part;
    return { ...message, content: content.map(swap) };
  });
}

const costRows: string[][] = [];
for (const format of ["anthropic", "openai"] as const) {
  const messages = withPngHeaders(conversation(format, session()));
  const hermes = { format, messages };
  const cost = {
    format,
    messages,
    strategy: "cost",
    provider: format,
    ...(format === "anthropic" ? { manage_cache: true } : {}),
  } as const;
  const told = { ...cost, session_id: "bench", requests_left: 90 } as const;
  const costResult = evictContext(cost, { now: 0 });
  const toldResult = evictContext(told, { now: 0 });
  costRows.push([
    format,
    medianMicros(() => evictContext(hermes)).toFixed(1),
    `${costResult.retired} (${costResult.stats.reason})`,
    medianMicros(() => evictContext(cost, { now: 0 })).toFixed(1),
    `${toldResult.retired} (${toldResult.stats.reason})`,
    medianMicros(() => evictContext(told, { now: 0 })).toFixed(1),
  ]);
}

function print(header: string[], body: string[][]) {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  console.log(line(header));
  console.log(`|${widths.map((w, i) => `${"-".repeat(w + 1)}${i === 0 ? "-" : ":"}`).join("|")}|`);
  for (const row of body) console.log(line(row));
}

console.log(
  `${MESSAGES} messages, ${IMAGES} tool images of ${IMAGE_BYTES} bytes; median of ${RUNS} runs after ${WARMUP} warm-up; node ${process.version}`,
);
print(["format", "retired", "evictContext µs", "inventory µs", "policy µs", "rewrite µs"], rows);
console.log(
  `\nThe same conversations with real PNG headers (1280 × 800), hermes vs cost (provider = format; anthropic with manage_cache):`,
);
print(
  [
    "format",
    "hermes µs",
    "cost: retired (rule)",
    "cost µs",
    "requests_left 90: retired (rule)",
    "cost µs, requests_left 90",
  ],
  costRows,
);
