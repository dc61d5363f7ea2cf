/**
 * The replay's cache models: how a provider's prompt cache reads and writes one request given the
 * one before it. `ideal` (the longest unchanged prefix), `anthropic` (entries at `cache_control`
 * breakpoints, read from a breakpoint or within 20 blocks before one, expiring idle), `openai`
 * (automatic prefix caching in 128-token steps, before GPT-5.6) and `openai-breakpoints` (GPT-5.6:
 * an implicit breakpoint at the newest message plus explicit ones, no lookback limit, 30 minutes,
 * writes billed). Requests are segments (equal ids, equal bytes); every rule is an input, and the
 * defaults come from the model table (shared/llm/models.table.ts, docs/eviction.md). The
 * caches other than `ideal` are the one prompt-cache model (shared/eviction/prompt-cache.ts) the
 * proxy's as-sent shadow runs too.
 */
import { PLACEHOLDER_TOKENS } from "../../shared/eviction/cost";
import { ANTHROPIC_BREAKPOINTS } from "../../shared/llm/anthropic.messages";
import type { MessagesLayout } from "../../shared/llm/format";
import type { EvictionLimits } from "../../shared/eviction/policy";
import { billedCost, type ModelPrices, modelRules } from "../../shared/llm/models.table";
import {
  type PromptBlock,
  type PromptCacheEntry,
  type PromptCacheRules,
  promptCacheRequest,
} from "../../shared/eviction/prompt-cache";

/** One piece of a request as the cache sees it: equal ids mean equal bytes. */
export interface Segment {
  readonly id: string;
  readonly tokens: number;
  /** The message it belongs to (-1: tools and system); the policy holds its front per message. */
  readonly message: number;
  /** The agent put a `cache_control` breakpoint on this block (session files). */
  readonly breakpoint?: boolean;
  /** Where it stands in a request body: "message/block" (logged bodies), so a marker the route places maps back to it. */
  readonly position?: string;
  /**
   * Set on the first segment of an assistant message (one answered request of the session), so
   * the cost strategy counts requests the way the route does; every compact turn carries one.
   */
  readonly answer?: boolean;
  /** Set for an image block. */
  readonly image?: {
    /** Tool images may be retired; uploads never are. */
    readonly kind: "tool" | "upload";
    /** Groups the images of one tool result (the unit the policy retires). */
    readonly carrier: string;
    readonly bytes: number;
  };
}

/** A logged request body and its format: what the route's policies are handed in the replay. */
export interface RequestBody {
  readonly format: MessagesLayout;
  readonly body: Record<string, unknown>;
}

/** One request of a session: the whole prompt, in order. */
export type ReplayRequest = readonly Segment[];

/** Which provider cache to model. */
export type CacheKind = "ideal" | "anthropic" | "openai" | "openai-breakpoints";

/**
 * Where the agent puts its own breakpoints (Anthropic): Hermes's default (system and its 3 newest
 * messages), `automatic` (one top-level `cache_control`: the breakpoint follows the last cacheable
 * block; `rolling` is the same), or as logged (`session`).
 */
export type BreakpointLayout = "system_and_3" | "automatic" | "rolling" | "session";

/** The explicit cache model; every rule is an input. */
export interface CacheModel {
  readonly kind: CacheKind;
  /** ideal only: cache reads are counted in whole units of this many tokens (1 = exact prefix). */
  readonly granularity: number;
  /** Tokens of the text block a retired image becomes (`[screenshot removed to save context]` ≈ 10). */
  readonly placeholderTokens: number;
  /** anthropic / openai: an entry expires this long after its last use (ms). */
  readonly ttlMs: number;
  /** anthropic: blocks before a breakpoint searched for an earlier entry (openai-breakpoints: no limit, Infinity). */
  readonly lookback: number;
  /** anthropic: breakpoints a request may carry; more is a refused request. */
  readonly maxBreakpoints: number;
  /** Shortest prefix the provider caches (tokens). */
  readonly minCacheableTokens: number;
  /** openai: cache hits grow in steps of this many tokens past the minimum. */
  readonly step: number;
  /** anthropic: the agent's own breakpoints. */
  readonly breakpoints: BreakpointLayout;
}

/**
 * Price table: input price per million tokens; cache write, cache read and uncached input as
 * multiples of it; and the model's price tiers by prompt size (docs/eviction.md), each as a factor
 * of these input prices (the replay bills no output).
 */
export interface Prices {
  readonly inputPerMTok: number;
  readonly writeMultiplier: number;
  readonly readMultiplier: number;
  readonly uncachedMultiplier?: number;
  readonly tiers?: readonly { readonly abovePromptTokens: number; readonly factor: number }[];
}

/**
 * What one replayed request costs as the provider bills it: through the model table's one
 * tier-aware pricing (`billedCost`), so a request over a tier's line is billed whole at its tier.
 */
export function requestCost(
  prices: Prices,
  tokens: { readonly write: number; readonly read: number; readonly uncached: number },
): { cost: number; tier: number } {
  const input = prices.inputPerMTok;
  const at = (factor: number): ModelPrices => ({
    input: input * (prices.uncachedMultiplier ?? 1) * factor,
    cacheWrite5m: input * prices.writeMultiplier * factor,
    cacheWrite1h: input * prices.writeMultiplier * factor,
    cacheRead: input * prices.readMultiplier * factor,
    output: 0,
  });
  const rules = {
    prices: at(1),
    tiers: (prices.tiers ?? []).map((tier) => ({ abovePromptTokens: tier.abovePromptTokens, prices: at(tier.factor) })),
  };
  const usage = {
    input: tokens.uncached,
    cacheWrite5m: tokens.write,
    cacheWrite1h: 0,
    cacheRead: tokens.read,
    output: 0,
  };
  const { costUsd, tier } = billedCost(rules, usage);
  return { cost: costUsd, tier };
}

const ANTHROPIC = modelRules("anthropic", undefined);
const OPENAI_PREFIX = modelRules("openai", "gpt-4o");
const OPENAI_BREAKPOINTS = modelRules("openai", "gpt-5.6-terra");

/** The first replay's model: the longest unchanged prefix, no time, no breakpoints. */
export const DEFAULT_CACHE_MODEL: CacheModel = {
  kind: "ideal",
  granularity: 1,
  placeholderTokens: PLACEHOLDER_TOKENS,
  ttlMs: ANTHROPIC.cache.ttlMs,
  lookback: ANTHROPIC_BREAKPOINTS.lookbackBlocks,
  maxBreakpoints: ANTHROPIC_BREAKPOINTS.max,
  minCacheableTokens: 0,
  step: 1,
  breakpoints: "system_and_3",
};

/** Anthropic's prompt cache (docs/eviction.md gives the source of each figure). */
export const ANTHROPIC_CACHE_MODEL: CacheModel = {
  ...DEFAULT_CACHE_MODEL,
  kind: "anthropic",
  minCacheableTokens: ANTHROPIC.minCacheableTokens,
};

/** OpenAI's automatic prefix caching. */
export const OPENAI_CACHE_MODEL: CacheModel = {
  ...DEFAULT_CACHE_MODEL,
  kind: "openai",
  minCacheableTokens: OPENAI_PREFIX.minCacheableTokens,
  step: OPENAI_PREFIX.cache.step,
};

/** OpenAI from GPT-5.6: an implicit breakpoint at the newest message plus the explicit ones, no lookback limit, 30 minutes. */
export const OPENAI_BREAKPOINT_CACHE_MODEL: CacheModel = {
  ...DEFAULT_CACHE_MODEL,
  kind: "openai-breakpoints",
  ttlMs: OPENAI_BREAKPOINTS.cache.ttlMs,
  lookback: Number.POSITIVE_INFINITY,
  maxBreakpoints: OPENAI_BREAKPOINTS.cache.maxBreakpoints,
  minCacheableTokens: OPENAI_BREAKPOINTS.minCacheableTokens,
  breakpoints: "automatic",
};

export const CACHE_MODELS: Record<CacheKind, CacheModel> = {
  ideal: DEFAULT_CACHE_MODEL,
  anthropic: ANTHROPIC_CACHE_MODEL,
  openai: OPENAI_CACHE_MODEL,
  "openai-breakpoints": OPENAI_BREAKPOINT_CACHE_MODEL,
};

/** The prices of a model-table row as the replay takes them, its tiers included. */
const pricesOf = (rules: typeof ANTHROPIC, write: "write5m" | "write1h" = "write5m"): Prices => ({
  inputPerMTok: rules.prices.input,
  writeMultiplier: rules.multipliers[write],
  readMultiplier: rules.multipliers.read,
  uncachedMultiplier: 1,
  ...(rules.tiers.length === 0
    ? {}
    : {
        tiers: rules.tiers.map((tier) => ({
          abovePromptTokens: tier.abovePromptTokens,
          factor: tier.prices.input / rules.prices.input,
        })),
      }),
});

/** Anthropic's default row (Sonnet 4: $3/MTok, writes 1.25x, reads 0.1x). */
export const DEFAULT_PRICES: Prices = pricesOf(ANTHROPIC);
/** Anthropic's 1-hour TTL: writes at 2x. */
export const ANTHROPIC_1H_PRICES: Prices = pricesOf(ANTHROPIC, "write1h");
/** OpenAI before GPT-5.6 (gpt-4o): no write premium, reads 0.5x. */
export const OPENAI_PRICES: Prices = pricesOf(OPENAI_PREFIX);
/** OpenAI GPT-5.6 Terra: writes 1.25x, reads 0.1x. */
export const OPENAI_BREAKPOINT_PRICES: Prices = pricesOf(OPENAI_BREAKPOINTS);

/** The cache model and prices of one model of the table, for `--model`. */
export function cacheModelFor(
  provider: string | undefined,
  model: string | undefined,
  longTtl = false,
): { model: CacheModel; prices: Prices } {
  const rules = modelRules(provider, model);
  const base =
    rules.cache.style === "cache_control"
      ? ANTHROPIC_CACHE_MODEL
      : rules.cache.style === "prompt_cache_breakpoint"
        ? OPENAI_BREAKPOINT_CACHE_MODEL
        : OPENAI_CACHE_MODEL;
  const ttlMs = longTtl && rules.cache.longTtlMs !== null ? rules.cache.longTtlMs : rules.cache.ttlMs;
  return {
    model: { ...base, ttlMs, minCacheableTokens: rules.minCacheableTokens },
    prices: pricesOf(rules, longTtl ? "write1h" : "write5m"),
  };
}

/** The outbound request: each retired image replaced by the same placeholder segment. */
export function applyPolicy(
  request: ReplayRequest,
  retired: ReadonlySet<string>,
  model: Pick<CacheModel, "placeholderTokens">,
): Segment[] {
  return request.map((segment) =>
    segment.image?.kind === "tool" && retired.has(segment.image.carrier)
      ? {
          id: `${segment.id}|retired`,
          tokens: model.placeholderTokens,
          message: segment.message,
          ...(segment.breakpoint ? { breakpoint: true } : {}),
        }
      : segment,
  );
}

/** Tokens of the longest run of leading segments two requests share. */
export function commonPrefixTokens(previous: ReplayRequest, current: ReplayRequest): number {
  let tokens = 0;
  const n = Math.min(previous.length, current.length);
  for (let i = 0; i < n; i++) {
    const a = previous[i]!;
    const b = current[i]!;
    if (a.id !== b.id || a.tokens !== b.tokens) break;
    tokens += a.tokens;
  }
  return tokens;
}

/**
 * The agent's breakpoints on a request (segment indices, ascending). `system_and_3`: the last
 * system block and the last block of each of the 3 newest messages (Hermes); `rolling`: the last
 * block only; `session`: the blocks that carried `cache_control` in the logged body. With
 * `managed`, the agent leaves the service one slot: a full layout drops its oldest message marker.
 */
export function agentBreakpoints(request: ReplayRequest, layout: BreakpointLayout, managed = false, max = 4): number[] {
  let points: number[];
  if (layout === "session") {
    points = request.flatMap((s, i) => (s.breakpoint ? [i] : []));
  } else if (layout === "rolling" || layout === "automatic") {
    points = request.length > 0 ? [request.length - 1] : [];
  } else {
    points = [];
    let system = -1;
    request.forEach((s, i) => {
      if (s.message < 0) system = i;
    });
    if (system >= 0) points.push(system);
    const ends: number[] = [];
    for (let i = request.length - 1; i > system && ends.length < 3; i--) {
      if (i === request.length - 1 || request[i]!.message !== request[i + 1]!.message) ends.push(i);
    }
    points.push(...ends.reverse());
  }
  if (managed && points.length >= max) {
    // Keep the system marker (the first), drop the oldest of the rest.
    points = points.length > 1 ? [points[0]!, ...points.slice(2)] : [];
  }
  return points;
}

/** A 2 × 32-bit rolling hash of a prefix: the key of a cache entry, without keeping the prefix. */
function prefixKeys(request: ReplayRequest): string[] {
  const keys: string[] = [];
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (const segment of request) {
    const text = `${segment.id}#${segment.tokens}`;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193) >>> 0;
      b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
    }
    a = Math.imul(a ^ 0xff, 0x01000193) >>> 0;
    keys.push(`${a.toString(36)}.${b.toString(36)}`);
  }
  return keys;
}

/** What one request paid. */
export interface RequestCost {
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  /** Input neither read from nor written to the cache (after the last breakpoint, or under the minimum). */
  readonly uncachedTokens: number;
  /**
   * Writes of content the previous request already carried (same segment positions) that could
   * not be read back: the price of rewriting history. 0 on a cold request.
   */
  readonly evictionWriteTokens: number;
  /** The cache had expired: nothing of the previous request could be read. */
  readonly cold: boolean;
  readonly imageBlocks: number;
  readonly imageBytes: number;
  /** Breakpoints the request carried (agent's and service's). */
  readonly breakpoints: number;
  readonly cost: number;
  /** The price tier the request was billed at (0: the base prices). */
  readonly tier: number;
  /** Carriers the policy retired in this request. */
  readonly retired: number;
  /** Segment index of the service's marker, when the policy placed one. */
  readonly marker?: number;
  /** The rule that decided (cost). */
  readonly rule?: string;
}

/** Totals of one policy over a session (snake_case: this is the CLI's JSON). */
export interface PolicyReport {
  readonly requests: number;
  readonly input_tokens: number;
  readonly cache_write_tokens: number;
  readonly cache_read_tokens: number;
  readonly uncached_tokens: number;
  readonly eviction_write_tokens: number;
  /** Share of cache-write tokens caused by rewriting an already cached prefix, 0..1. */
  readonly eviction_write_share: number;
  /** Requests whose writes include a rewritten prefix (each one a prefix collapse). */
  readonly collapses: number;
  /** Requests that found the cache expired (a pause longer than the TTL). */
  readonly cold_requests: number;
  readonly worst_request_write_tokens: number;
  /** 0-based index of that request. */
  readonly worst_request: number;
  readonly worst_request_eviction_write_tokens: number;
  /** Image blocks in the fullest request (the provider counts these against its ceiling). */
  readonly max_image_blocks: number;
  /** Requests the provider would refuse: over the block or byte ceiling of `limits`. */
  readonly requests_over_ceiling: number;
  /** Requests with more breakpoints than the provider allows (refused by Anthropic). */
  readonly requests_over_breakpoints: number;
  /** Requests billed over the model's first price tier's line (its prompt over it: all its tokens at the tier's prices). */
  readonly requests_over_tier: number;
  readonly cost: number;
}

export const floorTo = (tokens: number, granularity: number) =>
  granularity > 1 ? Math.floor(tokens / granularity) * granularity : tokens;

/** Replay options beyond the policy. */
export interface ReplayOptions {
  readonly model?: CacheModel;
  readonly prices?: Prices;
  /** The ceilings a request is checked against (`requests_over_ceiling`). */
  readonly limits?: EvictionLimits;
  /** When each request is sent (ms); a request every 30 s when absent. */
  readonly times?: readonly number[];
  /** The logged request body behind each request, when the session is one (the route's policies read it). */
  readonly bodies?: ReadonlyArray<RequestBody | undefined>;
}

/** One cache's state across a session and its rule for one request. */
export interface CacheState {
  request(outbound: ReplayRequest, breakpoints: readonly number[], at: number): { read: number; write: number };
}

function idealCache(model: CacheModel): CacheState {
  let previous: ReplayRequest = [];
  return {
    request(outbound) {
      const total = outbound.reduce((n, s) => n + s.tokens, 0);
      const read = floorTo(commonPrefixTokens(previous, outbound), model.granularity);
      previous = outbound;
      return { read, write: total - read };
    },
  };
}

/** Segments as the one prompt-cache model reads them: the prefix key up to each, and its tokens. */
const promptBlocks = (request: ReplayRequest): PromptBlock[] => {
  const keys = prefixKeys(request);
  return request.map((segment, i) => ({ key: keys[i]!, tokens: segment.tokens }));
};

/** The shared prompt-cache model (shared/eviction/prompt-cache.ts) under this model's rules. */
function sharedCache(model: CacheModel): CacheState {
  const entries = new Map<string, PromptCacheEntry>();
  const rules: PromptCacheRules = {
    kind: model.kind === "openai" ? "prefix" : "breakpoints",
    lookback: model.lookback,
    minCacheableTokens: model.minCacheableTokens,
    step: model.step,
    ttlMs: model.ttlMs,
  };
  return {
    request(outbound, breakpoints, at) {
      const use = promptCacheRequest(
        entries,
        promptBlocks(outbound),
        breakpoints.map((index) => ({ index, ttlMs: model.ttlMs })),
        at,
        rules,
      );
      return { read: use.read, write: use.writes.reduce((n, w) => n + w.to - w.from, 0) };
    },
  };
}

export const cacheFor = (model: CacheModel): CacheState =>
  model.kind === "ideal" ? idealCache(model) : sharedCache(model);

/** Whether a cache model reads at breakpoints (so the agent's layout and the service's marker matter). */
export const usesBreakpoints = (model: Pick<CacheModel, "kind">) =>
  model.kind === "anthropic" || model.kind === "openai-breakpoints";

/** Think time between requests when a session has no timestamps. */
export const DEFAULT_THINK_MS = 30_000;
