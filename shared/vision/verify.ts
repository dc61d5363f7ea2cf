/**
 * What must hold before an image's bytes are trusted: the structure every decode needs first
 * (JPEG markers to EOI and a bounded scan count, the PNG chunk walk for photon), and, before an
 * image is embedded unchanged, its whole data: a pass-through skips our decoders, so nothing else
 * would notice a truncated or damaged file before the provider (and every later call) does.
 */
import type { VisionWasm } from "../ports";
import { invalidImage, JpegMarkerWalk, walkGifFrames, type ImageHeader, type JpegStructure } from "./format";
import { decodeJpegWithoutRows } from "./jpeg.decode";
import { CHANNELS, inflateIdat, readInflated, parseChunks, type PngInfo } from "./png.decode";

/** What the structure walks found: read once per fit and handed to its verification, decodes and colour reads. */
export interface ImageStructure {
  /** PNG: every chunk checked (order, sizes, CRCs) down to IEND, the IDAT data and the iCCP chunk kept. */
  png?: PngInfo;
  /** JPEG: the marker walk to EOI (scans, ICC profile, Adobe APP14). */
  jpeg?: JpegStructure;
}

/**
 * Checks a decoder does not do itself, run once per fit before any pixel is decoded: the JPEG walk
 * to EOI (truncation, scan bombs; resumed from the header's walk when given) and the PNG chunk walk (which the streaming decoder then reads from,
 * and which photon, decoding an interlaced PNG, would not do as strictly). GIF and WebP frames are
 * checked against their container by readImageHeader already.
 */
export function checkStructure(bytes: Uint8Array, header: ImageHeader, jpegWalk?: JpegMarkerWalk): ImageStructure {
  if (header.mediaType === "image/jpeg") return { jpeg: (jpegWalk ?? new JpegMarkerWalk(bytes)).toEnd() };
  if (header.mediaType === "image/png") return { png: parseChunks(bytes) };
  return {};
}

/**
 * Verifies all of an image's data before it is embedded unchanged: PNG chunk CRCs and a complete
 * zlib stream of exactly the rows its size needs; JPEG through EOI, entropy-decoded by TurboJPEG
 * (at 1/8 scale: every coefficient is read, little is transformed); every GIF frame's LZW data;
 * WebP RIFF and chunk sizes and frame headers (readImageHeader). `structure`: what checkStructure
 * found for these bytes, when the caller has it.
 * @throws AppError 400 `invalid_image` naming what is wrong.
 */
export async function verifyImageData(bytes: Uint8Array, header: ImageHeader, wasm: VisionWasm, structure: ImageStructure = checkStructure(bytes, header)): Promise<void> {
  switch (header.mediaType) {
    case "image/png":
      return verifyPngData(structure.png!);
    case "image/jpeg": {
      decodeJpegWithoutRows(bytes, header.width, header.height, wasm.jpegDecoder);
      return;
    }
    case "image/gif":
      walkGifFrames(bytes, header.width, header.height).forEach((frame, i) => verifyGifFrame(bytes, frame, i + 1));
      return;
    case "image/webp":
      // readImageHeader checked the RIFF size, every chunk size and the frame headers against the
      // canvas. Decoding the frame too (photon) would cost about half a re-encode (docs/benchmarks.md,
      // "Pass-through verification"), so the VP8/VP8L entropy data itself is not decoded here.
      return;
  }
}

/** Length of each filtered scanline (filter byte included), pass by pass for Adam7. */
function* scanlineLengths(info: PngInfo): Generator<number> {
  const bitsPerPixel = CHANNELS[info.colorType]! * info.bitDepth;
  const line = (width: number) => 1 + Math.ceil((width * bitsPerPixel) / 8);
  if (!info.interlaced) {
    for (let y = 0; y < info.height; y++) yield line(info.width);
    return;
  }
  // Adam7: [x start, y start, x step, y step] of the seven passes.
  for (const [x0, y0, dx, dy] of [[0, 0, 8, 8], [4, 0, 8, 8], [0, 4, 4, 8], [2, 0, 4, 4], [0, 2, 2, 4], [1, 0, 2, 2], [0, 1, 1, 2]] as const) {
    const width = Math.ceil((info.width - x0) / dx), rows = Math.ceil((info.height - y0) / dy);
    if (width > 0) for (let y = 0; y < rows; y++) yield line(width);
  }
}

/** Inflates all of the IDAT data, checking every row's filter byte and that the stream holds exactly the rows. */
async function verifyPngData(info: PngInfo): Promise<void> {
  const lines = scanlineLengths(info);
  let left = 0; // bytes left in the current scanline; 0 = its filter byte is next
  let rows = 0;
  const { reader, feeding } = inflateIdat(info);
  try {
    for (;;) {
      const data = await readInflated(reader);
      if (!data) break;
      for (let at = 0; at < data.length;) {
        if (left === 0) {
          const next = lines.next();
          if (next.done) throw invalidImage("PNG", `could not be decoded: its compressed data holds more than the ${info.width}x${info.height} pixels it declares`);
          if (data[at]! > 4) throw invalidImage("PNG", `could not be decoded: row ${rows} has an unknown filter type ${data[at]}`);
          left = next.value - 1;
          rows++;
          at++;
          continue;
        }
        const take = Math.min(left, data.length - at);
        left -= take;
        at += take;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
    await feeding;
  }
  if (left > 0 || !lines.next().done) throw invalidImage("PNG", `is truncated: its compressed data ends in or before row ${rows} of its scanlines`);
}

/** LZW-decodes one GIF frame, counting pixels only, so a truncated or garbled frame is found. */
function verifyGifFrame(bytes: Uint8Array, frame: { width: number; height: number; dataStart: number }, index: number): void {
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
