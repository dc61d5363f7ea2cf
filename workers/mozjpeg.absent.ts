/**
 * Stands in for @jsquash/jpeg's MozJPEG glue in deployed Worker bundles (wrangler.toml `alias`):
 * production fits use our own JPEG encoder and never load it (workers/vision-codecs.ts leaves the
 * `jpegEncoder` module out), so its 38 KB of emscripten glue is not shipped.
 */
export default function mozjpegAbsent(): Promise<never> {
  return Promise.reject(new Error("MozJPEG is not part of the deployed Worker; fits use the built-in JPEG encoder."));
}
