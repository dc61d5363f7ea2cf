/**
 * The replay model: how much a session pays the provider's prompt cache under an eviction policy.
 * It owns the explicit cache model (a request is a sequence of segments; the cache serves the
 * longest unchanged prefix since the previous request, in whole units of `granularity` tokens, and
 * writes the rest), the two policies compared (the old keep-3 rule, and the batched policy of
 * policy.ts), session generation and JSONL parsing. Pure: `tools/replay.ts` is only the CLI.
 *
 * Assumptions, all adjustable or stated: every request re-reads its prefix within the cache TTL
 * (no cold cache); everything not read is written (a cache breakpoint at the end of every
 * request); a retired image costs `placeholderTokens`; no output tokens are priced.
 */
import { anthropicAdapter } from "./anthropic";
import type { EvictionAdapter } from "./inventory";
import { openaiAdapter } from "./openai";
import { DEFAULT_LIMITS, KEEP_FLOOR, retirementFront, type EvictionLimits, type ImageLoad, type ImageStep } from "./policy";

/** One piece of a request as the cache sees it: equal ids mean equal bytes. */
export interface Segment {
  readonly id: string;
  readonly tokens: number;
  /** The message it belongs to; the policy holds its front per message. */
  readonly message: number;
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

/** The explicit cache model. */
export interface CacheModel {
  /** Cache reads are counted in whole units of this many tokens (1 = exact prefix). */
  readonly granularity: number;
  /** Tokens of the text block a retired image becomes (`[screenshot removed to save context]` ≈ 10). */
  readonly placeholderTokens: number;
}

/** Price table: input price per million tokens, cache write and read as multiples of it. */
export interface Prices {
  readonly inputPerMTok: number;
  readonly writeMultiplier: number;
  readonly readMultiplier: number;
}

export const DEFAULT_CACHE_MODEL: CacheModel = { granularity: 1, placeholderTokens: 10 };
export const DEFAULT_PRICES: Prices = { inputPerMTok: 3, writeMultiplier: 1.25, readMultiplier: 0.1 };

/** A policy for the replay: which carriers (by id) to retire in this request. */
export type ReplayPolicy = (request: ReplayRequest) => ReadonlySet<string>;

/** Tool-image carriers in order of first appearance (oldest first), with their loads. */
function carriersOf(request: ReplayRequest): Map<string, ImageLoad> {
  const carriers = new Map<string, ImageLoad>();
  for (const segment of request) {
    if (segment.image?.kind !== "tool") continue;
    const load = carriers.get(segment.image.carrier) ?? { blocks: 0, bytes: 0 };
    carriers.set(segment.image.carrier, { blocks: load.blocks + 1, bytes: load.bytes + segment.image.bytes });
  }
  return carriers;
}

/**
 * The old rule: every request keeps only the `keep` newest tool-image carriers, ceiling or not.
 * It kept as many as today's floor, hence the default.
 */
export function keepNewest(keep: number = KEEP_FLOOR): ReplayPolicy {
  return (request) => {
    const ids = [...carriersOf(request).keys()];
    return new Set(ids.slice(0, Math.max(0, ids.length - keep)));
  };
}

/** The batched policy of policy.ts, fed the same per-message steps the service builds. */
export function batchedPolicy(limits: EvictionLimits = DEFAULT_LIMITS): ReplayPolicy {
  return (request) => {
    const byMessage = new Map<number, { carriers: Map<string, ImageLoad>; uploads: ImageLoad }>();
    for (const segment of request) {
      if (!segment.image) continue;
      let step = byMessage.get(segment.message);
      if (!step) byMessage.set(segment.message, (step = { carriers: new Map(), uploads: { blocks: 0, bytes: 0 } }));
      if (segment.image.kind === "upload") {
        step.uploads = { blocks: step.uploads.blocks + 1, bytes: step.uploads.bytes + segment.image.bytes };
      } else {
        const load = step.carriers.get(segment.image.carrier) ?? { blocks: 0, bytes: 0 };
        step.carriers.set(segment.image.carrier, { blocks: load.blocks + 1, bytes: load.bytes + segment.image.bytes });
      }
    }
    const messages = [...byMessage.keys()].sort((a, b) => a - b);
    const steps: ImageStep[] = messages.map((m) => {
      const step = byMessage.get(m)!;
      return { carriers: [...step.carriers.values()], uploads: step.uploads };
    });
    const { retire } = retirementFront(steps, limits);
    const oldestFirst = messages.flatMap((m) => [...byMessage.get(m)!.carriers.keys()]);
    return new Set(oldestFirst.slice(0, retire));
  };
}

/** No eviction at all: the baseline a session would pay if the provider had no ceiling. */
export const noEviction: ReplayPolicy = () => new Set();

/** The outbound request: each retired image replaced by the same placeholder segment. */
export function applyPolicy(request: ReplayRequest, retired: ReadonlySet<string>, model: CacheModel): Segment[] {
  return request.map((segment) =>
    segment.image?.kind === "tool" && retired.has(segment.image.carrier)
      ? { id: `${segment.id}|retired`, tokens: model.placeholderTokens, message: segment.message }
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

/** What one request paid. */
export interface RequestCost {
  readonly inputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  /**
   * Writes beyond the turn's own new tokens: the part of the request that stands where the
   * previous request stood (same segment positions) but could not be read back from the cache.
   */
  readonly evictionWriteTokens: number;
  readonly imageBlocks: number;
  readonly imageBytes: number;
}

/** Totals of one policy over a session (snake_case: this is the CLI's JSON). */
export interface PolicyReport {
  readonly requests: number;
  readonly input_tokens: number;
  readonly cache_write_tokens: number;
  readonly cache_read_tokens: number;
  readonly eviction_write_tokens: number;
  /** Share of cache-write tokens caused by rewriting an already cached prefix, 0..1. */
  readonly eviction_write_share: number;
  /** Requests whose writes include a rewritten prefix (each one a prefix collapse). */
  readonly collapses: number;
  readonly worst_request_write_tokens: number;
  /** 0-based index of that request. */
  readonly worst_request: number;
  readonly worst_request_eviction_write_tokens: number;
  /** Image blocks in the fullest request (the provider counts these against its ceiling). */
  readonly max_image_blocks: number;
  /** Requests the provider would refuse: over the block or byte ceiling of `limits`. */
  readonly requests_over_ceiling: number;
  readonly cost: number;
}

const floorTo = (tokens: number, granularity: number) =>
  granularity > 1 ? Math.floor(tokens / granularity) * granularity : tokens;

/**
 * Replay a session under one policy, request by request.
 *
 * @example
 * const requests = requestsFromTurns(generateSession({ turns: 40, images: 12 }), 4000);
 * replay(requests, keepNewest(3)).eviction_write_share // > 0: keep-3 rewrites on every new image
 */
export function replay(
  requests: readonly ReplayRequest[],
  policy: ReplayPolicy,
  model: CacheModel = DEFAULT_CACHE_MODEL,
  prices: Prices = DEFAULT_PRICES,
  limits: EvictionLimits = DEFAULT_LIMITS,
): PolicyReport & { perRequest: RequestCost[] } {
  const perRequest: RequestCost[] = [];
  let previous: Segment[] = [];
  for (const request of requests) {
    const outbound = applyPolicy(request, policy(request), model);
    let inputTokens = 0;
    let carriedTokens = 0; // the part standing where the previous request stood; the rest is this turn's own
    outbound.forEach((segment, i) => {
      inputTokens += segment.tokens;
      if (i < previous.length) carriedTokens += segment.tokens;
    });
    const cacheReadTokens = floorTo(commonPrefixTokens(previous, outbound), model.granularity);
    // Had nothing been rewritten, all of the carried part would have been read back (to the
    // granularity); what of it had to be written instead is the price of the rewrite.
    const evictionWriteTokens = Math.max(0, floorTo(carriedTokens, model.granularity) - cacheReadTokens);
    let imageBlocks = 0;
    let imageBytes = 0;
    for (const segment of outbound) {
      if (!segment.image) continue;
      imageBlocks += 1;
      imageBytes += segment.image.bytes;
    }
    perRequest.push({
      inputTokens,
      cacheReadTokens,
      cacheWriteTokens: inputTokens - cacheReadTokens,
      evictionWriteTokens,
      imageBlocks,
      imageBytes,
    });
    previous = outbound;
  }

  const total = (pick: (r: RequestCost) => number) => perRequest.reduce((n, r) => n + pick(r), 0);
  const write = total((r) => r.cacheWriteTokens);
  const read = total((r) => r.cacheReadTokens);
  const evictionWrites = total((r) => r.evictionWriteTokens);
  let worst = 0;
  perRequest.forEach((r, i) => {
    if (r.cacheWriteTokens > perRequest[worst]!.cacheWriteTokens) worst = i;
  });
  const cost = ((write * prices.writeMultiplier + read * prices.readMultiplier) * prices.inputPerMTok) / 1_000_000;
  return {
    requests: perRequest.length,
    input_tokens: total((r) => r.inputTokens),
    cache_write_tokens: write,
    cache_read_tokens: read,
    eviction_write_tokens: evictionWrites,
    eviction_write_share: write === 0 ? 0 : evictionWrites / write,
    collapses: perRequest.filter((r) => r.evictionWriteTokens > 0).length,
    worst_request_write_tokens: perRequest[worst]?.cacheWriteTokens ?? 0,
    worst_request: perRequest.length === 0 ? -1 : worst,
    worst_request_eviction_write_tokens: Math.max(0, ...perRequest.map((r) => r.evictionWriteTokens)),
    max_image_blocks: Math.max(0, ...perRequest.map((r) => r.imageBlocks)),
    requests_over_ceiling: perRequest.filter((r) => r.imageBlocks > limits.maxBlocks || r.imageBytes > limits.maxBytes).length,
    cost: Math.round(cost * 1e6) / 1e6,
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
 * one message; its tool images form one carrier.
 */
export function requestsFromTurns(turns: readonly ReplayTurn[], systemTokens: number): ReplayRequest[] {
  const history: Segment[] = [{ id: "system", tokens: systemTokens, message: 0 }];
  return turns.map((turn, i) => {
    const message = i + 1;
    history.push({ id: `turn${message}:text`, tokens: turn.textTokens, message });
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

/**
 * One request body (Anthropic Messages or OpenAI Chat Completions) as segments, with images found
 * by the same adapters as the service. Prefix order is tools, system, then messages; every content
 * block (and every part of an Anthropic tool_result) is one segment.
 */
export function segmentsFromBody(body: Record<string, unknown>, format: "anthropic" | "openai", model: BodyModel): Segment[] {
  const adapter: EvictionAdapter = format === "anthropic" ? anthropicAdapter : openaiAdapter;
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  const { carriers, uploads } = adapter.inventory(messages);
  const images = new Map<string, NonNullable<Segment["image"]>>();
  for (const carrier of carriers) {
    const id = format === "anthropic" ? `${carrier.message}/${carrier.block}` : `${carrier.message}`;
    for (const ref of carrier.images) images.set(`${ref.message}/${ref.block}/${ref.part ?? ""}`, { kind: "tool", carrier: id, bytes: ref.bytes });
  }
  for (const ref of uploads) images.set(`${ref.message}/${ref.block}/`, { kind: "upload", carrier: "", bytes: ref.bytes });

  const text = (value: unknown, message: number): Segment => {
    const json = JSON.stringify(value) ?? "";
    return { id: contentId(json), tokens: Math.ceil(json.length / model.charsPerToken), message };
  };
  const piece = (value: unknown, message: number, key: string): Segment => {
    const image = images.get(key);
    if (!image) return text(value, message);
    return { id: contentId(JSON.stringify(value)), tokens: model.imageTokens, message, image };
  };

  const segments: Segment[] = [];
  if (body.tools !== undefined) segments.push(text(body.tools, -1));
  if (body.system !== undefined) segments.push(text(body.system, -1));
  messages.forEach((raw, m) => {
    const message = (raw ?? {}) as Record<string, unknown>;
    const { content, ...header } = message;
    segments.push(text(header, m));
    if (!Array.isArray(content)) {
      if (content !== undefined && content !== null) segments.push(text(content, m));
      return;
    }
    content.forEach((block, b) => {
      const nested = (block ?? {}) as Record<string, unknown>;
      if (format === "anthropic" && nested.type === "tool_result" && Array.isArray(nested.content)) {
        const { content: parts, ...toolHeader } = nested;
        segments.push(text(toolHeader, m));
        (parts as unknown[]).forEach((part, p) => segments.push(piece(part, m, `${m}/${b}/${p}`)));
      } else {
        segments.push(piece(block, m, `${m}/${b}/`));
      }
    });
  });
  return segments;
}

/** What one line of a session file holds: a whole request body, or one compact turn. */
export type SessionLine =
  | { readonly kind: "request"; readonly segments: Segment[] }
  | { readonly kind: "turn"; readonly turn: ReplayTurn };

/**
 * Parse one JSONL line. A line with `messages` is a full request body (the request the agent sent,
 * history included); `format` on the line overrides `defaultFormat`. Otherwise the line is a
 * compact turn: `{"text_tokens": 800, "images": 1}` or
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
    return { kind: "request", segments: segmentsFromBody(value, format, body) };
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

/** The side-by-side comparison the CLI prints. */
export interface Comparison {
  readonly keep3: PolicyReport;
  readonly batched: PolicyReport;
  /** The same session with no eviction at all, for reference (may pass the provider's ceiling). */
  readonly none: PolicyReport;
}

/** Run the old keep-3 rule, the batched policy and no eviction over the same requests. */
export function compare(
  requests: readonly ReplayRequest[],
  options: { limits?: EvictionLimits; keep?: number; model?: CacheModel; prices?: Prices } = {},
): Comparison {
  const model = options.model ?? DEFAULT_CACHE_MODEL;
  const prices = options.prices ?? DEFAULT_PRICES;
  const limits = options.limits ?? DEFAULT_LIMITS;
  const strip = ({ perRequest: _, ...report }: PolicyReport & { perRequest: RequestCost[] }): PolicyReport => report;
  return {
    keep3: strip(replay(requests, keepNewest(options.keep ?? KEEP_FLOOR), model, prices, limits)),
    batched: strip(replay(requests, batchedPolicy(limits), model, prices, limits)),
    none: strip(replay(requests, noEviction, model, prices, limits)),
  };
}
