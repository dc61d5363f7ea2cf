import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { type SourceWindow, StreamingResampler } from "../../shared/imaging/resample";
import { SimdResampleKernels } from "../../shared/imaging/wasm/vision.simd";
import { prng, screenshotPixels } from "../fixtures/images";

/** The committed build of shared/imaging/wasm/vision.simd.wat (npm run build:wasm). */
const simd = new WebAssembly.Module(
  readFileSync(new URL("../../shared/imaging/wasm/vision.simd.wasm", import.meta.url)),
);

/** `rows` source rows, each a copy of row `pick(y)` of `base` (`width` x `baseHeight` RGB). */
function withRepeats(base: Uint8Array, width: number, rows: number, pick: (y: number) => number): Uint8Array {
  const stride = width * 3;
  const out = new Uint8Array(rows * stride);
  for (let y = 0; y < rows; y++) {
    const from = pick(y);
    out.set(base.subarray(from * stride, (from + 1) * stride), y * stride);
  }
  return out;
}

/** Index of the first byte where `a` and `b` differ, -1 where they are the same. */
function firstDifference(a: Uint8Array, b: Uint8Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

function resample(
  rgb: Uint8Array,
  w: number,
  h: number,
  window: SourceWindow,
  dw: number,
  dh: number,
  module?: WebAssembly.Module,
) {
  const r = new StreamingResampler(w, h, window, dw, dh, module);
  for (let row = 0; row < h; row++) r.pushRow(row, rgb, row * w * 3);
  return r.finish();
}

describe("rows repeated in the source are filtered once (SIMD resampler)", () => {
  it("gives the JS path's bytes where runs of equal rows outlast the ring, differ in one byte, or end at a crop", () => {
    const width = 301;
    const base = screenshotPixels(width, 40, 3);
    // Runs of 1 to 30 equal rows (the ring holds 8-12), then a row that differs in its last byte only.
    const runs = withRepeats(base, width, 400, (y) => Math.floor(Math.sqrt(y * 2.3)) % 40);
    const stride = width * 3;
    for (let y = 37; y < 400; y += 53) runs[y * stride + stride - 1] = runs[y * stride + stride - 1]! ^ 1;
    const cases: Array<[SourceWindow, number, number]> = [
      [{ x: 0, y: 0, width, height: 400 }, 246, 327],
      [{ x: 0, y: 0, width, height: 400 }, 150, 200],
      [{ x: 10.5, y: 61.25, width: 200, height: 250 }, 163, 204],
      [{ x: 0, y: 0, width, height: 400 }, width, 400],
    ];
    for (const [window, dw, dh] of cases) {
      expect(
        firstDifference(resample(runs, width, 400, window, dw, dh, simd), resample(runs, width, 400, window, dw, dh)),
      ).toBe(-1);
    }
  });

  it("matches the JS path on random runs of equal rows (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 90 }),
        fc.integer({ min: 2, max: 120 }),
        fc.double({ min: 0.3, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 1000 }),
        (w, h, f, seed) => {
          const random = prng(seed);
          const base = Uint8Array.from({ length: w * 8 * 3 }, () => (random() * 256) | 0);
          let at = 0;
          const rgb = withRepeats(base, w, h, () => (random() < 0.7 ? at : (at = (at + 1) % 8)));
          const window = { x: 0, y: 0, width: w, height: h };
          const dw = Math.max(1, Math.round(w * f)),
            dh = Math.max(1, Math.round(h * f));
          expect(firstDifference(resample(rgb, w, h, window, dw, dh, simd), resample(rgb, w, h, window, dw, dh))).toBe(
            -1,
          );
        },
      ),
      { numRuns: 150 },
    );
  });

  it("does not filter a row equal to the one before: it copies that row's filtered slot", () => {
    const width = 97;
    const taps = {
      start: new Int32Array(40),
      count: new Int32Array(40).fill(1),
      fixed: new Int32Array(40),
      maxTaps: 1,
      widest: 1,
    };
    for (let x = 0; x < 40; x++) {
      taps.start[x] = x * 2;
      taps.fixed[x] = 1 << 14;
    }
    const kernels = new SimdResampleKernels(simd, width, 40, taps, 4);
    const row = screenshotPixels(width, 1, 4);
    const other = row.slice();
    other[width * 3 - 1] = other[width * 3 - 1]! ^ 0x80;
    expect(kernels.filterBytes(row, 0, 0, 6)).toBe(false);
    expect(kernels.filterBytes(row, 0, 1, 6)).toBe(true);
    expect(kernels.ringRow(1)).toEqual(kernels.ringRow(0));
    // A last-byte difference is a new row; so is the same row at another scale of the output.
    expect(kernels.filterBytes(other, 0, 2, 6)).toBe(false);
    expect(kernels.filterBytes(other, 0, 3, 0)).toBe(false);
  });
});
