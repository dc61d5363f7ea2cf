/**
 * Cheap estimates the cost strategy needs from a conversation it must not re-serialise: the pixel
 * size of an inline image (from the first few KB of its base64, through the neutral image header reader in shared/media),
 * its prompt tokens, and a message's text tokens. Estimates only: they weigh a retirement against
 * its rewrite; they never decide what the provider receives.
 */
import { BASE64_VALUES, decodeImageData } from "../media/base64.decode";
import { readImageHeader } from "../media/image-header";

/** Base64 characters decoded to find an image's size: PNG, GIF, WebP and a plain JPEG fit in it. */
const HEADER_CHARS = 4_096;

/** Tokens the provider bills for an image it has scaled to at most ~1.15 megapixels. */
export const MAX_IMAGE_TOKENS = 1_600;

/** Characters per text token (a rough, provider-neutral figure). */
export const CHARS_PER_TOKEN = 4;

/** Base64 characters that hold a PNG's or a GIF's size (24 bytes). */
const SHORT_HEADER_CHARS = 32;

/**
 * The stored pixel size of an inline image (base64 or a data: URL), or null when it cannot be read.
 * PNG and GIF sizes are read straight from the first 24 bytes (this runs for every image of every
 * outbound request); JPEG and WebP go through the image header reader (shared/media) on the first 3 KB.
 */
export function imageSize(data: string): { width: number; height: number } | null {
  let start = 0;
  if (data.charCodeAt(0) === 100 /* d */ && data.startsWith("data:")) {
    const comma = data.indexOf(",");
    if (comma < 0) return null;
    start = comma + 1;
  }
  const head = decoded(data, start, SHORT_HEADER_CHARS);
  if (!head || head.length < 24) return null;
  if (head[0] === 0x89 && head[1] === 0x50 && head[2] === 0x4e && head[3] === 0x47) {
    const width = ((head[16]! << 24) | (head[17]! << 16) | (head[18]! << 8) | head[19]!) >>> 0;
    const height = ((head[20]! << 24) | (head[21]! << 16) | (head[22]! << 8) | head[23]!) >>> 0;
    return width > 0 && height > 0 ? { width, height } : null;
  }
  if (head[0] === 0x47 && head[1] === 0x49 && head[2] === 0x46) {
    return { width: head[6]! | (head[7]! << 8), height: head[8]! | (head[9]! << 8) };
  }
  const jpeg = head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff;
  const webp = head[0] === 0x52 && head[1] === 0x49 && head[8] === 0x57 && head[9] === 0x45;
  if (!jpeg && !webp) return null; // not an image we know: the caller assumes the worst
  const bytes = decoded(data, start, HEADER_CHARS);
  if (!bytes) return null;
  try {
    const header = readImageHeader(bytes);
    return { width: header.width, height: header.height };
  } catch {
    return null; // a JPEG whose size lies beyond the first KB, or a broken header
  }
}

/**
 * The first `chars` base64 characters from `start`, decoded; null when they are not plain base64.
 * A small decoder of its own: it runs for every image of every outbound request, on a few dozen
 * characters, where the strict upload decoder's checks and allocation dominate.
 */
function decoded(data: string, start: number, chars: number): Uint8Array | null {
  let end = Math.min(data.length, start + chars);
  // A small image's padding falls inside the window: drop it with the partial last quantum.
  if (end === data.length) while (end > start && data.charCodeAt(end - 1) === 61 /* = */) end -= 1;
  const usable = end - start - ((end - start) % 4);
  if (usable <= 0) return null;
  if (usable > 64) {
    try {
      return decodeImageData(data.slice(start, start + usable)).bytes;
    } catch {
      return null;
    }
  }
  const out = new Uint8Array((usable / 4) * 3);
  let o = 0;
  for (let i = start; i < start + usable; i += 4) {
    const a = BASE64_VALUES[data.charCodeAt(i)] ?? -1;
    const b = BASE64_VALUES[data.charCodeAt(i + 1)] ?? -1;
    const c = BASE64_VALUES[data.charCodeAt(i + 2)] ?? -1;
    const d = BASE64_VALUES[data.charCodeAt(i + 3)] ?? -1;
    if ((a | b | c | d) < 0) return null;
    const n = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = n >> 16;
    out[o++] = (n >> 8) & 0xff;
    out[o++] = n & 0xff;
  }
  return out;
}

/** Anthropic's published estimate, width × height / 750, capped where the provider downscales. */
export function imageTokens(size: { width: number; height: number } | null): number {
  if (!size) return MAX_IMAGE_TOKENS;
  return Math.max(1, Math.min(MAX_IMAGE_TOKENS, Math.ceil((size.width * size.height) / 750)));
}

/** Text tokens of any JSON value, walking at most one level of blocks so images are never serialised. */
export function textTokens(value: unknown): number {
  if (typeof value === "string") return Math.ceil(value.length / CHARS_PER_TOKEN);
  if (value === null || value === undefined) return 0;
  if (Array.isArray(value)) {
    let tokens = 0;
    for (const item of value) tokens += blockTokens(item);
    return tokens;
  }
  return blockTokens(value);
}

/** One content block without its images (they are weighed by `imageTokens`). */
function blockTokens(block: unknown): number {
  if (typeof block === "string") return Math.ceil(block.length / CHARS_PER_TOKEN);
  if (typeof block !== "object" || block === null) return 0;
  const record = block as Record<string, unknown>;
  if (record.type === "image" || record.type === "image_url" || record.type === "input_image") return 0;
  if (typeof record.text === "string") return Math.ceil(record.text.length / CHARS_PER_TOKEN);
  if (Array.isArray(record.content)) return textTokens(record.content);
  if (typeof record.content === "string") return Math.ceil(record.content.length / CHARS_PER_TOKEN);
  // A tool call (Anthropic tool_use; an OpenAI assistant message's tool_calls): its name and input.
  if (record.type === "tool_use") {
    const name = typeof record.name === "string" ? record.name.length : 0;
    return Math.ceil((name + (JSON.stringify(record.input)?.length ?? 0)) / CHARS_PER_TOKEN);
  }
  if (Array.isArray(record.tool_calls)) {
    let chars = 0;
    for (const call of record.tool_calls) {
      const fn = (call as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
      chars +=
        (typeof fn?.name === "string" ? fn.name.length : 0) +
        (typeof fn?.arguments === "string" ? fn.arguments.length : 0);
    }
    return Math.ceil(chars / CHARS_PER_TOKEN);
  }
  if (record.content !== undefined && record.content !== null) return 0; // a content we do not weigh
  return Math.ceil((JSON.stringify(record)?.length ?? 0) / CHARS_PER_TOKEN);
}
