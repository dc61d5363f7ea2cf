import { describe, expect, it } from "vitest";
import sharp from "sharp";
import { decodePngRows, parseChunks } from "../../shared/imaging/codecs/png/png.decode";
import { StreamingResampler, boxFactor, resizeRgb } from "../../shared/imaging/resample";
import { loadVisionWasmNode } from "../../bench/vision-wasm-node";
import { photoPixels, screenshotPixels } from "../fixtures/images";

const { zlib, simd } = loadVisionWasmNode();

function psnr(a: Uint8Array, b: Uint8Array): number {
  let se = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    se += d * d;
  }
  return se === 0 ? 99 : 10 * Math.log10((255 * 255) / (se / a.length));
}

async function sharpLanczos(
  rgb: Uint8Array,
  width: number,
  height: number,
  dstWidth: number,
  dstHeight: number,
): Promise<Uint8Array> {
  const raw = { width, height, channels: 3 as const };
  return new Uint8Array(
    await sharp(Buffer.from(rgb), { raw })
      .resize(dstWidth, dstHeight, { fit: "fill", kernel: "lanczos3" })
      .raw()
      .toBuffer(),
  );
}

describe("resizeRgb (Lanczos-3, box pre-shrink past 4x)", () => {
  it("matches libvips' Lanczos-3 on text and photos, with and without the box stage", async () => {
    const text = screenshotPixels(1600, 1000);
    const photo = photoPixels(1600, 1000, 4);
    for (const [rgb, dw, dh] of [
      [text, 1230, 769],
      [text, 500, 312],
      [photo, 1230, 769],
      [photo, 300, 188],
    ] as const) {
      const ours = resizeRgb(rgb, 1600, 1000, dw, dh);
      // 1600/300 = 5.3: the box stage runs (factor 2), as libvips' own shrink does at that ratio.
      expect(psnr(ours, await sharpLanczos(rgb, 1600, 1000, dw, dh))).toBeGreaterThan(45);
    }
    expect([boxFactor(1.3), boxFactor(3.9), boxFactor(4), boxFactor(6.7)]).toEqual([1, 1, 2, 3]);
  });

  it("gives the same bytes in WASM SIMD and in JS at the fits' shrinks, whose end taps round to zero", () => {
    const photo = photoPixels(1600, 1000, 5);
    // 1.2 (a 7/8 decode onto the cap), 1.5, 1.68, 1.92 and 3.27 (a 5K screenshot onto the cap).
    for (const [dw, dh] of [
      [1333, 833],
      [1067, 667],
      [952, 595],
      [833, 521],
      [489, 306],
    ] as const) {
      expect(Buffer.from(resizeRgb(photo, 1600, 1000, dw, dh, simd)).equals(resizeRgb(photo, 1600, 1000, dw, dh))).toBe(
        true,
      );
    }
  });

  it("copies rows where every output is one source pixel in place: 1:1, whole or a window at whole pixels", () => {
    const text = screenshotPixels(640, 400, 2);
    for (const module of [simd, undefined]) {
      expect(Buffer.from(resizeRgb(text, 640, 400, 640, 400, module)).equals(Buffer.from(text))).toBe(true);
      const window = new StreamingResampler(640, 400, { x: 37, y: 11, width: 500, height: 300 }, 500, 300, module);
      for (let row = 0; row < 400; row++) window.pushRow(row, text, row * 640 * 3);
      const crop = new Uint8Array(500 * 300 * 3);
      for (let y = 0; y < 300; y++)
        crop.set(text.subarray(((y + 11) * 640 + 37) * 3, ((y + 11) * 640 + 537) * 3), y * 1500);
      expect(Buffer.from(window.finish()).equals(Buffer.from(crop))).toBe(true);
      // Half a pixel off: filtered, not copied.
      const between = new StreamingResampler(640, 400, { x: 37.5, y: 11, width: 500, height: 300 }, 500, 300, module);
      for (let row = 0; row < 400; row++) between.pushRow(row, text, row * 640 * 3);
      expect(psnr(between.finish(), crop)).toBeLessThan(40);
    }
  });
});

describe("decodePngRows", () => {
  it("unfilters every filter type (libpng's adaptive choice) and flattens alpha on white, exactly", async () => {
    const width = 301,
      height = 203;
    const rgb = photoPixels(width, height, 8);
    const text = screenshotPixels(width, height);
    const rgba = new Uint8Array(width * height * 4);
    const flattened = new Uint8Array(width * height * 3);
    for (let i = 0, o = 0; i < rgb.length; i += 3, o += 4) {
      const a = (i * 7) % 256;
      for (let c = 0; c < 3; c++) {
        const v = (i / 3) % 2 ? rgb[i + c]! : text[i + c]!;
        rgba[o + c] = v;
        flattened[i + c] = Math.round((v * a + 255 * (255 - a)) / 255);
      }
      rgba[o + 3] = a;
    }
    for (const [pixels, channels, expected] of [
      [rgb, 3, rgb],
      [rgba, 4, flattened],
    ] as const) {
      const png = new Uint8Array(
        await sharp(Buffer.from(pixels), { raw: { width, height, channels } })
          .png({ adaptiveFiltering: true, compressionLevel: 9 })
          .toBuffer(),
      );
      // Same-size Lanczos taps fall on the kernel's zeros: the resampler passes rows through as they are.
      const { resampler } = decodePngRows(
        parseChunks(png),
        (w, h) => new StreamingResampler(w, h, { x: 0, y: 0, width: w, height: h }, w, h),
        { zlib },
      );
      expect(psnr(resampler.finish(), expected)).toBe(99);
    }
  });
});
