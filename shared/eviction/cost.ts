/**
 * The `cost` strategy's arithmetic: when to move the retirement front and how far, chosen from the
 * provider's price table instead of fixed 20/8/3. Pure, like policy.ts, and shared by the route
 * (evict.service.ts) and the replay (replay.ts), so what the replay measures is what the route does.
 *
 * Rules, evaluated at every message boundary (the front never moves backwards, and every move
 * retires down to the floor at once: a collapse costs the same however many images it retires,
 * and each retired image is one fewer read on every later request):
 * - ceiling: the provider's true ceilings (e.g. Anthropic's 100 images of ≤ 2,000 px) bound the
 *   request; passing them forces a retirement;
 * - price: retire when the reads saved over the expected rest of the session (as long again as it
 *   has been, times `HORIZON`) outweigh the write premium of re-writing from where the cache still
 *   holds the prompt (the front marker when managed), and only when the move leaves the session
 *   at most `PREMATURE_SHARE` of what it has paid above what hermes (20/8/3, followed alongside)
 *   would have paid by then;
 * - cold_cache: when the cache has expired anyway, retiring down to the floor costs no extra write;
 * - price_tier: on a model that bills a prompt over a line whole at a higher price (Haiku 5.5 over
 *   100,000 tokens at 5x), a request that would pass the line retires down to the floor when that
 *   brings it under, and the tier it avoids over the requests it expects to stay under outweighs
 *   the rewrite it causes (`worthStayingUnder`).
 */
import { modelRules } from "../llm/models.table";
import type { ImageLoad } from "../llm/image-blocks";
import { DEFAULT_LIMITS, retirementFront, type EvictionLimits } from "./policy";

/**
 * The one "cold" rule: the provider's cache has expired when the previous request of the session
 * was longer ago than the entry's TTL (it renews on every use). Unknown previous request: warm.
 * The route, the proxy and the replay all judge it here.
 */
export function cacheIsCold(previousAt: number | undefined, at: number, ttlMs: number): boolean {
  return previousAt !== undefined && at - previousAt > ttlMs;
}

/** Tokens of a retired image's text (the fixed placeholder). */
export const PLACEHOLDER_TOKENS = 10;

/**
 * The cache's prices of a model as multiples of its input price (short-TTL write, read), from the
 * model table (shared/llm/models.table.ts): Anthropic writes at 1.25x and reads at 0.1x, 0.05x or
 * 0.025x by model; OpenAI writes at 1.25x from GPT-5.6 (1x before) and reads at 0.1x-0.5x by model.
 */
export function cachePrices(
  provider: string | undefined,
  model: string | undefined,
): { writeMultiplier: number; readMultiplier: number } {
  const { multipliers } = modelRules(provider, model);
  return { writeMultiplier: multipliers.write5m, readMultiplier: multipliers.read };
}

/** A tool-image carrier with what the cost arithmetic needs beside its load. */
export interface CostCarrier extends ImageLoad {
  /** Estimated prompt tokens of its images. */
  readonly tokens: number;
  /** Prompt tokens before it: where a rewrite starts when the front stands at this carrier. */
  readonly start: number;
}

/** One message of the conversation, oldest first (messages without images included). */
export interface CostStep {
  readonly carriers: readonly CostCarrier[];
  readonly uploads: ImageLoad;
  /** Prompt tokens up to the end of this message. */
  readonly end: number;
  /** Requests the session has made up to this message (e.g. assistant turns). */
  readonly turns: number;
}

/** What the strategy is allowed to know and do. */
export interface CostSettings {
  /** The provider's true ceilings and the floor; `batch` is the rival hermes's (the price rule sets `cost`'s own). */
  readonly limits: EvictionLimits;
  /** The policy's default ceiling: the price rule goes under it only when safe, and hermes collapses at it. */
  readonly baseCeiling: number;
  readonly writeMultiplier: number;
  readonly readMultiplier: number;
  readonly placeholderTokens: number;
  /**
   * Carriers the previous request of this session retired, when the session remembers it
   * (undefined: unknown). Known, it is where the previous request's front stood: earlier
   * boundaries are not judged again by price (only the ceilings may still force a move there), so
   * a rule whose inputs changed since (a horizon, a cold cache) never re-decides the past.
   */
  readonly remembered?: number;
  /** The provider's cache has expired since the previous request. */
  readonly cold: boolean;
  /** A breakpoint stands at the front, so a collapse rewrites from the front, not from the start. */
  readonly managed: boolean;
  /**
   * The model's first price tier (docs/eviction.md, "Price tiers by prompt size"): a request whose
   * prompt is over `abovePromptTokens` is billed whole at `factor` times the prices; undefined for
   * a model with one price.
   */
  readonly tier?: { readonly abovePromptTokens: number; readonly factor: number };
  /**
   * The model's context window, a ceiling like the image limits: a request whose estimated prompt
   * (less what the front retires) would pass it retires down to the floor. Given when text tool
   * results are carriers too (docs/eviction.md, "Old tool results"); undefined: no such ceiling.
   */
  readonly maxPromptTokens?: number;
  /**
   * Requests the caller expects the session to make after this one (e.g. the agent's remaining
   * iteration budget, when its sessions run to it); undefined when unknown, and the price rule
   * guesses instead.
   */
  readonly requestsLeft?: number;
}

export type CostRule = "under_ceiling" | "held" | "ceiling" | "price" | "cold_cache" | "price_tier";

export interface CostDecision {
  /** How many of the oldest carriers to retire. */
  readonly retire: number;
  /** The front as the previous request (all messages but the last) saw it: where a cache marker belongs. */
  readonly previous: number;
  readonly fits: boolean;
  /**
   * Which rule decided this request's front. Without a remembered session, a front that earlier
   * message boundaries placed is reported with the rule that placed it (and `movedNow` false).
   */
  readonly rule: CostRule;
  /** The front moved past where the previous request left it (a rewrite of cached history unless the cache was cold). */
  readonly movedNow: boolean;
  /** Hermes (20/8/3 at `baseCeiling`) on the same conversation: its front now and before the newest message. */
  readonly hermes: { readonly retire: number; readonly previous: number };
}

/**
 * Told nothing of the future, a price move may leave the session at most this share of what it
 * has paid so far above what `hermes` (the default ceiling's batches) would have paid by then, so
 * a session that ends right after a move is at most this much dearer. Before the default ceiling
 * that is the move's whole premium; after it, the ledger in `costFront` credits the collapses and
 * reads `hermes` paid and `cost` did not, and charges the reverse. Not a bound on every session:
 * one that waits at the ceiling and never finds a move that pays reads more than `hermes` to the
 * end (docs/eviction.md measures how often, and how much).
 */
const PREMATURE_SHARE = 0.05;

/** Tokens retiring carriers `from..to` takes off every later read: their images less the placeholders (negative when `to` < `from`). */
function retiredTokens(s: CostSettings, tokens: readonly number[], from: number, to: number): number {
  return tokens[to]! - tokens[from]! - (to - from) * s.placeholderTokens;
}

/**
 * The write premium of retiring carriers `from..to` now: the prompt is rewritten from where the
 * cache still holds it (the front marker when managed, else the first image) at the write price
 * instead of read, less the retired tokens themselves.
 */
function movePremium(
  s: CostSettings,
  end: number,
  tokens: readonly number[],
  starts: readonly number[],
  from: number,
  to: number,
  managed: boolean,
): number {
  if (to <= from) return 0;
  const saved = retiredTokens(s, tokens, from, to);
  const resumeAt = managed ? starts[from]! : (starts[0] ?? 0);
  return (s.writeMultiplier - s.readMultiplier) * Math.max(0, end - resumeAt - saved);
}

/**
 * The price rule at one boundary: retiring carriers `front..to` now costs `movePremium` and saves
 * their tokens from every later read. It moves when both hold:
 * - the saving pays the premium back over the requests still to come: as many as the caller said
 *   (`totalTurns`, from `requestsLeft`; at most `TOLD_HORIZON_CAP` times the requests so far); unknown, `HORIZON` times as many again as the session
 *   has had (`HORIZON_AFTER_CEILING` once the conversation has passed the default ceiling while
 *   `cost` is under it), and then the move must leave the session at most `PREMATURE_SHARE` of
 *   what it has paid above `hermes` (`aboveHermes`: the ledger so far, less `hermes`'s own
 *   collapse at this boundary);
 * - the batch is at least the economic batch (`economicBatch`): a smaller one collapses more often
 *   than it saves.
 */
function worthRetiring(
  s: CostSettings,
  step: CostStep,
  tokens: readonly number[],
  starts: readonly number[],
  front: number,
  to: number,
  overBase: boolean,
  afterBase: boolean,
  totalTurns: number | undefined,
  aboveHermes: number,
  imageless: boolean,
): boolean {
  const saved = retiredTokens(s, tokens, front, to);
  if (saved <= 0 || s.readMultiplier <= 0) return false;
  const premium = movePremium(s, step.end, tokens, starts, front, to, s.managed);
  // What the next collapse rewrites at least: the kept images and everything after them.
  if (saved < economicBatch(s, tokens[tokens.length - 1]! / step.turns, step.end - starts[to]!)) return false;
  if (totalTurns !== undefined)
    return s.readMultiplier * saved * Math.min(totalTurns - step.turns, step.turns * TOLD_HORIZON_CAP) >= premium;
  const horizon = overBase || !afterBase ? HORIZON : HORIZON_AFTER_CEILING;
  const gain = s.readMultiplier * saved * step.turns * horizon;
  if (gain < premium) return false;
  // Text tool results only: hermes never retires text, so the share guard would measure the move
  // against sending everything forever; the horizon and the economic batch judge it alone.
  if (imageless) return true;
  const paid = s.readMultiplier * step.turns * (step.end / 2) + s.writeMultiplier * step.end;
  return aboveHermes + premium <= PREMATURE_SHARE * paid;
}

/**
 * The share of a tier's line the strategy aims under: its token counts are estimates (text at 4
 * characters a token, an image by its pixels), and a request just over the line pays the tier
 * on every token of it.
 */
const TIER_MARGIN = 0.97;

/**
 * The tier rule at one boundary: the request's prompt (`end`, less what the front has retired) is
 * over the tier's line, and retiring carriers `front..to` brings it under. It moves when the tier
 * avoided pays for the move's rewrite: every request kept under the line (this one, then as many as
 * the conversation's growth allows, at most as many as the strategy expects: `requestsLeft`, else
 * `HORIZON` times the requests so far) would have cost `factor − 1` times more, each at least its
 * reads of the prompt left and the write of one request's growth.
 */
function worthStayingUnder(
  s: CostSettings,
  step: CostStep,
  tokens: readonly number[],
  starts: readonly number[],
  front: number,
  to: number,
  totalTurns: number | undefined,
): boolean {
  const tier = s.tier!;
  const line = tier.abovePromptTokens * TIER_MARGIN;
  const after = step.end - retiredTokens(s, tokens, 0, to);
  if (after > line) return false;
  const growth = step.end / Math.max(1, step.turns);
  const under = 1 + Math.floor((line - after) / Math.max(1, growth));
  const expected = totalTurns !== undefined ? totalTurns - step.turns : Math.ceil(step.turns * HORIZON);
  const requests = Math.min(under, 1 + Math.max(0, expected));
  const avoided = (tier.factor - 1) * requests * (s.readMultiplier * after + s.writeMultiplier * growth);
  return avoided >= movePremium(s, step.end, tokens, starts, front, to, s.managed);
}

/**
 * Told how many requests are left, the price rule still believes at most this many times the
 * requests so far: a budget is usually an upper bound, and a session that ends well before it
 * would not pay back a collapse made for it. Measured on the replay (docs/eviction.md): every target
 * session keeps its gain from 0.75 up; told a 90-request budget, 1,650 random sessions (most of
 * which end earlier) cost more than hermes in 4.8 % of them, at worst +25 %, with this cap, and in
 * 6.4 %, at worst +34 %, without it.
 */
const TOLD_HORIZON_CAP = 1;

/**
 * The smallest batch (in image tokens) worth a collapse when more collapses follow. Between two
 * collapses the retirable image tokens grow by `perRequest` a request and are read at the read
 * price on every request; each collapse rewrites at least `window` tokens (the kept images and what
 * follows them) at the write premium. Reads `read·perRequest·Δ²/2` plus `premium·window` per cycle
 * of Δ requests cost least per request at Δ = √(2·premium·window / (read·perRequest)), a batch of
 * √(2·premium·window·perRequest / read) tokens (the economic-order-quantity rule).
 *
 * @example
 * economicBatch(DEFAULT_COST_SETTINGS, 1_500, 7_500) // ≈ 16,100 tokens: about 11 screenshots of 1,500
 */
export function economicBatch(
  s: Pick<CostSettings, "writeMultiplier" | "readMultiplier">,
  perRequest: number,
  window: number,
): number {
  if (perRequest <= 0 || s.readMultiplier <= 0) return Infinity;
  return Math.sqrt((2 * (s.writeMultiplier - s.readMultiplier) * Math.max(0, window) * perRequest) / s.readMultiplier);
}

/**
 * Expected remaining requests, as a multiple of the requests so far. 0.5, not 1: tuned on the
 * replay (docs/eviction.md), where 1 retired too early on sessions that end soon after.
 */
const HORIZON = 0.5;

/**
 * The horizon of a move under the default ceiling once the conversation has passed it (so `hermes`
 * has already collapsed once and will again): no share guard then, but a shorter horizon. Tuned on
 * the replay (docs/eviction.md): 0.32–0.35 keeps every target session's gain; 0.3 misses the second
 * collapse on 36 screenshots in 50 turns, 0.38 collapses too late in the 90-turn session to pay back.
 */
const HORIZON_AFTER_CEILING = 1 / 3;

/**
 * The cost strategy's front for a whole conversation, evaluated at every message boundary in one
 * pass and held where earlier boundaries (or, when the session remembers it, the previous request)
 * put it.
 *
 * @example
 * const decision = costFront(steps, { ...settings, cold: true });
 * decision.rule // "cold_cache": retired down to the floor while the cache was cold anyway
 */
export function costFront(steps: readonly CostStep[], s: CostSettings): CostDecision {
  const { floor: floorLimit, maxBlocks, maxBytes } = s.limits;
  // Running sums over the carriers, oldest first: the newest k of n weigh sum[n] - sum[n - k].
  const blocks = [0];
  const bytes = [0];
  const tokens = [0];
  const starts: number[] = [];
  let reservedBlocks = 0;
  let reservedBytes = 0;
  let front = 0;
  let previous = 0;
  let rule: CostRule = "under_ceiling";
  let lastMove: CostRule | null = null;
  const known = s.remembered !== undefined;
  const remembered = Math.max(0, s.remembered ?? 0);
  // The caller's horizon judges this request's move only: unremembered, earlier boundaries are
  // judged as the conversation alone implies, so a horizon that changes between requests never
  // re-decides the past or moves the front back.
  const lastTurns = steps.length > 0 ? steps[steps.length - 1]!.turns : 0;
  const totalTurns = s.requestsLeft === undefined ? undefined : lastTurns + Math.max(0, s.requestsLeft);
  // The rival the price rule answers to: `hermes`'s front at every boundary, and what `cost` has
  // paid above it so far (input-token units: its collapses less hermes's, and the reads of what
  // one retired and the other kept). Hermes's collapses are credited from its own oldest kept
  // image, the least it rewrites: the ledger errs against `cost`. Remembered, `cost`'s front
  // counts as retired from the start.
  const hermesFronts: number[] = [];
  retirementFront(steps, { ...s.limits, maxBlocks: s.baseCeiling }, hermesFronts);
  let hermesFront = 0;
  let aboveHermes = 0;
  let turnsBefore = 0;
  let endNow = 0; // the current step's prompt tokens, for the context-window ceiling
  const contextLine = s.maxPromptTokens === undefined ? Number.POSITIVE_INFINITY : s.maxPromptTokens * TIER_MARGIN;
  // Whether keeping the carriers from `from` on is within the true ceilings (no closures in the
  // loop: it runs on every outbound request, for every message).
  const fitsFrom = (from: number, total: number) =>
    reservedBlocks + blocks[total]! - blocks[from]! <= maxBlocks &&
    reservedBytes + bytes[total]! - bytes[from]! <= maxBytes &&
    endNow - retiredTokens(s, tokens, 0, from) <= contextLine;
  /** Retire down to the floor, further only if the true ceilings still need it, never past `maxRetire`. */
  const toFloor = (total: number, floor: number, maxRetire: number) => {
    let to = Math.max(front, total - floor);
    while (to < maxRetire && !fitsFrom(to, total)) to += 1;
    return Math.max(front, Math.min(to, maxRetire));
  };

  for (let index = 0; index < steps.length; index++) {
    const step = steps[index]!;
    const last = index === steps.length - 1;
    const requests = step.turns - turnsBefore;
    turnsBefore = step.turns;
    // The front the previous request sent: the remembered one when the session remembers it.
    if (last) previous = Math.max(front, Math.min(remembered, starts.length));
    for (const carrier of step.carriers) {
      blocks.push(blocks[blocks.length - 1]! + carrier.blocks);
      bytes.push(bytes[bytes.length - 1]! + carrier.bytes);
      tokens.push(tokens[tokens.length - 1]! + carrier.tokens);
      starts.push(carrier.start);
    }
    reservedBlocks += step.uploads.blocks;
    reservedBytes += step.uploads.bytes;
    endNow = step.end;
    const total = starts.length;
    front = Math.min(total, Math.max(front, remembered));
    if (total === 0) continue;
    const frontBefore = front;
    const hermesNow = hermesFronts[index]!;
    const hermesPremium = movePremium(s, step.end, tokens, starts, hermesFront, hermesNow, true);

    const floor = Math.min(floorLimit, total);
    const uploadsBreakBlocks = reservedBlocks > maxBlocks;
    const floorBytesFit = reservedBytes + bytes[total]! - bytes[total - floor]! <= maxBytes;
    const maxRetire = uploadsBreakBlocks && floorBytesFit ? total - floor : total;

    let moved: CostRule | null = null;
    if (!fitsFrom(front, total)) {
      front = toFloor(total, floor, maxRetire);
      moved = "ceiling";
    } else if (
      (last || !known) &&
      total - front > floor &&
      worthRetiring(
        s,
        step,
        tokens,
        starts,
        front,
        total - floor,
        blocks[total]! - blocks[front]! + reservedBlocks > s.baseCeiling,
        blocks[total]! + reservedBlocks > s.baseCeiling,
        last ? totalTurns : undefined,
        aboveHermes - hermesPremium,
        blocks[total - floor]! === blocks[front]!,
      )
    ) {
      front = toFloor(total, floor, maxRetire);
      moved = "price";
    } else if (
      (last || !known) &&
      s.tier !== undefined &&
      total - front > floor &&
      step.end - retiredTokens(s, tokens, 0, front) > s.tier.abovePromptTokens * TIER_MARGIN &&
      worthStayingUnder(s, step, tokens, starts, front, toFloor(total, floor, maxRetire), last ? totalTurns : undefined)
    ) {
      front = toFloor(total, floor, maxRetire);
      moved = "price_tier";
    }
    if (last && s.cold && total - front > floor) {
      front = toFloor(total, floor, maxRetire);
      moved = "cold_cache";
    }
    if (moved !== null) lastMove = moved;
    if (moved !== "cold_cache") aboveHermes += movePremium(s, step.end, tokens, starts, frontBefore, front, s.managed);
    aboveHermes += requests * s.readMultiplier * retiredTokens(s, tokens, front, hermesNow) - hermesPremium;
    hermesFront = hermesNow;
    if (last && moved !== null && front > previous) rule = moved;
  }

  const total = starts.length;
  // The rule reported is the one that moved this request's front; otherwise it is held or untouched.
  const movedNow = front > previous;
  if (!movedNow) rule = front === 0 ? "under_ceiling" : known ? "held" : (lastMove ?? "held");
  else if (rule === "under_ceiling") rule = "held"; // moved only by what the session remembered
  const hermes = { retire: hermesFronts[steps.length - 1] ?? 0, previous: hermesFronts[steps.length - 2] ?? 0 };
  return { retire: front, previous, fits: fitsFrom(front, total), rule, movedNow, hermes };
}

/** The settings a caller starts from: Anthropic-like prices, the policy's default ceilings. */
export const DEFAULT_COST_SETTINGS: CostSettings = Object.freeze({
  limits: DEFAULT_LIMITS,
  baseCeiling: DEFAULT_LIMITS.maxBlocks,
  ...cachePrices("anthropic", undefined),
  placeholderTokens: PLACEHOLDER_TOKENS,
  cold: false,
  managed: false,
});
