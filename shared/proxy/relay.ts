/**
 * The answer's way back: the provider's status, headers and body relayed as they arrive, through a
 * TransformStream that reads `usage` on the way (from a JSON answer's copy, or from each
 * server-sent event as it passes) without holding the answer back or changing a byte of it; the
 * one exception is a stream the proxy asked usage of for the caller (StreamUsage), whose usage
 * events are taken out again so the caller gets the stream it asked for.
 */
import { concatBytes } from "../bytes";
import type { LlmProviderSpec, LlmUsage, StreamUsage } from "../llm/llm-provider.types";

/** Response headers not relayed: per-hop, or describing an encoding the runtime's fetch already undid. */
const NOT_RELAYED = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "content-encoding",
  "proxy-authenticate",
  "trailer",
  "upgrade",
  "set-cookie",
  "alt-svc",
]);

/** A JSON answer larger than this is relayed but not kept for its usage (an LLM answer never is). */
const MAX_KEPT_ANSWER_BYTES = 8 * 1024 * 1024;

/**
 * The response to send the caller: upstream's status and headers (less the per-hop ones), `added`
 * headers, and the body piped through a usage reader. `done` runs once with the usage found (null
 * when none arrived) however the body ends: relayed to its end, cancelled by the caller (an agent's
 * Esc, a disconnect) or broken off by the provider. A stream stopped half way was billed for what
 * its events had already said (Anthropic's `message_start` carries the whole prompt's usage), so
 * what was read by then is counted. Without `done` (a path the ledger does not count) the body is
 * relayed as it is, unread.
 */
export function relayAnswer(
  upstream: Response,
  spec: LlmProviderSpec,
  added: Record<string, string>,
  done: ((usage: LlmUsage | null, failed: boolean) => void) | null,
  unasked: StreamUsage["unasked"] | null = null,
): Response {
  const headers = new Headers();
  upstream.headers.forEach((value, name) => {
    if (!NOT_RELAYED.has(name.toLowerCase())) headers.append(name, value);
  });
  for (const [name, value] of Object.entries(added)) headers.set(name, value);
  const reader = done && upstream.body ? usageReader(upstream.headers, spec) : null;
  if (!done || !upstream.body || !reader) {
    done?.(null, false);
    return new Response(upstream.body, { status: upstream.status, headers });
  }
  const source = upstream.body.getReader();
  // A stream sent asking for usage the caller did not ask for goes back as it would have come.
  const rewrite =
    unasked && (upstream.headers.get("content-type") ?? "").toLowerCase().includes("text/event-stream")
      ? eventRewriter(unasked)
      : null;
  let reported = false;
  const report = () => {
    if (reported) return;
    reported = true;
    const usage = reader.end();
    done(usage, reader.failed);
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Until something is sent: a rewritten stream may hold a whole chunk (a line not ended yet).
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await source.read();
        } catch (error) {
          report();
          controller.error(error);
          return;
        }
        if (chunk.done) {
          report();
          const rest = rewrite?.end();
          if (rest && rest.byteLength > 0) controller.enqueue(rest);
          controller.close();
          return;
        }
        const out = rewrite ? rewrite.push(chunk.value) : chunk.value;
        if (out.byteLength > 0) controller.enqueue(out); // first: the caller never waits on the reading
        reader.push(chunk.value);
        if (out.byteLength > 0) return;
      }
    },
    cancel(reason) {
      report();
      return source.cancel(reason);
    },
  });
  return new Response(body, { status: upstream.status, headers });
}

/** The reader for the answer's content type: server-sent events, JSON, or none. */
function usageReader(headers: Headers, spec: LlmProviderSpec): ChunkReader | null {
  const type = (headers.get("content-type") ?? "").toLowerCase();
  if (type.includes("text/event-stream")) return sseUsage(spec);
  return type.includes("json") ? jsonUsage(spec) : null;
}

interface ChunkReader {
  push(chunk: Uint8Array): void;
  end(): LlmUsage | null;
  /** The answer failed after its status said success: an error event in a stream (read by `end`). */
  readonly failed: boolean;
}

/** Keeps a copy of a JSON answer (up to a bound) and reads its usage at the end. */
function jsonUsage(spec: LlmProviderSpec): ChunkReader {
  const chunks: Uint8Array[] = [];
  let size = 0;
  return {
    // A JSON answer's failure is its status, counted when it arrived.
    failed: false,
    push(chunk) {
      size += chunk.byteLength;
      if (size <= MAX_KEPT_ANSWER_BYTES) chunks.push(chunk);
    },
    end() {
      if (size > MAX_KEPT_ANSWER_BYTES) return null;
      try {
        return spec.usage.fromAnswer(JSON.parse(new TextDecoder().decode(concatBytes(chunks))));
      } catch {
        return null;
      }
    },
  };
}

/**
 * A `data:` payload worth parsing: one with a usage object. Most events carry none, and OpenAI's
 * chunks carry `"usage": null` (with include_usage) on every one but the last.
 */
const USAGE_OBJECT = /"usage"\s*:\s*\{/;

/**
 * A stream's failure after a 200: an `error` event (Anthropic's `overloaded_error` mid-stream,
 * OpenAI Responses' `error`) or Responses' `response.failed`, or a `data:` payload that is an error
 * object (`{"type":"error"`, Chat Completions' `{"error":{`).
 */
const ERROR_EVENT = /^event:\s*(?:error|response\.failed)\s*$/;
const ERROR_DATA = /^\{\s*(?:"type"\s*:\s*"error"|"error"\s*:\s*\{)/;

/**
 * Splits an event stream into lines as it passes and reads the `data:` lines that may carry usage.
 * Each chunk is searched for line ends once (a long line arriving in many chunks costs its length,
 * not its length times its chunks), and a line is held up to MAX_KEPT_ANSWER_BYTES characters: a
 * longer one (a Responses `response.completed` repeating a huge output) is relayed but not read.
 */
function sseUsage(spec: LlmProviderSpec): ChunkReader {
  const decoder = new TextDecoder();
  let held: string[] = [];
  let heldLength = 0;
  let overlong = false;
  let usage: LlmUsage | null = null;
  let failed = false;
  const line = (text: string) => {
    if (ERROR_EVENT.test(text)) failed = true;
    if (!text.startsWith("data:")) return;
    const data = text.slice(5).trim();
    if (ERROR_DATA.test(data)) failed = true;
    if (!USAGE_OBJECT.test(data)) return;
    try {
      usage = spec.usage.fromEvent(JSON.parse(data), usage);
    } catch {
      // Not JSON ([DONE], a comment): no usage in it.
    }
  };
  const hold = (piece: string) => {
    if (overlong || piece === "") return;
    heldLength += piece.length;
    if (heldLength > MAX_KEPT_ANSWER_BYTES) {
      overlong = true;
      held = [];
    } else held.push(piece);
  };
  const complete = () => {
    if (!overlong && held.length > 0) line(held.join("").replace(/\r$/, ""));
    held = [];
    heldLength = 0;
    overlong = false;
  };
  const take = (text: string) => {
    let start = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
      hold(text.slice(start, nl));
      complete();
      start = nl + 1;
    }
    hold(text.slice(start));
  };
  return {
    push(chunk) {
      take(decoder.decode(chunk, { stream: true }));
    },
    end() {
      take(decoder.decode());
      complete();
      return usage;
    },
    get failed() {
      return failed;
    },
  };
}

/**
 * Rewrites an event stream line by line: a `data:` line that mentions `"usage"` is given to
 * `unasked` and sent as it returns it (re-serialised), or not at all; every other line, and a
 * line that is not JSON, is sent as it came. A line is held until its end arrives.
 */
function eventRewriter(unasked: StreamUsage["unasked"]): { push(chunk: Uint8Array): Uint8Array; end(): Uint8Array } {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let held = "";
  const line = (text: string): string => {
    if (!text.startsWith("data:") || !text.includes('"usage"')) return text;
    const ending = text.endsWith("\r\n") ? "\r\n" : "\n";
    let event: unknown;
    try {
      event = JSON.parse(text.slice(5));
    } catch {
      return text;
    }
    if (typeof event !== "object" || event === null || Array.isArray(event)) return text;
    const kept = unasked(event as Record<string, unknown>);
    if (kept === null) return "";
    return kept === event ? text : `data: ${JSON.stringify(kept)}${ending}`;
  };
  const take = (text: string): Uint8Array => {
    held += text;
    const last = held.lastIndexOf("\n");
    if (last < 0) return new Uint8Array(0);
    const complete = held.slice(0, last + 1);
    held = held.slice(last + 1);
    let out = "";
    for (const piece of complete.split(/(?<=\n)/)) out += line(piece);
    return encoder.encode(out);
  };
  return {
    push: (chunk) => take(decoder.decode(chunk, { stream: true })),
    end: () => {
      const out = take(decoder.decode());
      const rest = held;
      held = "";
      return rest === "" ? out : concatBytes([out, encoder.encode(line(rest))]);
    },
  };
}
