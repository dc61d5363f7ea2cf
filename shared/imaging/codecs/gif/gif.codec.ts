/**
 * GIF: every frame walked against the logical screen by the header sniff; the first frame decoded
 * row by row in JS (gif.decode.ts), within the same memory as a PNG, so no cap of its own. An
 * animation is never passed through.
 */
import { walkGifFrames } from "../../../media/image-header";
import type { Codec } from "../codec";
import { decodeGifRows } from "./gif.decode";
import { decodeGifFrame } from "./gif.lzw";

export const gifCodec: Codec = {
  lossless: true,
  open({ bytes, header }) {
    return {
      passThrough: !header.animated,
      verify: async () => {
        for (const [i, frame] of walkGifFrames(bytes, header.width, header.height).entries())
          decodeGifFrame(bytes, frame, i + 1);
      },
      colorProfile: async () => undefined, // GIF has none
      decodeRows: async (_minScale, makeResampler) => ({
        resampler: decodeGifRows(bytes, header, makeResampler),
        wasmBytes: 0,
      }),
    };
  },
};
