/**
 * The port between image fitting and the WASM codecs it runs. Loading a `.wasm` file is the one
 * runtime-specific step (workerd imports it as a compiled module, Node and Deno read bytes), so each
 * runtime entry compiles the modules once and hands them in; fitting instantiates them fresh per
 * request, which is what lets an isolate's WASM memory be collected after every image.
 */
import { AppError } from "../../http/errors";
import type { StreamingResampler } from "../resample";

export interface VisionWasm {
  /** libjpeg-turbo's TurboJPEG decoder, a WASI build (`@cwasm/jpeg-turbo/jpeg-turbo.wasm`): DCT-domain scaling. */
  jpegDecoder: WebAssembly.Module;
  /**
   * MozJPEG encoder, an emscripten build (`@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm`). Optional:
   * only `settings.encoder = "mozjpeg"` (the bench's comparison, test fixtures) uses it; production
   * fits use our own encoder (jpeg.baseline.ts), so runtime entries leave it out of their bundle.
   */
  jpegEncoder?: WebAssembly.Module;
  /** photon (`@cf-wasm/photon/photon.wasm`): GIF, WebP and interlaced PNG, which have no streaming path. */
  photon: WebAssembly.Module;
  /**
   * Our own 128-bit SIMD kernels (`shared/vision/wasm/vision.simd.wasm`, built from the .wat beside
   * it): PNG unfiltering and alpha flattening, the resampler's Lanczos passes, and the encoder's
   * colour conversion, DCT, quantise-and-count and scan write. Optional: without it fitting runs the
   * same arithmetic in JS, with byte-identical results, only slower.
   */
  simd?: WebAssembly.Module;
}

/**
 * Builds the resampler once the decoder knows the size it will actually deliver. `scale`: decoded
 * pixels per original pixel when the decoder knows it exactly (a JPEG's n/8), else the ratio of sizes.
 */
export type ResamplerFactory = (decodedWidth: number, decodedHeight: number, scale?: number) => StreamingResampler;

/** What a decode reports for memory accounting (WASM memory never shrinks, so its final size is its peak). */
export interface DecodeStats {
  wasmBytes: number;
  decodedWidth: number;
  decodedHeight: number;
}

/**
 * A third-party decoder (photon, TurboJPEG) failed while it read the caller's bytes: a trap, a panic
 * or an abort inside it. Only `decodeCallerBytes` raises it, so a trap anywhere else (our SIMD
 * kernels, the resampler, the encoder, a decode of our own output) is never taken for a broken
 * image: the service answers this with 400 `invalid_image` (413 when memory ran out) and anything
 * untagged as our own failure.
 */
export class DecoderFailure extends Error {
  /** The engine reported memory exhaustion (a RangeError about memory) rather than a trap or a refusal. */
  readonly exhausted: boolean;

  /** `format` and `what` complete "The <format> image <what>." in the message sent to the caller. */
  constructor(readonly decoder: "photon" | "TurboJPEG", readonly format: string, readonly what: string, cause: unknown) {
    super(`${decoder} failed on the caller's ${format} data`, { cause });
    this.name = "DecoderFailure";
    this.exhausted = isOutOfMemory(cause);
  }
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
 * const image = decodeCallerBytes("photon", "GIF", "could not be decoded: its data is corrupt", () => photon.decode(ptr, len));
 */
export function decodeCallerBytes<T>(decoder: DecoderFailure["decoder"], format: string, what: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new DecoderFailure(decoder, format, what, error);
  }
}
