/**
 * The comparison: a session replayed request by request under each policy and cache model, the
 * rivals side by side (`compare`, what `--suite` and `--json` print), and where `cost` loses over
 * random sessions and why (`costLosses`, `--random`).
 */
import { cacheIsCold } from "../../shared/eviction/cost";
import { DEFAULT_LIMITS, KEEP_FLOOR, type EvictionLimits } from "../../shared/eviction/policy";
import {
  agentBreakpoints,
  applyPolicy,
  cacheFor,
  DEFAULT_CACHE_MODEL,
  DEFAULT_PRICES,
  DEFAULT_THINK_MS,
  floorTo,
  usesBreakpoints,
  ANTHROPIC_CACHE_MODEL,
  type CacheKind,
  type CacheModel,
  type PolicyReport,
  type Prices,
  type ReplayOptions,
  type ReplayRequest,
  type RequestCost,
  requestCost,
  type Segment,
} from "./cache.models";
import { modelRules } from "../../shared/llm/models.table";
import {
  batchedPolicy,
  claudeCodePolicy,
  CONTEXT_EDITING_CLEAR_AT_LEAST,
  CONTEXT_EDITING_DEFAULTS,
  contextEditingPolicy,
  costPolicy,
  keepNewest,
  noEviction,
  type CostPolicyOptions,
  type ReplayPolicy,
} from "./rivals";
import { generateSession, requestsFromTurns, requestTimes, type RandomSession } from "./sessions";

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
    const body = options.bodies?.[index];
    const decision = policy(request, { index, at, previousAt, count: requests.length, ...(body ? { body } : {}) });
    const outbound = applyPolicy(request, decision.retired, model);
    // OpenAI from GPT-5.6 adds its implicit breakpoint at the newest message to whatever the body marks.
    const implicit = model.kind === "openai-breakpoints" && outbound.length > 0 ? [outbound.length - 1] : [];
    const layout = usesBreakpoints(model)
      ? [...agentBreakpoints(outbound, model.breakpoints, decision.managed === true, model.maxBreakpoints), ...implicit]
      : [];
    const breakpoints = [...new Set(decision.marker === undefined ? layout : [...layout, decision.marker])].sort(
      (a, b) => a - b,
    );
    const { read, write } = cache.request(outbound, breakpoints, at);
    const cold = model.kind !== "ideal" && cacheIsCold(previousAt, at, model.ttlMs);

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
    const { cost, tier } = requestCost(prices, { write, read, uncached: uncachedTokens });
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
      tier,
      retired: decision.retired.size,
      ...(decision.marker === undefined ? {} : { marker: decision.marker }),
      ...(decision.rule === undefined ? {} : { rule: decision.rule }),
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
    requests_over_ceiling: perRequest.filter((r) => r.imageBlocks > limits.maxBlocks || r.imageBytes > limits.maxBytes)
      .length,
    requests_over_breakpoints: perRequest.filter((r) => r.breakpoints > model.maxBreakpoints).length,
    requests_over_tier: perRequest.filter((r) => r.tier > 0).length,
    cost: Math.round(total((r) => r.cost) * 1e6) / 1e6,
    perRequest,
  };
}

/** One session where the cost strategy paid more than hermes, or more than the cheapest rival + 2 %, and why. */
export interface CostLoss {
  readonly session: RandomSession;
  readonly cost: number;
  readonly hermes: number;
  /** cost / hermes - 1. */
  readonly excess: number;
  /** The cheapest rival of the session (a key of `Comparison`) and what it cost. */
  readonly rival: (typeof RIVALS)[number];
  readonly rival_cost: number;
  /** cost / cheapest rival - 1. */
  readonly excess_over_rival: number;
  /** Requests (1-based) where each rewrote history. */
  readonly cost_collapses: number[];
  readonly hermes_collapses: number[];
  readonly why: string;
}

/** What random sessions say of `cost` against hermes and against the cheapest rival: how often and by how much it loses, and why. */
export interface CostLossReport {
  readonly sessions: number;
  /** Sessions where cost paid more than hermes or more than the cheapest rival + 2 %. */
  readonly losses: CostLoss[];
  /** Mean of cost / hermes - 1 over all sessions. */
  readonly mean_excess: number;
  readonly worst_excess: number;
  /** Sessions where cost paid more than the cheapest rival + 2 %, and the worst cost / rival - 1. */
  readonly over_rival: number;
  readonly worst_excess_over_rival: number;
}

/** The bound of the targets: `cost` no dearer than the cheapest rival by more than this share. */
export const RIVAL_TOLERANCE = 0.02;

/**
 * Replays each session with every rival and the cost strategy (told of the requests left what
 * `horizon` says) under one cache model, and explains every loss (against hermes, or against the
 * cheapest rival + 2 %) from where each rewrote history.
 *
 * @example
 * costLosses(randomSessions(200, 1), { model: ANTHROPIC_CACHE_MODEL }).over_rival // sessions over the cheapest rival + 2 %
 */
export function costLosses(
  sessions: readonly RandomSession[],
  options: Pick<
    CompareOptions,
    "model" | "prices" | "limits" | "horizon" | "manageCache" | "providerMaxBlocks" | "modelName"
  > = {},
): CostLossReport {
  const model = options.model ?? ANTHROPIC_CACHE_MODEL;
  const losses: CostLoss[] = [];
  let sum = 0;
  let worst = 0;
  let overRival = 0;
  let worstOverRival = 0;
  for (const session of sessions) {
    const requests = requestsFromTurns(generateSession(session), session.systemTokens);
    const times = requestTimes(requests.length, session);
    const policies = policiesOf({ ...options, model });
    const run = (key: keyof Comparison) =>
      replay(requests, policies[key].policy, { model, prices: options.prices, limits: policies[key].limits, times });
    const reports = Object.fromEntries(RIVALS.map((key) => [key, run(key)])) as Record<
      (typeof RIVALS)[number],
      ReturnType<typeof replay>
    >;
    const hermes = reports.batched;
    const cost = run("cost");
    const rival = RIVALS.reduce((best, key) => (reports[key].cost < reports[best].cost ? key : best), RIVALS[0]);
    const excess = hermes.cost > 0 ? cost.cost / hermes.cost - 1 : 0;
    const excessOverRival = reports[rival].cost > 0 ? cost.cost / reports[rival].cost - 1 : 0;
    sum += excess;
    worst = Math.max(worst, excess);
    worstOverRival = Math.max(worstOverRival, excessOverRival);
    const overBound = excessOverRival > RIVAL_TOLERANCE + 1e-9;
    if (overBound) overRival += 1;
    if (cost.cost <= hermes.cost + 1e-9 && !overBound) continue;
    const collapses = (r: typeof cost) => r.perRequest.flatMap((q, i) => (q.evictionWriteTokens > 0 ? [i + 1] : []));
    const costCollapses = collapses(cost);
    const against = overBound ? reports[rival] : hermes;
    const againstName = overBound ? RIVAL_NAMES[rival] : "hermes";
    losses.push({
      session,
      cost: cost.cost,
      hermes: hermes.cost,
      excess,
      rival,
      rival_cost: reports[rival].cost,
      excess_over_rival: excessOverRival,
      cost_collapses: costCollapses,
      hermes_collapses: collapses(hermes),
      why: explainLoss(costCollapses, collapses(against), requests.length, cost, against, againstName),
    });
  }
  return {
    sessions: sessions.length,
    losses,
    mean_excess: sessions.length ? sum / sessions.length : 0,
    worst_excess: worst,
    over_rival: overRival,
    worst_excess_over_rival: worstOverRival,
  };
}

/** How the rivals are named in sentences. */
const RIVAL_NAMES: Record<(typeof RIVALS)[number], string> = {
  keep3: "keep-3",
  batched: "hermes",
  raised: "hermes 100/8/3",
  context_editing: "context editing",
  context_editing_clear_at_least: "context editing (clear_at_least)",
  claude_code: "claude code",
};

/** One sentence on why a session cost more with `cost` than a rival: which rewrites it made that the rival did not, and how soon the session ended after. */
function explainLoss(
  costAt: readonly number[],
  rivalAt: readonly number[],
  requests: number,
  cost: PolicyReport,
  rival: PolicyReport,
  name: string,
): string {
  const last = costAt[costAt.length - 1];
  const rivalPart =
    rivalAt.length === 0
      ? `${name} never rewrote history`
      : `${name} rewrote at request${rivalAt.length > 1 ? "s" : ""} ${rivalAt.join(", ")}`;
  if (last === undefined) {
    return `cost never rewrote history but read more images (${cost.max_image_blocks} at most against ${rival.max_image_blocks}); ${rivalPart}`;
  }
  const extra = cost.eviction_write_tokens - rival.eviction_write_tokens;
  const at = `cost rewrote at request${costAt.length > 1 ? "s" : ""} ${costAt.join(", ")}`;
  if (extra <= 0) {
    return `${at}, no more eviction writes than ${name}, but read more images (${cost.cache_read_tokens.toLocaleString("en-US")} read tokens against ${rival.cache_read_tokens.toLocaleString("en-US")}); ${rivalPart}`;
  }
  const after = requests - last;
  return `${at} (${extra.toLocaleString("en-US")} eviction-write tokens more than ${name}) and the session ended ${after} request${after === 1 ? "" : "s"} after the last: the reads saved by then did not pay that back; ${rivalPart}`;
}

/** The side-by-side comparison the CLI prints (`--json` keys; each value has the same fields). */
export interface Comparison {
  /** The old rule: keep the 3 newest tool images. */
  readonly keep3: PolicyReport;
  /** Hermes 20/8/3 (the batched policy, `"strategy": "hermes"`). */
  readonly batched: PolicyReport;
  /** Hermes's raised ceiling: 100/8/3. */
  readonly raised: PolicyReport;
  /** Anthropic's context editing at its defaults (trigger 100,000 input tokens, keep 3 tool uses). */
  readonly context_editing: PolicyReport;
  /** The same with `clear_at_least` 50,000 tokens. */
  readonly context_editing_clear_at_least: PolicyReport;
  /** Claude Code's settings of context editing (clear from 180,000 down to 40,000 input tokens). */
  readonly claude_code: PolicyReport;
  /** The cost strategy, told of the requests left what `CompareOptions.horizon` says (default: nothing). */
  readonly cost: PolicyReport;
  /** The cost strategy told the session's true length (`requests_left` exact at every request). */
  readonly cost_known: PolicyReport;
  /** The same session with no eviction at all, for reference (may pass the provider's ceiling). */
  readonly none: PolicyReport;
}

/** The rivals of `cost` in a comparison, by key. */
export const RIVALS = [
  "keep3",
  "batched",
  "raised",
  "context_editing",
  "context_editing_clear_at_least",
  "claude_code",
] as const;

/** Options of a comparison. */
export interface CompareOptions {
  readonly limits?: EvictionLimits;
  readonly keep?: number;
  readonly model?: CacheModel;
  readonly prices?: Prices;
  readonly times?: readonly number[];
  /** The logged bodies behind the requests, when the session is one. */
  readonly bodies?: ReplayOptions["bodies"];
  /** The model-table row the route applies (`--model`); default: the cache model's provider default. */
  readonly modelName?: string;
  /** Hermes's raised ceiling (100), and an override of the cost strategy's true ceiling when given. */
  readonly providerMaxBlocks?: number;
  /** The cost strategy may place one breakpoint at the front. */
  readonly manageCache?: boolean;
  /** What the cost strategy is told of the requests left (see `CostPolicyOptions.horizon`). */
  readonly horizon?: CostPolicyOptions["horizon"];
}

/** Hermes's raised ceiling. */
export const RAISED_CEILING = 100;

/** The provider and model the route is told for a cache model (its model-table row). */
export function routeModel(kind: CacheKind, modelName?: string): { provider: "anthropic" | "openai"; model?: string } {
  if (kind === "openai") return { provider: "openai", model: modelName ?? "gpt-4o" };
  if (kind === "openai-breakpoints") return { provider: "openai", model: modelName ?? "gpt-5.6-terra" };
  return { provider: "anthropic", ...(modelName === undefined ? {} : { model: modelName }) };
}

/** The cost strategy's options in a comparison. */
export function costOptions(options: CompareOptions, horizon: CostPolicyOptions["horizon"]): CostPolicyOptions {
  const model = options.model ?? DEFAULT_CACHE_MODEL;
  return {
    ...routeModel(model.kind, options.modelName),
    limits: options.limits ?? DEFAULT_LIMITS,
    ...(options.providerMaxBlocks === undefined ? {} : { maxBlocks: options.providerMaxBlocks }),
    manageCache: options.manageCache ?? true,
    longTtl: model.ttlMs > 30 * 60_000,
    horizon,
  };
}

/** The ceilings a cost request is checked against: the model's true ones. */
export function costLimits(options: CompareOptions): EvictionLimits {
  const limits = options.limits ?? DEFAULT_LIMITS;
  const { provider, model } = routeModel((options.model ?? DEFAULT_CACHE_MODEL).kind, options.modelName);
  return { ...limits, maxBlocks: options.providerMaxBlocks ?? modelRules(provider, model).images.maxImages };
}

/** Every policy of a comparison by key, with the ceilings its requests are checked against. */
function policiesOf(
  options: CompareOptions,
): Record<keyof Comparison, { policy: ReplayPolicy; limits: EvictionLimits }> {
  const model = options.model ?? DEFAULT_CACHE_MODEL;
  const limits = options.limits ?? DEFAULT_LIMITS;
  const raisedLimits = { ...limits, maxBlocks: options.providerMaxBlocks ?? RAISED_CEILING };
  const trueLimits = costLimits(options);
  return {
    keep3: { policy: keepNewest(options.keep ?? KEEP_FLOOR), limits },
    batched: { policy: batchedPolicy(limits), limits },
    raised: { policy: batchedPolicy(raisedLimits), limits: raisedLimits },
    context_editing: { policy: contextEditingPolicy(CONTEXT_EDITING_DEFAULTS, model), limits: trueLimits },
    context_editing_clear_at_least: {
      policy: contextEditingPolicy(CONTEXT_EDITING_CLEAR_AT_LEAST, model),
      limits: trueLimits,
    },
    claude_code: { policy: claudeCodePolicy(model), limits: trueLimits },
    cost: { policy: costPolicy(costOptions(options, options.horizon)), limits: trueLimits },
    cost_known: { policy: costPolicy(costOptions(options, "known")), limits: trueLimits },
    none: { policy: noEviction, limits },
  };
}

/** Run every rival of `cost` (keep-3, Hermes 20/8/3 and 100/8/3, context editing, Claude Code), `cost` told nothing and told the length, and no eviction. */
export function compare(requests: readonly ReplayRequest[], options: CompareOptions = {}): Comparison {
  const model = options.model ?? DEFAULT_CACHE_MODEL;
  const entries = Object.entries(policiesOf(options)).map(([key, { policy, limits }]) => {
    const { perRequest: _, ...report } = replay(requests, policy, {
      model,
      prices: options.prices,
      limits,
      times: options.times,
      bodies: options.bodies,
    });
    return [key, report] as const;
  });
  return Object.fromEntries(entries) as unknown as Comparison;
}
