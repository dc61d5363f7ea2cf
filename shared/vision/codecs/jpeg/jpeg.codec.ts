/**
 * JPEG: the marker walk to EOI first (truncation, scan bombs, sampling factors), then TurboJPEG,
 * scaled by n/8 in the DCT domain while decoding. A CMYK/YCCK file is converted, never passed
 * through: vision providers expect RGB (or grey) JPEGs.
 */
import { JpegMarkerWalk } from "../../../media/image-header";
import type { Codec } from "../codec";
import { cmykColorOf, decodeJpegRows, decodeJpegWithoutRows, type CmykColor } from "./jpeg.decode";

export const jpegCodec: Codec = {
  label: "JPEG",
  lossless: false,
  open({ bytes, header, jpeg }, wasm) {
    // Resumed from the header's walk when the sniff kept it: each file is walked once.
    const structure = (jpeg ?? new JpegMarkerWalk(bytes)).toEnd();
    const printColours = header.components === 4;
    // A CMYK/YCCK converter (its profile's table or the press model) is built once for every size tried.
    let cmyk: CmykColor | undefined;
    return {
      passThrough: !printColours,
      // Entropy-decoded at 1/8: every coefficient is read, little is transformed.
      verify: async () => void decodeJpegWithoutRows(bytes, header.width, header.height, wasm.jpegDecoder),
      colorProfile: async () => structure.icc,
      decodeRows: async (minScale, makeResampler) => {
        if (printColours) cmyk ??= cmykColorOf(structure);
        const decoded = decodeJpegRows(
          bytes,
          header.width,
          header.height,
          minScale,
          wasm.jpegDecoder,
          makeResampler,
          cmyk,
        );
        return { resampler: decoded.resampler, wasmBytes: decoded.stats.wasmBytes };
      },
    };
  },
};
