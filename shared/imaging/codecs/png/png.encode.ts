/**
 * Lossless PNG of a fitted RGB image, for screenshots: text and flat UI stay exact where a JPEG
 * would ring. 8-bit RGB (grey when every pixel is grey), one row filter per row chosen as libpng
 * does (the smallest sum of absolute filtered bytes), deflated by zlib-ng at zlib's default level:
 * both in WASM (native/zlib/png-deflater.c), fed 32 rows at a time. The deflate stops as soon as
 * its output would pass `maxBytes`, so a photo, which would never win, costs only the part of the
 * image it takes to find that out.
 */
import { concatBytes } from "../../../bytes";
import { crc32 } from "./png.decode";
import { giveBackZlib, takeZlib } from "./png.inflate";

/** The PNG encoder's exports of shared/imaging/wasm/zlib.wasm (native/zlib/png-deflater.c). */
interface DeflaterExports {
  memory: WebAssembly.Memory;
  pd_open(width: number, grey: number, maxBytes: number): number;
  pd_input(): number;
  pd_rows(rows: number): number;
  pd_finish(): number;
  pd_output(): number;
  pd_length(): number;
}

const PD_OK = 0;
/** Rows per pd_rows call: the size of the glue's input area. */
const BLOCK_ROWS = 32;

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
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

/**
 * The PNG of `rgb` (`width` x `height`, 8-bit RGB), or undefined once it is known to be over
 * `maxBytes` (the deflate is stopped there).
 * @example
 * const png = encodePng(rgb, 1568, 882, maxPayloadBytes, wasm.zlib);
 * if (png && png.length <= jpeg.length) send(png);
 */
export function encodePng(
  rgb: Uint8Array,
  width: number,
  height: number,
  maxBytes: number,
  zlib: WebAssembly.Module,
): Uint8Array | undefined {
  const grey = isGrey(rgb);
  const headerBytes = SIGNATURE.length + 25 + 12 + 12; // IHDR, IDAT framing, IEND
  const room = maxBytes - headerBytes;
  if (room <= 0) return undefined;

  // A spare instance if the isolate has one (takeZlib); given back on every return, not on a throw.
  const pd = takeZlib<DeflaterExports>(zlib);
  const idat = deflateRows(pd, rgb, width, height, grey, room);
  if (!idat) {
    giveBackZlib(zlib, pd);
    return undefined;
  }

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
  giveBackZlib(zlib, pd);
  return out.length <= maxBytes ? out : undefined;
}

/** The IDAT data of `rgb` deflated by `pd`, a view into its memory; undefined once over `room` bytes. */
function deflateRows(
  pd: DeflaterExports,
  rgb: Uint8Array,
  width: number,
  height: number,
  grey: boolean,
  room: number,
): Uint8Array | undefined {
  // Its areas are bounded by the largest budget (4 MiB) and long edge; were one refused, the JPEG stands.
  if (pd.pd_open(width, grey ? 1 : 0, room) !== PD_OK) return undefined;
  const input = pd.pd_input();
  const rowBytes = width * 3;
  for (let y = 0; y < height; y += BLOCK_ROWS) {
    const rows = Math.min(BLOCK_ROWS, height - y);
    new Uint8Array(pd.memory.buffer).set(rgb.subarray(y * rowBytes, (y + rows) * rowBytes), input);
    if (pd.pd_rows(rows) !== PD_OK) return undefined;
  }
  if (pd.pd_finish() !== PD_OK) return undefined;
  return new Uint8Array(pd.memory.buffer, pd.pd_output(), pd.pd_length());
}

/** Rows per band of the sample estimatePngOver deflates. */
const SAMPLE_BAND_ROWS = 16;
/** One band in this many goes into the sample: 1/8 of the rows. */
const SAMPLE_BAND_STRIDE = 8;

/**
 * Whether the PNG of `rgb` is predicted over `maxBytes` by more than `slack` times: one 16-row band
 * in eight is deflated (as encodePng does, stopped at its share of `slack * maxBytes`) and scaled to
 * the whole image. Costs about an eighth of a full encode; false (encode it) on an image too small
 * to sample.
 */
export function pngPredictedOver(
  rgb: Uint8Array,
  width: number,
  height: number,
  maxBytes: number,
  slack: number,
  zlib: WebAssembly.Module,
): boolean {
  const rowBytes = width * 3;
  const bands = Math.floor(height / (SAMPLE_BAND_ROWS * SAMPLE_BAND_STRIDE));
  if (bands < 4) return false;
  const rows = bands * SAMPLE_BAND_ROWS;
  const sample = new Uint8Array(rows * rowBytes);
  for (let b = 0; b < bands; b++) {
    // The middle band of each group of SAMPLE_BAND_STRIDE, so the first and last rows are not favoured.
    const from = (b * SAMPLE_BAND_STRIDE + (SAMPLE_BAND_STRIDE >> 1)) * SAMPLE_BAND_ROWS * rowBytes;
    sample.set(rgb.subarray(from, from + SAMPLE_BAND_ROWS * rowBytes), b * SAMPLE_BAND_ROWS * rowBytes);
  }
  return encodePng(sample, width, rows, Math.ceil((slack * maxBytes * rows) / height), zlib) === undefined;
}
