/**
 * PNG: one chunk walk (order, sizes, CRCs) per fit, then rows inflated and unfiltered one at a
 * time into the resampler. Interlaced (Adam7) files are decoded whole by photon, hence their lower
 * pixel cap.
 */
import type { Codec, CodecImage, VisionWasm } from "../codec";
import { PHOTON_MAX_PIXELS, decodeWithPhoton } from "../photon/photon.decode";
import { decodePngRows, parseChunks, pngIccProfile, type PngInfo } from "./png.decode";
import { verifyPngData } from "./png.verify";

/** What both PNG codecs share: the checked chunks, their verification and the iCCP profile. */
function pngImage(info: PngInfo, decodeRows: CodecImage["decodeRows"]): CodecImage {
  return {
    // A file that lost a damaged ancillary chunk is decoded without it, never sent on with the damage.
    passThrough: info.droppedChunks.length === 0,
    verify: () => verifyPngData(info),
    colorProfile: () => pngIccProfile(info),
    decodeRows,
  };
}

export const pngCodec: Codec = {
  label: "PNG",
  open({ bytes }, wasm: VisionWasm) {
    const info = parseChunks(bytes);
    return pngImage(info, async (_minScale, makeResampler) => ({ resampler: await decodePngRows(info, makeResampler, wasm.simd), wasmBytes: 0 }));
  },
};

export const interlacedPngCodec: Codec = {
  label: "interlaced PNG",
  maxPixels: PHOTON_MAX_PIXELS,
  open({ bytes }, wasm: VisionWasm) {
    // photon decodes the file itself; the walk holds it to the same rules as the streaming path.
    const info = parseChunks(bytes);
    return pngImage(info, async (_minScale, makeResampler) => {
      const decoded = decodeWithPhoton(bytes, "PNG", wasm.photon, makeResampler);
      return { resampler: decoded.resampler, wasmBytes: decoded.stats.wasmBytes };
    });
  },
};
