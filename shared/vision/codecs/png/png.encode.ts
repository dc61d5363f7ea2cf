/**
 * Lossless PNG of a fitted RGB image, for screenshots: text and flat UI stay exact where a JPEG
 * would ring. 8-bit RGB (grey when every pixel is grey), one row filter per row chosen as libpng
 * does (the smallest sum of absolute filtered bytes), deflated by the web-standard
 * CompressionStream("deflate"), whose zlib stream is exactly what IDAT holds. The deflate is fed
 * row by row and abandoned as soon as its output passes `maxBytes`, so a photo, which would never
 * win, costs only the part of the image it takes to find that out.
 */
import { concatBytes, readAtMost } from "../../../bytes";
import { crc32 } from "./png.decode";

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** Rows handed to the deflate at a time: big enough that the stream's per-chunk cost does not show. */
const ROWS_PER_WRITE = 32;

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out, 4, 8 + data.length));
  return out;
}

function isGrey(rgb: Uint8Array): boolean {
  for (let i = 0; i < rgb.length; i += 3) if (rgb[i] !== rgb[i + 1] || rgb[i] !== rgb[i + 2]) return false;
  return true;
}

/** Filters `cur` with PNG filter `f` into `out` (from `at`) and returns the sum of |byte as signed|, stopping early past `limit`. */
function applyFilter(
  f: number,
  cur: Uint8Array,
  prev: Uint8Array,
  bpp: number,
  out: Uint8Array,
  at: number,
  limit: number,
): number {
  const n = cur.length;
  let cost = 0;
  // One loop per filter: a switch per byte would cost more than the filtering.
  for (let i = 0; i < n; i++) {
    let v: number;
    if (f === 0) v = cur[i]!;
    else if (f === 1) v = (cur[i]! - (i >= bpp ? cur[i - bpp]! : 0)) & 0xff;
    else if (f === 2) v = (cur[i]! - prev[i]!) & 0xff;
    else if (f === 3) v = (cur[i]! - (((i >= bpp ? cur[i - bpp]! : 0) + prev[i]!) >> 1)) & 0xff;
    else {
      const a = i >= bpp ? cur[i - bpp]! : 0,
        b = prev[i]!,
        c = i >= bpp ? prev[i - bpp]! : 0;
      const pa = b > c ? b - c : c - b,
        pb = a > c ? a - c : c - a,
        pc = a + b > 2 * c ? a + b - 2 * c : 2 * c - a - b;
      v = (cur[i]! - (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 0xff;
    }
    out[at + i] = v;
    cost += v < 128 ? v : 256 - v;
    if (cost > limit) return cost;
  }
  return cost;
}

/**
 * Writes the filter byte and the filtered row into `out` at `at`: of the five filters, the one
 * whose bytes, read as signed, sum smallest in absolute value (libpng's heuristic).
 */
function filterRow(
  cur: Uint8Array,
  prev: Uint8Array,
  bpp: number,
  out: Uint8Array,
  at: number,
  trial: Uint8Array,
): void {
  let best = 0,
    bestCost = applyFilter(0, cur, prev, bpp, out, at + 1, Infinity);
  for (let f = 1; f < 5 && bestCost > 0; f++) {
    const cost = applyFilter(f, cur, prev, bpp, trial, 0, bestCost);
    if (cost < bestCost) {
      bestCost = cost;
      best = f;
      out.set(trial.subarray(0, cur.length), at + 1);
    }
  }
  out[at] = best;
}

/**
 * The PNG of `rgb` (`width` x `height`, 8-bit RGB), or undefined once it is known to be over
 * `maxBytes` (the deflate is stopped there).
 * @example
 * const png = await encodePng(rgb, 1568, 882, maxPayloadBytes);
 * if (png && png.length <= jpeg.length) send(png);
 */
export async function encodePng(
  rgb: Uint8Array,
  width: number,
  height: number,
  maxBytes: number,
): Promise<Uint8Array | undefined> {
  const grey = isGrey(rgb);
  const bpp = grey ? 1 : 3;
  const stride = width * bpp;
  const headerBytes = SIGNATURE.length + 25 + 12 + 12; // IHDR, IDAT framing, IEND
  const room = maxBytes - headerBytes;
  if (room <= 0) return undefined;

  const deflate = new CompressionStream("deflate");
  const writer = deflate.writable.getWriter();
  let over = false;
  // Read as it is written, so the rows stop once the output passes `room` (the read cancels there).
  const draining = readAtMost(deflate.readable, room, () => new RangeError("PNG over its byte limit")).catch(() => {
    over = true;
    return undefined;
  });

  const rows = (y: number) => {
    const row = rgb.subarray(y * width * 3, (y + 1) * width * 3);
    if (!grey) return row;
    const g = new Uint8Array(width);
    for (let x = 0; x < width; x++) g[x] = row[x * 3]!;
    return g;
  };
  const trial = new Uint8Array(stride);
  // Above the first row is a row of zeros (PNG's rule), which makes Up there the same as None.
  let prev: Uint8Array = new Uint8Array(stride);
  try {
    for (let y = 0; y < height && !over; y += ROWS_PER_WRITE) {
      const count = Math.min(ROWS_PER_WRITE, height - y);
      const block = new Uint8Array(count * (stride + 1));
      for (let r = 0; r < count; r++) {
        const cur = rows(y + r);
        filterRow(cur, prev, bpp, block, r * (stride + 1), trial);
        prev = cur;
      }
      await writer.write(block);
    }
    if (!over) await writer.close();
    else await writer.abort().catch(() => undefined);
  } catch {
    // The readable side was cancelled (over the limit): the writer errors; nothing to keep.
    over = true;
  }
  const idat = await draining;
  if (over || !idat) return undefined;

  const ihdr = new Uint8Array(13);
  const view = new DataView(ihdr.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  ihdr[8] = 8;
  ihdr[9] = grey ? 0 : 2;
  const out = concatBytes([
    Uint8Array.from(SIGNATURE),
    chunk("IHDR", ihdr),
    chunk("IDAT", idat),
    chunk("IEND", new Uint8Array(0)),
  ]);
  return out.length <= maxBytes ? out : undefined;
}
