/**
 * GIF: every frame walked against the logical screen by the header sniff; the first frame decoded
 * (by photon, whole, hence the lower pixel cap). An animation is never passed through.
 */
import { walkGifFrames } from "../../../media/image-header";
import type { Codec } from "../codec";
import { PHOTON_MAX_PIXELS, decodeWithPhoton } from "../photon/photon.decode";
import { verifyGifFrame } from "./gif.lzw";

export const gifCodec: Codec = {
  label: "GIF",
  maxPixels: PHOTON_MAX_PIXELS,
  open({ bytes, header }, wasm) {
    return {
      passThrough: !header.animated,
      verify: async () => walkGifFrames(bytes, header.width, header.height).forEach((frame, i) => verifyGifFrame(bytes, frame, i + 1)),
      colorProfile: async () => undefined, // GIF has none
      decodeRows: async (_minScale, makeResampler) => {
        const decoded = decodeWithPhoton(bytes, "GIF", wasm.photon, makeResampler);
        return { resampler: decoded.resampler, wasmBytes: decoded.stats.wasmBytes };
      },
    };
  },
};
