/**
 * GIF image data: LZW codes in sub-blocks. The pass-through check walks every frame's codes,
 * counting pixels, so a truncated or garbled frame is found before the file is sent on.
 */
import { invalidImage, type GifFrame } from "../../../media/image-header";

/** LZW-decodes one GIF frame, counting pixels only, so a truncated or garbled frame is found. */
export function verifyGifFrame(bytes: Uint8Array, frame: GifFrame, index: number): void {
  const minCodeSize = bytes[frame.dataStart]!;
  const clear = 1 << minCodeSize, end = clear + 1;
  const pixels = frame.width * frame.height;
  const lengths = new Uint16Array(4096).fill(1, 0, clear);
  let codeSize = minCodeSize + 1, next = end + 1, previous = -1;
  let produced = 0, acc = 0, bits = 0, ended = false;
  const garbled = () => invalidImage("GIF", `is corrupt: frame ${index} has an invalid LZW code after ${produced} of its ${pixels} pixels`);
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
          codeSize = minCodeSize + 1; next = end + 1; previous = -1;
          continue;
        }
        if (code === end) { ended = true; break; }
        if (previous < 0) {
          if (code >= clear) throw garbled();
          produced += 1;
        } else {
          if (code > next || (code === next && next >= 4096)) throw garbled();
          const length = code === next ? lengths[previous]! + 1 : lengths[code]!;
          if (next < 4096) lengths[next++] = lengths[previous]! + 1;
          produced += length;
          if (next === 1 << codeSize && codeSize < 12) codeSize++;
        }
        previous = code;
        if (produced >= pixels) break;
      }
    }
    at += size + 1;
  }
  if (produced < pixels) throw invalidImage("GIF", `is truncated: frame ${index} has data for ${produced} of its ${pixels} pixels`);
}
