/**
 * Cheap estimates the cost strategy and the provider proxy need from a conversation they must not
 * re-serialise: the pixel size of an inline image (from the few base64 characters that hold it),
 * its prompt tokens, and a message's text tokens. They weigh a retirement against its rewrite and
 * tell the proxy which images to fit; the image itself is checked in full only when it is fitted.
 */
import { base64Start, decodeBase64Window } from "../media/data-url";
import { mediaTypeOf } from "../media/image-header";

/** Tokens the provider bills for an image it has scaled to at most ~1.15 megapixels. */
export const MAX_IMAGE_TOKENS = 1_600;

/** Characters per text token (a rough, provider-neutral figure). */
export const CHARS_PER_TOKEN = 4;

/** Base64 characters that hold a PNG's, a GIF's or a WebP's size (the first 30 bytes). */
const SHORT_HEADER_CHARS = 40;

/** JPEG segments walked before the frame header (SOF) is given up on: APPn, DQT, DHT, COM... */
const JPEG_SEGMENTS_MAX = 256;

/**
 * The stored pixel size of an inline image (base64 or a data: URL), or null when it cannot be read.
 * This runs for every image of every outbound request, so it decodes only what holds the size:
 * PNG, GIF and WebP from the first 30 bytes; a JPEG by hopping from segment header to segment
 * header (4 bytes each) to its frame header, however large the EXIF or ICC segments before it.
 * An estimate, not a check: nothing else of the file is validated.
 */
export function imageSize(data: string): { width: number; height: number } | null {
  const size = sizeOf(data);
  // Base64 with line breaks (MIME wraps at 76) or a leading newline: read again without them.
  return size === null && /\s/.test(data) ? sizeOf(data.replace(/\s+/g, "")) : size;
}

/**
 * The media type an inline image's first bytes say it is (PNG, GIF, JPEG, WebP), or null: what a
 * provider checks a declared `media_type` against.
 */
export function imageMediaType(data: string): string | null {
  const start = Math.max(0, base64Start(data));
  const head = decodeBase64Window(data.slice(start, start + 24).replace(/\s+/g, ""), 0, 16);
  return head ? mediaTypeOf(head) : null;
}

function sizeOf(data: string): { width: number; height: number } | null {
  const start = base64Start(data);
  if (start < 0) return null;
  const head = decodeBase64Window(data, start, SHORT_HEADER_CHARS);
  if (!head || head.length < 24) return null;
  const sized = (width: number, height: number) => (width > 0 && height > 0 ? { width, height } : null);
  if (head[0] === 0x89 && head[1] === 0x50 && head[2] === 0x4e && head[3] === 0x47) {
    return sized(u32be(head, 16), u32be(head, 20));
  }
  if (head[0] === 0x47 && head[1] === 0x49 && head[2] === 0x46) {
    return sized(head[6]! | (head[7]! << 8), head[8]! | (head[9]! << 8));
  }
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return jpegSize(data, start);
  const webp = head[0] === 0x52 && head[1] === 0x49 && head[8] === 0x57 && head[9] === 0x45;
  if (!webp || head.length < 30) return null; // not an image we know: the caller assumes the worst
  // The first chunk's header at byte 12, its data at 20 (the WebP container's fixed layout).
  const u24 = (at: number) => head[at]! | (head[at + 1]! << 8) | (head[at + 2]! << 16);
  switch (String.fromCharCode(head[12]!, head[13]!, head[14]!, head[15]!)) {
    case "VP8X": // the canvas, minus one, after 4 bytes of flags
      return sized(u24(24) + 1, u24(27) + 1);
    case "VP8L": {
      if (head[20] !== 0x2f) return null;
      const bits = (head[21]! | (head[22]! << 8) | (head[23]! << 16) | (head[24]! << 24)) >>> 0;
      return sized((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
    }
    case "VP8 ": // a 3-byte frame tag and the start code 9d 01 2a, then the 14-bit sizes
      if (head[23] !== 0x9d || head[24] !== 0x01 || head[25] !== 0x2a) return null;
      return sized((head[26]! | (head[27]! << 8)) & 0x3fff, (head[28]! | (head[29]! << 8)) & 0x3fff);
    default:
      return null;
  }
}

const u32be = (bytes: Uint8Array, at: number) =>
  ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>> 0;

/**
 * A JPEG's size from its frame header, reached by segment lengths alone: each hop decodes the 4
 * bytes of one segment header. Null at the scan (no frame header before it), past the end, or
 * past JPEG_SEGMENTS_MAX segments.
 */
function jpegSize(data: string, start: number): { width: number; height: number } | null {
  let at = 2;
  for (let segment = 0; segment < JPEG_SEGMENTS_MAX; segment++) {
    const header = bytesAt(data, start, at, 4);
    if (header?.[0] !== 0xff) return null;
    const marker = header[1]!;
    if (marker === 0xff) {
      at += 1; // a fill byte before the marker
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      at += 2; // a marker with no length (TEM, RSTn, SOI)
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return null;
    // SOF0..SOF15 except DHT (c4), JPG (c8) and DAC (cc): precision, then height and width.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      const size = bytesAt(data, start, at + 5, 4);
      if (!size) return null;
      const height = (size[0]! << 8) | size[1]!;
      const width = (size[2]! << 8) | size[3]!;
      return width > 0 && height > 0 ? { width, height } : null;
    }
    const length = (header[2]! << 8) | header[3]!;
    if (length < 2) return null;
    at += 2 + length;
  }
  return null;
}

/** `length` bytes from byte `offset` of the base64 payload starting at `start`, or null past its end. */
function bytesAt(data: string, start: number, offset: number, length: number): Uint8Array | null {
  const quantum = Math.floor(offset / 3);
  const skip = offset - quantum * 3;
  const from = start + quantum * 4;
  if (from >= data.length) return null;
  const bytes = decodeBase64Window(data, from, Math.ceil((skip + length) / 3) * 4);
  return bytes && bytes.length >= skip + length ? bytes.subarray(skip, skip + length) : null;
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
