/**
 * The model table: per provider and model family, what a request costs and what the provider
 * accepts (token prices, cache write and read multipliers, image ceilings, minimum cacheable
 * length, breakpoint rules). One table, read by the eviction route, the provider proxy, the
 * savings ledger and the replay, so they never disagree on a price or a ceiling. Every figure's
 * source page and the date it was read are in docs/eviction.md ("The model table").
 *
 * Pure data and one lookup: no runtime, no configuration. A deployment's `pricing.models`
 * overrides reach it through `modelRules(provider, model, overrides)`.
 */

/** The providers whose request formats the service understands. */
export type ModelProvider = "anthropic" | "openai";

/** Token prices in USD per million tokens, as the providers' price pages give them. */
export interface ModelPrices {
  /** Uncached input. */
  readonly input: number;
  /** A cache write at the short TTL (Anthropic 5 minutes; OpenAI its one TTL, 30 minutes from GPT-5.6; before GPT-5.6 writes cost the input price). */
  readonly cacheWrite5m: number;
  /** A cache write at Anthropic's 1-hour TTL (OpenAI: the same as `cacheWrite5m`). */
  readonly cacheWrite1h: number;
  /** A cache read (Anthropic "cache hits and refreshes"; OpenAI "cached input"). */
  readonly cacheRead: number;
  readonly output: number;
}

/**
 * Each price's name where the service shows or takes it (snake_case, as every field of the HTTP
 * API: `/v1/stats`, `/v1/config`, `pricing.models`), beside its name here.
 */
export const PRICE_FIELDS = [
  ["input", "input"],
  ["cache_write_5m", "cacheWrite5m"],
  ["cache_write_1h", "cacheWrite1h"],
  ["cache_read", "cacheRead"],
  ["output", "output"],
] as const satisfies readonly (readonly [string, keyof ModelPrices])[];

export type ShownPrice = (typeof PRICE_FIELDS)[number][0];

/** `prices` (any subset) under their shown names. */
export function shownPrices(prices: ModelPrices): Record<ShownPrice, number>;
export function shownPrices(prices: Partial<ModelPrices>): Partial<Record<ShownPrice, number>>;
export function shownPrices(prices: Partial<ModelPrices>): Partial<Record<ShownPrice, number>> {
  const out: Partial<Record<ShownPrice, number>> = {};
  for (const [shown, key] of PRICE_FIELDS) if (prices[key] !== undefined) out[shown] = prices[key];
  return out;
}

/** A price tier as shown: its line and the prices of a request whose prompt is over it. */
export type ShownTier = { above_prompt_tokens: number } & Record<ShownPrice, number>;

/**
 * A model's prices as `/v1/stats` shows them (docs/stats.md, "Prices"): the base prices under their
 * shown names, and `tiers`, each tier's line and prices (empty for a model with one price).
 *
 * @example shownModelPrices(modelRules("anthropic", "claude-haiku-5-5")).tiers[0] // { above_prompt_tokens: 100000, input: 0.5, ... }
 */
export function shownModelPrices(
  rules: Pick<ModelRules, "prices" | "tiers">,
): Record<ShownPrice, number> & { tiers: ShownTier[] } {
  return {
    ...shownPrices(rules.prices),
    tiers: rules.tiers.map((tier) => ({ above_prompt_tokens: tier.abovePromptTokens, ...shownPrices(tier.prices) })),
  };
}

/** The cache prices as multiples of the input price (what the cost arithmetic weighs). */
export interface CacheMultipliers {
  /** Short-TTL write / input: 1.25 (Anthropic; OpenAI from GPT-5.6), 1 where writes are not billed apart. */
  readonly write5m: number;
  /** 1-hour write / input: 2 on Anthropic. */
  readonly write1h: number;
  /** Read / input: 0.1 for most models, 0.05 or 0.025 for some newer ones. */
  readonly read: number;
}

/** What the provider accepts of images in one request. */
export interface ImageCeilings {
  /** Image blocks per request (Anthropic: 100 on 200k-context models, 600 on the others). */
  readonly maxImages: number;
  /** Above this many images in one request, each is limited to `maxEdgeWhenMany`. */
  readonly manyImages: number;
  /** Longest edge (px) of each image when a request carries more than `manyImages`. */
  readonly maxEdgeWhenMany: number;
  /** Longest edge (px) of any image. */
  readonly maxEdge: number;
  /** Base64 characters of one image. */
  readonly maxImageBytes: number;
  /** Bytes of a whole request. */
  readonly maxRequestBytes: number;
}

/**
 * How the provider's prompt cache is addressed:
 * - `cache_control` (Anthropic): entries written at `cache_control` breakpoints (at most 4 a
 *   request, a top-level automatic one included), read from a breakpoint or within 20 blocks before one;
 * - `prompt_cache_breakpoint` (OpenAI from GPT-5.6): one implicit breakpoint at the newest message
 *   plus explicit ones, at most 4 written, the latest 80 considered, no block lookback limit,
 *   matched exactly at a breakpoint;
 * - `prefix` (OpenAI before GPT-5.6): automatic, the longest cached prefix in 128-token steps.
 */
export type BreakpointStyle = "cache_control" | "prompt_cache_breakpoint" | "prefix";

export interface CacheRules {
  readonly style: BreakpointStyle;
  /** Breakpoints a request may write (Anthropic: a top-level `cache_control` counts toward it). */
  readonly maxBreakpoints: number;
  /** Blocks searched before a breakpoint for an earlier entry; null: no limit. */
  readonly lookbackBlocks: number | null;
  /** Breakpoints of the conversation considered when matching; null: every one. */
  readonly consideredBreakpoints: number | null;
  /**
   * What the provider does without any breakpoint from the caller: `top_level` (Anthropic: one
   * top-level `cache_control` puts the breakpoint on the last cacheable block, moving forward as the
   * conversation grows), `implicit` (OpenAI GPT-5.6: a breakpoint at the end of the newest message
   * unless `prompt_cache_options.mode` is `explicit`), `prefix` (OpenAI before GPT-5.6).
   */
  readonly automatic: "top_level" | "implicit" | "prefix";
  /** An entry is kept this long after its last use (ms), at the default TTL. */
  readonly ttlMs: number;
  /** The longer TTL a caller may ask for (Anthropic `"ttl": "1h"`), or null. */
  readonly longTtlMs: number | null;
  /** Cache reads grow in steps of this many tokens (OpenAI before GPT-5.6: 128; else 1). */
  readonly step: number;
  /** Whether the provider bills and reports cache writes apart from input. */
  readonly writesBilled: boolean;
}

/**
 * A price band by prompt size: a request whose prompt (uncached input + cache writes + cache reads)
 * is over `abovePromptTokens` is billed whole (output included) at `prices`, not only the tokens
 * past the line (Anthropic's long-context rule, Haiku 5.5's 100k band, OpenAI's 272k).
 */
export interface PriceTier {
  readonly abovePromptTokens: number;
  readonly prices: ModelPrices;
}

/** One row of the table, resolved for a model. */
export interface ModelRules {
  readonly provider: ModelProvider;
  /** The family the model was matched to, e.g. `claude-opus-5-5`; `default` for an unknown model. */
  readonly family: string;
  /** False when the model is unknown and these are the provider's defaults. */
  readonly known: boolean;
  /** The prices of a request at or under the first tier's line (of every request, for a model without tiers). */
  readonly prices: ModelPrices;
  /** The published price tiers above `prices`, lowest line first; empty for a model with one price. */
  readonly tiers: readonly PriceTier[];
  readonly multipliers: CacheMultipliers;
  readonly images: ImageCeilings;
  /** Shortest prefix the provider caches (tokens). */
  readonly minCacheableTokens: number;
  readonly contextTokens: number;
  readonly cache: CacheRules;
}

/** The date the providers' pages behind this table were read (docs/eviction.md lists the pages). */
export const MODEL_TABLE_READ_ON = "2026-12-01";

const MB = 1_000_000;

/**
 * Anthropic's image ceilings: 100 images on 200k-context models, 600 on the others; over 20 images
 * each ≤ 2,000 px; 5 MB an image; 32 MB a request. Its "5 MB" an image is 5 MiB of base64: it
 * refuses "image exceeds 5 MB maximum: N bytes > 5242880 bytes" (docs/eviction.md).
 */
const anthropicImages = (maxImages: 100 | 600): ImageCeilings => ({
  maxImages,
  manyImages: 20,
  maxEdgeWhenMany: 2_000,
  maxEdge: 8_000,
  maxImageBytes: 5 * 1024 * 1024,
  maxRequestBytes: 32 * MB,
});

/** OpenAI's image ceilings: 500 images and 50 MB of payload a request. */
const OPENAI_IMAGES: ImageCeilings = Object.freeze({
  maxImages: 500,
  manyImages: 500,
  maxEdgeWhenMany: 8_000,
  maxEdge: 8_000,
  maxImageBytes: 50 * MB,
  maxRequestBytes: 50 * MB,
});

const ANTHROPIC_CACHE: CacheRules = Object.freeze({
  style: "cache_control",
  maxBreakpoints: 4,
  lookbackBlocks: 20,
  consideredBreakpoints: null,
  automatic: "top_level",
  ttlMs: 5 * 60_000,
  longTtlMs: 60 * 60_000,
  step: 1,
  writesBilled: true,
});

/** OpenAI from GPT-5.6: explicit breakpoints, writes billed at 1.25x, a 30-minute TTL. */
const OPENAI_BREAKPOINT_CACHE: CacheRules = Object.freeze({
  style: "prompt_cache_breakpoint",
  maxBreakpoints: 4,
  lookbackBlocks: null,
  consideredBreakpoints: 80,
  automatic: "implicit",
  ttlMs: 30 * 60_000,
  longTtlMs: null,
  step: 1,
  writesBilled: true,
});

/** OpenAI before GPT-5.6: automatic prefix caching from 1,024 tokens in 128-token steps, no write premium, kept 5-10 minutes idle. */
const OPENAI_PREFIX_CACHE: CacheRules = Object.freeze({
  style: "prefix",
  maxBreakpoints: 0,
  lookbackBlocks: null,
  consideredBreakpoints: null,
  automatic: "prefix",
  ttlMs: 5 * 60_000,
  longTtlMs: null,
  step: 128,
  writesBilled: false,
});

interface FamilyRow {
  readonly provider: ModelProvider;
  readonly family: string;
  /** Normalised model names that start with one of these (and go on with no further digit) belong to the family. */
  readonly prefixes: readonly string[];
  /** USD per million tokens: input, 5-minute write, 1-hour write, read, output. */
  readonly usd: readonly [number, number, number, number, number];
  /** Its price tiers, as factors of its prices: the input kinds (input, writes, reads) and output. */
  readonly tiers?: readonly TierRow[];
  readonly minCacheableTokens: number;
  readonly contextTokens: number;
  readonly images: ImageCeilings;
  readonly cache: CacheRules;
}

/** A tier of a row: over `above` prompt tokens, the input kinds cost `input` times and output `output` times the row's prices. */
interface TierRow {
  readonly above: number;
  readonly input: number;
  readonly output: number;
}

/** Haiku 5.5: a prompt over 100,000 tokens bills the whole request at 5x (docs/eviction.md). */
const HAIKU_5_5_TIERS: readonly TierRow[] = [{ above: 100_000, input: 5, output: 5 }];
/** Sonnet 4 and 4.5 with the 1M context: over 200,000 prompt tokens, input kinds 2x ($6), output 1.5x ($22.50). */
const SONNET_4_LONG_CONTEXT: readonly TierRow[] = [{ above: 200_000, input: 2, output: 1.5 }];
/** OpenAI GPT-5.4 and GPT-5.6: over 272,000 input tokens, input kinds 2x and output 1.5x for the whole request. */
const OPENAI_LONG_CONTEXT: readonly TierRow[] = [{ above: 272_000, input: 2, output: 1.5 }];

const K200 = 200_000;
const M1 = 1_000_000;

const claude = (
  family: string,
  prefixes: readonly string[],
  usd: FamilyRow["usd"],
  minCacheableTokens: number,
  contextTokens: number,
  tiers?: readonly TierRow[],
): FamilyRow => ({
  provider: "anthropic",
  family,
  prefixes,
  usd,
  ...(tiers === undefined ? {} : { tiers }),
  minCacheableTokens,
  contextTokens,
  images: anthropicImages(contextTokens > K200 ? 600 : 100),
  cache: ANTHROPIC_CACHE,
});

/** OpenAI rows: input, write, read, output; writes cost the input price where they are not billed apart. */
const gpt = (
  family: string,
  prefixes: readonly string[],
  [input, read, output]: readonly [number, number, number],
  cache: CacheRules,
  contextTokens: number,
  tiers?: readonly TierRow[],
): FamilyRow => {
  const write = cache.writesBilled ? input * 1.25 : input;
  return {
    provider: "openai",
    family,
    prefixes,
    usd: [input, write, write, read, output],
    ...(tiers === undefined ? {} : { tiers }),
    minCacheableTokens: 1_024,
    contextTokens,
    images: OPENAI_IMAGES,
    cache,
  };
};

/**
 * The rows, most specific first (a family's prefix must not be claimed by an earlier, broader
 * row). Where a page gave no figure (a minimum cacheable length or a context window of a newer
 * model), the row takes the nearest family's and docs/eviction.md says so.
 */
const FAMILIES: readonly FamilyRow[] = [
  claude("claude-fable-5-1", ["claude-fable-5-1", "claude-mythos-5-1"], [10, 12.5, 20, 0.25, 50], 512, M1),
  claude("claude-fable-5", ["claude-fable-5", "claude-mythos-5"], [10, 12.5, 20, 1, 50], 512, M1),
  claude("claude-opus-5-5", ["claude-opus-5-5"], [4, 5, 8, 0.2, 20], 512, M1),
  claude("claude-opus-5", ["claude-opus-5"], [5, 6.25, 10, 0.5, 25], 512, M1),
  claude("claude-opus-4-8", ["claude-opus-4-8"], [5, 6.25, 10, 0.5, 25], 1_024, K200),
  claude("claude-opus-4-7", ["claude-opus-4-7"], [5, 6.25, 10, 0.5, 25], 2_048, K200),
  claude("claude-opus-4-5", ["claude-opus-4-6", "claude-opus-4-5"], [5, 6.25, 10, 0.5, 25], 4_096, K200),
  claude("claude-opus-4", ["claude-opus-4-1", "claude-opus-4", "claude-3-opus"], [15, 18.75, 30, 1.5, 75], 1_024, K200),
  claude("claude-sonnet-5-5", ["claude-sonnet-5-5"], [2, 2.5, 4, 0.1, 10], 1_024, M1),
  claude("claude-sonnet-5", ["claude-sonnet-5"], [2, 2.5, 4, 0.2, 10], 1_024, M1),
  // Sonnet 4.6 serves its 1M context at its one price; Sonnet 4 and 4.5 bill a prompt over 200k higher.
  claude("claude-sonnet-4-6", ["claude-sonnet-4-6"], [3, 3.75, 6, 0.3, 15], 1_024, K200),
  claude(
    "claude-sonnet-4",
    ["claude-sonnet-4-5", "claude-sonnet-4", "claude-3-7-sonnet", "claude-3-5-sonnet"],
    [3, 3.75, 6, 0.3, 15],
    1_024,
    K200,
    SONNET_4_LONG_CONTEXT,
  ),
  claude("claude-haiku-5-5", ["claude-haiku-5-5"], [0.1, 0.125, 0.2, 0.01, 0.5], 4_096, M1, HAIKU_5_5_TIERS),
  claude("claude-haiku-4-5", ["claude-haiku-4-5"], [1, 1.25, 2, 0.1, 5], 4_096, K200),
  claude("claude-haiku-3-5", ["claude-3-5-haiku"], [0.8, 1, 1.6, 0.08, 4], 2_048, K200),
  claude("claude-haiku-3", ["claude-3-haiku"], [0.25, 0.3, 0.5, 0.03, 1.25], 2_048, K200),
  gpt("gpt-5.6-sol", ["gpt-5.6-sol"], [5, 0.5, 30], OPENAI_BREAKPOINT_CACHE, 1_500_000, OPENAI_LONG_CONTEXT),
  gpt("gpt-5.6-luna", ["gpt-5.6-luna"], [1, 0.1, 6], OPENAI_BREAKPOINT_CACHE, 1_000_000, OPENAI_LONG_CONTEXT),
  // Terra, and any other GPT-5.6 name: the family's middle tier.
  gpt("gpt-5.6-terra", ["gpt-5.6"], [2.5, 0.25, 15], OPENAI_BREAKPOINT_CACHE, 400_000, OPENAI_LONG_CONTEXT),
  gpt("gpt-5.4", ["gpt-5.4"], [2.5, 0.25, 15], OPENAI_PREFIX_CACHE, 400_000, OPENAI_LONG_CONTEXT),
  // The small variants before their families, which would claim them (`-mini` is a variant's suffix).
  gpt("gpt-5-mini", ["gpt-5-mini"], [0.25, 0.025, 2], OPENAI_PREFIX_CACHE, 400_000),
  gpt("gpt-5-nano", ["gpt-5-nano"], [0.05, 0.005, 0.4], OPENAI_PREFIX_CACHE, 400_000),
  // GPT-5 to 5.5 cache alike (reads 0.1x, writes not billed); 5.1-5.3 and 5.5 take GPT-5's prices here.
  gpt("gpt-5", ["gpt-5.5", "gpt-5.3", "gpt-5.2", "gpt-5.1", "gpt-5"], [1.25, 0.125, 10], OPENAI_PREFIX_CACHE, 400_000),
  gpt("gpt-4.1-mini", ["gpt-4.1-mini"], [0.4, 0.1, 1.6], OPENAI_PREFIX_CACHE, 1_000_000),
  gpt("gpt-4.1-nano", ["gpt-4.1-nano"], [0.1, 0.025, 0.4], OPENAI_PREFIX_CACHE, 1_000_000),
  gpt("gpt-4.1", ["gpt-4.1"], [2, 0.5, 8], OPENAI_PREFIX_CACHE, 1_000_000),
  gpt("o4-mini", ["o4-mini"], [1.1, 0.275, 4.4], OPENAI_PREFIX_CACHE, 200_000),
  gpt("o3-mini", ["o3-mini"], [1.1, 0.55, 4.4], OPENAI_PREFIX_CACHE, 200_000),
  gpt("o3", ["o3", "o4"], [2, 0.5, 8], OPENAI_PREFIX_CACHE, 200_000),
  gpt("gpt-4o-mini", ["gpt-4o-mini"], [0.15, 0.075, 0.6], OPENAI_PREFIX_CACHE, 128_000),
  gpt("gpt-4o", ["gpt-4o"], [2.5, 1.25, 10], OPENAI_PREFIX_CACHE, 128_000),
];

/**
 * The row an unknown model gets: Anthropic's Sonnet 4 prices and its 100-image ceiling (the
 * smaller of the two, so an unknown model is never sent more than it may take); OpenAI's GPT-5.6
 * Terra rules (writes billed: an unknown model is a newer one), whose prices sit mid-range. Neither
 * has a price tier: a tier is a published price, and nothing is published of an unknown model.
 */
const DEFAULTS: Record<ModelProvider, FamilyRow> = {
  anthropic: { ...FAMILIES.find((row) => row.family === "claude-sonnet-4")!, family: "default", tiers: [] },
  openai: { ...FAMILIES.find((row) => row.family === "gpt-5.6-terra")!, family: "default", tiers: [] },
};

/**
 * A model name as the table matches it: lower case, without a router's `provider/` prefix, a
 * cloud's `anthropic.` or `us.anthropic.` prefix, a Vertex `@date` or a Bedrock `-v1:0` suffix.
 */
export function normaliseModel(model: string): string {
  let name = model.trim().toLowerCase();
  const slash = name.lastIndexOf("/");
  if (slash >= 0) name = name.slice(slash + 1);
  // Bedrock's inference profiles put a geography before the vendor: us., eu., apac., us-gov., global.
  name = name.replace(/^(?:[a-z]{2,6}(?:-[a-z]{2,6})?\.)?anthropic\./, "");
  name = name.replace(/@.*$/, "").replace(/-v\d+(?::\d+)?$/, "");
  return name;
}

/** Which provider a model name belongs to, when the caller did not say. */
function providerOf(name: string): ModelProvider | undefined {
  if (name.startsWith("claude")) return "anthropic";
  if (/^(?:gpt|o\d|chatgpt)/.test(name)) return "openai";
  return undefined;
}

/**
 * Whether `name` is of the family `prefix` names: what follows may be a date or a variant
 * (`-20250514`, `-mini`, `[1m]`), never another version (`claude-opus-4` does not claim
 * `claude-opus-4-9`, nor `gpt-5` `gpt-5.4`).
 */
const startsFamily = (name: string, prefix: string) =>
  name.startsWith(prefix) && !/^(?:\d|[-.]\d{1,2}(?!\d))/.test(name.slice(prefix.length));

function resolve(row: FamilyRow, known: boolean, overrides: Partial<ModelPrices> | undefined): ModelRules {
  const [input, cacheWrite5m, cacheWrite1h, cacheRead, output] = row.usd;
  const prices: ModelPrices = { input, cacheWrite5m, cacheWrite1h, cacheRead, output, ...definedOnly(overrides) };
  // Rounded so 0.3 / 3 reads as 0.1: the page's multipliers, not a float's last digit.
  const per = (usd: number) => (prices.input > 0 ? Math.round((usd / prices.input) * 1e6) / 1e6 : 0);
  const tiers = (row.tiers ?? []).map((tier) => ({
    abovePromptTokens: tier.above,
    // Factors of the prices in effect, so an operator's price override moves its tiers with it.
    prices: {
      input: usdTimes(prices.input, tier.input),
      cacheWrite5m: usdTimes(prices.cacheWrite5m, tier.input),
      cacheWrite1h: usdTimes(prices.cacheWrite1h, tier.input),
      cacheRead: usdTimes(prices.cacheRead, tier.input),
      output: usdTimes(prices.output, tier.output),
    },
  }));
  return {
    provider: row.provider,
    family: row.family,
    known,
    prices,
    tiers,
    multipliers: { write5m: per(prices.cacheWrite5m), write1h: per(prices.cacheWrite1h), read: per(prices.cacheRead) },
    images: row.images,
    minCacheableTokens: row.minCacheableTokens,
    contextTokens: row.contextTokens,
    cache: row.cache,
  };
}

/** A price times a tier's factor, without a float's last digit (0.125 × 5 reads 0.625). */
const usdTimes = (usd: number, factor: number) => Math.round(usd * factor * 1e9) / 1e9;

function definedOnly(overrides: Partial<ModelPrices> | undefined): Partial<ModelPrices> {
  const out: Partial<Record<keyof ModelPrices, number>> = {};
  if (!overrides) return out;
  for (const [, key] of PRICE_FIELDS) {
    const value = overrides[key];
    if (typeof value === "number" && Number.isFinite(value) && value >= 0) out[key] = value;
  }
  return out;
}

/** Price overrides per model name (a deployment's `pricing.models`), matched on the normalised name. */
export type PriceOverrides = Readonly<Record<string, Partial<ModelPrices>>>;

/**
 * The rules of one model: its family's row, or the provider's default for a model the table does
 * not know (`known: false`). `provider` may be omitted when the name says it (`claude-…`,
 * `gpt-…`, `o3…`); anything else, e.g. Azure's, is treated as OpenAI when it says `openai` or
 * `azure`, else as Anthropic. `overrides` (keyed by model name) replace individual prices.
 *
 * @example
 * modelRules("anthropic", "claude-opus-5-5").multipliers.read // 0.05
 * modelRules("openai", "gpt-5.6-sol").multipliers.write5m     // 1.25
 * modelRules("anthropic", "claude-next").known                // false: Sonnet 4 prices, 100 images
 */
export function modelRules(
  provider: string | undefined,
  model: string | undefined,
  overrides?: PriceOverrides,
): ModelRules {
  const name = model === undefined ? "" : normaliseModel(model);
  const said = provider?.toLowerCase();
  const family: ModelProvider =
    said === "anthropic"
      ? "anthropic"
      : said === "openai" || said === "azure"
        ? "openai"
        : (providerOf(name) ?? "anthropic");
  const override = overrides === undefined || model === undefined ? undefined : (overrides[model] ?? overrides[name]);
  const row =
    name === ""
      ? undefined
      : FAMILIES.find((r) => r.provider === family && r.prefixes.some((prefix) => startsFamily(name, prefix)));
  return resolve(row ?? DEFAULTS[family], row !== undefined, override);
}

/** Every family of the table, resolved (for docs, `/v1/stats`'s price table and the tests). */
export function modelTable(): ModelRules[] {
  return FAMILIES.map((row) => resolve(row, true, undefined));
}

/** Tokens of one answer's usage, in the disjoint kinds the providers bill. */
export interface UsageTokens {
  readonly input: number;
  readonly cacheWrite5m: number;
  readonly cacheWrite1h: number;
  readonly cacheRead: number;
  readonly output: number;
}

/**
 * What a usage costs at one set of prices, in USD, and what the same input would have cost with
 * no cache (every input token, written or read, at the input price). A request is billed at its
 * tier: price one with `billedCost`, which calls this with its tier's prices.
 *
 * @example
 * usageCost(modelRules("anthropic", "claude-sonnet-4-5").prices, { input: 0, cacheWrite5m: 1e6, cacheWrite1h: 0, cacheRead: 0, output: 0 }).costUsd // 3.75
 */
export function usageCost(prices: ModelPrices, usage: UsageTokens): { costUsd: number; withoutCacheUsd: number } {
  const costUsd =
    (usage.input * prices.input +
      usage.cacheWrite5m * prices.cacheWrite5m +
      usage.cacheWrite1h * prices.cacheWrite1h +
      usage.cacheRead * prices.cacheRead +
      usage.output * prices.output) /
    1_000_000;
  const withoutCacheUsd = (promptTokens(usage) * prices.input + usage.output * prices.output) / 1_000_000;
  return { costUsd, withoutCacheUsd };
}

/** The prompt of a usage as the tiers measure it: uncached input, cache writes and cache reads. */
export function promptTokens(
  usage: Pick<UsageTokens, "input" | "cacheWrite5m" | "cacheWrite1h" | "cacheRead">,
): number {
  return usage.input + usage.cacheWrite5m + usage.cacheWrite1h + usage.cacheRead;
}

/**
 * The tier a request with `prompt` prompt tokens is billed at: 0 for the model's base prices, `i`
 * for `rules.tiers[i - 1]` (the highest whose line the prompt is over).
 *
 * @example tierOf(modelRules("anthropic", "claude-haiku-5-5"), 100_001) // 1: the whole request at 5x
 */
export function tierOf(rules: Pick<ModelRules, "tiers">, prompt: number): number {
  let tier = 0;
  for (const [index, band] of rules.tiers.entries()) if (prompt > band.abovePromptTokens) tier = index + 1;
  return tier;
}

/** The prices of tier `tier` (0: the base prices; past the last tier, the last). */
export function pricesAtTier(rules: Pick<ModelRules, "prices" | "tiers">, tier: number): ModelPrices {
  if (tier <= 0 || rules.tiers.length === 0) return rules.prices;
  return rules.tiers[Math.min(tier, rules.tiers.length) - 1]!.prices;
}

/**
 * What a usage costs as the provider bills it: every token of the request at the prices of its
 * tier, chosen from the request's own prompt (`promptTokens`) unless `tier` is given (a counter
 * stored under its tier, or a part of one request priced apart). The one tier-aware pricing of the
 * service: the ledger, `/v1/stats`, the eviction's estimate and the replay call it.
 *
 * @example
 * const haiku = modelRules("anthropic", "claude-haiku-5-5");
 * billedCost(haiku, { input: 100_001, cacheWrite5m: 0, cacheWrite1h: 0, cacheRead: 0, output: 0 }).costUsd // ≈ 0.05: 5x
 */
export function billedCost(
  rules: Pick<ModelRules, "prices" | "tiers">,
  usage: UsageTokens,
  tier: number = tierOf(rules, promptTokens(usage)),
): { costUsd: number; withoutCacheUsd: number; tier: number } {
  return { ...usageCost(pricesAtTier(rules, tier), usage), tier };
}
