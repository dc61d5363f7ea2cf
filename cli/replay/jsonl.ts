/**
 * Session files: one JSON line per request, either a whole request body (Anthropic Messages or
 * OpenAI Chat Completions, history included, with optional `at` and the provider's `usage`) or a
 * compact turn; request bodies become the cache models' segments, and `--validate` compares the
 * model with the usage the provider logged.
 */
import type { MessagesLayout } from "../../shared/llm/format";
import { formatOfLayout, isMessagesLayout } from "../../shared/llm/formats.catalog";
import { DEFAULT_THINK_MS, type CacheModel, type RequestBody, type Segment } from "./cache.models";

export type { RequestBody } from "./cache.models";
import { replay } from "./compare";
import { noEviction } from "./rivals";
import type { ReplayTurn } from "./sessions";

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

/** Whether a block carries a breakpoint: Anthropic `cache_control`, OpenAI `prompt_cache_breakpoint`. */
const marked = (value: unknown) => {
  const record = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : null;
  return record !== null && (record.cache_control != null || record.prompt_cache_breakpoint != null);
};

/**
 * One request body (Anthropic Messages or OpenAI Chat Completions) as segments, with images found
 * by the same adapters as the service. Prefix order is tools, system, then messages; every tool,
 * system block, content block (and every part of an Anthropic tool_result) is one segment, and a
 * block with `cache_control` is a breakpoint.
 */
function segmentsFromBody(body: Record<string, unknown>, layout: MessagesLayout, model: BodyModel): Segment[] {
  const format = formatOfLayout(layout);
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  const { carriers, uploads } = format.inventory(messages);
  const images = new Map<string, NonNullable<Segment["image"]>>();
  for (const carrier of carriers) {
    const id = format.carrierId(carrier);
    for (const ref of carrier.images)
      images.set(`${ref.message}/${ref.block}/${ref.part ?? ""}`, { kind: "tool", carrier: id, bytes: ref.bytes });
  }
  for (const ref of uploads)
    images.set(`${ref.message}/${ref.block}/`, { kind: "upload", carrier: "", bytes: ref.bytes });

  // The provider's cache key is the content: a cache_control marker moved on or off a block does
  // not change it, so it is left out of the block's id and size.
  const content = (value: unknown) =>
    JSON.stringify(
      marked(value)
        ? { ...(value as Record<string, unknown>), cache_control: undefined, prompt_cache_breakpoint: undefined }
        : value,
    ) ?? "";
  const text = (value: unknown, message: number): Segment => {
    const json = content(value);
    return {
      id: contentId(json),
      tokens: Math.ceil(json.length / model.charsPerToken),
      message,
      ...(marked(value) ? { breakpoint: true } : {}),
    };
  };
  const piece = (value: unknown, message: number, key: string): Segment => {
    const image = images.get(key);
    if (!image) return text(value, message);
    return {
      id: contentId(content(value)),
      tokens: model.imageTokens,
      message,
      image,
      ...(marked(value) ? { breakpoint: true } : {}),
    };
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
      const position = `${m}/${b}`;
      const parts = format.toolResultParts(block);
      if (parts !== null) {
        const { content: _parts, ...toolHeader } = nested;
        const partSegments = parts.map((part, p) => ({ ...piece(part, m, `${m}/${b}/${p}`), position }));
        segments.push({ ...text(toolHeader, m), position }, ...partSegments);
        // A breakpoint on the tool_result block itself ends after its last part.
        if (marked(nested)) segments[segments.length - 1] = { ...segments[segments.length - 1]!, breakpoint: true };
      } else {
        segments.push({ ...piece(block, m, `${m}/${b}/`), position });
      }
    });
  });
  // Anthropic's automatic caching: one top-level cache_control puts the breakpoint on the last block.
  if (body.cache_control != null && segments.length > 0)
    segments[segments.length - 1] = { ...segments[segments.length - 1]!, breakpoint: true };
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
  | {
      readonly kind: "request";
      readonly segments: Segment[];
      readonly body: RequestBody;
      readonly at?: number;
      readonly usage?: LoggedUsage;
    }
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
  defaultFormat: MessagesLayout,
  body: BodyModel,
  image: { tokens: number; bytes: number },
): SessionLine {
  const value = JSON.parse(line) as Record<string, unknown>;
  if (Array.isArray(value.messages)) {
    const format = isMessagesLayout(value.format) ? value.format : defaultFormat;
    const { usage: rawUsage, at: rawAt, format: _format, ...request } = value;
    let at: number | undefined;
    if (rawAt !== undefined) {
      at = typeof rawAt === "number" ? rawAt : Date.parse(String(rawAt));
      if (!Number.isFinite(at)) throw new Error("at must be an ISO time or epoch milliseconds");
    }
    const usage = parseUsage(rawUsage);
    return {
      kind: "request",
      segments: segmentsFromBody(request, format, body),
      body: { format, body: request },
      ...(at === undefined ? {} : { at }),
      ...(usage ? { usage } : {}),
    };
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
export function validate(
  lines: ReadonlyArray<Extract<SessionLine, { kind: "request" }>>,
  model: CacheModel,
): Validation {
  const times = lines.map((line, i) => line.at ?? i * DEFAULT_THINK_MS);
  // The breakpoints are the ones the logged bodies carried.
  const report = replay(
    lines.map((l) => l.segments),
    noEviction,
    { model: { ...model, breakpoints: "session" }, times },
  );
  const zero: LoggedUsage = { cacheWriteTokens: 0, cacheReadTokens: 0, inputTokens: 0 };
  let error = 0;
  let logged = 0;
  const rows = report.perRequest.map((r, i) => {
    const modelled: LoggedUsage = {
      cacheWriteTokens: r.cacheWriteTokens,
      cacheReadTokens: r.cacheReadTokens,
      inputTokens: r.uncachedTokens,
    };
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
