/**
 * JPEG decode through libjpeg-turbo (our WASM build with arithmetic decoding, native/jpeg/) in an
 * instance created for this one call. The decoder scales in the DCT domain (n/8), so a 12 MP photo
 * headed for 1568 px is decoded straight to 2520x1890, and hands its rows over a band at a time
 * instead of a whole decoded frame; the instance and its memory are garbage once this returns.
 */
import { AppError } from "../../../http/errors";
import { invalidImage, JpegMarkerWalk, type JpegColorInfo } from "../../../media/image-header";
import {
  DecoderFailure,
  decodeCallerBytes,
  decoderOutOfMemory,
  type DecodeStats,
  type ResamplerFactory,
} from "../codec";
import { cmykConverter } from "../../color/cmyk";
import type { CmykTransform } from "../../color/icc";

/** libjpeg's J_COLOR_SPACE values of a frame that holds print colours (decoded to CMYK, converted here). */
const JCS_CMYK = 4;
const JCS_YCCK = 5;
/**
 * The DCT-scaled decode stops this factor above the target (libvips leaves its resampler 1.5–2x):
 * n/8 IDCT scaling alone aliases and blurs block by block, Lanczos then does the real shrink. A
 * coarse output (DecodeDetail) gets none: its quantiser drops what the margin keeps.
 */
const LANCZOS_MARGIN = 1.5;
/** Rows pulled from the decoder per call: one band of libjpeg's own output at most scales. */
const BAND_ROWS = 16;

/** What libjpeg-turbo's fatal error unwinds with (the instance is abandoned, never reused). */
class LibjpegAbort extends Error {}

/** The exports of shared/imaging/wasm/jpeg.decode.wasm (native/jpeg/decoder.c). */
interface JpegDecoderExports {
  memory: WebAssembly.Memory;
  malloc(size: number): number;
  jd_header(out: number): number;
  jd_start(eighths: number, cmyk: number, out: number): number;
  jd_read(rows: number, count: number): number;
  jd_finish(): number;
  jd_verify(): number;
}

/** An instance that reads `bytes` (handed over a chunk at a time as libjpeg asks, never copied whole). */
function instantiate(module: WebAssembly.Module, bytes: Uint8Array): JpegDecoderExports {
  let exports: JpegDecoderExports | undefined;
  let read = 0;
  const env = {
    // libjpeg reports a fatal error through its error manager, which calls this import: throwing
    // unwinds the WASM stack (there is no setjmp in WASM) and leaves the instance unusable. A failed
    // allocation is a RangeError about memory, which the service answers with 413 (isOutOfMemory).
    jpeg_fail: (outOfMemory: number) => {
      throw outOfMemory ? new RangeError("libjpeg-turbo ran out of memory") : new LibjpegAbort("libjpeg error");
    },
    jpeg_read: (into: number, room: number) => {
      const next = bytes.subarray(read, read + room);
      new Uint8Array(exports!.memory.buffer, into, next.length).set(next);
      read += next.length;
      return next.length;
    },
  };
  exports = new WebAssembly.Instance(module, { env }).exports as unknown as JpegDecoderExports;
  return exports;
}

/**
 * The smallest n/8 scale (n = 1..8) that still delivers at least `margin` x `minScale` of the
 * original size, so the resampler keeps a real share of the shrink (none with a margin of 1).
 */
export function jpegDctEighths(minScale: number, margin = LANCZOS_MARGIN): number {
  for (let n = 1; n < 8; n++) if (n / 8 >= minScale * margin - 1e-9) return n;
  return 8;
}

/** How a decoder failure names the decoder (DecoderFailure). */
const DECODER = "libjpeg-turbo";

/** A decode libjpeg-turbo finished with a warning: the data is corrupt or cut short. */
function corruptJpeg(): AppError {
  return invalidImage("JPEG", "could not be decoded: its data is corrupt or truncated before its end (EOI)");
}

/** A decode libjpeg-turbo gave up on by a fatal error or a trap: a variant it cannot read, or data that broke it. */
const JPEG_DECODER_FAILED = "could not be decoded: its data is corrupt or uses an unsupported variant";

/** How a CMYK/YCCK file's rows become RGB: its converter (embedded CMYK profile, else the press model) and Adobe flag. */
export interface CmykColor {
  toRgb: CmykTransform;
  adobe: boolean;
}

/**
 * The CMYK colour of a file from its marker walk. A profile's table has up to 17^4 nodes: a fit
 * builds this once and hands it to every decode of the sizes it tries.
 */
export function cmykColorOf(info: JpegColorInfo): CmykColor {
  return { toRgb: cmykConverter(info.icc), adobe: info.adobe };
}

/**
 * Decodes a whole JPEG at `eighths`/8 of its size (full size by default) to RGB in the JS heap: our
 * own small output, to measure its fidelity, or a test's file.
 */
export function decodeJpegRgb(
  bytes: Uint8Array,
  module: WebAssembly.Module,
  eighths = 8,
): { rgb: Uint8Array; width: number; height: number } {
  let out: { rgb: Uint8Array; width: number; height: number } | undefined;
  try {
    // Decoded once: a CMYK file (a test's or a bench's, never our output) is walked for its colour only then.
    decodeJpeg(
      bytes,
      eighths,
      module,
      (width, height) => {
        const rgb = new Uint8Array(width * height * 3);
        out = { rgb, width, height };
        return (row, pixels, at) => rgb.set(pixels.subarray(at, at + width * 3), row * width * 3);
      },
      () => cmykColorOf(new JpegMarkerWalk(bytes).toEnd()),
    );
  } catch (error) {
    // These bytes are our encoder's: a decode that fails on their data is our fault, never the
    // caller's (running out of memory stays what it is).
    const brokenData =
      error instanceof DecoderFailure ? !error.exhausted : error instanceof AppError && error.code === "invalid_image";
    if (brokenData) throw new Error("libjpeg-turbo could not decode our own JPEG output", { cause: error });
    throw error;
  }
  return out!;
}

/** Where decoded RGB rows go; `wants` lets the sink skip rows it would not read. */
type RowSink = ((row: number, rgb: Uint8Array, at: number) => void) & { wants?: (row: number) => boolean };

/**
 * Decodes at n/8 and hands each RGB row (CMYK/YCCK converted) to the sink the callback builds for
 * the decoded size. Rows are pulled a band at a time and live in the instance's memory only until
 * the next band: the decoded frame is never held whole. A callback that returns no sink gets the
 * verification alone (every coefficient entropy-decoded to EOI, no inverse DCT); `cmykColor` is
 * asked only when the frame is CMYK/YCCK and rows are wanted. Any warning libjpeg raised (data cut
 * short, a corrupt segment) refuses the image once the decode ends.
 */
function decodeJpeg(
  bytes: Uint8Array,
  eighths: number,
  module: WebAssembly.Module,
  open: (decodedWidth: number, decodedHeight: number) => RowSink | undefined,
  cmykColor: () => CmykColor,
): number {
  const jd = instantiate(module, bytes);
  const call = <T>(run: () => T) => decodeCallerBytes(DECODER, "JPEG", JPEG_DECODER_FAILED, run);
  const info = jd.malloc(16);
  if (info === 0) throw decoderOutOfMemory("JPEG");
  call(() => jd.jd_header(info));
  const [width, height, , colorspace] = new Int32Array(jd.memory.buffer, info, 4);
  const cmyk = colorspace === JCS_CMYK || colorspace === JCS_YCCK;
  // What libjpeg delivers at n/8: a partial last block still gives a pixel.
  const decodedWidth = Math.ceil((width! * eighths) / 8);
  const decodedHeight = Math.ceil((height! * eighths) / 8);
  const sink = open(decodedWidth, decodedHeight);
  if (!sink) {
    if (call(() => jd.jd_verify()) !== 0) throw corruptJpeg();
    return jd.memory.buffer.byteLength;
  }
  call(() => jd.jd_start(eighths, cmyk ? 1 : 0, info));
  const [outWidth, outHeight] = new Int32Array(jd.memory.buffer, info, 2);
  if (outWidth !== decodedWidth || outHeight !== decodedHeight)
    throw new Error(
      `libjpeg-turbo decodes ${outWidth}x${outHeight} at ${eighths}/8, not ${decodedWidth}x${decodedHeight}`,
    );
  const pitch = decodedWidth * (cmyk ? 4 : 3);
  const band = jd.malloc(pitch * BAND_ROWS);
  if (band === 0) throw decoderOutOfMemory("JPEG", { width: width!, height: height! });
  const converter = cmyk ? cmykColor() : undefined;
  const rgbRow = cmyk ? new Uint8Array(decodedWidth * 3) : undefined;
  for (let row = 0; row < decodedHeight; ) {
    const count = call(() => jd.jd_read(band, BAND_ROWS));
    if (count === 0) throw corruptJpeg();
    // The view is taken after each read: memory.grow during a read detaches earlier views.
    const pixels = new Uint8Array(jd.memory.buffer);
    for (let i = 0; i < count; i++, row++) {
      if (sink.wants && !sink.wants(row)) continue;
      const at = band + i * pitch;
      if (rgbRow && converter) {
        converter.toRgb(pixels, at, rgbRow, 0, decodedWidth, converter.adobe);
        sink(row, rgbRow, 0);
      } else {
        sink(row, pixels, at);
      }
    }
  }
  if (call(() => jd.jd_finish()) !== 0) throw corruptJpeg();
  return jd.memory.buffer.byteLength;
}

/**
 * Decodes `bytes` at n/8, first checking the frame TurboJPEG found is the `width`x`height` the
 * header walk read, and hands the decoded size to `open` for the rows' sink (none: decode only).
 */
function decodeCheckedFrame(
  bytes: Uint8Array,
  width: number,
  height: number,
  eighths: number,
  module: WebAssembly.Module,
  open: (decodedWidth: number, decodedHeight: number) => RowSink | undefined,
  cmykColor: () => CmykColor,
): DecodeStats {
  let decodedWidth = 0,
    decodedHeight = 0;
  const wasmBytes = decodeJpeg(
    bytes,
    eighths,
    module,
    (w, h) => {
      if (w !== Math.ceil((width * eighths) / 8) || h !== Math.ceil((height * eighths) / 8)) {
        throw invalidImage("JPEG", `has a frame of another size than its header says (${width}x${height})`);
      }
      decodedWidth = w;
      decodedHeight = h;
      return open(w, h);
    },
    cmykColor,
  );
  return { wasmBytes, decodedWidth, decodedHeight };
}

/**
 * Decodes `bytes` at the DCT scale `eighths`/8 (jpegDctEighths) and streams its RGB rows into the
 * resampler the factory builds for the decoded size. Decoded pixels map to the original at
 * exactly n/8 (what the IDCT does), not decodedWidth / width, which drifts toward the far edges.
 * `cmyk`: the converter for a 4-component (CMYK/YCCK) frame, built once by the caller from the
 * file's marker walk (cmykColorOf); undefined for a grey or YCbCr/RGB frame.
 */
export function decodeJpegRows(
  bytes: Uint8Array,
  width: number,
  height: number,
  eighths: number,
  module: WebAssembly.Module,
  makeResampler: ResamplerFactory,
  cmyk: CmykColor | undefined,
): { stats: DecodeStats; resampler: ReturnType<ResamplerFactory> } {
  let resampler: ReturnType<ResamplerFactory> | undefined;
  const stats = decodeCheckedFrame(
    bytes,
    width,
    height,
    eighths,
    module,
    (w, h) => {
      const r = makeResampler(w, h, eighths / 8);
      resampler = r;
      return Object.assign((row: number, rgb: Uint8Array, at: number) => r.pushRow(row, rgb, at), {
        wants: (row: number) => r.wantsRow(row),
      });
    },
    () => {
      // The frame header the walk read and the one libjpeg read are the same (the structure walk refuses a second).
      if (!cmyk) throw new Error("libjpeg-turbo found a CMYK/YCCK frame where the header walk read fewer components");
      return cmyk;
    },
  );
  return { stats, resampler: resampler! };
}

/**
 * Entropy-decodes every coefficient of `bytes` to EOI (no inverse DCT) and checks its frame against
 * the header's size, delivering no row: how a JPEG embedded unchanged is verified.
 * @throws AppError 400 `invalid_image` when libjpeg-turbo cannot decode it.
 */
export function decodeJpegWithoutRows(
  bytes: Uint8Array,
  width: number,
  height: number,
  module: WebAssembly.Module,
): DecodeStats {
  return decodeCheckedFrame(
    bytes,
    width,
    height,
    1,
    module,
    () => undefined,
    () => {
      throw new Error("a decode without rows converts no colour");
    },
  );
}
