/**
 * Our fit's algorithm on sharp (native libvips in Node): resize straight to the long-edge cap
 * (Lanczos3), search the quality with our searchQuality, shrink by the square root of the
 * overshoot. The comparison the vision benches time and measure ours against.
 */
import sharp from "sharp";
import { QUALITY_MIN, searchQuality } from "../shared/vision/fit";

const MAX_EDGE = 1568;

/**
 * The same algorithm on sharp: resize straight to the cap, search quality, shrink by sqrt of the
 * overshoot. With `pngStep`, a PNG source also gets our fit's PNG attempt (fit.ts `withLossless`):
 * a PNG of the cap-size render (libpng's adaptive filters, zlib level 6, as ours) goes out when it
 * fits and is no larger than the JPEG, or when the JPEG had to shrink. sharp writes the whole PNG
 * before its size is known; ours stops at the limit.
 */
export async function withSharp(input: Buffer, budget: number, pngStep = false) {
  const maxBytes = Math.floor((budget - "data:image/jpeg;base64,".length) / 4) * 3;
  const pngRoom = Math.floor((budget - "data:image/png;base64,".length) / 4) * 3;
  const meta = await sharp(input).metadata();
  let scale = Math.min(1, MAX_EDGE / Math.max(meta.width!, meta.height!));
  const counter = { attempts: 0 };
  let guess = 80;
  let cap: { pixels: Buffer; width: number; height: number } | undefined;
  for (;;) {
    const w = Math.max(1, Math.round(meta.width! * scale)),
      h = Math.max(1, Math.round(meta.height! * scale));
    const pixels = await sharp(input)
      .flatten({ background: "#ffffff" })
      .resize(w, h, { fit: "fill", kernel: "lanczos3" })
      .raw()
      .toBuffer();
    cap ??= { pixels, width: w, height: h };
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
    if (outcome?.data) {
      const jpeg = { data: outcome.data, width: w, height: h, attempts: counter.attempts };
      if (!pngStep || meta.format !== "png") return jpeg;
      // From the cap-size render already in memory, as ours: no second decode.
      const { pixels: capPixels, width: cw, height: ch } = cap!;
      const png = new Uint8Array(
        await sharp(capPixels, { raw: { width: cw, height: ch, channels: 3 } })
          .png({ compressionLevel: 6, adaptiveFiltering: true })
          .toBuffer(),
      );
      const shrunk = w !== cw || h !== ch;
      return png.length <= (shrunk ? pngRoom : Math.min(pngRoom, jpeg.data.length))
        ? { data: png, width: cw, height: ch, attempts: counter.attempts + 1 }
        : jpeg;
    }
    scale *= Math.sqrt(maxBytes / outcome!.sizeAtMin!) * 0.97;
    guess = QUALITY_MIN + 5;
  }
}
