/**
 * WebP: the RIFF size, every chunk size and the frame headers (every animation frame against the
 * VP8X canvas) are checked by the header sniff; libwebp decodes the first frame scaled while
 * decoding, under the same pixel cap as every other format. An animation is never passed through.
 */
import { webpChunks } from "../../../media/image-header";
import type { Codec } from "../codec";
import { decodeWebpRows, verifyWebp } from "./webp.decode";

/** The ICCP chunk of an extended (VP8X) WebP, from the same chunk walk as its header; undefined when absent. */
export function webpIccProfile(bytes: Uint8Array): Uint8Array | undefined {
  for (const chunk of webpChunks(bytes)) {
    if (chunk.fourcc === "ICCP") return chunk.data;
    if (chunk.fourcc !== "VP8X") return undefined; // ICCP must directly follow VP8X
  }
  return undefined;
}

export const webpCodec: Codec = {
  lossless: false,
  open({ bytes, header }, wasm) {
    return {
      passThrough: !header.animated,
      // The sniff checked the RIFF size, every chunk size and the frame headers against the canvas;
      // libwebp then reads all of the frame's data, scaled to an eighth.
      verify: async () => verifyWebp(bytes, header.width, header.height, wasm.webpDecoder),
      colorProfile: async () => webpIccProfile(bytes),
      decodeRows: async (minScale, makeResampler, detail) => {
        const decoded = decodeWebpRows(
          bytes,
          header.width,
          header.height,
          minScale,
          wasm.webpDecoder,
          makeResampler,
          detail === "full",
        );
        return { resampler: decoded.resampler, wasmBytes: decoded.stats.wasmBytes };
      },
    };
  },
};
