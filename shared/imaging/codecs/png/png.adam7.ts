/**
 * Interlaced (Adam7) PNG decode, in the same memory as a streamed PNG's order of magnitude: passes
 * 1 to 6 hold only even rows (each pass's sub-image is unfiltered against its own previous line and
 * converted to RGB, flattened on white, as the streaming path does), so they are gathered into an
 * RGB buffer of the even rows (1.5 bytes per pixel of the image); pass 7 is every odd row, full
 * width, in order, so each one is handed to the resampler right after the even row above it.
 */
import { invalidImage } from "../../../media/image-header";
import type { DecodedRows, ResamplerFactory } from "../codec";
import { ADAM7, CHANNELS, jsLines, makeRowConverter, type PngInfo } from "./png.decode";
import { ZlibInflater } from "./png.inflate";

/**
 * Streams an interlaced PNG, its chunks walked by parseChunks, into the resampler built for its
 * full size. @throws AppError 400 `invalid_image` for a corrupt or short zlib stream or an unknown
 * row filter.
 */
export function decodeAdam7Rows(info: PngInfo, makeResampler: ResamplerFactory, zlib: WebAssembly.Module): DecodedRows {
  const { width, height } = info;
  const bitsPerPixel = CHANNELS[info.colorType]! * info.bitDepth;
  const bpp = Math.max(1, bitsPerPixel >> 3);
  const resampler = makeResampler(width, height);
  const rowBytes = width * 3;
  const evens = new Uint8Array(rowBytes * Math.ceil(height / 2));
  let handed = 0; // rows of the image handed to the resampler
  const handEvenRowsBefore = (row: number) => {
    for (; handed < row; handed += 2)
      if (resampler.wantsRow(handed)) resampler.pushRow(handed, evens, (handed >> 1) * rowBytes);
  };

  const inflater = new ZlibInflater(zlib, info.idat);
  let chunk: Uint8Array = new Uint8Array(0),
    at = 0;
  /** Copies the next `n` inflated bytes into `into` at `offset`; false when the stream ends first. */
  const read = (into: Uint8Array, offset: number, n: number): boolean => {
    for (let filled = 0; filled < n; ) {
      if (at === chunk.length) {
        const next = inflater.next();
        if (!next) return false;
        chunk = next;
        at = 0;
      }
      const take = Math.min(n - filled, chunk.length - at);
      into.set(chunk.subarray(at, at + take), offset + filled);
      filled += take;
      at += take;
    }
    return true;
  };
  const filter = new Uint8Array(1);
  for (let pass = 0; pass < ADAM7.length; pass++) {
    const [x0, y0, dx, dy] = ADAM7[pass]!;
    const passWidth = Math.ceil((width - x0) / dx),
      passRows = Math.ceil((height - y0) / dy);
    if (passWidth <= 0 || passRows <= 0) continue;
    const passInfo = { ...info, width: passWidth };
    const stride = Math.ceil((passWidth * bitsPerPixel) / 8);
    const lines = jsLines(passInfo, stride, bpp, makeRowConverter(passInfo));
    for (let j = 0; j < passRows; j++) {
      if (!read(filter, 0, 1) || !read(lines.bytes, lines.line, stride)) {
        throw invalidImage("PNG", `is truncated: its compressed data ends in Adam7 pass ${pass + 1} of 7`);
      }
      lines.unfilter(filter[0]!);
      const out = lines.rgbRow();
      const y = y0 + j * dy;
      if (pass === ADAM7.length - 1) {
        // Pass 7: odd row y, whole; every even row above it is complete.
        handEvenRowsBefore(y);
        if (resampler.wantsRow(y)) resampler.pushRow(y, out.bytes, out.at);
        handed = y + 1;
      } else {
        const base = (y >> 1) * rowBytes;
        for (let i = 0, x = x0; i < passWidth; i++, x += dx) {
          const s = out.at + i * 3,
            d = base + x * 3;
          evens[d] = out.bytes[s]!;
          evens[d + 1] = out.bytes[s + 1]!;
          evens[d + 2] = out.bytes[s + 2]!;
        }
      }
      lines.nextLine();
    }
  }
  handEvenRowsBefore(height);
  return { resampler, wasmBytes: inflater.wasmBytes };
}
