/**
 * GIF and interlaced PNG decoded row by row by our own code (no whole-image decoder), and WebP
 * scaled while decoding by our libwebp build, against libvips (sharp) as the reference decode:
 * every variant a real encoder writes, transparency and frames smaller than the screen, and images
 * past the old 6 MP photon cap fitted instead of refused.
 */
import { describe, expect, it } from "vitest";
import sharp from "sharp";
import { AppError } from "../../shared/http/errors";
import { readImageHeader, walkGifFrames } from "../../shared/media/image-header";
import { decodeGifRows } from "../../shared/imaging/codecs/gif/gif.decode";
import { decodeAdam7Rows } from "../../shared/imaging/codecs/png/png.adam7";
import { parseChunks } from "../../shared/imaging/codecs/png/png.decode";
import { decodeWebpRows } from "../../shared/imaging/codecs/webp/webp.decode";
import { fitImage } from "../../shared/imaging/fit";
import { StreamingResampler } from "../../shared/imaging/resample";
import { loadVisionWasmNode } from "../../bench/vision-wasm-node";
import { gifFrameData, photoPixels, screenshotPixels } from "../fixtures/images";
import { anmf, firstWebpChunk, pngOf, vp8x, webpOf } from "../fixtures/hostile";

const wasm = loadVisionWasmNode();
const opts = { embedTargetBytes: 262_144, maxLongEdge: 1568, maxInputPixels: 14_745_600 };
const raw = (rgb: Uint8Array, width: number, height: number) =>
  sharp(Buffer.from(rgb), { raw: { width, height, channels: 3 } });
/** A resampler at the source's own size: Lanczos at 1:1 hands every pixel through unchanged. */
const sameSize = (width: number, height: number) =>
  new StreamingResampler(width, height, { x: 0, y: 0, width, height }, width, height);
/** What libvips shows: decoded, transparency flattened on white, 8-bit sRGB. */
const sharpPixels = async (bytes: Uint8Array) =>
  new Uint8Array(await sharp(bytes).flatten({ background: "#ffffff" }).toColourspace("srgb").raw().toBuffer());

function psnr(a: Uint8Array, b: Uint8Array): number {
  expect(a.length).toBe(b.length);
  let se = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    se += d * d;
  }
  return se === 0 ? 99 : 10 * Math.log10((255 * 255 * a.length) / se);
}

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("GIF, decoded row by row", () => {
  const photo = () => raw(photoPixels(203, 151), 203, 151);
  it.each([
    ["photo (LZW codes up to 12 bits)", () => photo().gif()],
    ["photo, interlaced", () => photo().gif({ progressive: true })],
    ["screenshot, interlaced", () => raw(screenshotPixels(160, 97), 160, 97).gif({ progressive: true })],
    ["one row, interlaced", () => raw(photoPixels(50, 1), 50, 1).gif({ progressive: true })],
    [
      "photo with transparency",
      () =>
        photo()
          .ensureAlpha(0)
          .composite([
            { input: Buffer.from(photoPixels(30, 20)), raw: { width: 30, height: 20, channels: 3 }, left: 10, top: 10 },
          ])
          .gif(),
    ],
  ] as const)("%s: the pixels libvips decodes", async (_name, make) => {
    const gif = new Uint8Array(await make().toBuffer());
    const header = readImageHeader(gif);
    const ours = decodeGifRows(gif, header, sameSize).finish();
    expect(psnr(ours, await sharpPixels(gif))).toBeGreaterThan(60);
  });

  it("a frame smaller than the screen with a transparent index: uncovered and transparent pixels are white, the rest its palette", async () => {
    // 8x6 screen, 4-colour table (red, green, blue, black); a 4x2 frame at (2,3), index 1 transparent.
    const gce = [0x21, 0xf9, 4, 0x01, 0, 0, 1, 0];
    const bytes = new Uint8Array([
      ...[..."GIF89a"].map((c) => c.charCodeAt(0)),
      8,
      0,
      6,
      0,
      0xf1,
      0,
      0,
      255,
      0,
      0,
      0,
      255,
      0,
      0,
      0,
      255,
      0,
      0,
      0,
      ...gce,
      0x2c,
      2,
      0,
      3,
      0,
      4,
      0,
      2,
      0,
      0,
      ...gifFrameData(4, 2), // first row blue...
      0x3b,
    ]);
    // ...then the second row's four pixels: rebuild with 8 pixels, 4 blue then 4 transparent.
    const frameData = gifFrameData(8, 2);
    const file = new Uint8Array([...bytes.subarray(0, 13 + 12 + gce.length + 10), ...frameData, 0x3b]);
    const header = readImageHeader(file);
    const ours = decodeGifRows(file, header, sameSize).finish();
    const pixel = (x: number, y: number) => [...ours.subarray((y * 8 + x) * 3, (y * 8 + x) * 3 + 3)];
    expect(pixel(0, 0)).toEqual([255, 255, 255]); // outside the frame
    expect(pixel(2, 3)).toEqual([0, 0, 255]); // inside: index 2, blue
    expect(pixel(5, 4)).toEqual([0, 0, 255]);
    expect(pixel(6, 4)).toEqual([255, 255, 255]); // right of the frame
    expect(psnr(ours, await sharpPixels(file))).toBeGreaterThan(60);
    const transparent = new Uint8Array([
      ...file.subarray(0, 13 + 12),
      0x21,
      0xf9,
      4,
      0x01,
      0,
      0,
      2,
      0,
      ...file.subarray(13 + 12 + 8),
    ]);
    expect(
      [...decodeGifRows(transparent, readImageHeader(transparent), sameSize).finish()].every((v) => v === 255),
    ).toBe(true);
  });

  it("a 3000x2200 GIF, past the old 6 MP photon cap, is fitted as libvips shows it", async () => {
    const gif = new Uint8Array(
      await raw(screenshotPixels(3000, 2200), 3000, 2200).gif({ progressive: true }).toBuffer(),
    );
    const out = await fitImage(gif, opts, wasm);
    expect([out.width, out.height]).toEqual([1568, 1150]);
    expect(out.wasmPeakBytes).toBeLessThan(32 * 2 ** 20); // no whole-image decoder instance
    // The same pixels as libvips decodes them, sent as a PNG (streamed), give the same fit, byte for byte.
    const asPng = new Uint8Array(
      await raw(await sharpPixels(gif), 3000, 2200)
        .png()
        .toBuffer(),
    );
    expect(Buffer.from(out.data).equals(Buffer.from((await fitImage(asPng, opts, wasm)).data))).toBe(true);
  });

  it("a frame whose LZW data ends early is a 400 naming its pixel count on the decode path too", async () => {
    const gif = new Uint8Array(await raw(photoPixels(203, 151), 203, 151).gif().toBuffer());
    let at = walkGifFrames(gif, 203, 151)[0]!.dataStart + 1;
    at += gif[at]! + 1; // keep the first sub-block
    const cut = new Uint8Array([...gif.subarray(0, at), 0x00, 0x3b]);
    const error = await refusal(fitImage(cut, { ...opts, maxLongEdge: 100 }, wasm));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/^The GIF image is truncated: frame 1 has data for \d+ of its 30653 pixels\./);
  });
});

describe("interlaced (Adam7) PNG, decoded pass by pass", () => {
  const photo = (w: number, h: number) => raw(photoPixels(w, h), w, h);
  for (const [w, h] of [
    [203, 151],
    [1, 1],
    [1, 9],
    [9, 1],
    [5, 5],
    [17, 3],
  ] as const) {
    it.each([
      ["RGB", () => photo(w, h).png({ progressive: true })],
      ["RGBA", () => photo(w, h).ensureAlpha(0.4).png({ progressive: true })],
      ["palette", () => photo(w, h).png({ progressive: true, palette: true, colours: 16 })],
      ["grey", () => photo(w, h).toColourspace("b-w").png({ progressive: true })],
      ["16-bit", () => photo(w, h).toColourspace("rgb16").png({ progressive: true })],
    ] as const)(`${w}x${h} %s: the pixels libvips decodes`, async (_name, make) => {
      const png = new Uint8Array(await make().toBuffer());
      const info = parseChunks(png);
      expect(info.interlaced).toBe(true);
      const ours = decodeAdam7Rows(info, sameSize, wasm.zlib).resampler.finish();
      // Flattening rounds differently from libvips by at most one level on translucent pixels.
      expect(psnr(ours, await sharpPixels(png))).toBeGreaterThan(50);
    });
  }

  it("a 3000x2200 interlaced PNG, past the old 6 MP photon cap, is fitted as libvips shows it", async () => {
    const pixels = raw(screenshotPixels(3000, 2200), 3000, 2200);
    const png = new Uint8Array(await pixels.clone().png({ progressive: true }).toBuffer());
    const out = await fitImage(png, opts, wasm);
    expect([out.width, out.height]).toEqual([1568, 1150]);
    expect(out.wasmPeakBytes).toBeLessThan(32 * 2 ** 20);
    // The same file not interlaced (streamed row by row) gives the same fit, byte for byte.
    const plain = new Uint8Array(await pixels.clone().png().toBuffer());
    expect(Buffer.from(out.data).equals(Buffer.from((await fitImage(plain, opts, wasm)).data))).toBe(true);
  });

  it("a stream that ends inside a pass is a 400 naming the pass", async () => {
    const png = new Uint8Array(await raw(photoPixels(96, 64), 96, 64).png({ progressive: true }).toBuffer());
    const info = parseChunks(png);
    const idat = Buffer.concat(info.idat);
    const { deflateSync, inflateSync } = await import("node:zlib");
    const rows = inflateSync(idat);
    const cut = pngOf([
      ["IHDR", png.subarray(16, 29)],
      ["IDAT", deflateSync(rows.subarray(0, rows.length - 500))],
      ["IEND", new Uint8Array(0)],
    ]);
    const error = await refusal(fitImage(cut, { ...opts, maxLongEdge: 50 }, wasm));
    expect(error.status).toBe(400);
    expect(error.message).toBe(
      "The PNG image is truncated: its compressed data ends in Adam7 pass 7 of 7. Re-save or re-export it and send the complete file.",
    );
  });
});

describe("WebP, decoded by libwebp scaled while decoding", () => {
  const photo = (w: number, h: number) => raw(photoPixels(w, h), w, h);
  it.each([
    ["lossy", () => photo(203, 151).webp({ quality: 90 })],
    ["lossless", () => photo(203, 151).webp({ lossless: true })],
    ["lossy with alpha", () => photo(203, 151).ensureAlpha(0.4).webp({ quality: 90 })],
    ["lossless with alpha", () => photo(203, 151).ensureAlpha(0.4).webp({ lossless: true })],
  ] as const)("203x151 %s at its own size: the pixels libvips decodes", async (_name, make) => {
    const webp = new Uint8Array(await make().toBuffer());
    const ours = decodeWebpRows(webp, 203, 151, 1, wasm.webpDecoder, sameSize).resampler.finish();
    // Both decode with libwebp; flattening rounds differently by at most one level on translucent pixels.
    expect(psnr(ours, await sharpPixels(webp))).toBeGreaterThan(50);
  });

  it.each([
    ["lossy photo", () => photo(4000, 3000).webp({ quality: 90 }), 0],
    ["lossless screenshot", () => raw(screenshotPixels(4000, 3000), 4000, 3000).webp({ lossless: true }), 4],
  ] as const)(
    "a 4000x3000 %s WebP, past the old 6 MP photon cap, is fitted as libvips shows it, in a fraction of photon's memory",
    async (_name, make, bytesPerPixel) => {
      const webp = new Uint8Array(await make().toBuffer());
      const out = await fitImage(webp, { ...opts, embedTargetBytes: 1_048_576 }, wasm);
      expect([out.width, out.height]).toEqual([1568, 1176]);
      // photon held about 15 bytes a pixel (180 MB here). libwebp holds the file and writes its
      // output at 2.5x the cap (3920x2940 RGB); lossless also holds its ARGB (4 bytes a pixel), as
      // VP8L's backward references require.
      const output = 3920 * 2940 * 3;
      expect(out.wasmPeakBytes).toBeLessThan(webp.length + bytesPerPixel * 4000 * 3000 + output + 4 * 2 ** 20);
      // The reference is libvips decoding the whole frame, then Lanczos (its own WebP shrink-on-load
      // is the rescaler alone, 33.9 dB on this screenshot).
      const shown = new Uint8Array(await sharp(out.data).raw().toBuffer());
      const expected = new Uint8Array(
        await sharp(webp)
          .resize(1568, 1176, { fit: "fill", kernel: "lanczos3", fastShrinkOnLoad: false })
          .raw()
          .toBuffer(),
      );
      expect(psnr(shown, expected)).toBeGreaterThan(38);
    },
  );

  /** An animation on a `width`x`height` canvas whose first frame is black, `w`x`h` at (`left`, `top`). */
  const blackFirstFrame = async (width: number, height: number, left: number, top: number, w: number, h: number) => {
    const frame = firstWebpChunk(
      new Uint8Array(
        await raw(new Uint8Array(w * h * 3).fill(0), w, h)
          .webp({ lossless: true })
          .toBuffer(),
      ),
    );
    return webpOf([
      ["VP8X", vp8x(width, height, 0x02)],
      ["ANIM", new Uint8Array(6)],
      ["ANMF", anmf(left, top, w, h, [frame])],
    ]);
  };
  /** The RGB of pixel (x, y) of a `width`-wide RGB image. */
  const pixel = (rgb: Uint8Array, width: number, x: number, y: number) => [
    ...rgb.subarray((y * width + x) * 3, (y * width + x) * 3 + 3),
  ];

  it("an animation gives its first frame on the canvas, white where that frame does not reach", async () => {
    const webp = await blackFirstFrame(100, 80, 20, 10, 40, 30);
    expect(readImageHeader(webp)).toMatchObject({ width: 100, height: 80, animated: true });
    const out = decodeWebpRows(webp, 100, 80, 1, wasm.webpDecoder, sameSize).resampler.finish();
    expect(pixel(out, 100, 5, 5)).toEqual([255, 255, 255]);
    expect(pixel(out, 100, 30, 20)).toEqual([0, 0, 0]);
    expect(pixel(out, 100, 59, 39)).toEqual([0, 0, 0]);
    expect(pixel(out, 100, 60, 40)).toEqual([255, 255, 255]);
  });

  it("a first frame smaller than its canvas is scaled with it: white around it, its pixels inside", async () => {
    const webp = await blackFirstFrame(1000, 800, 200, 400, 400, 200);
    // A quarter of the size with the 2.5x margin: the canvas and the frame at 0.625.
    const decoded = decodeWebpRows(webp, 1000, 800, 0.25, wasm.webpDecoder, sameSize);
    expect([decoded.stats.decodedWidth, decoded.stats.decodedHeight]).toEqual([625, 500]);
    const out = decoded.resampler.finish();
    expect(pixel(out, 625, 10, 10)).toEqual([255, 255, 255]);
    expect(pixel(out, 625, 124, 249)).toEqual([255, 255, 255]); // left of the frame (it starts at 125, 250)
    expect(pixel(out, 625, 125, 250)).toEqual([0, 0, 0]);
    expect(pixel(out, 625, 374, 374)).toEqual([0, 0, 0]); // its last pixel (375 x 375 ends the frame)
    expect(pixel(out, 625, 375, 375)).toEqual([255, 255, 255]);
  });

  it("a file cut inside its frame data (its RIFF sizes made to agree) is a 400 invalid_image, passed through or not", async () => {
    const webp = new Uint8Array(await photo(640, 480).webp({ quality: 90 }).toBuffer());
    const cut = webp.slice(0, webp.length - 2000);
    new DataView(cut.buffer).setUint32(4, cut.length - 8, true);
    new DataView(cut.buffer).setUint32(16, cut.length - 20, true);
    // Small enough to pass through (the verification decodes it) and too large (the fit decodes it).
    for (const embedTargetBytes of [262_144, 16_384]) {
      const error = await refusal(fitImage(cut, { ...opts, embedTargetBytes }, wasm));
      expect(error.status).toBe(400);
      expect(error.message).toBe(
        "The WEBP image is cut short: its frame data ends early. Re-save or re-export it and send the complete file.",
      );
    }
  });
});
