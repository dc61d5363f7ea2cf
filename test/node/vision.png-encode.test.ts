/**
 * The fit's PNG encoder (png.encode.ts over native/zlib/png-deflater.c): exact pixels as libvips
 * reads them back, libpng's row filter choice on every row, zlib's compression at its default
 * level, and the byte limit it stops at.
 */
import { deflateSync, inflateSync } from "node:zlib";
import fc from "fast-check";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { concatBytes } from "../../shared/bytes";
import { parseChunks } from "../../shared/imaging/codecs/png/png.decode";
import { encodePng } from "../../shared/imaging/codecs/png/png.encode";
import { loadVisionWasmNode } from "../../bench/vision-wasm-node";
import { photoPixels, prng, screenshotPixels } from "../fixtures/images";

const { zlib } = loadVisionWasmNode();

/** The PNG as libvips reads it, RGB (a grey PNG's sample in all three channels). */
async function pixelsOf(png: Uint8Array): Promise<{ data: Uint8Array }> {
  return { data: new Uint8Array(await sharp(png).toColourspace("srgb").raw().toBuffer()) };
}

/** The IDAT data of a PNG, concatenated (the decoder's own chunk walk, CRCs checked). */
const idatOf = (png: Uint8Array) => concatBytes(parseChunks(png).idat);

/** libpng's heuristic, written out plainly: the filter whose bytes, read as signed, sum smallest (first of equals). */
function expectedFilters(rows: Uint8Array, width: number, height: number, bpp: number): number[] {
  const stride = width * bpp;
  const choices: number[] = [];
  for (let y = 0; y < height; y++) {
    const at = (i: number) => (i < 0 ? 0 : rows[y * stride + i]!);
    const up = (i: number) => (y === 0 || i < 0 ? 0 : rows[(y - 1) * stride + i]!);
    const predictors = [
      () => 0,
      (i: number) => at(i - bpp),
      (i: number) => up(i),
      (i: number) => (at(i - bpp) + up(i)) >> 1,
      (i: number) => {
        const a = at(i - bpp),
          b = up(i),
          c = up(i - bpp);
        const p = a + b - c;
        const pa = Math.abs(p - a),
          pb = Math.abs(p - b),
          pc = Math.abs(p - c);
        return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      },
    ];
    const costs = predictors.map((predict) => {
      let sum = 0;
      for (let i = 0; i < stride; i++) {
        const v = (at(i) - predict(i)) & 0xff;
        sum += v < 128 ? v : 256 - v;
      }
      return sum;
    });
    choices.push(costs.indexOf(Math.min(...costs)));
  }
  return choices;
}

/** The filter byte of every row of an inflated IDAT stream. */
function filtersIn(png: Uint8Array, stride: number, height: number): number[] {
  const raw = inflateSync(idatOf(png));
  expect(raw.length).toBe((stride + 1) * height);
  return Array.from({ length: height }, (_, y) => raw[y * (stride + 1)]!);
}

describe("encodePng", () => {
  it("writes exactly the pixels, RGB and grey, at sizes that cross and miss its 32-row blocks", async () => {
    for (const [width, height] of [
      [1, 1],
      [3, 70],
      [1000, 33],
      [257, 64],
    ] as const) {
      const rgb = screenshotPixels(width, height, width + height);
      const png = encodePng(rgb, width, height, 1 << 22, zlib)!;
      expect((await pixelsOf(png)).data).toEqual(rgb);
      const grey = rgb.map((_, i) => rgb[i - (i % 3)]!);
      const greyPng = encodePng(grey, width, height, 1 << 22, zlib)!;
      expect(greyPng[25]).toBe(0); // IHDR colour type 0: one grey sample a pixel
      expect((await pixelsOf(greyPng)).data).toEqual(grey);
    }
  });

  it("gives every row the filter libpng's heuristic picks, and its bytes decode to the exact pixels (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 90 }),
        fc.integer({ min: 1, max: 70 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.boolean(),
        async (width, height, seed, grey) => {
          const random = prng(seed);
          // Runs of flat colour with noise between: every filter wins somewhere.
          const rgb = new Uint8Array(width * height * 3);
          for (let i = 0; i < rgb.length; i += 3) {
            const flat = random() < 0.6;
            const v = flat && i >= 3 ? rgb[i - 3]! : Math.floor(random() * 256);
            rgb[i] = v;
            rgb[i + 1] = grey ? v : flat && i >= 3 ? rgb[i - 2]! : Math.floor(random() * 256);
            rgb[i + 2] = grey ? v : flat && i >= 3 ? rgb[i - 1]! : Math.floor(random() * 256);
          }
          const bpp = grey ? 1 : 3;
          const rows = grey ? rgb.filter((_, i) => i % 3 === 0) : rgb;
          const png = encodePng(rgb, width, height, 1 << 22, zlib)!;
          expect(filtersIn(png, width * bpp, height)).toEqual(expectedFilters(rows, width, height, bpp));
          // Each filter's bytes (16 at a time in the SIMD loop, then the row's tail) undo to the row.
          expect(Buffer.from((await pixelsOf(png)).data).equals(Buffer.from(rgb))).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  // zlib-ng's level 6 against zlib's (the runtimes' CompressionStream before): 0.4 % more on the
  // screenshot, 1.2–1.8 % more on photos (docs/benchmarks.md).
  it("compresses as zlib's default level does, within 2 %", () => {
    for (const [rgb, width, height] of [
      [screenshotPixels(1568, 882), 1568, 882],
      [photoPixels(800, 600), 800, 600],
    ] as const) {
      const png = encodePng(rgb, width, height, 1 << 23, zlib)!;
      const filtered = inflateSync(idatOf(png));
      const zlibDefault = deflateSync(filtered).length;
      expect(idatOf(png).length / zlibDefault).toBeGreaterThan(0.98);
      expect(idatOf(png).length / zlibDefault).toBeLessThan(1.02);
    }
  });

  it("stops at its byte limit: the whole PNG at exactly its size, nothing one byte below", () => {
    const rgb = screenshotPixels(640, 400);
    const png = encodePng(rgb, 640, 400, 1 << 22, zlib)!;
    expect(encodePng(rgb, 640, 400, png.length, zlib)).toEqual(png);
    expect(encodePng(rgb, 640, 400, png.length - 1, zlib)).toBeUndefined();
    // A photo far over a small limit is abandoned, not finished.
    expect(encodePng(photoPixels(1568, 1176), 1568, 1176, 64 * 1024, zlib)).toBeUndefined();
    expect(encodePng(rgb, 640, 400, 40, zlib)).toBeUndefined();
  });
});
