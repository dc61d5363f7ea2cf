/**
 * Our fit's algorithm on sharp (native libvips in Node): resize straight to the long-edge cap
 * (Lanczos3), search the quality with our searchQuality, shrink by the square root of the
 * overshoot. The comparison the vision benches time and measure ours against.
 */
import sharp from "sharp";
import { QUALITY_MIN, searchQuality } from "../shared/vision/fit";

const MAX_EDGE = 1568;

/** The same algorithm on sharp: resize straight to the cap, search quality, shrink by sqrt of the overshoot. */
export async function withSharp(input: Buffer, budget: number) {
  const maxBytes = Math.floor((budget - "data:image/jpeg;base64,".length) / 4) * 3;
  const meta = await sharp(input).metadata();
  let scale = Math.min(1, MAX_EDGE / Math.max(meta.width!, meta.height!));
  const counter = { attempts: 0 };
  let guess = 80;
  for (;;) {
    const w = Math.max(1, Math.round(meta.width! * scale)),
      h = Math.max(1, Math.round(meta.height! * scale));
    const pixels = await sharp(input)
      .flatten({ background: "#ffffff" })
      .resize(w, h, { fit: "fill", kernel: "lanczos3" })
      .raw()
      .toBuffer();
    // Encodes are synchronous in the search; sharp is async, so pre-encode lazily through a cache.
    const cache = new Map<number, Uint8Array>();
    const encodeAsync = async (q: number) =>
      new Uint8Array(
        await sharp(pixels, { raw: { width: w, height: h, channels: 3 } })
          .jpeg({ quality: q, chromaSubsampling: "4:2:0" })
          .toBuffer(),
      );
    let outcome;
    for (;;) {
      let missing: number | undefined;
      try {
        outcome = searchQuality(
          (q) => {
            const hit = cache.get(q);
            if (!hit) {
              missing = q;
              throw new Error("miss");
            }
            return hit;
          },
          maxBytes,
          guess,
          { attempts: 0 },
        );
      } catch (error) {
        if (missing === undefined) throw error;
      }
      if (missing === undefined) break;
      outcome = undefined;
      cache.set(missing, await encodeAsync(missing));
      counter.attempts++;
    }
    if (outcome?.data) return { data: outcome.data, width: w, height: h, attempts: counter.attempts };
    scale *= Math.sqrt(maxBytes / outcome!.sizeAtMin!) * 0.97;
    guess = QUALITY_MIN + 5;
  }
}
