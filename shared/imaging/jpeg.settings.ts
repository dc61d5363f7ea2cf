/**
 * What a fit may be handed besides its image and codecs: another JPEG encoder to search with in
 * place of ours (jpeg.baseline.ts). Production fits take none, so no other encoder is bundled with
 * the service; the bench's MozJPEG comparison brings its own (bench/mozjpeg.encode.ts).
 */

/** A JPEG encoder a fit can search with: RGBA in, a JPEG file out. */
export interface JpegEncoder {
  /** Encodes RGBA pixels; returns a copy owned by the JS heap. */
  encode(rgba: Uint8Array, width: number, height: number, quality: number): Uint8Array;
  /** The encoder's WASM memory now (bytes), for the fit's `wasmPeakBytes`. */
  wasmBytes(): number;
}

export interface FitSettings {
  /**
   * Makes the encoder one fit searches with (its instance is dropped with the fit, so its memory
   * high-water mark does not outlive the image); absent: our baseline encoder.
   */
  jpegEncoder?: () => Promise<JpegEncoder>;
}

export const DEFAULT_FIT_SETTINGS: FitSettings = {};
