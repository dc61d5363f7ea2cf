/**
 * CMYK (and YCCK, which the JPEG decoder turns into CMYK) to RGB for print-ready JPEGs: through the
 * file's own CMYK profile when it embeds one we can read (icc.ts), else with the inks treated as
 * ideal subtractive filters, the naive model browsers fall back to (right hues, not press-accurate).
 */
import { cmykProfileToSrgb, type CmykTransform } from "./icc";

/** The converter for a file's embedded profile (or none): profile tables first, ideal inks otherwise. */
export function cmykConverter(profile: Uint8Array | undefined): CmykTransform {
  return cmykProfileToSrgb(profile) ?? cmykToRgb;
}

/**
 * Converts `pixels` CMYK pixels at `src[from..]` into RGB at `dst[to..]`. `inverted`: the file has
 * Adobe's APP14 marker, whose CMYK is stored inverted (255 = no ink), as Photoshop writes it.
 */
function cmykToRgb(src: Uint8Array, from: number, dst: Uint8Array, to: number, pixels: number, inverted: boolean): void {
  for (let p = 0, i = from, o = to; p < pixels; p++, i += 4, o += 3) {
    // Remaining light per ink: 255 - ink (plain) or the stored value itself (inverted).
    let c = src[i]!, m = src[i + 1]!, y = src[i + 2]!, k = src[i + 3]!;
    if (!inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
    dst[o] = (c * k + 127) / 255 | 0;
    dst[o + 1] = (m * k + 127) / 255 | 0;
    dst[o + 2] = (y * k + 127) / 255 | 0;
  }
}
