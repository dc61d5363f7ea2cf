/**
 * JPEG decode through TurboJPEG in a WASM instance created for this one call. The decoder scales
 * in the DCT domain (n/8), so a 12 MP photo headed for 1568 px is decoded straight to 2016x1512
 * instead of 48 MB of full-size RGBA; the instance and its memory are garbage once this returns.
 */
import { AppError } from "../../../http/errors";
import { invalidImage, JpegMarkerWalk, type JpegColorInfo } from "../../../media/image-header";
import { DecoderFailure, decodeCallerBytes, type DecodeStats, type ResamplerFactory } from "../codec";
import { cmykConverter } from "../../color/cmyk";
import type { CmykTransform } from "../../color/icc";

const TJPF_RGB = 0;
const TJPF_CMYK = 11;
/** tjDecompressHeader3's colourspaces that need CMYK output (libjpeg refuses CMYK → RGB itself). */
const TJCS_CMYK = 3;
const TJCS_YCCK = 4;
/** tjDecompressHeader3's subsampling for sampling factors it has no name for. */
const TJSAMP_UNKNOWN = -1;
/** What the header's out-parameters hold until TurboJPEG writes them. */
const UNSET = -2;
/**
 * The DCT-scaled decode stops this factor above the target (libvips leaves its resampler 1.5–2x):
 * n/8 IDCT scaling alone aliases and blurs block by block, Lanczos then does the real shrink.
 */
const LANCZOS_MARGIN = 1.5;

class WasmAbort extends Error {}

interface TurboJpegExports {
  memory: WebAssembly.Memory;
  malloc(size: number): number;
  free(ptr: number): void;
  tjInitDecompress(): number;
  tjDestroy(handle: number): number;
  tjDecompressHeader3(
    handle: number,
    src: number,
    srcSize: number,
    width: number,
    height: number,
    subsamp: number,
    colorspace: number,
  ): number;
  tjDecompress2(
    handle: number,
    src: number,
    srcSize: number,
    dst: number,
    width: number,
    pitch: number,
    height: number,
    pixelFormat: number,
    flags: number,
  ): number;
}

function instantiate(module: WebAssembly.Module): TurboJpegExports {
  let memory: WebAssembly.Memory | undefined;
  // libjpeg reports fatal errors by longjmp; without a real setjmp we unwind by throwing, which
  // leaves this instance unusable: fine, it is never reused.
  const env = {
    setjmp: () => 0,
    longjmp: () => {
      throw new WasmAbort("libjpeg error");
    },
  };
  const wasi = {
    proc_exit: () => {
      throw new WasmAbort("libjpeg exit");
    },
    environ_sizes_get: () => 0,
    environ_get: () => 0,
    fd_close: () => 0,
    fd_seek: () => 0,
    // libjpeg prints warnings (e.g. a truncated scan) to stderr; swallow them but report them written.
    fd_write: (_fd: number, iovs: number, iovsLen: number, written: number) => {
      if (!memory) return 0;
      const view = new DataView(memory.buffer);
      let total = 0;
      for (let i = 0; i < iovsLen; i++) total += view.getUint32(iovs + i * 8 + 4, true);
      view.setUint32(written, total, true);
      return 0;
    },
  };
  const instance = new WebAssembly.Instance(module, { env, wasi_snapshot_preview1: wasi });
  const exports = instance.exports as unknown as TurboJpegExports;
  memory = exports.memory;
  return exports;
}

/**
 * The smallest n/8 scale (n = 1..8) that still delivers at least LANCZOS_MARGIN x `minScale` of the
 * original size, so the resampler keeps a real share of the shrink.
 */
export function jpegDctEighths(minScale: number): number {
  for (let n = 1; n < 8; n++) if (n / 8 >= minScale * LANCZOS_MARGIN - 1e-9) return n;
  return 8;
}

/** A decode TurboJPEG reported failed (a status): the data is corrupt or cut short. */
function corruptJpeg(): AppError {
  return invalidImage("JPEG", "could not be decoded: its data is corrupt or truncated before its end (EOI)");
}

/** A decode TurboJPEG gave up on by an exception or a trap: a variant it cannot read, or data that broke it. */
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

/** Decodes a whole JPEG at full size to RGB in the JS heap (our own small output, to measure its fidelity). */
export function decodeJpegRgb(
  bytes: Uint8Array,
  module: WebAssembly.Module,
): { rgb: Uint8Array; width: number; height: number } {
  let out: { rgb: Uint8Array; width: number; height: number } | undefined;
  try {
    // Decoded once: a CMYK file (a test's or a bench's, never our output) is walked for its colour only then.
    decodeJpeg(
      bytes,
      8,
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
    if (brokenData) throw new Error("TurboJPEG could not decode our own JPEG output", { cause: error });
    throw error;
  }
  return out!;
}

/** Where decoded RGB rows go; `wants` lets the sink skip rows it would not read. */
type RowSink = ((row: number, rgb: Uint8Array, at: number) => void) & { wants?: (row: number) => boolean };

/**
 * Decodes at n/8 and hands each RGB row (CMYK/YCCK converted) to the sink the callback builds for
 * the decoded size; the rows live in the instance's memory only during the call. A callback that
 * returns no sink gets the decode alone (every coefficient read) and no row is converted;
 * `cmykColor` is asked only when the frame is CMYK/YCCK and rows are wanted.
 */
function decodeJpeg(
  bytes: Uint8Array,
  eighths: number,
  module: WebAssembly.Module,
  open: (decodedWidth: number, decodedHeight: number) => RowSink | undefined,
  cmykColor: () => CmykColor,
): number {
  const tj = instantiate(module);
  const src = tj.malloc(bytes.length);
  const info = tj.malloc(16);
  if (src === 0 || info === 0)
    throw new AppError(
      413,
      "image_too_large",
      "The JPEG needs more memory to decode than this service allows. Send a smaller image.",
    );
  new Uint8Array(tj.memory.buffer, src, bytes.length).set(bytes);
  const handle = tj.tjInitDecompress();
  new Int32Array(tj.memory.buffer, info, 4).fill(UNSET);
  let status = decodeCallerBytes("TurboJPEG", "JPEG", JPEG_DECODER_FAILED, () =>
    tj.tjDecompressHeader3(handle, src, bytes.length, info, info + 4, info + 8, info + 12),
  );
  const header = new DataView(tj.memory.buffer, info, 16);
  const width = header.getInt32(0, true),
    height = header.getInt32(4, true),
    subsamp = header.getInt32(8, true),
    colorspace = header.getInt32(12, true);
  // TurboJPEG's header call fails for any sampling outside the few it names (4:4:4, 4:2:2, 4:2:0,
  // 4:4:0, 4:1:1, grey): 4:1:0, 1x1 luma with 2x1 chroma, 2x2 everywhere are all legal (T.81 allows
  // 1..4 per component) and libjpeg decodes them. It has read the whole frame header by then and
  // filled in the size and colourspace; only the subsampling name is unknown (-1).
  const unnamedSampling = status !== 0 && subsamp === TJSAMP_UNKNOWN && width > 0 && height > 0 && colorspace >= 0;
  if (status !== 0 && !unnamedSampling) throw corruptJpeg();
  const cmyk = colorspace === TJCS_CMYK || colorspace === TJCS_YCCK;
  // Exactly what TurboJPEG delivers at n/8 (TJSCALED): a partial last block still gives a pixel.
  const decodedWidth = Math.ceil((width * eighths) / 8);
  const decodedHeight = Math.ceil((height * eighths) / 8);
  const channels = cmyk ? 4 : 3;
  const pitch = decodedWidth * channels;
  const dst = tj.malloc(pitch * decodedHeight);
  if (dst === 0)
    throw new AppError(
      413,
      "image_too_large",
      `The ${width}x${height} JPEG needs more memory to decode than this service allows. Send a smaller image.`,
    );
  status = decodeCallerBytes("TurboJPEG", "JPEG", JPEG_DECODER_FAILED, () =>
    tj.tjDecompress2(
      handle,
      src,
      bytes.length,
      dst,
      decodedWidth,
      pitch,
      decodedHeight,
      cmyk ? TJPF_CMYK : TJPF_RGB,
      0,
    ),
  );
  if (status !== 0) throw corruptJpeg();
  const sink = open(decodedWidth, decodedHeight);
  if (!sink) return tj.memory.buffer.byteLength;
  // The view is taken after decoding: memory.grow during the decode detaches earlier views.
  const pixels = new Uint8Array(tj.memory.buffer);
  const converter = cmyk ? cmykColor() : undefined;
  const rgbRow = cmyk ? new Uint8Array(decodedWidth * 3) : undefined;
  for (let row = 0; row < decodedHeight; row++) {
    if (sink.wants && !sink.wants(row)) continue;
    if (rgbRow && converter) {
      converter.toRgb(pixels, dst + row * pitch, rgbRow, 0, decodedWidth, converter.adobe);
      sink(row, rgbRow, 0);
    } else {
      sink(row, pixels, dst + row * pitch);
    }
  }
  return tj.memory.buffer.byteLength;
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
 * Decodes `bytes` at the DCT scale jpegDctEighths picks for `minScale` and streams its RGB rows into
 * the resampler the factory builds for the decoded size. Decoded pixels map to the original at
 * exactly n/8 (what the IDCT does), not decodedWidth / width, which drifts toward the far edges.
 * `cmyk`: the converter for a 4-component (CMYK/YCCK) frame, built once by the caller from the
 * file's marker walk (cmykColorOf); undefined for a grey or YCbCr/RGB frame.
 */
export function decodeJpegRows(
  bytes: Uint8Array,
  width: number,
  height: number,
  minScale: number,
  module: WebAssembly.Module,
  makeResampler: ResamplerFactory,
  cmyk: CmykColor | undefined,
): { stats: DecodeStats; resampler: ReturnType<ResamplerFactory> } {
  const eighths = jpegDctEighths(minScale);
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
      // The frame header the walk read and the one TurboJPEG read are the same (the structure walk refuses a second).
      if (!cmyk) throw new Error("TurboJPEG found a CMYK/YCCK frame where the header walk read fewer components");
      return cmyk;
    },
  );
  return { stats, resampler: resampler! };
}

/**
 * Entropy-decodes all of `bytes` at 1/8 (every coefficient is read, little is transformed) and
 * checks its frame against the header's size, delivering no row: how a JPEG embedded unchanged is
 * verified. @throws AppError 400 `invalid_image` when TurboJPEG cannot decode it.
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
