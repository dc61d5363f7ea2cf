/**
 * Our fit's algorithm on sharp (native libvips in Node): resize straight to the long-edge cap
 * (Lanczos3), search the quality with our searchQuality, shrink by the square root of the
 * overshoot; where our fit went out 4:4:4, the same second search in 4:4:4; at budgets where ours
 * decodes without a DCT-domain shrink, no shrink-on-load. The comparison the vision benches time
 * and measure ours against.
 */
import sharp from "sharp";
import { FULL_DETAIL_BYTES_PER_PIXEL, QUALITY_MIN, searchQuality } from "../shared/imaging/fit";

const QUALITY_MAX = 100;

const MAX_EDGE = 1568;

/** What the sharp side does beyond the 4:2:0 search. */
export interface SharpSteps {
  /**
   * A PNG source also gets our fit's PNG attempt (fit.ts `withLossless`): a PNG of the cap-size
   * render (libpng's adaptive filters, zlib level 6, as ours) goes out when it fits and is no larger
   * than the JPEG, or when the JPEG had to shrink. sharp writes the whole PNG before its size is
   * known; ours stops at the limit.
   */
  png?: boolean;
  /**
   * The chroma our fit chose (FitResult.chroma): "4:4:4" makes a 4:2:0 search that reaches quality
   * 100 go on with a 4:4:4 search, whose result goes out (ours decides by estimated error; here
   * that decision is taken from ours, free).
   */
  chroma?: "4:2:0" | "4:4:4";
}

/** The same algorithm on sharp: resize straight to the cap, search quality, shrink by sqrt of the overshoot. */
export async function withSharp(input: Buffer, budget: number, steps: SharpSteps = {}) {
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
    // As ours (fit.ts FULL_DETAIL_BYTES_PER_PIXEL): at a generous budget no shrink-on-load.
    const fullDetail = maxBytes / (w * h) >= FULL_DETAIL_BYTES_PER_PIXEL;
    const pixels = await sharp(input)
      .flatten({ background: "#ffffff" })
      .resize(w, h, { fit: "fill", kernel: "lanczos3", fastShrinkOnLoad: !fullDetail })
      .raw()
      .toBuffer();
    cap ??= { pixels, width: w, height: h };
    let outcome = await search(pixels, w, h, maxBytes, guess, "4:2:0", counter);
    if (outcome.quality === QUALITY_MAX && steps.chroma === "4:4:4") {
      const full = await search(pixels, w, h, maxBytes, 95, "4:4:4", counter);
      if (full.data) outcome = full;
    }
    if (outcome?.data) {
      const jpeg = { data: outcome.data, width: w, height: h, attempts: counter.attempts };
      if (!steps.png || meta.format !== "png") return jpeg;
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

/**
 * searchQuality over sharp's encodes of `pixels` in `chroma`. The search's encodes are synchronous
 * and sharp's are async: the search is re-run, each time with one more quality encoded, until it
 * asks for none it lacks.
 */
async function search(
  pixels: Buffer,
  width: number,
  height: number,
  maxBytes: number,
  guess: number,
  chroma: "4:2:0" | "4:4:4",
  counter: { attempts: number },
) {
  const cache = new Map<number, Uint8Array>();
  for (;;) {
    let missing: number | undefined;
    try {
      return searchQuality(
        (q) => {
          const hit = cache.get(q);
          if (hit) return hit;
          missing = q;
          throw new Error("miss");
        },
        maxBytes,
        guess,
        { attempts: 0 },
      );
    } catch (error) {
      if (missing === undefined) throw error;
    }
    const jpeg = await sharp(pixels, { raw: { width, height, channels: 3 } })
      .jpeg({ quality: missing, chromaSubsampling: chroma })
      .toBuffer();
    cache.set(missing, new Uint8Array(jpeg));
    counter.attempts++;
  }
}
