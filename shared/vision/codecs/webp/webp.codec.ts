/**
 * WebP: the RIFF size, every chunk size and the frame headers (every animation frame against the
 * VP8X canvas) are checked by the header sniff; photon decodes the first frame whole, hence the
 * lower pixel cap. An animation is never passed through.
 */
import { webpChunks } from "../../../media/image-header";
import type { Codec } from "../codec";
import { PHOTON_MAX_PIXELS, decodeWithPhoton } from "../photon/photon.decode";

/** The ICCP chunk of an extended (VP8X) WebP, from the same chunk walk as its header; undefined when absent. */
export function webpIccProfile(bytes: Uint8Array): Uint8Array | undefined {
  for (const chunk of webpChunks(bytes)) {
    if (chunk.fourcc === "ICCP") return chunk.data;
    if (chunk.fourcc !== "VP8X") return undefined; // ICCP must directly follow VP8X
  }
  return undefined;
}

export const webpCodec: Codec = {
  label: "WEBP",
  lossless: false,
  maxPixels: PHOTON_MAX_PIXELS,
  open({ bytes, header }, wasm) {
    return {
      passThrough: !header.animated,
      // The sniff checked the RIFF size, every chunk size and the frame headers against the canvas.
      // Decoding the frame too (photon) would cost about half a re-encode (docs/benchmarks.md,
      // "Pass-through verification"), so the VP8/VP8L entropy data itself is not decoded here.
      verify: async () => undefined,
      colorProfile: async () => webpIccProfile(bytes),
      decodeRows: async (_minScale, makeResampler) => {
        const decoded = decodeWithPhoton(bytes, "WEBP", wasm.photon, makeResampler);
        return { resampler: decoded.resampler, wasmBytes: decoded.stats.wasmBytes };
      },
    };
  },
};
