/**
 * PNG: one chunk walk (order, sizes, CRCs) per fit, then rows inflated and unfiltered one at a
 * time into the resampler; an interlaced (Adam7) file holds its even rows until the last pass
 * brings the odd ones (png.adam7.ts), so both share the pixel cap of every streamed format.
 */
import type { Codec } from "../codec";
import { decodeAdam7Rows } from "./png.adam7";
import { decodePngRows, type PngInfo, parseChunks, pngIccProfile } from "./png.decode";
import { verifyPngData } from "./png.verify";

/**
 * CodecImage.deflatedBytes of a PNG: its IDAT bytes where its samples are as our PNG encoder
 * writes them (8 bits, no alpha, no transparency, not interlaced) and its zlib header's FLEVEL
 * (the top two bits of the stream's second byte) is not 0, "fastest": zlib and the encoders
 * built on it write 0 for levels 0 and 1, whose output was up to 1.7x ours on the same pixels
 * (docs/vision-decisions.md, "The PNG the source's bytes rule out").
 */
function deflatedBytes(info: PngInfo): number | undefined {
  const first = info.idat[0]!;
  const alpha = info.colorType === 4 || info.colorType === 6;
  if (info.bitDepth !== 8 || alpha || info.transparency || info.interlaced || first.length < 2 || first[1]! >> 6 === 0)
    return undefined;
  return info.idat.reduce((sum, data) => sum + data.length, 0);
}

export const pngCodec: Codec = {
  lossless: true,
  open({ bytes }, wasm) {
    const info = parseChunks(bytes);
    return {
      // A file that lost a damaged ancillary chunk is decoded without it, never sent on with the damage.
      passThrough: info.droppedChunks.length === 0,
      deflatedBytes: deflatedBytes(info),
      verify: async () => verifyPngData(info, wasm.zlib),
      colorProfile: async () => pngIccProfile(info, wasm.zlib),
      decodeRows: async (_minScale, makeResampler, _detail, simd) =>
        info.interlaced
          ? decodeAdam7Rows(info, makeResampler, wasm.zlib)
          : decodePngRows(info, makeResampler, wasm, simd),
    };
  },
};
