/**
 * The session as the agent sent it (docs/stats.md, "The service's own saving"): per session, the
 * provider's prompt cache twice over, once for the requests exactly as the agent wrote them and
 * once for what the proxy sent, both through the one prompt-cache model
 * (shared/eviction/prompt-cache.ts) under the model table's rules. What the provider billed for
 * what was sent calibrates both (text tokens from the billed remainder, image tokens by pixels),
 * and the request as sent costs the bill plus the difference of the two. A request the proxy did
 * not change, in a session whose requests it never changed, costs exactly its bill.
 */
import { imageSize, imageTokens } from "../llm/estimate";
import { learnedImageCosts } from "../eviction/image-cost";
import { asRecord } from "../llm/image-blocks";
import {
  keptEntries,
  type PromptBlock,
  type PromptBreakpoint,
  type PromptCacheEntry,
  promptCacheRequest,
} from "../eviction/prompt-cache";
import { type ModelPrices, type ModelRules, usageCost } from "../llm/models.table";
import type { LlmUsage } from "../llm/llm-provider.types";

/** The prompt token kinds the ledger counts, as the proxy's shadow estimates them. */
export type PromptKind = "input" | "cacheWrite5m" | "cacheWrite1h" | "cacheRead";
const KINDS: readonly PromptKind[] = ["input", "cacheWrite5m", "cacheWrite1h", "cacheRead"];

/** Estimated tokens of one kind, text and images apart (they are calibrated apart). */
interface Units {
  text: number;
  image: number;
}
export type KindUnits = Record<PromptKind, Units>;

/** A request as the cache sees it: its blocks, what each weighs, its breakpoints. */
interface Prompt {
  readonly blocks: PromptBlock[];
  readonly weights: Units[];
  readonly breakpoints: PromptBreakpoint[];
}

/** What a session's shadow keeps between requests (inside the session's eviction memory). */
export interface ShadowState {
  /** Cache entries of the session as the agent sent it: [prefix key, last use (ms), TTL (ms)]. */
  readonly asSent: [string, number, number][];
  /** Cache entries of the session as the proxy sent it. */
  readonly sent: [string, number, number][];
}

/** Most cache entries kept per side: the newest (a prefix cache keeps one per message). */
export const SHADOW_ENTRIES = 160;

/** This request through the shadow: what it weighs both ways, before calibration. */
export interface ShadowEstimate {
  readonly asSent: KindUnits;
  readonly sent: KindUnits;
}

// ---------------------------------------------------------------------------------------------
// A request's blocks

/** Strings longer than this (image payloads) are identified by samples, not read whole. */
const SAMPLED_FROM = 4_096;

/** A 2 × 32-bit running hash (FNV-1a and a multiplicative twin) over text. */
class Chain {
  private a = 0x811c9dc5;
  private b = 0x9747b28c;
  add(text: string): void {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      this.a = Math.imul(this.a ^ c, 0x01000193) >>> 0;
      this.b = Math.imul(this.b ^ c, 0x5bd1e995) >>> 0;
    }
  }
  key(): string {
    return `${this.a.toString(36)}.${this.b.toString(36)}`;
  }
}

/** Markers are not content: a breakpoint changes neither the prefix nor its tokens. */
const MARKERS = new Set(["cache_control", "prompt_cache_breakpoint"]);

/** The inline image data of an image block, or null (no image, or one by reference). */
function imageData(block: Record<string, unknown>): string | null {
  if (block.type === "image") {
    const source = asRecord(block.source);
    return source?.type === "base64" && typeof source.data === "string" ? source.data : null;
  }
  if (block.type === "image_url" || block.type === "input_image" || block.type === "computer_screenshot") {
    const field = block.image_url;
    const url = typeof field === "string" ? field : asRecord(field)?.url;
    return typeof url === "string" && url.startsWith("data:") ? url : null;
  }
  return null;
}

/** What blocks weigh: text characters, image tokens, and an image's learned tokens where the table has none. */
interface Weight {
  chars: number;
  image: number;
  readonly perImage: number | undefined;
}

/** Adds one block's identity to `chain` and returns what it weighs: text characters and image tokens. */
function weigh(value: unknown, chain: Chain, into: Weight): void {
  if (typeof value === "string") {
    into.chars += value.length;
    if (value.length <= SAMPLED_FROM) chain.add(value);
    else {
      chain.add(`#${value.length}`);
      for (let i = 0; i < 16; i++) {
        const at = Math.floor((i * (value.length - 64)) / 15);
        chain.add(value.slice(at, at + 64));
      }
    }
    return;
  }
  if (typeof value === "number" || typeof value === "boolean") {
    chain.add(String(value));
    return;
  }
  if (Array.isArray(value)) {
    chain.add("[");
    for (const item of value) weigh(item, chain, into);
    chain.add("]");
    return;
  }
  const record = asRecord(value);
  if (!record) return;
  const data = imageData(record);
  if (data !== null) {
    into.image += into.perImage ?? imageTokens(imageSize(data));
    chain.add(`img#${data.length}`);
    for (let i = 0; i < 16; i++) {
      const at = Math.floor((i * Math.max(0, data.length - 64)) / 15);
      chain.add(data.slice(at, at + 64));
    }
    return;
  }
  chain.add("{");
  for (const [name, field] of Object.entries(record)) {
    if (MARKERS.has(name)) continue;
    chain.add(name);
    chain.add(":");
    weigh(field, chain, into);
  }
  chain.add("}");
}

/** Whether a block carries a breakpoint of its own, or in a part inside it (a tool result's), and its TTL. */
function markerOf(block: unknown): Record<string, unknown> | null {
  const record = asRecord(block);
  if (!record) return null;
  const own = asRecord(record.cache_control) ?? asRecord(record.prompt_cache_breakpoint);
  if (own) return own;
  const content = record.content;
  if (!Array.isArray(content)) return null;
  for (const part of content) {
    const nested = asRecord(asRecord(part)?.cache_control) ?? asRecord(asRecord(part)?.prompt_cache_breakpoint);
    if (nested) return nested;
  }
  return null;
}

/**
 * A request body as the provider's cache reads it: tools, then the system prompt (Anthropic
 * `system`, Responses `instructions`), then the conversation, one block per Anthropic content block
 * and one per OpenAI message or input item; its breakpoints under the model's rules (Anthropic
 * `cache_control`, a top-level one on the last block; OpenAI's explicit ones and the implicit one
 * at the newest message; none for a prefix cache).
 */
export function promptOf(body: Record<string, unknown>, rules: ModelRules): Prompt {
  const chain = new Chain();
  const blocks: PromptBlock[] = [];
  const weights: Units[] = [];
  const breakpoints: PromptBreakpoint[] = [];
  const style = rules.cache.style;
  const ttlOf = (marker: Record<string, unknown>) =>
    marker.ttl === "1h" && rules.cache.longTtlMs !== null ? rules.cache.longTtlMs : rules.cache.ttlMs;
  // A model the table does not know costs what was learned from its billed usage, once learned
  // (docs/eviction.md, "Learned image cost"), as the eviction weighs it.
  const perImage = rules.known
    ? undefined
    : learnedImageCosts.tokensPerImage(typeof body.model === "string" ? body.model : undefined);
  const add = (value: unknown, role?: unknown) => {
    const into: Weight = { chars: 0, image: 0, perImage };
    if (role !== undefined) chain.add(`<${String(role)}>`);
    weigh(value, chain, into);
    chain.add("\u0000");
    blocks.push({ key: chain.key(), tokens: Math.ceil(into.chars / 4) + into.image });
    weights.push({ text: Math.ceil(into.chars / 4), image: into.image });
    const marker = style === "prefix" ? null : markerOf(value);
    if (marker) breakpoints.push({ index: blocks.length - 1, ttlMs: ttlOf(marker) });
  };
  if (Array.isArray(body.tools)) for (const tool of body.tools) add(tool);
  if (typeof body.system === "string") add(body.system);
  else if (Array.isArray(body.system)) for (const block of body.system) add(block);
  if (typeof body.instructions === "string") add(body.instructions);
  const items = Array.isArray(body.messages)
    ? body.messages
    : Array.isArray(body.input)
      ? body.input
      : typeof body.input === "string"
        ? [body.input]
        : [];
  for (const item of items) {
    const message = asRecord(item);
    if (style === "cache_control" && message && Array.isArray(message.content))
      for (const block of message.content) add(block, message.role);
    else if (style === "cache_control" && message) add(message.content, message.role);
    else add(item);
  }
  if (blocks.length > 0 && style === "cache_control" && asRecord(body.cache_control))
    breakpoints.push({ index: blocks.length - 1, ttlMs: ttlOf(asRecord(body.cache_control)!) });
  const explicitOnly = asRecord(body.prompt_cache_options)?.mode === "explicit";
  if (blocks.length > 0 && style === "prompt_cache_breakpoint" && !explicitOnly)
    breakpoints.push({ index: blocks.length - 1, ttlMs: rules.cache.ttlMs });
  return { blocks, weights, breakpoints };
}

// ---------------------------------------------------------------------------------------------
// The shadow's step

const noUnits = (): KindUnits => ({
  input: { text: 0, image: 0 },
  cacheWrite5m: { text: 0, image: 0 },
  cacheWrite1h: { text: 0, image: 0 },
  cacheRead: { text: 0, image: 0 },
});

/** One request through one side's cache: its estimated tokens per kind. */
function through(entries: Map<string, PromptCacheEntry>, prompt: Prompt, at: number, rules: ModelRules): KindUnits {
  const use = promptCacheRequest(entries, prompt.blocks, prompt.breakpoints, at, {
    kind: rules.cache.style === "prefix" ? "prefix" : "breakpoints",
    lookback: rules.cache.lookbackBlocks ?? Number.POSITIVE_INFINITY,
    minCacheableTokens: rules.minCacheableTokens,
    step: rules.cache.step,
    ttlMs: rules.cache.ttlMs,
  });
  const out = noUnits();
  // Each range of token positions, its blocks' weights taken in proportion of what of them it covers.
  const take = (kind: PromptKind, from: number, to: number) => {
    let start = 0;
    prompt.blocks.forEach((block, i) => {
      const end = start + block.tokens;
      const covered = Math.min(end, to) - Math.max(start, from);
      if (covered > 0 && block.tokens > 0) {
        const share = covered / block.tokens;
        out[kind].text += weightsOf(prompt, i).text * share;
        out[kind].image += weightsOf(prompt, i).image * share;
      }
      start = end;
    });
  };
  take("cacheRead", 0, use.read);
  let cached = use.read;
  for (const write of use.writes) {
    // A cache whose writes are not billed apart (OpenAI before GPT-5.6) bills them as input.
    const kind: PromptKind = !rules.cache.writesBilled
      ? "input"
      : rules.cache.longTtlMs !== null && write.ttlMs >= rules.cache.longTtlMs
        ? "cacheWrite1h"
        : "cacheWrite5m";
    take(kind, write.from, write.to);
    cached = Math.max(cached, write.to);
  }
  take("input", cached, use.total);
  return out;
}

const weightsOf = (prompt: Prompt, i: number) => prompt.weights[i]!;

const toEntries = (kept: ShadowState["asSent"] | undefined) =>
  new Map<string, PromptCacheEntry>((kept ?? []).map(([key, at, ttlMs]) => [key, { at, ttlMs }]));
const fromEntries = (entries: Map<string, PromptCacheEntry>, at: number): [string, number, number][] =>
  keptEntries(entries, at, SHADOW_ENTRIES).map(([key, entry]) => [key, entry.at, entry.ttlMs]);

/**
 * One request of a session both ways: `asSent` is the body as the agent wrote it, `sent` as the
 * proxy sends it (the same object when unchanged). Returns the estimate and the state to keep.
 */
export function shadowStep(
  state: ShadowState | null,
  asSent: Record<string, unknown>,
  sent: Record<string, unknown>,
  at: number,
  rules: ModelRules,
): { estimate: ShadowEstimate; state: ShadowState } {
  const asSentEntries = toEntries(state?.asSent);
  const sentEntries = toEntries(state?.sent);
  const asSentPrompt = promptOf(asSent, rules);
  const estimate = {
    asSent: through(asSentEntries, asSentPrompt, at, rules),
    sent: through(sentEntries, sent === asSent ? asSentPrompt : promptOf(sent, rules), at, rules),
  };
  return { estimate, state: { asSent: fromEntries(asSentEntries, at), sent: fromEntries(sentEntries, at) } };
}

/** Whether a stored value is a shadow's state. */
export function isShadowState(value: unknown): value is ShadowState {
  const v = asRecord(value);
  const entries = (list: unknown) =>
    Array.isArray(list) &&
    list.length <= SHADOW_ENTRIES &&
    list.every(
      (e) =>
        Array.isArray(e) &&
        e.length === 3 &&
        typeof e[0] === "string" &&
        e[0].length <= 32 &&
        typeof e[1] === "number" &&
        typeof e[2] === "number",
    );
  return v !== null && entries(v.asSent) && entries(v.sent);
}

// ---------------------------------------------------------------------------------------------
// Calibration and money

/**
 * The request's prompt tokens as the agent sent it, per kind, from what the provider billed for
 * what was sent: text and images calibrated apart (image tokens by pixels as estimated; text tokens
 * per estimated unit from the billed remainder; both scaled alike when the bill leaves no text),
 * the bill plus the calibrated difference of the two sides. Where a kind would go below zero (the
 * model disagreeing with the bill), the as-sent side's own calibrated estimate is taken whole.
 */
export function asSentUsage(billed: LlmUsage, estimate: ShadowEstimate): Record<PromptKind, number> {
  const prompt = billed.input + billed.cacheWrite5m + billed.cacheWrite1h + billed.cacheRead;
  let text = 0;
  let image = 0;
  for (const kind of KINDS) {
    text += estimate.sent[kind].text;
    image += estimate.sent[kind].image;
  }
  let perText = 1;
  let perImage = 1;
  if (text > 0 && prompt > image) perText = (prompt - image) / text;
  else if (text + image > 0) perText = perImage = prompt / (text + image);
  const calibrated = (units: Units) => units.text * perText + units.image * perImage;
  const out = {} as Record<PromptKind, number>;
  let negative = false;
  for (const kind of KINDS) {
    out[kind] = billed[kind] + calibrated(estimate.asSent[kind]) - calibrated(estimate.sent[kind]);
    if (out[kind] < -0.5) negative = true;
  }
  for (const kind of KINDS)
    out[kind] = Math.max(0, Math.round(negative ? calibrated(estimate.asSent[kind]) : out[kind]));
  return out;
}

/**
 * This request's saving before its answer is known (the `X-Edge-Saved-Usd` header): the two
 * sides' difference in estimated tokens at the model's prices, output alike on both sides.
 */
export function estimatedSavingUsd(estimate: ShadowEstimate, prices: ModelPrices): number {
  const tokens = (units: KindUnits) => ({
    input: units.input.text + units.input.image,
    cacheWrite5m: units.cacheWrite5m.text + units.cacheWrite5m.image,
    cacheWrite1h: units.cacheWrite1h.text + units.cacheWrite1h.image,
    cacheRead: units.cacheRead.text + units.cacheRead.image,
    output: 0,
  });
  return usageCost(prices, tokens(estimate.asSent)).costUsd - usageCost(prices, tokens(estimate.sent)).costUsd;
}
