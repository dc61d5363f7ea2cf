/**
 * What image fitting shares with the WASM codecs it runs (the modules themselves are the
 * `VisionWasm` port, shared/ports.ts): the resampler factory a decoder feeds, decode statistics,
 * and how a third-party decoder's failure is told apart from our own.
 */
import { AppError } from "../../http/errors";
import type { ImageHeader, JpegMarkerWalk } from "../../media/image-header";
import type { VisionWasm } from "../../ports";
import type { StreamingResampler } from "../resample";
import type { SimdPool } from "../wasm/simd.instances";

/**
 * Builds the resampler once the decoder knows the size it will actually deliver. `scale`: decoded
 * pixels per original pixel when the decoder knows it exactly (a JPEG's n/8), else the ratio of sizes.
 */
export type ResamplerFactory = (decodedWidth: number, decodedHeight: number, scale?: number) => StreamingResampler;

/** The bytes of an image and what the header sniff read from them (a JPEG's walk, to resume). */
export interface ImageSource {
  bytes: Uint8Array;
  header: ImageHeader;
  /** The JPEG marker walk stopped at the frame header: the structure check resumes it to EOI. */
  jpeg?: JpegMarkerWalk;
}

/**
 * One image format's decoding side, chosen once from the header (codecs/codec.registry.ts#codecFor): its
 * structure check, the verification before a pass-through, its rows and its colour profile. The fit
 * knows no format beyond this.
 */
export interface Codec {
  /**
   * A lossless format (PNG, GIF: screenshots, diagrams): the fit may send the fitted image as a PNG
   * instead of a JPEG (fit.ts, docs/vision.md).
   */
  readonly lossless: boolean;
  /**
   * Walks the structure every later step relies on, once per fit, before any pixel is decoded.
   * @throws AppError 400 `invalid_image` (or 413/415) naming what the structure breaks.
   */
  open(source: ImageSource, wasm: VisionWasm): CodecImage;
}

/** An image whose structure its codec has checked: what the fit asks of it. */
export interface CodecImage {
  /**
   * False when these bytes must never be embedded unchanged, whatever their size: a CMYK JPEG
   * (providers expect RGB), an animation, a PNG that lost a damaged ancillary chunk.
   */
  readonly passThrough: boolean;
  /**
   * A PNG of 8-bit grey, RGB or palette samples, not interlaced, without transparency, whose zlib
   * header says it was deflated at zlib's level 2 or above: the bytes of its image data (IDAT). A
   * PNG of its pixels at its size comes out about this large or larger (fit.ts `pngOverBySource`).
   * Undefined for every other image.
   */
  readonly deflatedBytes?: number;
  /** Verifies all of the image's data before it is embedded unchanged. @throws AppError 400 `invalid_image`. */
  verify(): Promise<void>;
  /** The embedded ICC profile, undefined when there is none (or it is unreadable). */
  colorProfile(): Promise<Uint8Array | undefined>;
  /**
   * Decodes the image and streams its RGB rows (transparency flattened on white, CMYK converted)
   * into the resampler the factory builds for the decoded size. `minScale`: the output's pixels
   * per original pixel, for a decoder that can scale while decoding (a JPEG's n/8). `detail`: how
   * much of the source the output can keep (DecodeDetail), which sets how far such a decoder
   * shrinks before the resampler takes over. `simd`: the fit's pool, for a decoder that runs our
   * SIMD kernels (the PNG decoder's lines).
   */
  decodeRows(
    minScale: number,
    makeResampler: ResamplerFactory,
    detail?: DecodeDetail,
    simd?: SimdPool,
  ): Promise<DecodedRows>;
}

/**
 * How much of the source's detail the fitted output can keep, from the budget's bytes per pixel of
 * the output size rendered (fit.ts `decodeDetail`), and so how a decoder that scales while decoding (a
 * JPEG's n/8 inverse DCT, libwebp's area average) uses that scaling:
 * - "full": the output will be near-lossless, so no detail-losing shrink at all: a JPEG's n/8
 *   inverse DCT rings on text edges (19 dB on a JPEG screenshot, docs/benchmarks.md "The
 *   DCT-scaled decode at generous budgets");
 * - "margin": the decoder stops a margin above the target and the resampler does the real shrink;
 * - "coarse": the output's quantiser drops what that margin would keep, so a JPEG is decoded at the
 *   smallest n/8 scale not under the target (docs/vision-decisions.md, "The DCT-scaled decode at low
 *   budgets"). libwebp's rescaler keeps its margin: an area average is no ideal low-pass.
 */
export type DecodeDetail = "full" | "margin" | "coarse";

/** The resampler holding a decode's output, and the WASM memory the decoder reached. */
export interface DecodedRows {
  resampler: StreamingResampler;
  /** Bytes of the decoder's WASM memory at its end (its peak; 0 when it ran in JS). */
  wasmBytes: number;
}

/** What a decode reports for memory accounting (WASM memory never shrinks, so its final size is its peak). */
export interface DecodeStats {
  wasmBytes: number;
  decodedWidth: number;
  decodedHeight: number;
}

/**
 * A third-party decoder (libjpeg-turbo, libwebp) failed while it read the caller's bytes: a trap, a panic
 * or an abort inside it. Only `decodeCallerBytes` raises it, so a trap anywhere else (our SIMD
 * kernels, the resampler, the encoder, a decode of our own output) is never taken for a broken
 * image: the service answers this with 400 `invalid_image` (413 when memory ran out) and anything
 * untagged as our own failure.
 */
export class DecoderFailure extends Error {
  /** The engine reported memory exhaustion (a RangeError about memory) rather than a trap or a refusal. */
  readonly exhausted: boolean;

  /** `format` and `what` complete "The <format> image <what>." in the message sent to the caller. */
  constructor(
    readonly decoder: "libjpeg-turbo" | "libwebp",
    readonly format: string,
    readonly what: string,
    cause: unknown,
  ) {
    super(`${decoder} failed on the caller's ${format} data`, { cause });
    this.name = "DecoderFailure";
    this.exhausted = isOutOfMemory(cause);
  }
}

/**
 * A decoder's own allocation (the JS side's `malloc` of its instance) that failed: the image needs
 * more WASM memory than the module may grow to. `size`: the image's, when known.
 */
export function decoderOutOfMemory(format: string, size?: { width: number; height: number }): AppError {
  const image = size ? `${size.width}x${size.height} ${format}` : format;
  return new AppError(
    413,
    "image_too_large",
    `The ${image} needs more memory to decode than this service allows. Send a smaller image.`,
  );
}

/** Whether `error` is the engine running out of memory (a RangeError about memory: a failed allocation or memory.grow). */
export function isOutOfMemory(error: unknown): boolean {
  return error instanceof RangeError && /memory/i.test(error.message);
}

/**
 * Runs one call into a third-party decoder on the caller's bytes and tags whatever it throws.
 * Wrap only the decoder's own calls: rows handed to our resampler run outside, so a fault of ours
 * stays ours. An AppError (a refusal we raised from an import) passes unchanged.
 * @example
 * const status = decodeCallerBytes("libwebp", "WEBP", "could not be decoded: its data is corrupt", () => wd.wd_info(src, len, info));
 */
export function decodeCallerBytes<T>(
  decoder: DecoderFailure["decoder"],
  format: string,
  what: string,
  run: () => T,
): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new DecoderFailure(decoder, format, what, error);
  }
}

/**
 * One row of 8-bit RGBA at `src[at..]` flattened on white into `out` as RGB:
 * round((c·a + 255·(255 − a)) / 255) in integers, exact for every c and a.
 */
export function flattenRgbaRow(src: Uint8Array, at: number, width: number, out: Uint8Array): void {
  for (let p = at, o = 0, end = at + width * 4; p < end; p += 4, o += 3) {
    const a = src[p + 3]!;
    if (a === 255) {
      out[o] = src[p]!;
      out[o + 1] = src[p + 1]!;
      out[o + 2] = src[p + 2]!;
    } else {
      const keep = (255 - a) * 255 + 128;
      const r = src[p]! * a + keep,
        g = src[p + 1]! * a + keep,
        b = src[p + 2]! * a + keep;
      out[o] = (r + (r >> 8)) >> 8;
      out[o + 1] = (g + (g >> 8)) >> 8;
      out[o + 2] = (b + (b >> 8)) >> 8;
    }
  }
}
