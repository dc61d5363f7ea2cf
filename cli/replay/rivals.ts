/**
 * The policies the replay compares, each one's rule written down in docs/eviction.md with its
 * source: the old keep-3 rule, Hermes 20/8/3 and its raised ceiling 100/8/3, Anthropic's context
 * editing (`clear_tool_uses_20250919`) at its defaults and with `clear_at_least`, Claude Code's
 * settings of it, and `cost` (told nothing, or told `requests_left`).
 *
 * Hermes and `cost` are not re-implemented here: each request is handed to the route's own code
 * (`evictContext`, `evictRemembering`) as the request body the route would receive (a logged body
 * as it was, a generated one built from its segments), so the replay measures what the route does.
 */
import type { EvictRequest } from "../../shared/eviction/evict.schema";
import { evictContext, evictRemembering, type SessionMemory } from "../../shared/eviction/evict.service";
import type { MessagesLayout } from "../../shared/llm/format";
import { formatOfLayout } from "../../shared/llm/formats.catalog";
import { DEFAULT_LIMITS, KEEP_FLOOR, type EvictionLimits } from "../../shared/eviction/policy";
import { CHARS_PER_TOKEN } from "../../shared/llm/estimate";
import type { CacheModel, ReplayRequest, RequestBody } from "./cache.models";

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
  /** The logged request body, when the session is one. */
  readonly body?: RequestBody;
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

/** The tool-image carriers of a request, oldest first, with their tokens. */
function carriersOf(request: ReplayRequest): Array<{ id: string; tokens: number }> {
  const byId = new Map<string, { id: string; tokens: number }>();
  for (const segment of request) {
    if (segment.image?.kind !== "tool") continue;
    const carrier = byId.get(segment.image.carrier) ?? { id: segment.image.carrier, tokens: 0 };
    carrier.tokens += segment.tokens;
    byId.set(carrier.id, carrier);
  }
  return [...byId.values()];
}

const totalTokens = (request: ReplayRequest) => request.reduce((n, s) => n + s.tokens, 0);

/**
 * The old rule: every request keeps only the `keep` newest tool-image carriers, ceiling or not.
 * It kept as many as today's floor, hence the default.
 */
export function keepNewest(keep: number = KEEP_FLOOR): ReplayPolicy {
  return (request) => {
    const ids = carriersOf(request).map((c) => c.id);
    return { retired: new Set(ids.slice(0, Math.max(0, ids.length - keep))) };
  };
}

/** No eviction at all: the baseline a session would pay if the provider had no ceiling. */
export const noEviction: ReplayPolicy = () => ({ retired: new Set() });

/** Anthropic's context editing, `clear_tool_uses_20250919` (docs/eviction.md gives the source of each default). */
export interface ContextEditing {
  /** Input tokens above which a request is edited (`trigger`, default 100,000). */
  readonly trigger: number;
  /** Newest tool uses kept (`keep`, default 3). */
  readonly keep: number;
  /** An edit that would clear fewer tokens than this is not made (`clear_at_least`; none by default). */
  readonly clearAtLeast?: number;
  /** Claude Code's use: clear the oldest tool results until the prompt is at most this many tokens (never the newest `keep`). */
  readonly clearDownTo?: number;
}

/** `clear_tool_uses_20250919` at its defaults: trigger 100,000 input tokens, keep 3 tool uses. */
export const CONTEXT_EDITING_DEFAULTS: ContextEditing = Object.freeze({ trigger: 100_000, keep: 3 });
/** The `clear_at_least` the comparison sets: one edit must clear at least this many tokens. */
export const CONTEXT_EDITING_CLEAR_AT_LEAST: ContextEditing = Object.freeze({
  ...CONTEXT_EDITING_DEFAULTS,
  clearAtLeast: 50_000,
});
/** Claude Code's settings: clear from 180,000 input tokens down to 40,000. */
export const CLAUDE_CODE_EDITING: ContextEditing = Object.freeze({ trigger: 180_000, keep: 3, clearDownTo: 40_000 });

/**
 * Context editing as the API applies it: server-side, on every request, to the full history the
 * client sends (the client never sees the edit). Over `trigger` input tokens, the oldest tool
 * results are cleared (each becomes a placeholder), all but the newest `keep`, or with
 * `clearDownTo` only as many as bring the prompt down to it; an edit clearing less than
 * `clearAtLeast` is not made. In generated sessions the tool results are the screenshots.
 */
export function contextEditingPolicy(edit: ContextEditing, model: Pick<CacheModel, "placeholderTokens">): ReplayPolicy {
  return (request) => {
    const total = totalTokens(request);
    if (total <= edit.trigger) return { retired: new Set() };
    const carriers = carriersOf(request);
    const clearable = carriers.slice(0, Math.max(0, carriers.length - edit.keep));
    const retired = new Set<string>();
    let cleared = 0;
    for (const carrier of clearable) {
      if (edit.clearDownTo !== undefined && total - cleared <= edit.clearDownTo) break;
      retired.add(carrier.id);
      cleared += carrier.tokens - model.placeholderTokens;
    }
    if (edit.clearAtLeast !== undefined && cleared < edit.clearAtLeast) return { retired: new Set() };
    return { retired };
  };
}

/** Claude Code's settings of context editing (`CLAUDE_CODE_EDITING`). */
export const claudeCodePolicy = (model: Pick<CacheModel, "placeholderTokens">) =>
  contextEditingPolicy(CLAUDE_CODE_EDITING, model);

/** A request as the route receives it, and how its answer maps back to the replay's segments. */
export interface RouteView {
  readonly format: MessagesLayout;
  readonly messages: unknown[];
  readonly system?: unknown;
  readonly tools?: unknown[];
  /** The replay's carrier id of the route's i-th carrier (oldest first). */
  readonly carrierIds: readonly string[];
  /** The segment a breakpoint on block "message/block" stands after. */
  readonly segmentAt: ReadonlyMap<string, number>;
}

/** Characters of `n` tokens of text, built once per length. */
const texts = new Map<number, string>();
const textOf = (tokens: number) => {
  let text = texts.get(tokens);
  if (text === undefined) texts.set(tokens, (text = "x".repeat(tokens * CHARS_PER_TOKEN)));
  return text;
};

/**
 * A PNG's base64 whose header the route reads as an image of `tokens` tokens (width × height / 750,
 * at most 2,000 px on its long edge up to 4,000 tokens), padded to `bytes` characters.
 */
const images = new Map<string, string>();
function pngOf(tokens: number, bytes: number): string {
  const key = `${tokens}/${bytes}`;
  let data = images.get(key);
  if (data !== undefined) return data;
  const t = Math.max(1, Math.round(tokens));
  const [width, height] = t <= 2_000 ? [750, t] : [1_500, Math.ceil(t / 2)];
  const header = new Uint8Array(24);
  header.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  new DataView(header.buffer).setUint32(16, width);
  new DataView(header.buffer).setUint32(20, height);
  const head = btoa(String.fromCharCode(...header));
  data = head + "A".repeat(Math.max(0, bytes - head.length));
  images.set(key, data);
  return data;
}

/**
 * The Anthropic request body a generated request stands for: the system segments as the system
 * prompt, each turn's answer as an assistant message, its tool images as one tool_result per
 * carrier and its uploads as image blocks in the user message after it. Every text is as many
 * tokens long as its segment by the route's own estimate, every image as many tokens by its header.
 */
export function bodyFromSegments(request: ReplayRequest): RouteView {
  const system: unknown[] = [];
  const messages: Array<{ role: string; content: Record<string, unknown>[] }> = [];
  const carrierIds: string[] = [];
  const segmentAt = new Map<string, number>();
  let group = Number.NaN;
  let assistant: { role: string; content: Record<string, unknown>[] } | null = null;
  let user: { role: string; content: Record<string, unknown>[] } | null = null;
  const toolResults = new Map<string, Record<string, unknown>>();
  const place = (
    message: { role: string; content: Record<string, unknown>[] },
    block: Record<string, unknown>,
    segment: number,
  ) => {
    if (!messages.includes(message)) messages.push(message);
    message.content.push(block);
    segmentAt.set(`${messages.indexOf(message)}/${message.content.length - 1}`, segment);
  };
  request.forEach((segment, index) => {
    if (segment.message < 0) {
      system.push({ type: "text", text: textOf(segment.tokens) });
      return;
    }
    if (segment.message !== group) {
      group = segment.message;
      assistant = { role: "assistant", content: [] };
      user = { role: "user", content: [] };
    }
    if (segment.answer) {
      place(assistant!, { type: "text", text: textOf(segment.tokens) }, index);
      return;
    }
    if (segment.image?.kind === "tool") {
      const image = {
        type: "image",
        source: { type: "base64", media_type: "image/png", data: pngOf(segment.tokens, segment.image.bytes) },
      };
      const existing = toolResults.get(segment.image.carrier);
      if (existing) {
        (existing.content as unknown[]).push(image);
        segmentAt.set(`${messages.indexOf(user!)}/${user!.content.indexOf(existing)}`, index);
        return;
      }
      const block = { type: "tool_result", tool_use_id: segment.image.carrier, content: [image] };
      toolResults.set(segment.image.carrier, block);
      carrierIds.push(segment.image.carrier);
      place(user!, block, index);
      return;
    }
    if (segment.image) {
      place(
        user!,
        {
          type: "image",
          source: { type: "base64", media_type: "image/png", data: pngOf(segment.tokens, segment.image.bytes) },
        },
        index,
      );
      return;
    }
    place(user!, { type: "text", text: textOf(segment.tokens) }, index);
  });
  return { format: "anthropic", messages, ...(system.length > 0 ? { system } : {}), carrierIds, segmentAt };
}

/** The route's view of a logged body: its own messages, carriers and block positions. */
function viewOfBody(body: RequestBody, request: ReplayRequest): RouteView {
  const format = formatOfLayout(body.format);
  const messages = Array.isArray(body.body.messages) ? (body.body.messages as unknown[]) : [];
  const { carriers } = format.inventory(messages);
  const segmentAt = new Map<string, number>();
  request.forEach((segment, index) => {
    if (segment.position !== undefined) segmentAt.set(segment.position, index);
  });
  return {
    format: body.format,
    messages,
    ...(body.body.system === undefined ? {} : { system: body.body.system }),
    ...(Array.isArray(body.body.tools) ? { tools: body.body.tools as unknown[] } : {}),
    carrierIds: carriers.map((c) => format.carrierId(c)),
    segmentAt,
  };
}

/** The route's view of a replayed request: its logged body, or the body built from its segments. */
export const routeView = (request: ReplayRequest, context: PolicyContext): RouteView =>
  context.body ? viewOfBody(context.body, request) : bodyFromSegments(request);

/** Hermes's batched policy (policy.ts) at `limits`, run by the route itself (`"strategy": "hermes"`). */
export function batchedPolicy(limits: EvictionLimits = DEFAULT_LIMITS): ReplayPolicy {
  return (request, context) => {
    const view = routeView(request, context);
    const out = evictContext({
      format: view.format,
      messages: view.messages as Record<string, unknown>[],
      limits: { max_blocks: limits.maxBlocks, max_bytes: limits.maxBytes, batch: limits.batch, floor: limits.floor },
    });
    return { retired: new Set(view.carrierIds.slice(0, out.retired)), rule: out.stats.reason };
  };
}

/** Options of the cost strategy in the replay: what the agent sends the route. */
export interface CostPolicyOptions {
  /** The model-table row the route prices and bounds the request with. */
  readonly provider?: string;
  readonly model?: string;
  /** The policy's default ceilings (the price rule's trigger) and floor; the model's true ceiling comes from the table. */
  readonly limits?: EvictionLimits;
  /** Overrides the model's true block ceiling (`--provider-max-blocks`). */
  readonly maxBlocks?: number;
  /** The agent lets the service place one breakpoint at the front (manage_cache). */
  readonly manageCache?: boolean;
  /** The agent's cache entries live an hour (`"ttl": "1h"`): the route then judges cold and prices writes by it. */
  readonly longTtl?: boolean;
  /**
   * What the agent tells the service of the requests left (`requests_left`): nothing (the price
   * rule guesses), the session's true length (`"known"`), or an iteration budget of this many
   * requests, which the session may end before.
   */
  readonly horizon?: "guess" | "known" | number;
}

/** The `POST /v1/context/evict` body the replay's cost policy sends for one request (the differential test sends the same). */
export function costRequestFor(
  view: RouteView,
  context: Pick<PolicyContext, "index" | "count">,
  options: CostPolicyOptions,
  sessionId = "replay",
): EvictRequest {
  const limits = options.limits ?? DEFAULT_LIMITS;
  const horizon = options.horizon ?? "guess";
  const length = horizon === "guess" ? undefined : horizon === "known" ? context.count : horizon;
  return {
    format: view.format,
    messages: view.messages as Record<string, unknown>[],
    strategy: "cost",
    provider: options.provider ?? view.format,
    ...(options.model === undefined ? {} : { model: options.model }),
    limits: {
      ...(options.maxBlocks === undefined ? {} : { max_blocks: options.maxBlocks }),
      max_bytes: limits.maxBytes,
      batch: limits.batch,
      floor: limits.floor,
    },
    manage_cache: options.manageCache ?? true,
    session_id: sessionId,
    ...(view.system === undefined ? {} : { system: view.system }),
    ...(view.tools === undefined ? {} : { tools: view.tools }),
    ...(options.longTtl ? { cache_control: { type: "ephemeral", ttl: "1h" } } : {}),
    ...(length === undefined ? {} : { requests_left: Math.max(0, length - 1 - context.index) }),
  };
}

/**
 * The cost strategy, as `context/evict` runs it with `"strategy": "cost"` and a `session_id`: the
 * route's own `evictRemembering` on each request, with the session memory it keeps between them
 * and the replay's clock.
 */
export function costPolicy(options: CostPolicyOptions = {}): ReplayPolicy {
  let memory: SessionMemory | null = null;
  return (request, context) => {
    const view = routeView(request, context);
    const { response, remember } = evictRemembering(costRequestFor(view, context, options), memory, context.at);
    memory = remember;
    const marker = response.stats.cache_marker;
    const markerAt = marker === undefined ? undefined : view.segmentAt.get(`${marker.message}/${marker.block}`);
    return {
      retired: new Set(view.carrierIds.slice(0, response.retired)),
      ...(markerAt === undefined ? {} : { marker: markerAt }),
      managed: options.manageCache ?? true,
      rule: response.stats.reason,
    };
  };
}
