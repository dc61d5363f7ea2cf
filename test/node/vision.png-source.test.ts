/**
 * The PNG a lossless source's own bytes rule out (fit.ts `pngOverBySource`, CodecImage.deflatedBytes):
 * a fit skips the sampled PNG prediction and the PNG encode where the source's deflated image data,
 * scaled to the fitted size, is over PNG_SLACK times the PNG's limit; never where a PNG of the fitted
 * image would fit that limit, and only for sources whose bytes say something about ours.
 */
import { describe, expect, it } from "vitest";
import sharp from "sharp";
import { concatBytes } from "../../shared/bytes";
import { pngOverBySource, fitImage } from "../../shared/imaging/fit";
import { encodePng as encodeOurPng } from "../../shared/imaging/codecs/png/png.encode";
import { codecFor } from "../../shared/imaging/codecs/codec.registry";
import { openImage } from "../../shared/media/image-header";
import { resizeRgb } from "../../shared/imaging/resample";
import { loadVisionWasmNode } from "../../bench/vision-wasm-node";
import { makeScreenshotInputs, makeUiInputs } from "../../bench/vision-inputs";
import { screenshot } from "../../bench/computer-use-session";
import {
  PNG_SIGNATURE,
  chunk,
  deflate,
  encodePng,
  encodePngInterlaced,
  ihdr,
  photoPixels,
  withAlpha,
} from "../fixtures/images";

const wasm = loadVisionWasmNode();
const opts = { embedTargetBytes: 256 * 1024, maxLongEdge: 1568, maxInputPixels: 16_777_216 };

const deflatedBytesOf = (png: Uint8Array) => {
  const { header, jpeg } = openImage(png);
  return codecFor(header).open({ bytes: png, header, jpeg }, wasm).deflatedBytes;
};

/** An 8-bit RGB PNG of `rgb`, rows unfiltered, its zlib header's FLEVEL set to `level` (0 fastest .. 3 maximum). */
async function pngWithLevel(rgb: Uint8Array, width: number, height: number, level: number): Promise<Uint8Array> {
  const raw = new Uint8Array((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) raw.set(rgb.subarray(y * width * 3, (y + 1) * width * 3), y * (width * 3 + 1) + 1);
  const stream = await deflate(raw);
  // CMF 0x78 (deflate, 32K window), then FLG: FLEVEL in its top two bits, FCHECK making CMF*256+FLG a multiple of 31.
  const flg = level << 6;
  stream[1] = flg + (31 - ((0x78 * 256 + flg) % 31));
  return concatBytes([
    PNG_SIGNATURE,
    chunk("IHDR", ihdr(width, height, 2)),
    chunk("IDAT", stream),
    chunk("IEND", new Uint8Array(0)),
  ]);
}

describe("the PNG the source's bytes rule out", () => {
  it("never rules out a PNG that fits: the UI corpus, the typical and the session's screenshots, as written and with no row filters at levels 6 and 9", async () => {
    const inputs = [
      ...(await makeUiInputs()),
      ...(await makeScreenshotInputs()),
      ["session", Buffer.from(await screenshot(1, false), "base64")] as [string, Buffer],
    ];
    let checked = 0;
    for (const [name, input] of inputs) {
      const { data, info } = await sharp(input).removeAlpha().raw().toBuffer({ resolveWithObject: true });
      const source = { width: info.width, height: info.height };
      const scale = Math.min(1, 1568 / Math.max(info.width, info.height));
      const size = { width: Math.round(info.width * scale), height: Math.round(info.height * scale) };
      const rgb =
        scale < 1
          ? resizeRgb(new Uint8Array(data), info.width, info.height, size.width, size.height, wasm.simd)
          : new Uint8Array(data);
      // A limit the fitted image's PNG meets exactly: the fit must not rule it out.
      const exact = encodeOurPng(rgb, size.width, size.height, 4 << 20, wasm.zlib)!.length;
      for (const level of [6, 9]) {
        const written = [
          input,
          await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
            .png({ compressionLevel: level, adaptiveFiltering: false })
            .toBuffer(),
        ];
        for (const png of written) {
          const deflated = deflatedBytesOf(new Uint8Array(png));
          expect(deflated, name).toBeGreaterThan(0);
          expect(pngOverBySource(deflated, source, source, size, exact), `${name} level ${level}`).toBe(false);
          checked++;
        }
      }
    }
    expect(checked).toBe(4 * inputs.length);
  }, 240_000);

  it("rules out the typical screenshots' PNG at their JPEG's size, and the fit's output is that JPEG", async () => {
    for (const [name, input] of await makeScreenshotInputs()) {
      const bytes = new Uint8Array(input);
      const out = await fitImage(bytes, opts, wasm);
      expect(out.mediaType, name).toBe("image/jpeg");
      const { width, height } = await sharp(input).metadata();
      const source = { width: width!, height: height! };
      expect(pngOverBySource(deflatedBytesOf(bytes), source, source, out, out.data.length), name).toBe(true);
    }
  }, 240_000);

  it("spares the PNG encode where the sampled rows are flat and the rest is photo (one encode fewer than a fastest-level source)", async () => {
    const width = 1280,
      height = 800;
    const rgb = photoPixels(width, height, 7);
    // White in the rows the sampled prediction reads (the middle 16-row band of every 128 rows).
    for (let y = 0; y < height; y++)
      if (y % 128 >= 64 && y % 128 < 80) rgb.fill(255, y * width * 3, (y + 1) * width * 3);
    const [fast, normal] = [await pngWithLevel(rgb, width, height, 0), await pngWithLevel(rgb, width, height, 2)];
    expect(deflatedBytesOf(fast)).toBeUndefined();
    expect(deflatedBytesOf(normal)).toBeGreaterThan(1_000_000);
    const [a, b] = [await fitImage(fast, opts, wasm), await fitImage(normal, opts, wasm)];
    expect(b.mediaType).toBe("image/jpeg");
    expect(Buffer.from(b.data).equals(Buffer.from(a.data))).toBe(true);
    // The fastest-level source's PNG is predicted from the white rows, so encoded (and over); this one's is not.
    expect(b.encodeAttempts).toBe(a.encodeAttempts - 1);
  }, 60_000);

  it("says nothing about sources whose bytes are not comparable, nor about a crop", async () => {
    const width = 256,
      height = 256;
    const rgb = photoPixels(width, height, 3);
    expect(deflatedBytesOf(await pngWithLevel(rgb, width, height, 2))).toBeGreaterThan(0);
    expect(deflatedBytesOf(await pngWithLevel(rgb, width, height, 0))).toBeUndefined();
    expect(deflatedBytesOf(await encodePng(withAlpha(rgb), width, height, 4))).toBeUndefined();
    expect(deflatedBytesOf(await encodePngInterlaced(rgb, width, height))).toBeUndefined();
    const whole = { width: 1920, height: 1080 };
    const size = { width: 1568, height: 882 };
    expect(pngOverBySource(10_000_000, whole, whole, size, 200_000)).toBe(true);
    expect(pngOverBySource(10_000_000, whole, { width: 1900, height: 1080 }, size, 200_000)).toBe(false);
    expect(pngOverBySource(undefined, whole, whole, size, 200_000)).toBe(false);
  });
});
