/**
 * GIF image data: LZW codes in sub-blocks, decoded by one walk that serves both the pass-through
 * check (codes only, pixels counted) and the decode (each code's string of palette indices handed
 * on in order), so a truncated or garbled frame is named the same way by both.
 */
import { invalidImage, type GifFrame } from "../../../media/image-header";

/** Receives a frame's palette indices in order: `count` of them at the start of `indices`. */
export type IndexSink = (indices: Uint8Array, count: number) => void;

/** GIF's LZW dictionary holds at most 4096 codes (12 bits). */
const MAX_CODES = 4096;

/**
 * LZW-decodes frame `index` (1-based, for messages) of a GIF up to its width x height pixels.
 * Without a sink only the codes are walked (the pass-through check).
 * @throws AppError 400 `invalid_image` for a code the dictionary cannot hold, or data that ends
 * before the frame's last pixel.
 */
export function decodeGifFrame(bytes: Uint8Array, frame: GifFrame, index: number, sink?: IndexSink): void {
  const minCodeSize = bytes[frame.dataStart]!;
  const clear = 1 << minCodeSize,
    end = clear + 1;
  const pixels = frame.width * frame.height;
  // Code c is the string of code prefix[c] followed by suffix[c]; first[c] is its first index.
  const lengths = new Uint16Array(MAX_CODES).fill(1, 0, clear);
  const prefix = new Uint16Array(sink ? MAX_CODES : 0);
  const suffix = new Uint8Array(sink ? MAX_CODES : 0);
  const first = new Uint8Array(sink ? MAX_CODES : 0);
  for (let c = 0; sink && c < clear; c++) suffix[c] = first[c] = c;
  const string = new Uint8Array(sink ? MAX_CODES + 1 : 0);
  let codeSize = minCodeSize + 1,
    next = end + 1,
    previous = -1;
  let produced = 0,
    acc = 0,
    bits = 0,
    ended = false;
  const garbled = () =>
    invalidImage("GIF", `is corrupt: frame ${index} has an invalid LZW code after ${produced} of its ${pixels} pixels`);
  let at = frame.dataStart + 1;
  for (let size = bytes[at]!; size !== 0 && !ended && produced < pixels; size = bytes[at]!) {
    for (let i = at + 1; i <= at + size && !ended && produced < pixels; i++) {
      acc |= bytes[i]! << bits;
      bits += 8;
      while (bits >= codeSize) {
        const code = acc & ((1 << codeSize) - 1);
        acc >>>= codeSize;
        bits -= codeSize;
        if (code === clear) {
          codeSize = minCodeSize + 1;
          next = end + 1;
          previous = -1;
          continue;
        }
        if (code === end) {
          ended = true;
          break;
        }
        if (previous < 0) {
          if (code >= clear) throw garbled();
          if (sink) {
            string[0] = code;
            sink(string, 1);
          }
          produced += 1;
        } else {
          if (code > next || (code === next && next >= MAX_CODES)) throw garbled();
          const repeat = code === next; // KwKwK: the previous string and its own first index
          const length = repeat ? lengths[previous]! + 1 : lengths[code]!;
          if (sink) {
            if (repeat) string[length - 1] = first[previous]!;
            for (let c = repeat ? previous : code, pos = lengths[c]! - 1; pos >= 0; pos--) {
              string[pos] = suffix[c]!;
              c = prefix[c]!;
            }
            sink(string, Math.min(length, pixels - produced));
          }
          if (next < MAX_CODES) {
            if (sink) {
              prefix[next] = previous;
              suffix[next] = repeat ? first[previous]! : first[code]!;
              first[next] = first[previous]!;
            }
            lengths[next++] = lengths[previous]! + 1;
          }
          produced += length;
          if (next === 1 << codeSize && codeSize < 12) codeSize++;
        }
        previous = code;
        if (produced >= pixels) break;
      }
    }
    at += size + 1;
  }
  if (produced < pixels)
    throw invalidImage("GIF", `is truncated: frame ${index} has data for ${produced} of its ${pixels} pixels`);
}
