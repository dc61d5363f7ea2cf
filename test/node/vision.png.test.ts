/**
 * The PNG row decoder's SIMD path (vision.simd.wat: unfilter, RGBA flatten) against its JS
 * fallback and against the pixels that went in: PNGs are written here with every row filter type
 * (our own filter encoder), by sharp with adaptive filtering, in every 8-bit colour type.
 */
import { readFileSync } from "node:fs";
import { crc32, deflateSync, inflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import sharp from "sharp";
import { decodePngRows, parseChunks } from "../../shared/imaging/codecs/png/png.decode";
import type { StreamingResampler } from "../../shared/imaging/resample";
import { prng, screenshotPixels } from "../fixtures/images";

const simd = new WebAssembly.Module(
  readFileSync(new URL("../../shared/imaging/wasm/vision.simd.wasm", import.meta.url)),
);
const zlib = new WebAssembly.Module(readFileSync(new URL("../../shared/imaging/wasm/zlib.wasm", import.meta.url)));

/** Decodes with a resampler stand-in that keeps every RGB row it is handed. */
async function decodeRows(png: Uint8Array, module?: WebAssembly.Module): Promise<Uint8Array> {
  let out = new Uint8Array(0);
  let width = 0;
  const sink = (w: number, h: number) => {
    width = w;
    out = new Uint8Array(w * h * 3);
    return {
      wantsRow: () => true,
      pushRow: (row: number, rgb: Uint8Array, offset = 0) =>
        out.set(rgb.subarray(offset, offset + width * 3), row * width * 3),
    } as unknown as StreamingResampler;
  };
  decodePngRows(parseChunks(png), sink, { zlib, simd: module });
  return out;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  new DataView(out.buffer).setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  new DataView(out.buffer).setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

const paeth = (a: number, b: number, c: number) => {
  const pa = Math.abs(b - c),
    pb = Math.abs(a - c),
    pc = Math.abs(a + b - 2 * c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
};

/** A PNG of 8-bit `pixels` (`channels` per pixel) with `filters[y % filters.length]` on row y. */
function writePng(
  pixels: Uint8Array,
  width: number,
  height: number,
  colorType: number,
  filters: number[],
  extra: Uint8Array[] = [],
): Uint8Array {
  const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[colorType]!;
  const stride = width * channels;
  const raw = new Uint8Array(height * (stride + 1));
  for (let y = 0; y < height; y++) {
    const filter = filters[y % filters.length]!;
    raw[y * (stride + 1)] = filter;
    for (let i = 0; i < stride; i++) {
      const x = pixels[y * stride + i]!;
      const a = i >= channels ? pixels[y * stride + i - channels]! : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + i]! : 0;
      const c = y > 0 && i >= channels ? pixels[(y - 1) * stride + i - channels]! : 0;
      const predicted = [0, a, b, (a + b) >> 1, paeth(a, b, c)][filter]!;
      raw[y * (stride + 1) + 1 + i] = (x - predicted) & 0xff;
    }
  }
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, width);
  new DataView(ihdr.buffer).setUint32(4, height);
  ihdr[8] = 8;
  ihdr[9] = colorType;
  const parts = [
    Uint8Array.of(137, 80, 78, 71, 13, 10, 26, 10),
    chunk("IHDR", ihdr),
    ...extra,
    chunk("IDAT", new Uint8Array(deflateSync(raw))),
    chunk("IEND", new Uint8Array(0)),
  ];
  const png = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (png.set(p, at), at + p.length), 0);
  return png;
}

/** What the decoder must deliver: RGB, transparency flattened on white with exact rounding. */
function expectedRgb(
  pixels: Uint8Array,
  count: number,
  colorType: number,
  palette?: Uint8Array,
  alphas?: Uint8Array,
): Uint8Array {
  const out = new Uint8Array(count * 3);
  const flat = (c: number, a: number) => Math.round((c * a + 255 * (255 - a)) / 255);
  for (let p = 0; p < count; p++) {
    let rgb: number[],
      a = 255;
    if (colorType === 0) rgb = [pixels[p]!, pixels[p]!, pixels[p]!];
    else if (colorType === 4) {
      rgb = [pixels[2 * p]!, pixels[2 * p]!, pixels[2 * p]!];
      a = pixels[2 * p + 1]!;
    } else if (colorType === 2) rgb = [pixels[3 * p]!, pixels[3 * p + 1]!, pixels[3 * p + 2]!];
    else if (colorType === 6) {
      rgb = [pixels[4 * p]!, pixels[4 * p + 1]!, pixels[4 * p + 2]!];
      a = pixels[4 * p + 3]!;
    } else {
      const i = pixels[p]!;
      rgb = [palette![3 * i]!, palette![3 * i + 1]!, palette![3 * i + 2]!];
      a = alphas![i] ?? 255;
    }
    out.set(
      rgb.map((c) => flat(c, a)),
      p * 3,
    );
  }
  return out;
}

function noise(n: number, seed: number, max = 256): Uint8Array {
  const random = prng(seed);
  return Uint8Array.from({ length: n }, () => (random() * max) | 0);
}

/** Pixels with long flat runs and edges (what screenshots have), plus every alpha value for RGBA. */
function mixedPixels(width: number, height: number, channels: number, seed: number): Uint8Array {
  const random = prng(seed);
  const out = new Uint8Array(width * height * channels);
  for (let i = 0; i < out.length; i++)
    out[i] = random() < 0.7 && i >= channels ? out[i - channels]! : (random() * 256) | 0;
  return out;
}

/** The filter byte of every row of an 8-bit PNG (for the adaptive case: proof it is mixed). */
function filterTypes(png: Uint8Array): number[] {
  const view = new DataView(png.buffer, png.byteOffset);
  const width = view.getUint32(16),
    height = view.getUint32(20);
  const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[png[25]!]!;
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length; at += 12 + view.getUint32(at)) {
    if (String.fromCharCode(...png.subarray(at + 4, at + 8)) === "IDAT")
      idat.push(Buffer.from(png.subarray(at + 8, at + 8 + view.getUint32(at))));
  }
  const raw = inflateSync(Buffer.concat(idat));
  return Array.from({ length: height }, (_, y) => raw[y * (width * channels + 1)]!);
}

const COLOR_TYPES = [
  [0, "grey"],
  [2, "RGB"],
  [3, "palette"],
  [4, "grey + alpha"],
  [6, "RGBA"],
] as const;

describe("PNG row decode: SIMD unfilter and flatten against the JS path", () => {
  it("every filter type, alone and mixed, in every 8-bit colour type: identical rows, equal to the pixels written", async () => {
    const palette = noise(256 * 3, 7);
    const alphas = noise(200, 8);
    for (const [colorType] of COLOR_TYPES) {
      const channels = ({ 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as Record<number, number>)[colorType]!;
      for (const [width, height] of [
        [1, 3],
        [5, 7],
        [37, 11],
        [300, 9],
      ] as const) {
        const pixels =
          colorType === 3 ? noise(width * height, width, 256) : mixedPixels(width, height, channels, width + colorType);
        const extra = colorType === 3 ? [chunk("PLTE", palette), chunk("tRNS", alphas)] : [];
        const want = expectedRgb(pixels, width * height, colorType, palette, alphas);
        for (const filters of [[0], [1], [2], [3], [4], [4, 3, 2, 1, 0, 2, 4]]) {
          const png = writePng(pixels, width, height, colorType, filters, extra);
          const [js, wasm] = await Promise.all([decodeRows(png), decodeRows(png, simd)]);
          expect(
            Buffer.from(js).equals(Buffer.from(want)),
            `JS, type ${colorType}, ${width}x${height}, filters ${filters}`,
          ).toBe(true);
          expect(
            Buffer.from(wasm).equals(Buffer.from(js)),
            `SIMD, type ${colorType}, ${width}x${height}, filters ${filters}`,
          ).toBe(true);
        }
      }
    }
  });

  it("the RGBA flatten is exact for every colour and alpha pair", async () => {
    const pixels = new Uint8Array(256 * 256 * 4);
    for (let a = 0; a < 256; a++)
      for (let c = 0; c < 256; c++) pixels.set([c, 255 - c, (c * 7) & 255, a], (a * 256 + c) * 4);
    const png = writePng(pixels, 256, 256, 6, [0, 1, 2, 3, 4]);
    const wasm = await decodeRows(png, simd);
    expect(Buffer.from(wasm).equals(Buffer.from(expectedRgb(pixels, 256 * 256, 6)))).toBe(true);
    expect(Buffer.from(wasm).equals(Buffer.from(await decodeRows(png)))).toBe(true);
  });

  it("adaptive-filtered PNGs written by libpng (sharp): RGB, RGBA, grey, grey + alpha", async () => {
    const rgb = screenshotPixels(733, 301, 3);
    const seen = new Set<number>();
    for (const channels of [1, 2, 3, 4] as const) {
      const pixels = new Uint8Array(733 * 301 * channels);
      for (let p = 0; p < 733 * 301; p++) {
        const px = [rgb[3 * p]!, rgb[3 * p + 1]!, rgb[3 * p + 2]!];
        const grey = px[1]!;
        const alpha = (p * 13) % 255;
        const row = channels === 1 ? [grey] : channels === 2 ? [grey, alpha] : channels === 3 ? px : [...px, alpha];
        pixels.set(row, p * channels);
      }
      const image = sharp(Buffer.from(pixels), { raw: { width: 733, height: 301, channels } });
      // Told the colour space, sharp writes one- and two-channel input as grey PNGs (else it widens to RGB).
      if (channels <= 2) image.toColourspace("b-w");
      const png = new Uint8Array(await image.png({ adaptiveFiltering: true, compressionLevel: 9 }).toBuffer());
      const colorType = ({ 1: 0, 2: 4, 3: 2, 4: 6 } as const)[channels];
      expect(png[25], "IHDR colour type").toBe(colorType);
      const filters = filterTypes(png);
      expect(
        filters.some((f) => f !== 0),
        "libpng filtered the rows",
      ).toBe(true);
      for (const f of filters) seen.add(f);
      const want = expectedRgb(pixels, 733 * 301, colorType);
      const [js, wasm] = await Promise.all([decodeRows(png), decodeRows(png, simd)]);
      expect(Buffer.from(js).equals(Buffer.from(want)), `${channels} channels, JS`).toBe(true);
      expect(Buffer.from(wasm).equals(Buffer.from(js)), `${channels} channels, SIMD`).toBe(true);
    }
    expect(seen.size, "filter types libpng chose across the four").toBeGreaterThanOrEqual(3);
  });

  it("random sizes, colour types and per-row filters give the same rows (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(0, 2, 4, 6),
        fc.integer({ min: 1, max: 70 }),
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 1000 }),
        async (colorType, width, height, filters, seed) => {
          const channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[colorType]!;
          const pixels = noise(width * height * channels, seed);
          const png = writePng(pixels, width, height, colorType, filters);
          const wasm = await decodeRows(png, simd);
          expect(Buffer.from(wasm).equals(Buffer.from(await decodeRows(png)))).toBe(true);
          expect(Buffer.from(wasm).equals(Buffer.from(expectedRgb(pixels, width * height, colorType)))).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("refuses an unknown row filter on both paths", async () => {
    const png = writePng(noise(30, 1), 10, 1, 2, [5 as number]);
    await expect(decodeRows(png, simd)).rejects.toThrow(/unknown row filter 5/);
    await expect(decodeRows(png)).rejects.toThrow(/unknown row filter 5/);
  });
});

describe("the chunks are walked once, then decoded from what the walk found", () => {
  it("decodePngRows reads the parsed chunks, not the file: a CRC damaged after the walk does not reach the decode", async () => {
    const pixels = screenshotPixels(40, 24);
    const png = writePng(pixels, 40, 24, 2, [0, 1, 2, 3, 4]);
    const info = parseChunks(png);
    // Damage the IDAT chunk's CRC (the 4 bytes after its data): a walk of the file would refuse it now.
    const idatEnd = info.idat[0]!.byteOffset + info.idat[0]!.length;
    png[idatEnd]! ^= 0xff;
    expect(() => parseChunks(png)).toThrow(/IDAT chunk has a wrong CRC/);
    let out = new Uint8Array(0);
    decodePngRows(
      info,
      (w, h) => {
        out = new Uint8Array(w * h * 3);
        return {
          wantsRow: () => true,
          pushRow: (row: number, rgb: Uint8Array, at = 0) => out.set(rgb.subarray(at, at + w * 3), row * w * 3),
        } as unknown as StreamingResampler;
      },
      { zlib, simd },
    );
    expect(out).toEqual(pixels);
  });
});
