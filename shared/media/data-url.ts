/**
 * Base64 and `data:` URLs, written once for every room that reads or writes an inline image: the
 * strict decoder of uploads, the few-character window the eviction estimate reads a header from,
 * the encoder of fitted images, and the length arithmetic of the embed budget. No binary-string
 * round trip (atob/btoa) anywhere.
 */
import { AppError } from "../http/errors";

/** Each character code's base64 value (base64url's `-` and `_` too), -1 for any other character. */
export const BASE64_VALUES = (() => {
  const table = new Int16Array(256).fill(-1);
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i;
  // base64url too: agents produce both.
  table["-".charCodeAt(0)] = 62;
  table["_".charCodeAt(0)] = 63;
  return table;
})();

const invalid = () =>
  new AppError(
    400,
    "invalid_request",
    "image.data is not valid base64; send the image bytes as base64 or a data: URL.",
    { details: [{ path: ["image", "data"], message: "invalid base64" }] },
  );

/**
 * Decodes base64 or a `data:<type>;base64,` URL. Whitespace is ignored; padding is optional.
 * @returns the bytes and the media type a data: URL declared, if any
 */
export function decodeImageData(text: string): { bytes: Uint8Array; declaredType?: string } {
  let payload = text;
  let declaredType: string | undefined;
  if (payload.startsWith("data:")) {
    const comma = payload.indexOf(",");
    const header = comma < 0 ? "" : payload.slice(5, comma);
    if (comma < 0 || !/;base64$/i.test(header)) throw invalid();
    declaredType = header.replace(/;base64$/i, "") || undefined;
    payload = payload.slice(comma + 1);
  }
  const out = new Uint8Array(Math.floor((payload.length * 3) / 4) + 3);
  let length = 0;
  let buffer = 0;
  let bits = 0;
  let padding = 0;
  for (let i = 0; i < payload.length; i++) {
    const code = payload.charCodeAt(i);
    if (code === 61 /* = */) {
      padding++;
      continue;
    }
    if (code === 32 || code === 10 || code === 13 || code === 9) continue;
    const value = code < 256 ? BASE64_VALUES[code]! : -1;
    if (value < 0 || padding > 0) throw invalid();
    buffer = (buffer << 6) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[length++] = (buffer >> bits) & 0xff;
    }
  }
  if (padding > 2 || bits >= 6) throw invalid();
  return { bytes: out.subarray(0, length), declaredType };
}

/** `data:<mediaType>;base64,` followed by `base64`. */
export function dataUrl(mediaType: string, base64: string): string {
  return `data:${mediaType};base64,${base64}`;
}

/** Length of `data:<mediaType>;base64,`, the part of a data: URL before its payload. */
export function dataUrlPrefixLength(mediaType: string): number {
  return 5 + mediaType.length + 8;
}

/** Length of `data:<mediaType>;base64,<base64 of byteLength bytes>`. */
export function dataUrlLength(mediaType: string, byteLength: number): number {
  return dataUrlPrefixLength(mediaType) + 4 * Math.ceil(byteLength / 3);
}

/** Largest payload whose data: URL fits `budget`. */
export function maxPayloadBytes(mediaType: string, budget: number): number {
  const room = budget - dataUrlPrefixLength(mediaType);
  return room <= 0 ? 0 : Math.floor(room / 4) * 3;
}

/**
 * Where the base64 payload of `text` (plain base64, or a `data:…,` URL) starts: 0 for plain
 * base64, after the comma for a data: URL, -1 for a data: URL without its comma.
 */
export function base64Start(text: string): number {
  if (!text.startsWith("data:")) return 0;
  const comma = text.indexOf(",");
  return comma < 0 ? -1 : comma + 1;
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/** The 4096 two-character pairs as ASCII codes: one table look-up per 12 bits keeps multi-MB inputs fast. */
const PAIR_CODES = (() => {
  const table = new Uint8Array(2 * 4096);
  for (let i = 0; i < 4096; i++) {
    table[2 * i] = B64.charCodeAt(i >> 6);
    table[2 * i + 1] = B64.charCodeAt(i & 63);
  }
  return table;
})();
const ASCII = new TextDecoder();
const PAD = 0x3d; // "="

/**
 * Standard base64 (with padding) of `bytes`; web-standard, no Buffer/btoa round trip through binary
 * strings. Written as ASCII bytes and decoded once: built by string concatenation, a 190 KB fit's
 * text left about 2.3 MB of intermediate strings for the collector (docs/speed.md, "A computer-use
 * turn through the proxy").
 */
export function toBase64(bytes: Uint8Array): string {
  const out = new Uint8Array(Math.ceil(bytes.length / 3) * 4);
  const full = bytes.length - (bytes.length % 3);
  let o = 0;
  for (let i = 0; i < full; i += 3, o += 4) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    const hi = (n >> 12) << 1;
    const lo = (n & 4095) << 1;
    out[o] = PAIR_CODES[hi]!;
    out[o + 1] = PAIR_CODES[hi + 1]!;
    out[o + 2] = PAIR_CODES[lo]!;
    out[o + 3] = PAIR_CODES[lo + 1]!;
  }
  const rest = bytes.length - full;
  if (rest > 0) {
    const n = (bytes[full]! << 16) | (rest === 2 ? bytes[full + 1]! << 8 : 0);
    out[o] = B64.charCodeAt(n >> 18);
    out[o + 1] = B64.charCodeAt((n >> 12) & 63);
    out[o + 2] = rest === 2 ? B64.charCodeAt((n >> 6) & 63) : PAD;
    out[o + 3] = PAD;
  }
  return ASCII.decode(out);
}

/**
 * The first `chars` base64 characters from `start`, decoded; null when they are not plain base64.
 * A small decoder of its own: it runs on a few dozen characters per image of every outbound
 * request, where the strict upload decoder's checks and allocation would dominate.
 */
export function decodeBase64Window(data: string, start: number, chars: number): Uint8Array | null {
  let end = Math.min(data.length, start + chars);
  // A small image's padding falls inside the window: drop it with the partial last quantum.
  if (end === data.length) while (end > start && data.charCodeAt(end - 1) === 61 /* = */) end -= 1;
  const usable = end - start - ((end - start) % 4);
  if (usable <= 0) return null;
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
