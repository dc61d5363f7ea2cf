/**
 * The evict use case: classify a conversation's images with its format adapter, ask the policy
 * (hermes: policy.ts; cost: cost.ts) how far the retirement front stands, and return the outbound
 * copy with the api.md counts. `evictContext` is pure and synchronous, so the route, the bench and
 * the tests share it and it can run on every outbound request; `evictForSession` adds the one
 * thing the cost strategy remembers between requests (front and last call per session_id) through
 * the cache-store port.
 */
import { anthropicAdapter, blockBefore, countBreakpoints, hasBreakpoint, withBreakpoint } from "./anthropic";
import { ANTHROPIC_BREAKPOINTS, cachePrices, costFront, DEFAULT_COST_SETTINGS, PROMPT_CACHE_TTL_MS, PROVIDER_CEILINGS, type CostCarrier, type CostStep } from "./cost";
import type { EvictedImage, EvictRequest, EvictResponse, EvictStats } from "./evict.schema";
import { imageSize, imageTokens, textTokens } from "./estimate";
import { describedImageText, fixedRetiredText, imageSteps, loadOf, type Carrier, type EvictionAdapter, type ImageRef, type RetiredText } from "./inventory";
import { openaiAdapter } from "./openai";
import { resolveLimits, retirementFront, type EvictionLimits } from "./policy";
import type { AppPorts, CacheStore } from "../ports";
import { sha256Hex } from "../hash";


/** What the cost strategy knows beyond the request: the time, and what the session remembers. */
export interface EvictContext {
  /** Epoch ms of this request. */
  readonly now?: number;
  /** The session's last call and front, as `evictForSession` stored them. */
  readonly memory?: SessionMemory | null;
}

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

const adapters: Record<EvictRequest["format"], EvictionAdapter> = {
  anthropic: anthropicAdapter,
  openai: openaiAdapter,
};

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
  return evictWithInventory(request, context, adapters[request.format].inventory(request.messages));
}

/** evictContext on an inventory already taken of `request.messages` (it is only read). */
function evictWithInventory(request: EvictRequest, context: EvictContext, { carriers, uploads }: ReturnType<EvictionAdapter["inventory"]>): EvictResponse {
  const adapter = adapters[request.format];
  const limits = resolveLimits({
    maxBlocks: request.limits?.max_blocks,
    maxBytes: request.limits?.max_bytes,
    batch: request.limits?.batch,
    floor: request.limits?.floor,
  });
  const textOf = retiredTextOf(request);

  if (request.strategy === "cost") return costEviction(request, context, adapter, limits, carriers, uploads, textOf);

  const decision = retirementFront(imageSteps({ carriers, uploads }), limits);
  const retired = carriers.slice(0, decision.retire); // carriers are oldest first
  const messages = decision.retire === 0 ? request.messages.slice() : adapter.retire(request.messages, retired, textOf);
  return respond(messages, carriers, uploads, decision.retire, limits, {
    fits: decision.fits,
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
  });
}

/** The cost strategy: costFront over per-message steps with estimated tokens, then the front marker. */
function costEviction(
  request: EvictRequest,
  context: EvictContext,
  adapter: EvictionAdapter,
  requested: EvictionLimits,
  carriers: readonly Carrier[],
  uploads: readonly ImageRef[],
  textOf: RetiredText,
): EvictResponse {
  const provider = request.provider?.toLowerCase();
  // One pass over the images: their estimated tokens, and whether all are small enough for
  // Anthropic's 100-image ceiling (an unreadable size counts as too large).
  let allSmall = carriers.length + uploads.length > 0;
  const weigh = (image: ImageRef) => {
    const data = adapter.imageData(request.messages, image);
    const size = data === null ? null : imageSize(data);
    if (!size || Math.max(size.width, size.height) > PROVIDER_CEILINGS.anthropicMaxEdge) allSmall = false;
    return imageTokens(size);
  };
  const carrierTokens = carriers.map((carrier) => {
    let sum = 0;
    for (const image of carrier.images) sum += weigh(image);
    return sum;
  });
  const uploadsByMessage = new Map<number, { blocks: number; bytes: number; tokens: number }>();
  for (const upload of uploads) {
    const load = uploadsByMessage.get(upload.message) ?? { blocks: 0, bytes: 0, tokens: 0 };
    uploadsByMessage.set(upload.message, { blocks: load.blocks + 1, bytes: load.bytes + upload.bytes, tokens: load.tokens + weigh(upload) });
  }
  const trueBlocks =
    provider === "anthropic" ? (allSmall ? PROVIDER_CEILINGS.anthropicManyImages : requested.maxBlocks) : provider === "openai" ? PROVIDER_CEILINGS.openaiImages : requested.maxBlocks;
  const limits: EvictionLimits = { ...requested, maxBlocks: request.limits?.max_blocks ?? trueBlocks };

  // Steps: every message, with its carriers' estimated tokens and where they start. Tokens count
  // from the first message: the system prompt and tools are not sent here (the replay counts them),
  // which moves only the premature-share guard's "paid so far", slightly toward caution.
  const steps: CostStep[] = [];
  const none: CostCarrier[] = [];
  const noUploads = { blocks: 0, bytes: 0 };
  let tokens = 0;
  let turns = 0;
  let next = 0; // carriers are oldest first: the next one not yet placed in a step
  for (let index = 0; index < request.messages.length; index++) {
    const message = request.messages[index]!;
    if (message.role === "assistant") turns += 1;
    const start = tokens;
    let costCarriers = none;
    while (next < carriers.length && carriers[next]!.message === index) {
      if (costCarriers === none) costCarriers = [];
      const carrier = carriers[next]!;
      costCarriers.push({ blocks: carrier.blocks, bytes: carrier.bytes, tokens: carrierTokens[next]!, start });
      tokens += carrierTokens[next]!;
      next += 1;
    }
    tokens += textTokens(message);
    const uploaded = uploadsByMessage.get(index);
    tokens += uploaded?.tokens ?? 0;
    steps.push({ carriers: costCarriers, uploads: uploaded ?? noUploads, end: tokens, turns: Math.max(1, turns) });
  }

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
  const lastAt = request.last_request_at !== undefined ? Date.parse(request.last_request_at) : memory?.at;
  const cold = lastAt !== undefined && now - lastAt > PROMPT_CACHE_TTL_MS;
  const managed = request.manage_cache === true && request.format === "anthropic";
  const decision = costFront(steps, {
    ...DEFAULT_COST_SETTINGS,
    limits,
    baseCeiling: requested.maxBlocks,
    ...cachePrices(provider, request.model),
    remembered,
    // The schema lets requests_left through only with session_id: a move made for the session's
    // future must stay where it is next time, and only a remembered session can promise that.
    ...(request.requests_left === undefined ? {} : { requestsLeft: request.requests_left }),
    // A cold-cache retirement must stay retired next time: only a remembered session can promise that.
    cold: cold && request.session_id !== undefined,
    managed,
  });

  const retired = carriers.slice(0, decision.retire);
  let messages = decision.retire === 0 ? request.messages.slice() : adapter.retire(request.messages, retired, textOf);
  const extra: Partial<EvictStats> = {};
  if (managed) {
    const placed = placeFrontMarker(request, messages, carriers, decision.previous);
    if ("note" in placed) extra.cache_marker_note = placed.note;
    else {
      messages = placed.messages;
      extra.cache_marker = placed.at;
    }
  }
  if (cold && request.session_id === undefined) {
    extra.cache_marker_note = [extra.cache_marker_note, "the cache looks cold, but without session_id the front could not stay where a cold retirement would put it, so nothing was retired early"]
      .filter(Boolean)
      .join("; ");
  }
  return respond(messages, carriers, uploads, decision.retire, { ...limits, batch: Math.max(1, limits.maxBlocks - limits.floor) }, {
    fits: decision.fits,
    reason: decision.rule,
    strategy: "cost",
    cold_cache: cold,
    ...(decision.fits ? {} : { problem: "the user uploads and the floor of newest tool images alone pass the provider's ceilings; uploads are never retired" }),
    ...extra,
  });
}

/** The service's one breakpoint, on the last block before the front as the previous request saw it. */
function placeFrontMarker(
  request: EvictRequest,
  messages: unknown[],
  carriers: readonly Carrier[],
  previousFront: number,
): { messages: unknown[]; at: { message: number; block: number } } | { note: string } {
  const front = carriers[previousFront];
  if (!front) return { note: "no live tool image: no front to mark" };
  const client = countBreakpoints(request.messages);
  const others = request.other_breakpoints ?? 1;
  if (client.count + others >= ANTHROPIC_BREAKPOINTS.max) {
    return { note: `the client already uses ${client.count + others} of the ${ANTHROPIC_BREAKPOINTS.max} breakpoints (${client.count} in messages, ${others} outside); leave one free for the front marker` };
  }
  const at = blockBefore(messages, front);
  if (!at) return { note: "no block before the front can carry a breakpoint without changing its bytes" };
  if (hasBreakpoint(messages, at)) return { note: "a client breakpoint already stands just before the front" };
  return { messages: withBreakpoint(messages, at, client.longTtl), at };
}

/** The api.md response: the outbound copy, the retired images, and the counts. */
function respond(
  messages: unknown[],
  carriers: readonly Carrier[],
  uploads: readonly ImageRef[],
  retire: number,
  limits: EvictionLimits,
  verdict: Partial<EvictStats> & { fits: boolean },
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
 * `evictContext` with the session's memory: with `strategy: "cost"` and a `session_id`, read the
 * front and the last call remembered for it, and store this call's. Other requests go straight
 * through. A store failure degrades to "nothing remembered", never to an error.
 */
export async function evictForSession(request: EvictRequest, deps: Pick<AppPorts, "cache" | "clock">): Promise<EvictResponse> {
  if (request.strategy !== "cost" || request.session_id === undefined) return evictContext(request, { now: deps.clock() });
  const key = await sessionKey(request.session_id);
  const now = deps.clock();
  let memory: SessionMemory | null = null;
  try {
    const entry = await deps.cache.get<SessionMemory>(key);
    if (entry && entry.expiresAt > now && isMemory(entry.value)) memory = entry.value;
  } catch {
    memory = null;
  }
  const inventory = adapters[request.format].inventory(request.messages);
  const out = evictWithInventory(request, { now, memory }, inventory);
  const { carriers } = inventory;
  const newest = out.retired > 0 ? carriers[out.retired - 1] : undefined;
  const value: SessionMemory = { at: now, front: out.retired, carrier: newest ? carrierKey(newest) : "" };
  try {
    await deps.cache.put(key, { value, expiresAt: now + SESSION_MEMORY_TTL_MS }, SESSION_MEMORY_TTL_MS);
  } catch {
    // Forgetting costs at most one early retirement; the answer is still right.
  }
  return out;
}

function isMemory(value: unknown): value is SessionMemory {
  const v = value as Record<string, unknown> | null;
  return typeof v?.at === "number" && typeof v.front === "number" && Number.isInteger(v.front) && v.front >= 0 && typeof v.carrier === "string";
}
