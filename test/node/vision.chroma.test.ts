/**
 * 4:4:4 chroma where 4:2:0 fits at quality 100 (docs/vision.md, "Chroma sampling"): the encoder's
 * second MCU layout on both paths (JS and our SIMD kernels), the estimate of what 4:2:0's
 * subsampling costs, and the fit's choice between them, judged by libvips' decode.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import sharp from "sharp";
import { fitImage } from "../../shared/imaging/fit";
import { prepareJpeg, ROBIDOUX_TABLES, YCC_420, YCC_444 } from "../../shared/imaging/jpeg.baseline";
import { subsamplingError } from "../../shared/imaging/jpeg.chroma";
import { decodeJpegRgb } from "../../shared/imaging/codecs/jpeg/jpeg.decode";
import { resizeRgb } from "../../shared/imaging/resample";
import { loadVisionWasmNode } from "../../bench/vision-wasm-node";
import { photoPixels, screenshotPixels } from "../fixtures/images";
import { uiScreenshotPixels } from "../fixtures/ui-screenshots";

const wasm = loadVisionWasmNode();
const KiB = 1024;

/** Squared error (R, G and B summed over the pixels) of libvips' decode of `jpeg` against `rgb`. */
async function squaredError(rgb: Uint8Array, jpeg: Uint8Array | Buffer): Promise<number> {
  const decoded = await sharp(jpeg).raw().toBuffer();
  expect(decoded.length).toBe(rgb.length);
  let se = 0;
  for (let i = 0; i < rgb.length; i++) {
    const d = rgb[i]! - decoded[i]!;
    se += d * d;
  }
  return se;
}
const psnr = async (rgb: Uint8Array, jpeg: Uint8Array | Buffer) => {
  const se = await squaredError(rgb, jpeg);
  return se === 0 ? 99 : 10 * Math.log10((255 * 255 * rgb.length) / se);
};

/** A UI screenshot whose text and panels are coloured: what 4:2:0 smears. */
function colouredText(width: number, height: number): Uint8Array {
  const rgb = screenshotPixels(width, height, 5);
  for (let i = 0; i < rgb.length; i += 3) {
    const x = (i / 3) % width;
    // Dark strokes turn red or blue by column band; light panels stay as they are.
    if (rgb[i]! < 100 && x > width * 0.18) {
      const red = Math.floor(x / 40) % 2 === 0;
      rgb[i] = red ? 200 : 20;
      rgb[i + 2] = red ? 30 : 210;
    }
  }
  return rgb;
}

describe("the 4:4:4 layout of the baseline encoder", () => {
  it("decodes elsewhere as 4:4:4 at the right size; the SIMD and JS paths agree; sizeAt bounds the encode", async () => {
    const [w, h] = [333, 217]; // not multiples of 8: exercises the edge padding
    for (const rgb of [photoPixels(w, h, 7), colouredText(w, h)]) {
      const js = prepareJpeg(rgb, w, h, undefined, ROBIDOUX_TABLES, YCC_444);
      const simd = prepareJpeg(rgb, w, h, wasm.simd, ROBIDOUX_TABLES, YCC_444);
      let last = 0;
      for (const q of [50, 90, 100]) {
        const [a, b] = [js.encode(q), simd.encode(q)];
        expect(js.sizeAt(q)).toBeGreaterThanOrEqual(a.length);
        expect(simd.sizeAt(q)).toBeGreaterThanOrEqual(b.length);
        const meta = await sharp(b).metadata();
        expect([meta.width, meta.height, meta.chromaSubsampling]).toEqual([w, h, "4:4:4"]);
        // f64 (JS) and f32 cells (SIMD) round a few coefficients differently: within 0.05 dB and 0.2 %.
        const [pa, pb] = [await psnr(rgb, a), await psnr(rgb, b)];
        expect(Math.abs(pa - pb)).toBeLessThan(0.05);
        expect(Math.abs(a.length - b.length)).toBeLessThan(a.length * 0.002);
        expect(pb).toBeGreaterThan(last);
        last = pb;
      }
      expect(last).toBeGreaterThan(50);
    }
  });

  it("any size from 1x1 up encodes to a JPEG libvips reads at that size, the same on both paths", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 40 }), async (w, h) => {
        const rgb = colouredText(Math.max(w, 8), Math.max(h, 8)).subarray(0, w * h * 3);
        const [js, simd] = [undefined, wasm.simd].map((source) =>
          prepareJpeg(rgb, w, h, source, ROBIDOUX_TABLES, YCC_444).encode(95),
        ) as [Uint8Array, Uint8Array];
        const meta = await sharp(simd).metadata();
        expect([meta.width, meta.height, meta.chromaSubsampling]).toEqual([w, h, "4:4:4"]);
        expect(Math.abs((await psnr(rgb, js)) - (await psnr(rgb, simd)))).toBeLessThan(0.2);
      }),
      { numRuns: 40 },
    );
  });

  it("keeps coloured text's edges where 4:2:0 at quality 100 cannot", async () => {
    const [w, h] = [480, 320];
    const rgb = colouredText(w, h);
    const at = (layout: typeof YCC_420) => prepareJpeg(rgb, w, h, wasm.simd, ROBIDOUX_TABLES, layout).encode(100);
    const [subsampled, full] = [await psnr(rgb, at(YCC_420)), await psnr(rgb, at(YCC_444))];
    expect(full).toBeGreaterThan(subsampled + 10);
  });
});

describe("subsamplingError", () => {
  it("is zero where chroma is constant over every 2x2 block (grey, or colour in 2x2 cells)", () => {
    const [w, h] = [64, 48];
    const grey = photoPixels(w, h, 2);
    for (let i = 0; i < grey.length; i += 3) grey[i + 1] = grey[i + 2] = grey[i]!;
    const cells = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) cells.set([(x >> 1) * 9, (y >> 1) * 11, 255 - (x >> 1) * 7], (y * w + x) * 3);
    expect(subsamplingError(grey, w, h)).toBeCloseTo(0, 6);
    expect(subsamplingError(cells, w, h)).toBeCloseTo(0, 6);
  });

  it("predicts what 4:2:0 adds to coloured text as libvips decodes it, within a factor of 2 either way", async () => {
    // The estimate takes the 2x2 mean as what the decoder shows; libvips interpolates the chroma
    // (fancy upsampling), so the two differ, but not by enough to flip a choice that pays 10 dB.
    const [w, h] = [640, 400];
    const rgb = colouredText(w, h);
    const at = (layout: typeof YCC_420) => prepareJpeg(rgb, w, h, wasm.simd, ROBIDOUX_TABLES, layout).encode(100);
    const added = (await squaredError(rgb, at(YCC_420))) - (await squaredError(rgb, at(YCC_444)));
    const estimate = subsamplingError(rgb, w, h);
    expect(estimate / added).toBeGreaterThan(0.5);
    expect(estimate / added).toBeLessThan(2);
  });
});

describe("the fit's chroma sampling", () => {
  const opts = (embedTargetBytes: number) => ({ embedTargetBytes, maxLongEdge: 1568, maxInputPixels: 40_000_000 });
  const maxBytes = (budget: number) => Math.floor((budget - "data:image/jpeg;base64,".length) / 4) * 3;
  const png = (rgb: Uint8Array, width: number, height: number) =>
    sharp(Buffer.from(rgb), { raw: { width, height, channels: 3 } })
      .png()
      .toBuffer();

  /** Coloured text under a photo strip, which keeps the PNG over the JPEG's size (the fit's PNG attempt does not win). */
  const textUnderPhoto = (width: number, height: number) => {
    const rgb = colouredText(width, height);
    rgb.set(photoPixels(width, 400, 4));
    return rgb;
  };

  it("coloured text whose 4:2:0 fits at quality 100 with room goes out 4:4:4, 10 dB more faithful, in budget", async () => {
    const [w, h] = [1400, 900];
    const rgb = textUnderPhoto(w, h);
    const budget = 1024 * KiB;
    const out = await fitImage(new Uint8Array(await png(rgb, w, h)), opts(budget), wasm);
    expect(out.mediaType).toBe("image/jpeg");
    expect(out.chroma).toBe("4:4:4");
    expect((await sharp(out.data).metadata()).chromaSubsampling).toBe("4:4:4");
    expect(out.data.length).toBeLessThanOrEqual(maxBytes(budget));
    const subsampled = prepareJpeg(rgb, w, h, wasm.simd, ROBIDOUX_TABLES, YCC_420).encode(100);
    expect(subsampled.length).toBeLessThan(maxBytes(budget));
    expect(await psnr(rgb, out.data)).toBeGreaterThan((await psnr(rgb, subsampled)) + 10);
  });

  it("a screenshot whose sampled estimate overstates 4:2:0 at 100 gets 4:4:4 once its search reaches 100", async () => {
    // A dark UI over the cap, as a JPEG (its PNG would win the fit's PNG attempt instead).
    const [w, h] = [1600, 1000];
    const rgb = uiScreenshotPixels({ width: w, height: h, theme: "dark", scale: 1, layout: "app", seed: 1 });
    const source = await sharp(Buffer.from(rgb), { raw: { width: w, height: h, channels: 3 } })
      .jpeg({ quality: 98, chromaSubsampling: "4:4:4" })
      .toBuffer();
    const budget = Math.ceil((220_000 / 3) * 4) + "data:image/jpeg;base64,".length;
    // What the fit encodes (the source decoded and resampled to the cap): its 4:2:0 at 100 fits the
    // budget, and the sample's estimate of it is over 1.2 times the budget, so the search meets it first.
    const decoded = decodeJpegRgb(new Uint8Array(source), wasm.jpegDecoder);
    const render = resizeRgb(decoded.rgb, w, h, 1568, 980, wasm.simd);
    const at100 = prepareJpeg(render, 1568, 980, wasm.simd);
    expect(at100.sizeAt(100)).toBeLessThanOrEqual(maxBytes(budget));
    expect(at100.estimateAt(100)).toBeGreaterThan(maxBytes(budget) * 1.2);
    const out = await fitImage(new Uint8Array(source), opts(budget), wasm);
    expect(out.chroma).toBe("4:4:4");
    expect(out.data.length).toBeLessThanOrEqual(maxBytes(budget));
    // 4:2:0 at quality 100 measured 45.2 dB here, 4:4:4 at 94 57.0 dB.
    expect(await psnr(render, out.data)).toBeGreaterThan((await psnr(render, at100.encode(100))) + 8);
  });

  it("a photo with smooth chroma keeps 4:2:0 at quality 100 when 4:4:4 would need a lower quality", async () => {
    const [w, h] = [900, 600];
    const rgb = photoPixels(w, h, 9);
    const at100 = prepareJpeg(rgb, w, h, wasm.simd, ROBIDOUX_TABLES, YCC_420);
    // A budget 4:2:0 fills at quality 100 with 3 % to spare, where 4:4:4 needs a lower quality.
    const budget = Math.ceil(((at100.sizeAt(100) * 1.03) / 3) * 4) + "data:image/jpeg;base64,".length;
    // A photo's PNG is far over the JPEG's size, so the fit's PNG attempt does not win.
    const out = await fitImage(new Uint8Array(await png(rgb, w, h)), opts(budget), wasm);
    expect([out.quality, out.chroma]).toEqual([100, "4:2:0"]);
    expect((await sharp(out.data).metadata()).chromaSubsampling).toBe("4:2:0");
  });

  it("tiny crops (every 4:2:0 fits at 100, so 4:4:4 is searched) come out whole at their size", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 30 }), fc.integer({ min: 1, max: 30 }), async (w, h) => {
        const input = await sharp(Buffer.from(photoPixels(w, h, w * 31 + h)), {
          raw: { width: w, height: h, channels: 3 },
        })
          .jpeg({ quality: 95 })
          .toBuffer();
        const out = await fitImage(new Uint8Array(input), { ...opts(64 * KiB), region: [1, 0, w, h] }, wasm);
        expect([out.width, out.height, out.mediaType]).toEqual([w - 1, h, "image/jpeg"]);
        const meta = await sharp(out.data).metadata();
        expect([meta.width, meta.height, meta.chromaSubsampling]).toEqual([w - 1, h, out.chroma]);
      }),
      { numRuns: 30 },
    );
  });

  it("a budget that stops 4:2:0 below quality 100 keeps 4:2:0", async () => {
    const [w, h] = [1400, 900];
    const out = await fitImage(new Uint8Array(await png(textUnderPhoto(w, h), w, h)), opts(128 * KiB), wasm);
    expect(out.chroma).toBe("4:2:0");
    expect(out.quality).toBeLessThan(100);
  });
});
