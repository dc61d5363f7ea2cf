/**
 * The replay model: how much a session pays the provider's prompt cache under an eviction policy.
 * It owns the explicit cache models (`ideal`: the longest unchanged prefix since the previous
 * request; `anthropic`: entries written at `cache_control` breakpoints, read back only from a
 * breakpoint or within 20 blocks before one, expiring after idle minutes; `openai`: automatic
 * prefix caching in 128-token steps from 1,024 tokens), the agent's breakpoint layouts, the
 * policies compared (the old keep-3 rule, the batched policy of policy.ts, the cost strategy of
 * cost.ts), session generation with timestamps, and JSONL parsing. Pure: `tools/replay.ts` is only
 * the CLI. Every figure is an input; docs/eviction.md gives the source of each default.
 */
import { anthropicAdapter } from "./anthropic";
import { ANTHROPIC_BREAKPOINTS, cachePrices, costFront, PLACEHOLDER_TOKENS, PROMPT_CACHE_TTL_MS, PROVIDER_CEILINGS, type CostCarrier, type CostStep } from "./cost";
import type { EvictionAdapter } from "./inventory";
import { openaiAdapter } from "./openai";
import { DEFAULT_LIMITS, KEEP_FLOOR, retirementFront, type EvictionLimits } from "./policy";

/** One piece of a request as the cache sees it: equal ids mean equal bytes. */
export interface Segment {
  readonly id: string;
  readonly tokens: number;
  /** The message it belongs to (-1: tools and system); the policy holds its front per message. */
  readonly message: number;
  /** The agent put a `cache_control` breakpoint on this block (session files). */
  readonly breakpoint?: boolean;
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

/** One request of a session: the whole prompt, in order. */
export type ReplayRequest = readonly Segment[];

/** One turn of a compact session: new text and images appended to the history. */
export interface ReplayTurn {
  readonly textTokens: number;
  readonly images: ReadonlyArray<{ readonly tokens: number; readonly bytes: number; readonly upload?: boolean }>;
}

/** Which provider cache to model. */
export type CacheKind = "ideal" | "anthropic" | "openai";

/** Where the agent puts its own breakpoints (Anthropic): Hermes's default, one at the end, or as logged. */
export type BreakpointLayout = "system_and_3" | "rolling" | "session";

/** The explicit cache model; every rule is an input. */
export interface CacheModel {
  readonly kind: CacheKind;
  /** ideal only: cache reads are counted in whole units of this many tokens (1 = exact prefix). */
  readonly granularity: number;
  /** Tokens of the text block a retired image becomes (`[screenshot removed to save context]` ≈ 10). */
  readonly placeholderTokens: number;
  /** anthropic / openai: an entry expires this long after its last use (ms). */
  readonly ttlMs: number;
  /** anthropic: blocks before a breakpoint searched for an earlier entry. */
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

/** Price table: input price per million tokens; cache write, cache read and uncached input as multiples of it. */
export interface Prices {
  readonly inputPerMTok: number;
  readonly writeMultiplier: number;
  readonly readMultiplier: number;
  readonly uncachedMultiplier?: number;
}

/** The first replay's model: the longest unchanged prefix, no time, no breakpoints. */
export const DEFAULT_CACHE_MODEL: CacheModel = {
  kind: "ideal",
  granularity: 1,
  placeholderTokens: PLACEHOLDER_TOKENS,
  ttlMs: PROMPT_CACHE_TTL_MS,
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
  minCacheableTokens: 1_024,
};

/** OpenAI's automatic prefix caching. */
export const OPENAI_CACHE_MODEL: CacheModel = {
  ...DEFAULT_CACHE_MODEL,
  kind: "openai",
  minCacheableTokens: 1_024,
  step: 128,
};

export const CACHE_MODELS: Record<CacheKind, CacheModel> = {
  ideal: DEFAULT_CACHE_MODEL,
  anthropic: ANTHROPIC_CACHE_MODEL,
  openai: OPENAI_CACHE_MODEL,
};

export const DEFAULT_PRICES: Prices = { inputPerMTok: 3, ...cachePrices("anthropic", undefined), uncachedMultiplier: 1 };
/** Anthropic's 1-hour TTL: writes at 2x. */
export const ANTHROPIC_1H_PRICES: Prices = { ...DEFAULT_PRICES, writeMultiplier: 2 };
/** OpenAI: no write premium; the read discount is per model (0.5 for gpt-4o, 0.25 for gpt-4.1, 0.1 for gpt-5). */
export const OPENAI_PRICES: Prices = { inputPerMTok: 2.5, ...cachePrices("openai", "gpt-4o"), uncachedMultiplier: 1 };

/** What a policy knows about the request it decides for. */
export interface PolicyContext {
  /** 0-based index of the request in the session. */
  readonly index: number;
  /** When it is sent (ms). */
  readonly at: number;
  /** When the previous request was sent; undefined for the first. */
  readonly previousAt?: number;
  /** Requests in the whole session (a policy told the session's length may use it). */
  readonly count: number;
}

/** A policy's answer for one request: carriers (by id) to retire, and where it puts its own breakpoint. */
export interface PolicyDecision {
  readonly retired: ReadonlySet<string>;
  /** Segment index of a service-placed breakpoint (the cost strategy's front marker). */
  readonly marker?: number;
  /** The agent gave the service one of its breakpoint slots (manage_cache). */
  readonly managed?: boolean;
  /** Which rule decided (cost strategy). */
  readonly rule?: string;
}

/** A policy for the replay. Policies may remember earlier requests, as the route does per session. */
export type ReplayPolicy = (request: ReplayRequest, context: PolicyContext) => PolicyDecision;

/**
 * The old rule: every request keeps only the `keep` newest tool-image carriers, ceiling or not.
 * It kept as many as today's floor, hence the default.
 */
export function keepNewest(keep: number = KEEP_FLOOR): ReplayPolicy {
  return (request) => {
    const ids = costSteps(request).carrierIds;
    return { retired: new Set(ids.slice(0, Math.max(0, ids.length - keep))) };
  };
}

/** The batched policy of policy.ts, fed the same per-message steps the service builds. */
export function batchedPolicy(limits: EvictionLimits = DEFAULT_LIMITS): ReplayPolicy {
  return (request) => {
    const { steps, carrierIds } = costSteps(request);
    const { retire } = retirementFront(steps, limits);
    return { retired: new Set(carrierIds.slice(0, retire)) };
  };
}

/** No eviction at all: the baseline a session would pay if the provider had no ceiling. */
export const noEviction: ReplayPolicy = () => ({ retired: new Set() });

/** Options of the cost strategy in the replay (the route takes the same from the request). */
export interface CostPolicyOptions {
  /** The provider's true ceilings (Anthropic: 100 images of ≤ 2,000 px; OpenAI: 500). */
  readonly limits: EvictionLimits;
  /** The default ceiling the price rule goes under only when safe. */
  readonly baseCeiling?: number;
  readonly prices?: Prices;
  readonly model?: CacheModel;
  /** Anthropic: the agent lets the service place one breakpoint at the front (manage_cache). */
  readonly manageCache?: boolean;
  /**
   * What the agent tells the service of the requests left (`requests_left`): nothing (the price
   * rule guesses), the session's true length (`"known"`), or an iteration budget of this many
   * requests, which the session may end before.
   */
  readonly horizon?: "guess" | "known" | number;
}

/** A request as the cost arithmetic sees it: one step per message, and where each carrier starts. */
export interface CostView {
  readonly steps: CostStep[];
  /** Carrier ids, oldest first. */
  readonly carrierIds: string[];
  /** Index of each carrier's first segment in the request. */
  readonly firstSegment: number[];
}

/**
 * The steps `costFront` takes for one replayed request, built as the route builds them from a
 * request body: per message, its carriers with their tokens and start, and the requests answered
 * so far counted as assistant messages (each compact turn is one).
 */
export function costSteps(request: ReplayRequest): CostView {
  const steps: CostStep[] = [];
  const carrierIds: string[] = [];
  const firstSegment: number[] = [];
  let tokens = 0;
  let answers = 0;
  let current: { carriers: Map<string, CostCarrier>; uploads: { blocks: number; bytes: number } } | null = null;
  let message = -1;
  const close = () => {
    if (current) steps.push({ carriers: [...current.carriers.values()], uploads: current.uploads, end: tokens, turns: Math.max(1, answers) });
  };
  request.forEach((segment, i) => {
    if (segment.message >= 0 && (current === null || message !== segment.message)) {
      close();
      current = { carriers: new Map(), uploads: { blocks: 0, bytes: 0 } };
      message = segment.message;
    }
    if (segment.answer) answers += 1;
    if (segment.image && current) {
      if (segment.image.kind === "upload") {
        current.uploads = { blocks: current.uploads.blocks + 1, bytes: current.uploads.bytes + segment.image.bytes };
      } else {
        const id = segment.image.carrier;
        const carrier = current.carriers.get(id);
        if (carrier) {
          current.carriers.set(id, { ...carrier, blocks: carrier.blocks + 1, bytes: carrier.bytes + segment.image.bytes, tokens: carrier.tokens + segment.tokens });
        } else {
          current.carriers.set(id, { blocks: 1, bytes: segment.image.bytes, tokens: segment.tokens, start: tokens });
          carrierIds.push(id);
          firstSegment.push(i);
        }
      }
    }
    tokens += segment.tokens;
  });
  close();
  return { steps, carrierIds, firstSegment };
}

/**
 * The cost strategy, as `context/evict` runs it with `"strategy": "cost"`: costFront over the
 * request's messages, remembering the front and the last call like the route does per session_id.
 */
export function costPolicy(options: CostPolicyOptions): ReplayPolicy {
  const model = options.model ?? ANTHROPIC_CACHE_MODEL;
  const prices = options.prices ?? DEFAULT_PRICES;
  const managed = (options.manageCache ?? true) && model.kind === "anthropic";
  let remembered: number | undefined; // the route's session memory: unknown until the first answer
  return (request, context) => {
    const { steps, carrierIds, firstSegment } = costSteps(request);
    const cold = context.previousAt !== undefined && model.kind !== "ideal" && context.at - context.previousAt > model.ttlMs;
    const horizon = options.horizon ?? "guess";
    const length = horizon === "guess" ? undefined : horizon === "known" ? context.count : horizon;
    const decision = costFront(steps, {
      ...(length === undefined ? {} : { requestsLeft: Math.max(0, length - 1 - context.index) }),
      limits: options.limits,
      baseCeiling: options.baseCeiling ?? DEFAULT_LIMITS.maxBlocks,
      writeMultiplier: prices.writeMultiplier,
      readMultiplier: prices.readMultiplier,
      placeholderTokens: model.placeholderTokens,
      remembered,
      cold,
      managed,
    });
    remembered = decision.retire;
    // The marker stands on the block just before the front as the previous request saw it: the
    // last block a retirement in this request leaves unchanged.
    const markerAt = decision.previous < carrierIds.length ? firstSegment[decision.previous]! - 1 : undefined;
    return {
      retired: new Set(carrierIds.slice(0, decision.retire)),
      ...(managed && markerAt !== undefined && markerAt >= 0 ? { marker: markerAt } : {}),
      managed,
      rule: decision.rule,
    };
  };
}

/** The outbound request: each retired image replaced by the same placeholder segment. */
export function applyPolicy(request: ReplayRequest, retired: ReadonlySet<string>, model: Pick<CacheModel, "placeholderTokens">): Segment[] {
  return request.map((segment) =>
    segment.image?.kind === "tool" && retired.has(segment.image.carrier)
      ? { id: `${segment.id}|retired`, tokens: model.placeholderTokens, message: segment.message, ...(segment.breakpoint ? { breakpoint: true } : {}) }
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
  } else if (layout === "rolling") {
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
  readonly cost: number;
}

const floorTo = (tokens: number, granularity: number) =>
  granularity > 1 ? Math.floor(tokens / granularity) * granularity : tokens;

/** Replay options beyond the policy. */
export interface ReplayOptions {
  readonly model?: CacheModel;
  readonly prices?: Prices;
  /** The ceilings a request is checked against (`requests_over_ceiling`). */
  readonly limits?: EvictionLimits;
  /** When each request is sent (ms); a request every 30 s when absent. */
  readonly times?: readonly number[];
}

/** One cache's state across a session and its rule for one request. */
interface CacheState {
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

function anthropicCache(model: CacheModel): CacheState {
  const lastUse = new Map<string, number>();
  const fresh = (key: string, at: number) => {
    const used = lastUse.get(key);
    return used !== undefined && at - used <= model.ttlMs;
  };
  return {
    request(outbound, breakpoints, at) {
      const keys = prefixKeys(outbound);
      const cum: number[] = [];
      let sum = 0;
      for (const s of outbound) cum.push((sum += s.tokens));
      // Read: the longest fresh entry at a breakpoint or within `lookback` blocks before one.
      let best = -1;
      for (const b of breakpoints) {
        for (let p = b; p >= Math.max(0, b - model.lookback); p--) {
          if (fresh(keys[p]!, at)) {
            best = Math.max(best, p);
            break;
          }
        }
      }
      const read = best >= 0 ? cum[best]! : 0;
      if (best >= 0) lastUse.set(keys[best]!, at);
      // Write: an entry at every breakpoint whose prefix is long enough; breakpoints inside the
      // read prefix are refreshed or created at no write cost.
      let writeEnd = read;
      for (const b of breakpoints) {
        if (cum[b]! < model.minCacheableTokens) continue;
        lastUse.set(keys[b]!, at);
        if (b > best) writeEnd = Math.max(writeEnd, cum[b]!);
      }
      return { read, write: writeEnd - read };
    },
  };
}

function openaiCache(model: CacheModel): CacheState {
  const lastUse = new Map<string, number>();
  return {
    request(outbound, _breakpoints, at) {
      const keys = prefixKeys(outbound);
      let common = 0;
      let sum = 0;
      outbound.forEach((s, i) => {
        sum += s.tokens;
        const used = lastUse.get(keys[i]!);
        if (used !== undefined && at - used <= model.ttlMs) common = sum;
      });
      const read =
        common >= model.minCacheableTokens
          ? model.minCacheableTokens + Math.floor((common - model.minCacheableTokens) / model.step) * model.step
          : 0;
      for (const key of keys) lastUse.set(key, at);
      // Everything not read is cached for the next request once the prompt passes the minimum.
      return { read, write: sum >= model.minCacheableTokens ? sum - read : 0 };
    },
  };
}

const cacheFor = (model: CacheModel): CacheState =>
  model.kind === "anthropic" ? anthropicCache(model) : model.kind === "openai" ? openaiCache(model) : idealCache(model);

/** Think time between requests when a session has no timestamps. */
export const DEFAULT_THINK_MS = 30_000;

/**
 * Replay a session under one policy, request by request.
 *
 * @example
 * const requests = requestsFromTurns(generateSession({ turns: 40, images: 12 }), 4000);
 * replay(requests, keepNewest(3), { model: ANTHROPIC_CACHE_MODEL }).eviction_write_share // > 0.5
 */
export function replay(
  requests: readonly ReplayRequest[],
  policy: ReplayPolicy,
  options: ReplayOptions = {},
): PolicyReport & { perRequest: RequestCost[] } {
  const model = options.model ?? DEFAULT_CACHE_MODEL;
  const prices = options.prices ?? DEFAULT_PRICES;
  const limits = options.limits ?? DEFAULT_LIMITS;
  const cache = cacheFor(model);
  const perRequest: RequestCost[] = [];
  let previous: Segment[] = [];
  let previousAt: number | undefined;
  requests.forEach((request, index) => {
    const at = options.times?.[index] ?? index * DEFAULT_THINK_MS;
    const decision = policy(request, { index, at, previousAt, count: requests.length });
    const outbound = applyPolicy(request, decision.retired, model);
    const layout = model.kind === "anthropic" ? agentBreakpoints(outbound, model.breakpoints, decision.managed === true, model.maxBreakpoints) : [];
    const breakpoints = [...new Set(decision.marker === undefined ? layout : [...layout, decision.marker])].sort((a, b) => a - b);
    const { read, write } = cache.request(outbound, breakpoints, at);
    const cold = model.kind !== "ideal" && previousAt !== undefined && at - previousAt > model.ttlMs;

    let inputTokens = 0;
    let carriedTokens = 0; // the part standing where the previous request stood; the rest is this turn's own
    let imageBlocks = 0;
    let imageBytes = 0;
    outbound.forEach((segment, i) => {
      inputTokens += segment.tokens;
      if (i < previous.length) carriedTokens += segment.tokens;
      if (segment.image) {
        imageBlocks += 1;
        imageBytes += segment.image.bytes;
      }
    });
    // Had nothing been rewritten, the carried part would have been read back; what of it had to
    // be written instead is the price of the rewrite (a cold cache is not the policy's doing).
    const carried = model.kind === "ideal" ? floorTo(carriedTokens, model.granularity) : carriedTokens;
    const evictionWriteTokens = cold ? 0 : Math.max(0, Math.min(write, carried - read));
    const uncachedTokens = inputTokens - read - write;
    const cost =
      ((write * prices.writeMultiplier + read * prices.readMultiplier + uncachedTokens * (prices.uncachedMultiplier ?? 1)) *
        prices.inputPerMTok) /
      1_000_000;
    perRequest.push({
      inputTokens,
      cacheReadTokens: read,
      cacheWriteTokens: write,
      uncachedTokens,
      evictionWriteTokens,
      cold,
      imageBlocks,
      imageBytes,
      breakpoints: breakpoints.length,
      cost,
    });
    previous = outbound;
    previousAt = at;
  });

  const total = (pick: (r: RequestCost) => number) => perRequest.reduce((n, r) => n + pick(r), 0);
  const write = total((r) => r.cacheWriteTokens);
  const evictionWrites = total((r) => r.evictionWriteTokens);
  let worst = 0;
  perRequest.forEach((r, i) => {
    if (r.cacheWriteTokens > perRequest[worst]!.cacheWriteTokens) worst = i;
  });
  return {
    requests: perRequest.length,
    input_tokens: total((r) => r.inputTokens),
    cache_write_tokens: write,
    cache_read_tokens: total((r) => r.cacheReadTokens),
    uncached_tokens: total((r) => r.uncachedTokens),
    eviction_write_tokens: evictionWrites,
    eviction_write_share: write === 0 ? 0 : evictionWrites / write,
    collapses: perRequest.filter((r) => r.evictionWriteTokens > 0).length,
    cold_requests: perRequest.filter((r) => r.cold).length,
    worst_request_write_tokens: perRequest[worst]?.cacheWriteTokens ?? 0,
    worst_request: perRequest.length === 0 ? -1 : worst,
    worst_request_eviction_write_tokens: Math.max(0, ...perRequest.map((r) => r.evictionWriteTokens)),
    max_image_blocks: Math.max(0, ...perRequest.map((r) => r.imageBlocks)),
    requests_over_ceiling: perRequest.filter((r) => r.imageBlocks > limits.maxBlocks || r.imageBytes > limits.maxBytes).length,
    requests_over_breakpoints: perRequest.filter((r) => r.breakpoints > model.maxBreakpoints).length,
    cost: Math.round(total((r) => r.cost) * 1e6) / 1e6,
    perRequest,
  };
}

/** Inputs of a generated session. */
export interface SessionShape {
  readonly turns: number;
  readonly images: number;
  /** One screenshot every this many turns, from `firstImageTurn` (1-based). */
  readonly imageEvery?: number;
  readonly firstImageTurn?: number;
  readonly textTokens?: number;
  readonly imageTokens?: number;
  readonly imageBytes?: number;
}

export const DEFAULT_SESSION = {
  turns: 80,
  images: 60,
  imageEvery: 1,
  firstImageTurn: 2,
  textTokens: 1_000,
  imageTokens: 1_500,
  imageBytes: 350_000,
  systemTokens: 4_000,
} as const;

/** A synthetic agent session: text every turn, a tool screenshot every `imageEvery` turns. */
export function generateSession(shape: SessionShape): ReplayTurn[] {
  const every = Math.max(1, shape.imageEvery ?? DEFAULT_SESSION.imageEvery);
  const first = shape.firstImageTurn ?? DEFAULT_SESSION.firstImageTurn;
  const image = { tokens: shape.imageTokens ?? DEFAULT_SESSION.imageTokens, bytes: shape.imageBytes ?? DEFAULT_SESSION.imageBytes };
  let placed = 0;
  return Array.from({ length: shape.turns }, (_, i) => {
    const turn = i + 1;
    const due = turn >= first && (turn - first) % every === 0 && placed < shape.images;
    if (due) placed += 1;
    return { textTokens: shape.textTokens ?? DEFAULT_SESSION.textTokens, images: due ? [image] : [] };
  });
}

/**
 * The requests of a compact session: request t is the system prompt plus turns 1..t. Each turn is
 * one message standing for one answered request; its tool images form one carrier.
 */
export function requestsFromTurns(turns: readonly ReplayTurn[], systemTokens: number): ReplayRequest[] {
  const history: Segment[] = [{ id: "system", tokens: systemTokens, message: -1 }];
  return turns.map((turn, i) => {
    const message = i + 1;
    history.push({ id: `turn${message}:text`, tokens: turn.textTokens, message, answer: true });
    turn.images.forEach((image, j) => {
      history.push({
        id: `turn${message}:image${j}`,
        tokens: image.tokens,
        message,
        image: { kind: image.upload ? "upload" : "tool", carrier: `turn${message}`, bytes: image.bytes },
      });
    });
    return history.slice();
  });
}

/** The pace of a generated session: think time per turn, and optional long pauses. */
export interface SessionPace {
  /** Seconds between two requests (the agent's and the model's think time). */
  readonly thinkSeconds?: number;
  /** A pause after every this many requests (0: none). */
  readonly pauseEvery?: number;
  readonly pauseMinutes?: number;
}

/**
 * When each request of a generated session is sent (ms from the first).
 *
 * @example
 * requestTimes(4, { thinkSeconds: 30, pauseEvery: 2, pauseMinutes: 8 }) // [0, 30000, 540000, 570000]
 */
export function requestTimes(count: number, pace: SessionPace = {}): number[] {
  const think = (pace.thinkSeconds ?? DEFAULT_THINK_MS / 1000) * 1000;
  const every = pace.pauseEvery ?? 0;
  const pause = (pace.pauseMinutes ?? 0) * 60_000;
  const times: number[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (i > 0) at += think + (every > 0 && i % every === 0 ? pause : 0);
    times.push(at);
  }
  return times;
}

/** A generated session with its pace: what the random comparisons draw. */
export interface RandomSession extends SessionShape, SessionPace {
  readonly imageEvery: number;
  readonly textTokens: number;
  readonly imageTokens: number;
  readonly systemTokens: number;
  readonly thinkSeconds: number;
  /** 0: no pauses. */
  readonly pauseEvery: number;
  readonly pauseMinutes: number;
}

/**
 * The ranges random sessions are drawn from (inclusive), shared by the property tests and
 * `npm run replay -- --random N`: 1-90 turns, 0-90 images every 1-4 turns, text 100-3,000 and
 * images 200-3,000 tokens, a system prompt of 500-8,000, 5-120 s between requests, and in half of
 * the sessions a pause every 5-30 requests of 1-20 minutes.
 */
export const RANDOM_SESSION_RANGES = Object.freeze({
  turns: [1, 90],
  images: [0, 90],
  imageEvery: [1, 4],
  textTokens: [100, 3_000],
  imageTokens: [200, 3_000],
  systemTokens: [500, 8_000],
  thinkSeconds: [5, 120],
  pauseEvery: [5, 30],
  pauseMinutes: [1, 20],
} as const);

/** `count` random sessions from a seed (a small xorshift generator: the same seed, the same sessions). */
export function randomSessions(count: number, seed: number): RandomSession[] {
  let state = seed >>> 0 || 0x9e3779b9;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
  const draw = ([min, max]: readonly [number, number]) => min + Math.floor(next() * (max - min + 1));
  const r = RANDOM_SESSION_RANGES;
  return Array.from({ length: count }, () => ({
    turns: draw(r.turns),
    images: draw(r.images),
    imageEvery: draw(r.imageEvery),
    textTokens: draw(r.textTokens),
    imageTokens: draw(r.imageTokens),
    systemTokens: draw(r.systemTokens),
    thinkSeconds: draw(r.thinkSeconds),
    pauseEvery: next() < 0.5 ? 0 : draw(r.pauseEvery),
    pauseMinutes: draw(r.pauseMinutes),
  }));
}

/** One session where the cost strategy paid more than hermes, and why. */
export interface CostLoss {
  readonly session: RandomSession;
  readonly cost: number;
  readonly hermes: number;
  /** cost / hermes - 1. */
  readonly excess: number;
  /** Requests (1-based) where each rewrote history. */
  readonly cost_collapses: number[];
  readonly hermes_collapses: number[];
  readonly why: string;
}

/** What random sessions say of `cost` against hermes: how often and by how much it loses, and why. */
export interface CostLossReport {
  readonly sessions: number;
  readonly losses: CostLoss[];
  /** Mean of cost / hermes - 1 over all sessions. */
  readonly mean_excess: number;
  readonly worst_excess: number;
}

/**
 * Replays each session with hermes 20/8/3 and the cost strategy (told of the requests left what
 * `horizon` says) under one cache model, and explains every loss from where each rewrote history.
 *
 * @example
 * costLosses(randomSessions(200, 1), { model: ANTHROPIC_CACHE_MODEL }).losses.length // a handful at most
 */
export function costLosses(
  sessions: readonly RandomSession[],
  options: Pick<CompareOptions, "model" | "prices" | "limits" | "horizon" | "manageCache" | "providerMaxBlocks"> = {},
): CostLossReport {
  const model = options.model ?? ANTHROPIC_CACHE_MODEL;
  const limits = options.limits ?? DEFAULT_LIMITS;
  const raised = { ...limits, maxBlocks: options.providerMaxBlocks ?? providerCeiling(model.kind) };
  const losses: CostLoss[] = [];
  let sum = 0;
  let worst = 0;
  for (const session of sessions) {
    const requests = requestsFromTurns(generateSession(session), session.systemTokens);
    const times = requestTimes(requests.length, session);
    const hermes = replay(requests, batchedPolicy(limits), { model, prices: options.prices, limits, times });
    const cost = replay(
      requests,
      costPolicy({ limits: raised, baseCeiling: limits.maxBlocks, prices: options.prices, model, horizon: options.horizon, manageCache: options.manageCache }),
      { model, prices: options.prices, limits: raised, times },
    );
    const excess = hermes.cost > 0 ? cost.cost / hermes.cost - 1 : 0;
    sum += excess;
    worst = Math.max(worst, excess);
    if (cost.cost <= hermes.cost + 1e-9) continue;
    const collapses = (r: typeof cost) => r.perRequest.flatMap((q, i) => (q.evictionWriteTokens > 0 ? [i + 1] : []));
    const costCollapses = collapses(cost);
    const hermesCollapses = collapses(hermes);
    losses.push({
      session,
      cost: cost.cost,
      hermes: hermes.cost,
      excess,
      cost_collapses: costCollapses,
      hermes_collapses: hermesCollapses,
      why: explainLoss(costCollapses, hermesCollapses, requests.length, cost, hermes),
    });
  }
  return { sessions: sessions.length, losses, mean_excess: sessions.length ? sum / sessions.length : 0, worst_excess: worst };
}

/** One sentence on why a session cost more with `cost`: which rewrites it made that hermes did not, and how soon the session ended after. */
function explainLoss(costAt: readonly number[], hermesAt: readonly number[], requests: number, cost: PolicyReport, hermes: PolicyReport): string {
  const last = costAt[costAt.length - 1];
  const hermesPart = hermesAt.length === 0 ? "hermes never rewrote history" : `hermes rewrote at request${hermesAt.length > 1 ? "s" : ""} ${hermesAt.join(", ")}`;
  if (last === undefined) {
    return `cost never rewrote history but read more images (${cost.max_image_blocks} at most against ${hermes.max_image_blocks}); ${hermesPart}`;
  }
  const extra = cost.eviction_write_tokens - hermes.eviction_write_tokens;
  const at = `cost rewrote at request${costAt.length > 1 ? "s" : ""} ${costAt.join(", ")}`;
  if (extra <= 0) {
    return `${at}, no more eviction writes than hermes, but read more images (${cost.cache_read_tokens.toLocaleString("en-US")} read tokens against ${hermes.cache_read_tokens.toLocaleString("en-US")}); ${hermesPart}`;
  }
  const after = requests - last;
  return `${at} (${extra.toLocaleString("en-US")} eviction-write tokens more than hermes) and the session ended ${after} request${after === 1 ? "" : "s"} after the last: the reads saved by then did not pay that back; ${hermesPart}`;
}

/** How many images a compact session actually places (fewer than asked when turns run out). */
export const imagesIn = (turns: readonly ReplayTurn[]) => turns.reduce((n, t) => n + t.images.length, 0);

/** Estimates for turning a real request body into segments. */
export interface BodyModel {
  readonly imageTokens: number;
  /** Characters per token for everything that is not an image. */
  readonly charsPerToken: number;
}

/** A 52-bit FNV-1a style hash: ids of long content without keeping the content. */
function contentId(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
  }
  return `${text.length}:${a.toString(36)}:${(b & 0xfffff).toString(36)}`;
}

/** Whether a block carries an Anthropic `cache_control` breakpoint. */
const marked = (value: unknown) => typeof value === "object" && value !== null && "cache_control" in value && (value as Record<string, unknown>).cache_control != null;

/**
 * One request body (Anthropic Messages or OpenAI Chat Completions) as segments, with images found
 * by the same adapters as the service. Prefix order is tools, system, then messages; every tool,
 * system block, content block (and every part of an Anthropic tool_result) is one segment, and a
 * block with `cache_control` is a breakpoint.
 */
function segmentsFromBody(body: Record<string, unknown>, format: "anthropic" | "openai", model: BodyModel): Segment[] {
  const adapter: EvictionAdapter = format === "anthropic" ? anthropicAdapter : openaiAdapter;
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  const { carriers, uploads } = adapter.inventory(messages);
  const images = new Map<string, NonNullable<Segment["image"]>>();
  for (const carrier of carriers) {
    const id = format === "anthropic" ? `${carrier.message}/${carrier.block}` : `${carrier.message}`;
    for (const ref of carrier.images) images.set(`${ref.message}/${ref.block}/${ref.part ?? ""}`, { kind: "tool", carrier: id, bytes: ref.bytes });
  }
  for (const ref of uploads) images.set(`${ref.message}/${ref.block}/`, { kind: "upload", carrier: "", bytes: ref.bytes });

  // The provider's cache key is the content: a cache_control marker moved on or off a block does
  // not change it, so it is left out of the block's id and size.
  const content = (value: unknown) => JSON.stringify(marked(value) ? { ...(value as Record<string, unknown>), cache_control: undefined } : value) ?? "";
  const text = (value: unknown, message: number): Segment => {
    const json = content(value);
    return { id: contentId(json), tokens: Math.ceil(json.length / model.charsPerToken), message, ...(marked(value) ? { breakpoint: true } : {}) };
  };
  const piece = (value: unknown, message: number, key: string): Segment => {
    const image = images.get(key);
    if (!image) return text(value, message);
    return { id: contentId(content(value)), tokens: model.imageTokens, message, image, ...(marked(value) ? { breakpoint: true } : {}) };
  };

  const segments: Segment[] = [];
  for (const part of [body.tools, body.system]) {
    if (Array.isArray(part)) for (const entry of part) segments.push(text(entry, -1));
    else if (part !== undefined) segments.push(text(part, -1));
  }
  messages.forEach((raw, m) => {
    const message = (raw ?? {}) as Record<string, unknown>;
    const { content, ...header } = message;
    segments.push(message.role === "assistant" ? { ...text(header, m), answer: true } : text(header, m));
    if (!Array.isArray(content)) {
      if (content !== undefined && content !== null) segments.push(text(content, m));
      return;
    }
    content.forEach((block, b) => {
      const nested = (block ?? {}) as Record<string, unknown>;
      if (format === "anthropic" && nested.type === "tool_result" && Array.isArray(nested.content)) {
        const { content: parts, ...toolHeader } = nested;
        const partSegments = (parts as unknown[]).map((part, p) => piece(part, m, `${m}/${b}/${p}`));
        segments.push(text(toolHeader, m), ...partSegments);
        // A breakpoint on the tool_result block itself ends after its last part.
        if (marked(nested)) segments[segments.length - 1] = { ...segments[segments.length - 1]!, breakpoint: true };
      } else {
        segments.push(piece(block, m, `${m}/${b}/`));
      }
    });
  });
  return segments;
}

/** Usage the provider logged for one request, normalised across formats. */
export interface LoggedUsage {
  readonly cacheWriteTokens: number;
  readonly cacheReadTokens: number;
  /** Uncached input tokens (Anthropic `input_tokens`; OpenAI prompt tokens minus cached). */
  readonly inputTokens: number;
}

/** What one line of a session file holds: a whole request body, or one compact turn. */
export type SessionLine =
  | { readonly kind: "request"; readonly segments: Segment[]; readonly at?: number; readonly usage?: LoggedUsage }
  | { readonly kind: "turn"; readonly turn: ReplayTurn };

const count = (value: unknown, name: string): number => {
  if (value === undefined || value === null) return 0;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number`);
  return n;
};

/** The provider's usage object of a logged request: Anthropic's or OpenAI's field names. */
export function parseUsage(raw: unknown): LoggedUsage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const usage = raw as Record<string, unknown>;
  if ("cache_creation_input_tokens" in usage || "cache_read_input_tokens" in usage) {
    return {
      cacheWriteTokens: count(usage.cache_creation_input_tokens, "cache_creation_input_tokens"),
      cacheReadTokens: count(usage.cache_read_input_tokens, "cache_read_input_tokens"),
      inputTokens: count(usage.input_tokens, "input_tokens"),
    };
  }
  const details = (usage.prompt_tokens_details ?? usage.input_tokens_details) as Record<string, unknown> | undefined;
  const prompt = count(usage.prompt_tokens ?? usage.input_tokens, "prompt_tokens");
  const cached = count(details?.cached_tokens, "cached_tokens");
  return { cacheWriteTokens: 0, cacheReadTokens: cached, inputTokens: Math.max(0, prompt - cached) };
}

/**
 * Parse one JSONL line. A line with `messages` is a full request body (the request the agent sent,
 * history included); `format` on the line overrides `defaultFormat`; an optional `at` (ISO time
 * or ms) says when it was sent and `usage` what the provider logged (for `--validate`). Otherwise
 * the line is a compact turn: `{"text_tokens": 800, "images": 1}` or
 * `{"text_tokens": 800, "images": [{"tokens": 1500, "bytes": 350000, "upload": false}]}`.
 */
export function parseSessionLine(
  line: string,
  defaultFormat: "anthropic" | "openai",
  body: BodyModel,
  image: { tokens: number; bytes: number },
): SessionLine {
  const value = JSON.parse(line) as Record<string, unknown>;
  if (Array.isArray(value.messages)) {
    const format = value.format === "openai" || value.format === "anthropic" ? value.format : defaultFormat;
    const { usage: rawUsage, at: rawAt, format: _format, ...request } = value;
    let at: number | undefined;
    if (rawAt !== undefined) {
      at = typeof rawAt === "number" ? rawAt : Date.parse(String(rawAt));
      if (!Number.isFinite(at)) throw new Error("at must be an ISO time or epoch milliseconds");
    }
    const usage = parseUsage(rawUsage);
    return { kind: "request", segments: segmentsFromBody(request, format, body), ...(at === undefined ? {} : { at }), ...(usage ? { usage } : {}) };
  }
  const textTokens = Number(value.text_tokens ?? 0);
  if (!Number.isFinite(textTokens) || textTokens < 0) throw new Error("text_tokens must be a non-negative number");
  const images =
    typeof value.images === "number"
      ? Array.from({ length: value.images }, () => ({ ...image }))
      : Array.isArray(value.images)
        ? (value.images as Array<Record<string, unknown>>).map((i) => ({
            tokens: Number(i.tokens ?? image.tokens),
            bytes: Number(i.bytes ?? image.bytes),
            upload: i.upload === true,
          }))
        : [];
  return { kind: "turn", turn: { textTokens, images } };
}

/** One request of `--validate`: what the model says against what the provider logged. */
export interface ValidationRow {
  readonly request: number;
  readonly modelled: LoggedUsage;
  readonly logged: LoggedUsage;
}

/** The comparison of `--validate`: per request, and the total absolute error over all three counts. */
export interface Validation {
  readonly rows: ValidationRow[];
  /** Σ |modelled − logged| over writes, reads and uncached input, all requests. */
  readonly total_error_tokens: number;
  /** That error as a share of the logged input tokens, 0..1. */
  readonly error_share: number;
}

/**
 * Replay logged requests exactly as they were sent (no policy: the agent already evicted) and
 * compare each with the usage the provider logged, so a user can check the model on their traffic.
 */
export function validate(lines: ReadonlyArray<Extract<SessionLine, { kind: "request" }>>, model: CacheModel): Validation {
  const times = lines.map((line, i) => line.at ?? i * DEFAULT_THINK_MS);
  // The breakpoints are the ones the logged bodies carried.
  const report = replay(lines.map((l) => l.segments), noEviction, { model: { ...model, breakpoints: "session" }, times });
  const zero: LoggedUsage = { cacheWriteTokens: 0, cacheReadTokens: 0, inputTokens: 0 };
  let error = 0;
  let logged = 0;
  const rows = report.perRequest.map((r, i) => {
    const modelled: LoggedUsage = { cacheWriteTokens: r.cacheWriteTokens, cacheReadTokens: r.cacheReadTokens, inputTokens: r.uncachedTokens };
    const actual = lines[i]!.usage ?? zero;
    error +=
      Math.abs(modelled.cacheWriteTokens - actual.cacheWriteTokens) +
      Math.abs(modelled.cacheReadTokens - actual.cacheReadTokens) +
      Math.abs(modelled.inputTokens - actual.inputTokens);
    logged += actual.cacheWriteTokens + actual.cacheReadTokens + actual.inputTokens;
    return { request: i, modelled, logged: actual };
  });
  return { rows, total_error_tokens: error, error_share: logged === 0 ? 0 : error / logged };
}

/** The side-by-side comparison the CLI prints. */
export interface Comparison {
  readonly keep3: PolicyReport;
  readonly batched: PolicyReport;
  /** Hermes's later raised ceiling: the batched policy at the provider's true block ceiling. */
  readonly raised: PolicyReport;
  /** The cost strategy, told of the requests left what `CompareOptions.horizon` says (default: nothing). */
  readonly cost: PolicyReport;
  /** The cost strategy told the session's true length (`requests_left` exact at every request). */
  readonly cost_known: PolicyReport;
  /** The same session with no eviction at all, for reference (may pass the provider's ceiling). */
  readonly none: PolicyReport;
}

/** Options of a comparison. */
export interface CompareOptions {
  readonly limits?: EvictionLimits;
  readonly keep?: number;
  readonly model?: CacheModel;
  readonly prices?: Prices;
  readonly times?: readonly number[];
  /** The provider's true block ceiling (Anthropic 100 for images of ≤ 2,000 px, OpenAI 500). */
  readonly providerMaxBlocks?: number;
  /** The cost strategy may place one breakpoint at the front (Anthropic). */
  readonly manageCache?: boolean;
  /** What the cost strategy is told of the requests left (see `CostPolicyOptions.horizon`). */
  readonly horizon?: CostPolicyOptions["horizon"];
}

/** The true block ceiling of the provider a cache model stands for. */
export const providerCeiling = (kind: CacheKind) => (kind === "openai" ? PROVIDER_CEILINGS.openaiImages : PROVIDER_CEILINGS.anthropicManyImages);

/** Run the old keep-3 rule, the batched policy (at 20 and at the raised ceiling), the cost strategy (as told, and told the length) and no eviction. */
export function compare(requests: readonly ReplayRequest[], options: CompareOptions = {}): Comparison {
  const model = options.model ?? DEFAULT_CACHE_MODEL;
  const limits = options.limits ?? DEFAULT_LIMITS;
  const raisedLimits = { ...limits, maxBlocks: options.providerMaxBlocks ?? providerCeiling(model.kind) };
  const costStrategy = (horizon: CostPolicyOptions["horizon"]) =>
    costPolicy({ limits: raisedLimits, baseCeiling: limits.maxBlocks, prices: options.prices, model, manageCache: options.manageCache, horizon });
  const run = (policy: ReplayPolicy, checkLimits = limits) => {
    const { perRequest: _, ...report } = replay(requests, policy, { model, prices: options.prices, limits: checkLimits, times: options.times });
    return report;
  };
  return {
    keep3: run(keepNewest(options.keep ?? KEEP_FLOOR)),
    batched: run(batchedPolicy(limits)),
    raised: run(batchedPolicy(raisedLimits), raisedLimits),
    cost: run(costStrategy(options.horizon), raisedLimits),
    cost_known: run(costStrategy("known"), raisedLimits),
    none: run(noEviction),
  };
}
