import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import sharp from "sharp";
import { StreamingResampler, resizeRgb } from "../../shared/imaging/resample";
import { prepareJpeg } from "../../shared/imaging/jpeg.baseline";
import { SimdPool } from "../../shared/imaging/wasm/simd.instances";
import { photoPixels, prng, screenshotPixels } from "../fixtures/images";

/** The committed build of shared/imaging/wasm/vision.simd.wat (npm run build:wasm). */
const simd = new WebAssembly.Module(
  readFileSync(new URL("../../shared/imaging/wasm/vision.simd.wasm", import.meta.url)),
);

function maxAbsDiff(a: Uint8Array, b: Uint8Array): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

function psnr(a: Uint8Array, b: Uint8Array): number {
  let se = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    se += d * d;
  }
  return se === 0 ? 99 : 10 * Math.log10((255 * 255) / (se / a.length));
}

function noise(width: number, height: number, seed: number): Uint8Array {
  const random = prng(seed);
  return Uint8Array.from({ length: width * height * 3 }, () => (random() * 256) | 0);
}

describe("SIMD resampler (vision.simd.wat) against the JS path", () => {
  it("gives the same bytes on text, photos and noise, at the bench's ratios and with the box stage", () => {
    const cases: Array<[string, Uint8Array, number, number, number, number]> = [
      ["5K-like screenshot to the cap", screenshotPixels(2560, 1440), 2560, 1440, 1568, 882],
      ["DCT-scaled photo to the cap", photoPixels(2016, 1512, 2), 2016, 1512, 1568, 1176],
      ["phone table", screenshotPixels(1170, 2532, 5), 1170, 2532, 725, 1568],
      ["same size (taps on the kernel's zeros)", photoPixels(301, 203, 8), 301, 203, 301, 203],
      ["box stage (factor 2 x 3)", photoPixels(1600, 1000, 4), 1600, 1000, 300, 150],
      ["full-range noise (largest overshoot, clamping)", noise(997, 631, 3), 997, 631, 411, 260],
    ];
    for (const [, rgb, w, h, dw, dh] of cases) {
      const js = resizeRgb(rgb, w, h, dw, dh);
      const wasm = resizeRgb(rgb, w, h, dw, dh, simd);
      // Both paths do the same integer arithmetic: the brief allows 1 level, we get none.
      expect(maxAbsDiff(js, wasm)).toBe(0);
    }
  });

  it("matches on random sizes, windows and ratios (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 90 }),
        fc.double({ min: 0.05, max: 1, noNaN: true }),
        fc.double({ min: 0.05, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 0.5, noNaN: true }),
        fc.integer({ min: 0, max: 1000 }),
        (w, h, fx, fy, offset, seed) => {
          const rgb = noise(w, h, seed);
          const window = {
            x: offset * w * 0.5,
            y: offset * h * 0.5,
            width: w * (1 - offset * 0.5),
            height: h * (1 - offset * 0.5),
          };
          const dw = Math.max(1, Math.round(window.width * fx)),
            dh = Math.max(1, Math.round(window.height * fy));
          const run = (module?: WebAssembly.Module) => {
            const r = new StreamingResampler(w, h, window, dw, dh, module);
            for (let row = 0; row < h; row++) r.pushRow(row, rgb, row * w * 3);
            return r.finish();
          };
          expect(maxAbsDiff(run(), run(simd))).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("holds only what the rows need: a 5K row ring in under 1 MB of WASM memory", () => {
    const resampler = new StreamingResampler(5120, 2880, { x: 0, y: 0, width: 5120, height: 2880 }, 1568, 882, simd);
    expect(resampler.usesSimd).toBe(true);
    expect(resampler.wasmBytes).toBeGreaterThan(0);
    expect(resampler.wasmBytes).toBeLessThan(1024 * 1024);
    expect(new StreamingResampler(10, 10, { x: 0, y: 0, width: 10, height: 10 }, 5, 5).wasmBytes).toBe(0);
  });
});

/** A photo at the cap, a tall screenshot and a small photo whose MCUs are padded on both axes. */
const ENCODER_IMAGES = [
  [photoPixels(1568, 1176, 5), 1568, 1176],
  [screenshotPixels(725, 1568, 5), 725, 1568],
  [photoPixels(333, 77, 9), 333, 77],
] as const;

describe("SIMD colour conversion, DCT (f32, stored as i16 cells) and quantise-and-count against the JS encoder (f64)", () => {
  it("sizes agree within 0.1 %, and the decoded pixels are the same picture (PSNR >= 50 dB between them)", async () => {
    for (const [rgb, w, h] of ENCODER_IMAGES) {
      const js = prepareJpeg(rgb, w, h);
      const wasm = prepareJpeg(rgb, w, h, simd);
      expect(js.wasmBytes).toBe(0);
      expect(wasm.wasmBytes).toBeGreaterThan(0);
      // The coefficients live in the JS heap and pass through a window: the instance does not grow
      // with the image (a 1568x1176 image's coefficients alone are 5.5 MB).
      expect(wasm.wasmBytes).toBeLessThan(1024 * 1024);
      const qualities = [50, 75, 90];
      for (const q of qualities) {
        expect(Math.abs(wasm.sizeAt(q) - js.sizeAt(q))).toBeLessThanOrEqual(js.sizeAt(q) * 0.001);
        // The sampled estimate gathers every 16th MCU into the window across window boundaries.
        expect(Math.abs(wasm.estimateAt(q) - js.estimateAt(q))).toBeLessThanOrEqual(js.estimateAt(q) * 0.001);
      }
      // Encoding after measuring other qualities: the write must re-quantise exactly as its measure did.
      for (const q of qualities) {
        const [jsJpeg, wasmJpeg] = [js.encode(q), wasm.encode(q)];
        expect(wasm.sizeAt(q)).toBeGreaterThanOrEqual(wasmJpeg.length);
        expect(wasm.sizeAt(q)).toBeLessThan(wasmJpeg.length * 1.01 + 16);
        const [a, b] = await Promise.all([jsJpeg, wasmJpeg].map((jpeg) => sharp(jpeg).raw().toBuffer()));
        expect(psnr(new Uint8Array(a!), new Uint8Array(b!))).toBeGreaterThanOrEqual(50);
        // And against the source, SIMD loses nothing measurable.
        expect(Math.abs(psnr(rgb, new Uint8Array(b!)) - psnr(rgb, new Uint8Array(a!)))).toBeLessThan(0.01);
      }
    }
  });
});

describe("the quantisation tables' rate and distortion sample in SIMD (chooseTables, errorAt)", () => {
  it("sums the error the JS encoder sums and picks the same tables at every budget", () => {
    for (const [rgb, w, h] of ENCODER_IMAGES) {
      const js = prepareJpeg(rgb, w, h);
      const wasm = prepareJpeg(rgb, w, h, simd);
      for (const tables of ["annex-k", "robidoux", "flat"])
        for (const q of [30, 50, 75, 90, 100]) {
          // The f32 DCT and its i16 cells move the error a little; at 100 (steps of 1-2) the most.
          const tolerance = q === 100 ? 0.03 : 0.005;
          expect(Math.abs(wasm.errorAt(q, tables) / js.errorAt(q, tables) - 1)).toBeLessThan(tolerance);
        }
      const picks = (prepared: () => ReturnType<typeof prepareJpeg>) =>
        [8_000, 20_000, 48_000, 100_000, 190_000, 400_000, 780_000].map((budget) =>
          prepared().chooseTables(budget, 30, 100),
        );
      const chosen = picks(() => prepareJpeg(rgb, w, h, simd));
      expect(chosen).toEqual(picks(() => prepareJpeg(rgb, w, h)));
      // Both tables are chosen somewhere on these images, so a kernel that ranked them wrong shows.
      if (w === 1568) expect(new Set(chosen)).toEqual(new Set(["robidoux", "flat"]));
    }
  });
});

describe("SimdPool: one fit's resamplers and encodes on one instance per role", () => {
  it("gives the bytes fresh instances give, after a larger lease left its memory behind", () => {
    const pool = new SimdPool(simd);
    const big = photoPixels(1200, 900, 3);
    prepareJpeg(big, 1200, 900, pool).encode(80);
    resizeRgb(big, 1200, 900, 700, 500, pool);
    // Smaller layouts on the used memory: the leftovers must not reach the output (padded taps, histograms).
    for (const [w, h, dw, dh] of [
      [333, 211, 101, 67],
      [640, 480, 97, 355],
    ] as const) {
      const rgb = photoPixels(w, h, w);
      expect(resizeRgb(rgb, w, h, dw, dh, pool)).toEqual(resizeRgb(rgb, w, h, dw, dh, simd));
      expect(prepareJpeg(rgb, w, h, pool).encode(75)).toEqual(prepareJpeg(rgb, w, h, simd).encode(75));
    }
  });

  it("a kernel set whose instance was leased again refuses to run", () => {
    const pool = new SimdPool(simd);
    const rgb = photoPixels(320, 240, 9);
    const first = prepareJpeg(rgb, 320, 240, pool);
    expect(first.encode(70).length).toBeGreaterThan(0);
    prepareJpeg(rgb, 160, 120, pool);
    expect(() => first.encode(70)).toThrow(/SIMD kernels used after their pool leased the instance/);
    const resampler = new StreamingResampler(320, 240, { x: 0, y: 0, width: 320, height: 240 }, 100, 75, pool);
    resizeRgb(rgb, 320, 240, 50, 40, pool);
    expect(() => resampler.pushRow(0, rgb, 0)).toThrow(/SIMD kernels used after/);
  });
});
