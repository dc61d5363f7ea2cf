/** Strict base64 (and data: URL) decoding for uploaded images, without a binary-string round trip. */
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
