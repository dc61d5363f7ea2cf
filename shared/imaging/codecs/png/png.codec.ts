/**
 * PNG: one chunk walk (order, sizes, CRCs) per fit, then rows inflated and unfiltered one at a
 * time into the resampler; an interlaced (Adam7) file holds its even rows until the last pass
 * brings the odd ones (png.adam7.ts), so both share the pixel cap of every streamed format.
 */
import type { Codec } from "../codec";
import { decodeAdam7Rows } from "./png.adam7";
import { decodePngRows, parseChunks, pngIccProfile } from "./png.decode";
import { verifyPngData } from "./png.verify";

export const pngCodec: Codec = {
  lossless: true,
  open({ bytes }, wasm) {
    const info = parseChunks(bytes);
    return {
      // A file that lost a damaged ancillary chunk is decoded without it, never sent on with the damage.
      passThrough: info.droppedChunks.length === 0,
      verify: async () => verifyPngData(info, wasm.zlib),
      colorProfile: async () => pngIccProfile(info, wasm.zlib),
      decodeRows: async (_minScale, makeResampler) =>
        info.interlaced ? decodeAdam7Rows(info, makeResampler, wasm.zlib) : decodePngRows(info, makeResampler, wasm),
    };
  },
};
