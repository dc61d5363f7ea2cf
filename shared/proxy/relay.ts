/**
 * The answer's way back: the provider's status, headers and body relayed as they arrive, through a
 * TransformStream that reads `usage` on the way (from a JSON answer's copy, or from each
 * server-sent event as it passes) without holding the answer back or changing a byte of it.
 */
import type { LlmProviderSpec, LlmUsage } from "./providers/llm-provider.types";

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
 * when none arrived, e.g. a stream cut off) when the body has been relayed to its end.
 */
export function relayAnswer(
  upstream: Response,
  spec: LlmProviderSpec,
  added: Record<string, string>,
  done: (usage: LlmUsage | null) => void,
): Response {
  const headers = new Headers();
  upstream.headers.forEach((value, name) => {
    if (!NOT_RELAYED.has(name.toLowerCase())) headers.append(name, value);
  });
  for (const [name, value] of Object.entries(added)) headers.set(name, value);
  if (!upstream.body) {
    done(null);
    return new Response(null, { status: upstream.status, headers });
  }
  const type = (upstream.headers.get("content-type") ?? "").toLowerCase();
  const reader = type.includes("text/event-stream") ? sseUsage(spec) : type.includes("json") ? jsonUsage(spec) : null;
  if (!reader) {
    done(null);
    return new Response(upstream.body, { status: upstream.status, headers });
  }
  const tap = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      controller.enqueue(chunk); // first: the caller never waits on the reading
      reader.push(chunk);
    },
    flush() {
      done(reader.end());
    },
  });
  return new Response(upstream.body.pipeThrough(tap), { status: upstream.status, headers });
}

interface ChunkReader {
  push(chunk: Uint8Array): void;
  end(): LlmUsage | null;
}

/** Keeps a copy of a JSON answer (up to a bound) and reads its usage at the end. */
function jsonUsage(spec: LlmProviderSpec): ChunkReader {
  const chunks: Uint8Array[] = [];
  let size = 0;
  return {
    push(chunk) {
      size += chunk.byteLength;
      if (size <= MAX_KEPT_ANSWER_BYTES) chunks.push(chunk);
    },
    end() {
      if (size > MAX_KEPT_ANSWER_BYTES) return null;
      try {
        return spec.usage.fromAnswer(JSON.parse(new TextDecoder().decode(join(chunks, size))));
      } catch {
        return null;
      }
    },
  };
}

function join(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** Splits an event stream into lines as it passes and reads the `data:` lines that may carry usage. */
function sseUsage(spec: LlmProviderSpec): ChunkReader {
  const decoder = new TextDecoder();
  let pending = "";
  let usage: LlmUsage | null = null;
  const line = (text: string) => {
    if (!text.startsWith("data:")) return;
    const data = text.slice(5).trim();
    if (!spec.usage.mayCarryUsage(data)) return;
    try {
      usage = spec.usage.fromEvent(JSON.parse(data), usage);
    } catch {
      // Not JSON ([DONE], a comment): no usage in it.
    }
  };
  const lines = (final: boolean) => {
    let start = 0;
    for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n", start)) {
      line(pending.slice(start, nl).replace(/\r$/, ""));
      start = nl + 1;
    }
    pending = pending.slice(start);
    if (final && pending !== "") line(pending);
  };
  return {
    push(chunk) {
      pending += decoder.decode(chunk, { stream: true });
      lines(false);
    },
    end() {
      pending += decoder.decode();
      lines(true);
      return usage;
    },
  };
}
