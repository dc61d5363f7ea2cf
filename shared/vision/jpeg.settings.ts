/**
 * Which JPEG encoder a fit uses. Kept apart from jpeg.encode.ts so that choosing the default never
 * pulls MozJPEG's glue into a bundle: only a fit that asks for "mozjpeg" loads it.
 */

/** Encoder knobs (a subset of MozJPEG's); the defaults below were chosen by bench/vision.bench.ts. */
export interface JpegEncodeSettings {
  /**
   * "baseline" (default): our encoder in jpeg.baseline.ts, DCT once per image, Annex K tables.
   * "mozjpeg": jpeg.encode.ts's MozJPEG (trellis always on), kept for comparison in the bench; it
   * needs `VisionWasm.jpegEncoder`.
   */
  encoder?: "baseline" | "mozjpeg";
  progressive: boolean;
  /** MozJPEG trellis extras (multipass, EOB and table optimisation); its basic trellis is always on in this build. */
  trellis: boolean;
}

export const DEFAULT_JPEG_SETTINGS: JpegEncodeSettings = { encoder: "baseline", progressive: false, trellis: false };
