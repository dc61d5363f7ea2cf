/**
 * What 4:2:0's chroma costs an image: the encoder stores Cb and Cr as the mean of each 2x2 block of
 * pixels, so a pixel whose chroma differs from its block's mean (a coloured glyph's edge, a UI
 * border) is wrong by that difference before any quantisation. The fit weighs this against 4:4:4
 * where the budget takes 4:2:0 to quality 100 (fit.ts, docs/vision.md "Chroma sampling").
 */
import { CB_WEIGHT, CR_WEIGHT, toCb, toCr } from "./jpeg.baseline";

/** Row pairs between two sampled ones: a 1568x882 image is sampled on 28 row pairs, 88,000 pixels (about 1.5 ms). */
const SAMPLE_STRIDE = 16;

/**
 * Squared error (R, G and B summed over the pixels, the unit of PreparedJpeg.errorAt) that
 * averaging Cb and Cr over 2x2 blocks adds to `rgb`, estimated from every SAMPLE_STRIDE-th row pair
 * (all of them on a small image) and scaled to the whole image. A last odd row or column is left
 * out of the sample.
 */
export function subsamplingError(rgb: Uint8Array, width: number, height: number): number {
  const pairs = height >> 1;
  const stride = pairs >= 8 * SAMPLE_STRIDE ? SAMPLE_STRIDE : 1;
  const cb = new Float64Array(4),
    cr = new Float64Array(4);
  let error = 0,
    sampled = 0;
  for (let pair = 0; pair < pairs; pair += stride) {
    sampled++;
    for (let x = 0; x + 1 < width; x += 2) {
      for (let i = 0; i < 4; i++) {
        const at = ((2 * pair + (i >> 1)) * width + x + (i & 1)) * 3;
        const r = rgb[at]!,
          g = rgb[at + 1]!,
          b = rgb[at + 2]!;
        cb[i] = toCb(r, g, b);
        cr[i] = toCr(r, g, b);
      }
      const cbMean = (cb[0]! + cb[1]! + cb[2]! + cb[3]!) / 4,
        crMean = (cr[0]! + cr[1]! + cr[2]! + cr[3]!) / 4;
      for (let i = 0; i < 4; i++) {
        const dcb = cb[i]! - cbMean,
          dcr = cr[i]! - crMean;
        error += CB_WEIGHT * dcb * dcb + CR_WEIGHT * dcr * dcr;
      }
    }
  }
  return sampled === 0 ? 0 : (error * pairs) / sampled;
}
