/**
 * Conversation builders for the eviction tests: one format-neutral script of turns, written out as
 * a real Anthropic Messages or OpenAI Chat Completions conversation, so every expectation is
 * checked through the adapters and not only on the arithmetic.
 */
import type { EvictRequest } from "../../shared/eviction/evict.schema";

/** One step of a conversation. Image sizes are in base64 / data-URL characters; 0 = URL image. */
export type Turn =
  | { kind: "tool"; images: number[] } // a tool result carrying these images
  | { kind: "upload"; images: number[] } // a user message with these images
  | { kind: "text"; text?: string };

export type Format = EvictRequest["format"];
export const FORMATS: readonly Format[] = ["anthropic", "openai"];

const DATA_URL_PREFIX = "data:image/png;base64,";
const filler = new Map<number, string>();
/** Base64-looking filler of an exact length, shared between calls to keep big fixtures cheap. */
function base64Of(length: number): string {
  let text = filler.get(length);
  if (text === undefined) {
    text = "iVBO".repeat(Math.ceil(length / 4)).slice(0, length);
    filler.set(length, text);
  }
  return text;
}

function anthropicImage(bytes: number, seed: number) {
  if (bytes === 0) return { type: "image", source: { type: "url", url: `https://example.com/shot-${seed}.png` } };
  return { type: "image", source: { type: "base64", media_type: "image/png", data: base64Of(bytes) } };
}

/** A data URL of exactly `bytes` characters (at least the prefix length), or an https URL for 0. */
function dataUrl(bytes: number, seed: number): string {
  if (bytes === 0) return `https://example.com/shot-${seed}.png`;
  if (bytes <= DATA_URL_PREFIX.length)
    throw new Error(`an OpenAI fixture image needs more than ${DATA_URL_PREFIX.length} bytes`);
  return DATA_URL_PREFIX + base64Of(bytes - DATA_URL_PREFIX.length);
}

/** Anthropic: each tool turn is an assistant tool_use plus a user message holding its tool_result. */
export function anthropicConversation(turns: readonly Turn[]): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [];
  let seed = 0;
  turns.forEach((turn, t) => {
    if (turn.kind === "text") {
      messages.push({ role: t % 2 === 0 ? "user" : "assistant", content: turn.text ?? `turn ${t}` });
    } else if (turn.kind === "upload") {
      messages.push({
        role: "user",
        content: [{ type: "text", text: `look at these (${t})` }, ...turn.images.map((b) => anthropicImage(b, seed++))],
      });
    } else {
      const id = `toolu_${t}`;
      messages.push({ role: "assistant", content: [{ type: "tool_use", id, name: "screenshot", input: { t } }] });
      messages.push({
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: id,
            content: [{ type: "text", text: `screenshot ${t}` }, ...turn.images.map((b) => anthropicImage(b, seed++))],
          },
        ],
      });
    }
  });
  return messages;
}

/** OpenAI: each tool turn is an assistant tool call plus a `role: "tool"` message with image parts. */
export function openaiConversation(turns: readonly Turn[]): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [];
  let seed = 0;
  turns.forEach((turn, t) => {
    if (turn.kind === "text") {
      messages.push({ role: t % 2 === 0 ? "user" : "assistant", content: turn.text ?? `turn ${t}` });
    } else if (turn.kind === "upload") {
      messages.push({
        role: "user",
        content: [
          { type: "text", text: `look at these (${t})` },
          ...turn.images.map((b) => ({ type: "image_url", image_url: { url: dataUrl(b, seed++) } })),
        ],
      });
    } else {
      const id = `call_${t}`;
      messages.push({
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name: "screenshot", arguments: `{"t":${t}}` } }],
      });
      messages.push({
        role: "tool",
        tool_call_id: id,
        content: [
          { type: "text", text: `screenshot ${t}` },
          ...turn.images.map((b) => ({ type: "image_url", image_url: { url: dataUrl(b, seed++) } })),
        ],
      });
    }
  });
  return messages;
}

export function conversation(format: Format, turns: readonly Turn[]): Record<string, unknown>[] {
  return format === "anthropic" ? anthropicConversation(turns) : openaiConversation(turns);
}

/** `n` tool turns of one image each, `bytes` per image (1,000 by default: above any data-URL prefix). */
export const screenshots = (n: number, bytes = 1_000): Turn[] =>
  Array.from({ length: n }, () => ({ kind: "tool", images: [bytes] }));

/** Freeze a JSON value all the way down, so any write to the input throws in strict mode. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Base64 of a PNG whose header says `width` × `height` (signature and IHDR, then zero bytes), of
 * exactly `length` characters (a multiple of 4, at least 44): enough for every header reader.
 */
export function pngBase64(width: number, height: number, length = 1_000): string {
  const header = new Uint8Array(33);
  header.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const view = new DataView(header.buffer);
  view.setUint32(16, width);
  view.setUint32(20, height);
  header.set([8, 2, 0, 0, 0], 24);
  const encoded = btoa(String.fromCharCode(...header));
  return encoded + "A".repeat(Math.max(0, length - encoded.length));
}

/** An Anthropic conversation of `n` screenshots whose images are real PNG headers of the given size. */
export function anthropicScreenshots(
  n: number,
  size: { width: number; height: number },
  bytes = 1_000,
): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [{ role: "user", content: [{ type: "text", text: "browse for me" }] }];
  for (let i = 0; i < n; i++) {
    const id = `toolu_${i}`;
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: `step ${i}: ${"thinking ".repeat(200)}` },
        { type: "tool_use", id, name: "screenshot", input: { i } },
      ],
    });
    messages.push({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: id,
          content: [
            { type: "text", text: `screenshot ${i}` },
            {
              type: "image",
              source: {
                type: "base64",
                media_type: "image/png",
                data: pngBase64(size.width, size.height, bytes + (i % 7) * 4),
              },
            },
          ],
        },
      ],
    });
  }
  return messages;
}
