/**
 * The evict use case: classify a conversation's images with its format adapter, ask the policy
 * (hermes: policy.ts; cost: cost.ts) how far the retirement front stands, and return the outbound
 * copy with the api.md counts. `evictContext` is pure and synchronous, so the route, the bench and
 * the tests share it and it can run on every outbound request; `evictForSession` adds the one
 * thing the cost strategy remembers between requests (front and last call per session_id) through
 * the cache-store port.
 */
import {
  cacheIsCold,
  costFront,
  DEFAULT_COST_SETTINGS,
  PLACEHOLDER_TOKENS,
  type CostRule,
  type CostSettings,
  type CostStep,
} from "./cost";
import type { EvictedImage, EvictRequest, EvictResponse, EvictStats } from "./evict.schema";
import type { ClientBreakpoints, FrontMarker, MessagesLayout, WireFormat } from "../llm/format";
import { formatOfLayout } from "../llm/formats.catalog";
import {
  asRecord,
  describedImageText,
  fixedRetiredText,
  type Carrier,
  type ImageInventory,
  type ImageRef,
  type RetiredText,
} from "../llm/image-blocks";
import { imageSteps, loadOf, resolveLimits, retirementFront, type EvictionLimits } from "./policy";
import { textTokens } from "../llm/estimate";
import { conversationSteps } from "./steps";
import { learnedImageCosts } from "./image-cost";
import { retiredToolResults, withToolResultCarriers } from "./tool-results";
import { retireToolResults, type TextToolResult } from "../llm/tool-result-blocks";
import { modelRules, type ModelRules, type PriceOverrides, pricesAtTier, tierOf } from "../llm/models.table";
import type { AppPorts } from "../ports";
import { sha256Hex } from "../hash";

/** What the cost strategy knows beyond the request: the time, and what the session remembers. */
export interface EvictContext {
  /** Epoch ms of this request. */
  readonly now?: number;
  /** The session's last call and front, as `evictForSession` stored them. */
  readonly memory?: SessionMemory | null;
  /**
   * Anthropic: the caller plans the outbound copy's breakpoints (the provider proxy), so when all 4
   * are in use the oldest message breakpoint may move to the front; its TTL is kept.
   */
  readonly movesClientBreakpoint?: boolean;
  /** `pricing.models`: the operator's token prices, over the model table's (cost strategy). */
  readonly priceOverrides?: PriceOverrides;
  /**
   * Text tool results the cost strategy may retire with the images (the proxy's
   * `retire_tool_results`: ./tool-results.ts), in the conversation's order; the model's context
   * window is then a ceiling too. Absent: images only, as before.
   */
  readonly toolResults?: readonly TextToolResult[];
}

/** What the caller of a session's eviction decides beside the request: breakpoints, prices, text carriers. */
export type EvictPlanning = Pick<EvictContext, "movesClientBreakpoint" | "priceOverrides" | "toolResults">;

/** What the service remembers per session_id (cost strategy). */
export interface SessionMemory {
  /** Epoch ms of the session's previous request. */
  readonly at: number;
  /** Carriers retired by then. */
  readonly front: number;
  /** Identity of the newest retired carrier, so a different conversation under the same id is not trusted. */
  readonly carrier: string;
}

const carrierKey = (carrier: Carrier) => `${carrier.message}/${carrier.block}/${carrier.bytes}`;

/** The retired-image text for each image, from the request's `descriptions`. */
function retiredTextOf(request: EvictRequest): RetiredText {
  if (!request.descriptions || request.descriptions.length === 0) return fixedRetiredText;
  const byPosition = new Map<string, string>();
  for (const d of request.descriptions) byPosition.set(`${d.message}/${d.block}/${d.part ?? ""}`, d.text);
  return (image: ImageRef) => {
    const text = byPosition.get(`${image.message}/${image.block}/${image.part ?? ""}`);
    return text === undefined ? fixedRetiredText(image) : describedImageText(text);
  };
}

/**
 * Retire the oldest tool images of a conversation, only once it would pass a ceiling (hermes) or
 * when the price table or a cold cache makes it pay (cost). Never throws for a conversation that
 * cannot fit: `stats.fits` is false and `stats.reason` (hermes) or `stats.problem` (cost) says why.
 * The input is never modified; untouched messages are shared with the output.
 *
 * `evicted[]` has one entry per retired image block: `message` is the index in `messages`;
 * `block` is the index in that message's `content` array (the tool_result block for Anthropic,
 * the image part itself for OpenAI); `part` (Anthropic only) is the image's index inside the
 * tool_result's own `content` array. Each such position now holds the retired-image text block.
 * `retired` counts carriers (tool results), the policy's unit; `stats.retired_blocks` counts blocks.
 *
 * @example
 * const out = evictContext({ format: "anthropic", messages });
 * if (!out.stats.fits) console.warn(out.stats.reason);
 * send(out.messages);
 */
export function evictContext(request: EvictRequest, context: EvictContext = {}): EvictResponse {
  return evictWithInventory(request, context, formatOfLayout(request.format).inventory(request.messages)).response;
}

/** A decision and the front the previous request of the conversation stood at (carriers). */
interface Decided {
  readonly response: EvictResponse;
  readonly previous: number;
}

/** evictContext on an inventory already taken of `request.messages` (it is only read). */
function evictWithInventory(request: EvictRequest, context: EvictContext, inventory: ImageInventory): Decided {
  const adapter = formatOfLayout(request.format);
  const limits = resolveLimits({
    maxBlocks: request.limits?.max_blocks,
    maxBytes: request.limits?.max_bytes,
    batch: request.limits?.batch,
    floor: request.limits?.floor,
  });
  const textOf = retiredTextOf(request);

  if (request.strategy === "cost") return costEviction(request, context, adapter, limits, inventory, textOf);

  const { carriers, uploads } = inventory;
  const { decision, before } = hermesFronts(inventory, limits, request.messages.length - 1);
  // The same reason table as cost: the front moved by this request's newest message, or held.
  const reason: CostRule = decision.retire === 0 ? "under_ceiling" : decision.retire > before ? "ceiling" : "held";
  const retired = carriers.slice(0, decision.retire); // carriers are oldest first
  const messages = decision.retire === 0 ? request.messages.slice() : adapter.retire(request.messages, retired, textOf);
  const response = respond(messages, carriers, uploads, decision.retire, limits, {
    fits: decision.fits,
    reason,
    ...(decision.reason === undefined ? {} : { problem: decision.reason }),
  });
  return { response, previous: Math.min(before, decision.retire) };
}

/** Hermes's front on the whole conversation, and where it stood before the newest message (the previous request's front). */
function hermesFronts(inventory: ImageInventory, limits: EvictionLimits, lastMessage: number) {
  const fronts: number[] = [];
  const decision = retirementFront(imageSteps(inventory), limits, fronts);
  const touchesLast =
    inventory.carriers.some((c) => c.message === lastMessage) ||
    inventory.uploads.some((u) => u.message === lastMessage);
  return { decision, before: touchesLast ? (fronts[fronts.length - 2] ?? 0) : decision.retire };
}

/** How the cost strategy prices and bounds a request: the model's rules, with the operator's prices. */
function costRules(request: EvictRequest, context: EvictContext) {
  const provider = request.provider?.toLowerCase() ?? request.format;
  return modelRules(provider, request.model, context.priceOverrides);
}

/** The cost strategy: costFront over the conversation's steps (the one builder), then the front marker. */
function costEviction(
  request: EvictRequest,
  context: EvictContext,
  adapter: WireFormat,
  requested: EvictionLimits,
  inventory: ImageInventory,
  textOf: RetiredText,
): Decided {
  const { carriers, uploads } = inventory;
  const rules = costRules(request, context);
  // A model the table does not know is weighed at the image cost learned from its bills, once known.
  const learned = rules.known ? undefined : learnedImageCosts.tokensPerImage(request.model);
  const { steps, maxEdge } = conversationSteps(
    adapter,
    request.messages,
    inventory,
    textTokens(request.tools) + textTokens(request.system),
    learned,
  );
  // The model's ceiling: all its images when each is within the long edge allowed above
  // `manyImages` (an unreadable size counts as too large), else `manyImages`. A caller's
  // max_blocks overrides both.
  const images = carriers.reduce((n, c) => n + c.blocks, 0) + uploads.length;
  const trueBlocks =
    images > 0 && maxEdge <= rules.images.maxEdgeWhenMany
      ? rules.images.maxImages
      : Math.min(rules.images.manyImages, rules.images.maxImages);
  const limits: EvictionLimits = { ...requested, maxBlocks: request.limits?.max_blocks ?? trueBlocks };

  const now = context.now ?? Date.now();
  const memory = context.memory ?? null;
  // The previous request's front, when the memory is of this conversation (its newest retired
  // carrier is where the memory says); a memory of nothing retired is taken as it is.
  const remembered =
    memory === null
      ? undefined
      : memory.front === 0
        ? 0
        : memory.front <= carriers.length && carrierKey(carriers[memory.front - 1]!) === memory.carrier
          ? memory.front
          : undefined;
  // The client's breakpoints in messages (counted once: the TTL and the marker's budget read them).
  const breakpoints = adapter.clientBreakpoints(request.messages);
  const longTtl = breakpoints.longTtl || asRecord(request.cache_control)?.ttl === "1h";
  const ttlMs = longTtl && rules.cache.longTtlMs !== null ? rules.cache.longTtlMs : rules.cache.ttlMs;
  const lastAt = request.last_request_at !== undefined ? Date.parse(request.last_request_at) : memory?.at;
  const cold = cacheIsCold(lastAt, now, ttlMs);
  // The service's marker needs breakpoints to place (Anthropic, OpenAI from GPT-5.6); prefix
  // caching (OpenAI before it) reads up to the first changed block by itself. Either way a
  // retirement rewrites from the front, not from the first image.
  const marks = request.manage_cache === true && rules.cache.style !== "prefix";
  const managed = marks || rules.cache.style === "prefix";
  const writeMultiplier = longTtl ? rules.multipliers.write1h : rules.multipliers.write5m;
  const decision = costFront(steps, {
    ...DEFAULT_COST_SETTINGS,
    limits,
    baseCeiling: requested.maxBlocks,
    writeMultiplier,
    readMultiplier: rules.multipliers.read,
    remembered,
    // The schema lets requests_left through only with session_id: a move made for the session's
    // future must stay where it is next time, and only a remembered session can promise that.
    ...(request.requests_left === undefined ? {} : { requestsLeft: request.requests_left }),
    // A cold-cache retirement must stay retired next time: only a remembered session can promise that.
    cold: cold && request.session_id !== undefined,
    managed,
    ...tierOfRules(rules),
    ...(context.toolResults === undefined ? {} : { maxPromptTokens: rules.contextTokens }),
  });

  const retired = carriers.slice(0, decision.retire);
  const imageCarriers = retired.filter((carrier) => carrier.textChars === undefined);
  let messages =
    decision.retire === 0 ? request.messages.slice() : adapter.retire(request.messages, imageCarriers, textOf);
  const texts = retiredToolResults(carriers, decision.retire, context.toolResults ?? []);
  if (texts.length > 0) messages = retireToolResults(messages, texts);
  const extra: Partial<EvictStats> = {};
  if (marks) {
    const placed = placeFrontMarker(
      adapter,
      request,
      messages,
      carriers,
      decision.previous,
      rules,
      breakpoints,
      context.movesClientBreakpoint === true,
    );
    if ("note" in placed) extra.cache_marker_note = placed.note;
    else {
      messages = placed.messages;
      extra.cache_marker = placed.at;
    }
  }
  if (cold && request.session_id === undefined) {
    extra.cache_marker_note = [
      extra.cache_marker_note,
      "the cache looks cold, but without session_id the front could not stay where a cold retirement would put it, so nothing was retired early",
    ]
      .filter(Boolean)
      .join("; ");
  }
  // This request's cache writes under the chosen move and under hermes on the same conversation.
  const { retire: hermesNow, previous: hermesBefore } = decision.hermes;
  // At the price tier of the prompt the move leaves (docs/eviction.md, "Price tiers by prompt size").
  const price = (tokens: number, retire: number) =>
    Math.round(
      ((tokens * pricesAtTier(rules, tierOf(rules, promptAfter(steps, retire))).input * writeMultiplier) / 1_000_000) *
        1e6,
    ) / 1e6;
  const chosenWrites = estimatedWrites(steps, decision.previous, decision.retire, managed, cold);
  const hermesWrites = estimatedWrites(steps, hermesBefore, hermesNow, rules.cache.style === "prefix", cold);
  const fits = decision.fits;
  const response = respond(messages, carriers, uploads, decision.retire, limits, {
    fits,
    reason: decision.rule,
    strategy: "cost",
    explanation: explain(
      decision.rule,
      decision.retire - decision.previous,
      decision.retire,
      decision.movedNow,
      limits.maxBlocks,
      cold,
      remembered !== undefined,
      chosenWrites,
    ),
    estimate: {
      model: rules.known ? rules.family : `${rules.provider} default`,
      cache_write_tokens: chosenWrites,
      cache_write_usd: price(chosenWrites, decision.retire),
      hermes: {
        retired: hermesNow,
        cache_write_tokens: hermesWrites,
        cache_write_usd: price(hermesWrites, hermesNow),
      },
    },
    cold_cache: cold,
    ...(fits
      ? {}
      : {
          problem:
            "the user uploads and the floor of newest tool images alone pass the provider's ceilings; uploads are never retired",
        }),
    ...extra,
  });
  return { response, previous: decision.previous };
}

/** The model's first price tier as the cost strategy weighs it: its line and its factor on the input price. */
function tierOfRules(rules: ModelRules): Pick<CostSettings, "tier"> {
  const first = rules.tiers[0];
  if (first === undefined || rules.prices.input <= 0) return {};
  return { tier: { abovePromptTokens: first.abovePromptTokens, factor: first.prices.input / rules.prices.input } };
}

/** The estimated prompt of the request with its oldest `retire` carriers retired (each left as its placeholder). */
function promptAfter(steps: readonly CostStep[], retire: number): number {
  let prompt = steps.length > 0 ? steps[steps.length - 1]!.end : 0;
  let retired = 0;
  for (const step of steps)
    for (const carrier of step.carriers) {
      if (retired++ >= retire) return prompt;
      prompt -= carrier.tokens - PLACEHOLDER_TOKENS;
    }
  return prompt;
}

/**
 * The cache-write tokens this request should cost: with a cold cache the whole prompt; after a
 * move of the front, everything from where the cache still holds the prompt (the front marker
 * when managed, else the first tool image); otherwise only what the previous request did not carry
 * (the last message).
 */
function estimatedWrites(
  steps: readonly CostStep[],
  previous: number,
  front: number,
  managed: boolean,
  cold: boolean,
): number {
  const end = steps.length > 0 ? steps[steps.length - 1]!.end : 0;
  if (cold) return end;
  if (front > previous) {
    const starts = steps.flatMap((step) => step.carriers.map((carrier) => carrier.start));
    return Math.max(0, end - (managed ? (starts[previous] ?? 0) : (starts[0] ?? 0)));
  }
  return steps.length > 1 ? end - steps[steps.length - 2]!.end : end;
}

/** One sentence on what moved and why, in the terms of docs/eviction.md ("The reason table"). */
function explain(
  rule: CostRule,
  movedBy: number,
  retired: number,
  movedNow: boolean,
  ceiling: number,
  cold: boolean,
  remembered: boolean,
  writes: number,
): string {
  const images = (n: number) => `${n} tool image${n === 1 ? "" : "s"}`;
  const tokens = writes.toLocaleString("en-US");
  if (rule === "under_ceiling")
    return `Nothing retired: the request is within the ceiling of ${ceiling} images and nothing made retiring pay, so nothing cached is rewritten.`;
  if (!movedNow) {
    return remembered
      ? `Kept the front where the previous request left it (${images(retired)} retired): nothing cached is rewritten.`
      : `Retired ${images(retired)}, where the ${rule} rule put the front at an earlier message of this conversation; send session_id so the service remembers the front between requests.`;
  }
  if (rule === "cold_cache")
    return `Retired ${images(movedBy)} because the cache was cold: nothing cached is rewritten.`;
  const after = cold
    ? "the cache was cold anyway, so nothing cached is rewritten"
    : `about ${tokens} tokens after the front are written to the cache again`;
  if (rule === "ceiling")
    return `Retired ${images(movedBy)} because the request would pass the ceiling of ${ceiling} images: ${after}.`;
  if (rule === "price")
    return `Retired ${images(movedBy)} because the cache reads they save outweigh one rewrite at this model's prices: ${after}.`;
  if (rule === "price_tier")
    return `Retired ${images(movedBy)} to keep the prompt under this model's price tier, which bills a longer prompt whole at a higher price: ${after}.`;
  return `Retired ${images(movedBy)} to reach the front the previous request left: ${after}.`;
}

/**
 * The service's one breakpoint, on the last block before the front as the previous request saw it,
 * placed by the request's format within its budget of breakpoints (Anthropic `cache_control`,
 * OpenAI `prompt_cache_breakpoint` from GPT-5.6). With `moveOldest`, a request that uses them all
 * has its oldest message breakpoint moved to the front instead; the marker takes the TTL the
 * client chose (`client` is counted before anything moves).
 */
function placeFrontMarker(
  format: WireFormat,
  request: EvictRequest,
  messages: unknown[],
  carriers: readonly Carrier[],
  previousFront: number,
  rules: ModelRules,
  client: ClientBreakpoints,
  moveOldest: boolean,
): FrontMarker {
  const front = carriers[previousFront];
  if (!front) return { note: "no live tool image: no front to mark" };
  return format.placeFrontMarker({
    original: request.messages,
    messages,
    front,
    rules,
    client,
    moveOldest,
    ...(request.cache_control === undefined ? {} : { cacheControl: request.cache_control }),
    ...(request.other_breakpoints === undefined ? {} : { otherBreakpoints: request.other_breakpoints }),
    ...(request.system === undefined ? {} : { system: request.system }),
    ...(request.tools === undefined ? {} : { tools: request.tools }),
  });
}

/** The api.md response: the outbound copy, the retired images, and the counts. */
function respond(
  messages: unknown[],
  carriers: readonly Carrier[],
  uploads: readonly ImageRef[],
  retire: number,
  limits: EvictionLimits,
  verdict: Partial<EvictStats> & Pick<EvictStats, "fits" | "reason">,
): EvictResponse {
  const evicted: EvictedImage[] = [];
  for (const carrier of carriers.slice(0, retire)) {
    for (const image of carrier.images) {
      evicted.push(
        image.part === undefined
          ? { message: image.message, block: image.block, bytes: image.bytes }
          : { message: image.message, block: image.block, part: image.part, bytes: image.bytes },
      );
    }
  }
  const reserved = loadOf(uploads);
  const tool = { blocks: 0, bytes: 0 };
  for (const carrier of carriers) {
    tool.blocks += carrier.blocks;
    tool.bytes += carrier.bytes;
  }
  const gone = loadOf(evicted);
  const { fits, ...rest } = verdict;
  return {
    success: true,
    messages,
    retired: retire,
    evicted,
    stats: {
      image_blocks_before: tool.blocks + reserved.blocks,
      image_blocks_after: tool.blocks + reserved.blocks - gone.blocks,
      bytes_before: tool.bytes + reserved.bytes,
      bytes_after: tool.bytes + reserved.bytes - gone.bytes,
      reserved_blocks: reserved.blocks,
      reserved_bytes: reserved.bytes,
      carriers_before: carriers.length,
      retired_blocks: gone.blocks,
      fits,
      ...rest,
      limits: { max_blocks: limits.maxBlocks, max_bytes: limits.maxBytes, batch: limits.batch, floor: limits.floor },
    },
  };
}

/** Where a session's memory lives in the cache store (docs/storage.md). */
const sessionKey = async (sessionId: string) => `evict:v1:session:${await sha256Hex(sessionId)}`;
/** How long a session's memory is kept after its last call. */
const SESSION_MEMORY_TTL_MS = 24 * 60 * 60_000;

/**
 * A session's stored record: the eviction's memory, and whatever else the session keeps beside it
 * in the same entry (the proxy's as-sent shadow), so a request reads and writes it once.
 */
export interface SessionRecord {
  readonly memory: SessionMemory | null;
  /** The record's other fields, as stored (kept when the memory is written again). */
  readonly extra: Record<string, unknown>;
}

/** Reads a session's record; a store that fails or holds nothing valid is an empty record. */
export async function readSessionRecord(
  sessionId: string,
  deps: Pick<AppPorts, "cache" | "clock">,
): Promise<SessionRecord> {
  try {
    const entry = await deps.cache.get<Record<string, unknown>>(await sessionKey(sessionId));
    if (!entry || entry.expiresAt <= deps.clock() || asRecord(entry.value) === null) return { memory: null, extra: {} };
    const { at, front, carrier, ...extra } = entry.value;
    const memory = { at, front, carrier };
    return { memory: isMemory(memory) ? memory : null, extra };
  } catch {
    return { memory: null, extra: {} };
  }
}

/** Writes a session's record for SESSION_MEMORY_TTL_MS; a store that fails costs what was to be remembered, never the request. */
export async function writeSessionRecord(
  sessionId: string,
  record: SessionRecord,
  deps: Pick<AppPorts, "cache" | "clock">,
): Promise<void> {
  const now = deps.clock();
  try {
    await deps.cache.put(
      await sessionKey(sessionId),
      { value: { ...record.extra, ...record.memory }, expiresAt: now + SESSION_MEMORY_TTL_MS },
      SESSION_MEMORY_TTL_MS,
    );
  } catch {
    // Forgetting costs at most one early retirement (and the shadow's entries); the answer is still right.
  }
}

/**
 * `evictContext` with the session's memory: with `strategy: "cost"` and a `session_id`, read the
 * front and the last call remembered for it, and store this call's (unless `remember` is false: a
 * call that does not reach the provider's cache, such as a token count). Other requests go
 * straight through. A store failure degrades to "nothing remembered", never to an error.
 */
export async function evictForSession(
  request: EvictRequest,
  deps: Pick<AppPorts, "cache" | "clock">,
  planning: EvictPlanning = {},
  remember = true,
): Promise<EvictResponse> {
  if (request.strategy !== "cost" || request.session_id === undefined)
    return evictContext(request, { ...planning, now: deps.clock() });
  const now = deps.clock();
  const stored = await readSessionRecord(request.session_id, deps);
  const { response, remember: after } = evictRemembering(request, stored.memory, now, planning);
  if (remember) await writeSessionRecord(request.session_id, { memory: after, extra: stored.extra }, deps);
  return response;
}

/**
 * One request of a remembered session, without the store: the answer, and what the session
 * remembers after it. `evictForSession` reads and writes the memory around it; the replay calls it
 * directly with its own clock, so both take the same path.
 */
export function evictRemembering(
  request: EvictRequest,
  memory: SessionMemory | null,
  now: number,
  planning: EvictPlanning = {},
): {
  response: EvictResponse;
  remember: SessionMemory;
  retiredNow: number;
  /** Text tool results sent retired (planning.toolResults), and those the previous request still carried whole. */
  toolResults: { retired: TextToolResult[]; retiredNow: number };
} {
  const images = formatOfLayout(request.format).inventory(request.messages);
  const inventory = planning.toolResults ? withToolResultCarriers(images, planning.toolResults) : images;
  const { response, previous } = evictWithInventory(request, { ...planning, now, memory }, inventory);
  const newest = response.retired > 0 ? inventory.carriers[response.retired - 1] : undefined;
  // Image blocks this request retired that the previous request of the conversation still carried.
  let retiredNow = 0;
  for (const carrier of inventory.carriers.slice(previous, response.retired)) retiredNow += carrier.blocks;
  const candidates = planning.toolResults ?? [];
  const retired = retiredToolResults(inventory.carriers, response.retired, candidates);
  const before = new Set(retiredToolResults(inventory.carriers, previous, candidates));
  return {
    response,
    remember: { at: now, front: response.retired, carrier: newest ? carrierKey(newest) : "" },
    retiredNow,
    toolResults: { retired, retiredNow: retired.filter((result) => !before.has(result)).length },
  };
}

/** What the provider proxy hands the eviction for one outbound request (proxy.md, step 3). */
export interface OutboundRequest {
  readonly format: MessagesLayout;
  readonly messages: unknown[];
  /** The request's own `model`: its prices, image ceilings and cache rules come from the model table. */
  readonly model?: string;
  /** The session memory key (`X-Session-Id`, or the proxy's hash of credential, model, system and first message). */
  readonly sessionKey: string;
  readonly system?: unknown;
  readonly tools?: unknown[];
  /** Anthropic's top-level `cache_control` (automatic caching), when the request carries one. */
  readonly cacheControl?: Record<string, unknown>;
  /**
   * Anthropic: the outbound copy's breakpoints are the proxy's to plan (proxy.md step 4), so when
   * the request already uses all 4, the oldest message breakpoint moves to the front, TTL kept.
   */
  readonly movesClientBreakpoint?: boolean;
  /** `pricing.models`. */
  readonly priceOverrides?: PriceOverrides;
  /**
   * False for a request that does not reach the provider's cache (Anthropic's `count_tokens`): it
   * reads the session's memory but leaves it as it was, so the next real request is judged by
   * the last one that did (a count would make a cold cache look warm).
   */
  readonly remembers?: boolean;
}

/**
 * The `cost` strategy for one outbound provider request, as the proxy runs it: the request's own
 * model, the session remembered under `sessionKey`, a front marker placed (Anthropic
 * `cache_control`, OpenAI `prompt_cache_breakpoint` from GPT-5.6) where the breakpoint budget
 * allows. Returns the transformed `messages` (system and tools are never changed) and the stats of
 * `POST /v1/context/evict` (`retired`, `stats.reason`, `stats.explanation`, `stats.estimate`).
 *
 * @example
 * const out = await evictOutbound({ format: "anthropic", messages: body.messages, model: body.model, sessionKey, system: body.system }, deps);
 * body.messages = out.messages; // headers: X-Edge-Retired = out.retired
 */
export function evictOutbound(
  request: OutboundRequest,
  deps: Pick<AppPorts, "cache" | "clock">,
): Promise<EvictResponse> {
  const { evict, planning } = outboundEviction(request);
  return evictForSession(evict, deps, planning, request.remembers !== false);
}

/** The route's request and planning that an outbound request amounts to (the one translation). */
export function outboundEviction(request: OutboundRequest): { evict: EvictRequest; planning: EvictPlanning } {
  return {
    evict: {
      format: request.format,
      messages: request.messages as Record<string, unknown>[],
      strategy: "cost",
      provider: request.format,
      ...(request.model === undefined ? {} : { model: request.model }),
      session_id: request.sessionKey,
      manage_cache: true,
      ...(request.system === undefined ? {} : { system: request.system }),
      ...(request.tools === undefined ? {} : { tools: request.tools }),
      ...(request.cacheControl === undefined ? {} : { cache_control: request.cacheControl }),
    },
    planning: {
      movesClientBreakpoint: request.movesClientBreakpoint === true,
      ...(request.priceOverrides === undefined ? {} : { priceOverrides: request.priceOverrides }),
    },
  };
}

function isMemory(value: unknown): value is SessionMemory {
  const v = value as Record<string, unknown> | null;
  return (
    typeof v?.at === "number" &&
    typeof v.front === "number" &&
    Number.isInteger(v.front) &&
    v.front >= 0 &&
    typeof v.carrier === "string"
  );
}
