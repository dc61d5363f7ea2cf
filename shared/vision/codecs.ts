/**
 * What image fitting shares with the WASM codecs it runs (the modules themselves are the
 * `VisionWasm` port, shared/ports.ts): the resampler factory a decoder feeds, decode statistics,
 * and how a third-party decoder's failure is told apart from our own.
 */
import { AppError } from "../http/errors";
import type { StreamingResampler } from "./resample";

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
