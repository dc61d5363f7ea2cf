/**
 * JPEG: the marker walk to EOI first (truncation, scan bombs, sampling factors), then libjpeg-turbo,
 * scaled by n/8 in the DCT domain while decoding. A CMYK/YCCK file is converted and an
 * arithmetic-coded one re-encoded, never passed through: vision providers expect RGB (or grey)
 * Huffman-coded JPEGs.
 */
import { JpegMarkerWalk } from "../../../media/image-header";
import type { Codec } from "../codec";
import { cmykColorOf, decodeJpegRows, decodeJpegWithoutRows, jpegDctEighths, type CmykColor } from "./jpeg.decode";

export const jpegCodec: Codec = {
  lossless: false,
  open({ bytes, header, jpeg }, wasm) {
    // Resumed from the header's walk when the sniff kept it: each file is walked once.
    const structure = (jpeg ?? new JpegMarkerWalk(bytes)).toEnd();
    const printColours = header.components === 4;
    // A CMYK/YCCK converter (its profile's table or the press model) is built once for every size tried.
    let cmyk: CmykColor | undefined;
    return {
      // Arithmetic coding is decoded here but not by every provider: such a file is re-encoded.
      passThrough: !printColours && !structure.arithmetic,
      // Every coefficient entropy-decoded to EOI, no inverse DCT.
      verify: async () => void decodeJpegWithoutRows(bytes, header.width, header.height, wasm.jpegDecoder),
      colorProfile: async () => structure.icc,
      decodeRows: async (minScale, makeResampler, detail = "margin") => {
        if (printColours) cmyk ??= cmykColorOf(structure);
        const decoded = decodeJpegRows(
          bytes,
          header.width,
          header.height,
          detail === "full" ? 8 : jpegDctEighths(minScale, detail === "coarse" ? 1 : undefined),
          wasm.jpegDecoder,
          makeResampler,
          cmyk,
        );
        return { resampler: decoded.resampler, wasmBytes: decoded.stats.wasmBytes };
      },
    };
  },
};
