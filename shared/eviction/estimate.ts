/**
 * Cheap estimates the cost strategy needs from a conversation it must not re-serialise: the pixel
 * size of an inline image (from the first few KB of its base64, through the vision header reader),
 * its prompt tokens, and a message's text tokens. Estimates only: they weigh a retirement against
 * its rewrite; they never decide what the provider receives.
 */
import { decodeImageData } from "../vision/base64.decode";
import { readImageHeader } from "../vision/format";

/** Base64 characters decoded to find an image's size: PNG, GIF, WebP and a plain JPEG fit in it. */
const HEADER_CHARS = 4_096;

/** Tokens the provider bills for an image it has scaled to at most ~1.15 megapixels. */
export const MAX_IMAGE_TOKENS = 1_600;

/** Characters per text token (a rough, provider-neutral figure). */
export const CHARS_PER_TOKEN = 4;

/** The stored pixel size of an inline image (base64 or a data: URL), or null when it cannot be read. */
export function imageSize(data: string): { width: number; height: number } | null {
  let payload = data;
  if (payload.startsWith("data:")) {
    const comma = payload.indexOf(",");
    if (comma < 0) return null;
    payload = payload.slice(comma + 1, comma + 1 + HEADER_CHARS);
  } else {
    payload = payload.slice(0, HEADER_CHARS);
  }
  payload = payload.slice(0, payload.length - (payload.length % 4));
  try {
    const header = readImageHeader(decodeImageData(payload).bytes);
    return { width: header.width, height: header.height };
  } catch {
    return null; // a header beyond the first KB, or not an image we know: the caller assumes the worst
  }
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
  const { content: _content, ...rest } = record;
  return Math.ceil((JSON.stringify(rest)?.length ?? 0) / CHARS_PER_TOKEN);
}
