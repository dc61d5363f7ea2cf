/**
 * Arithmetic-coded JPEGs (SOF9, and SOF10 progressive) are decoded by our libjpeg-turbo build
 * (native/jpeg/), to the very pixels of the Huffman-coded file they were transcoded from, and are
 * re-encoded rather than embedded unchanged; lossless and hierarchical JPEGs stay a 415.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import sharp, { type JpegOptions } from "sharp";
import { AppError } from "../../shared/http/errors";
import { fitImage } from "../../shared/imaging/fit";
import { decodeJpegRgb, decodeJpegRows } from "../../shared/imaging/codecs/jpeg/jpeg.decode";
import type { StreamingResampler } from "../../shared/imaging/resample";
import { loadVisionWasmNode } from "../../bench/vision-wasm-node";
import { photoPixels } from "../fixtures/images";
import { toArithmetic } from "../fixtures/jpeg-arith";

const wasm = loadVisionWasmNode();
const transcoder = new WebAssembly.Module(readFileSync(new URL("../fixtures/jpeg-arith.wasm", import.meta.url)));
const opts = (embedTargetBytes: number) => ({ embedTargetBytes, maxLongEdge: 1568, maxInputPixels: 16_777_216 });

async function photoJpeg(width: number, height: number, options: JpegOptions = {}): Promise<Uint8Array> {
  const image = sharp(Buffer.from(photoPixels(width, height, 4)), { raw: { width, height, channels: 3 } });
  return new Uint8Array(await image.jpeg({ quality: 90, ...options }).toBuffer());
}

/** The SOFn markers a file's header holds (second byte of each 0xFF 0xCn, n not 4, 8 or C). */
function framesOf(jpeg: Uint8Array): number[] {
  const found: number[] = [];
  for (let i = 0; i + 1 < jpeg.length; i++) {
    const m = jpeg[i + 1]!;
    if (jpeg[i] === 0xff && m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) found.push(m);
  }
  return found;
}

describe("arithmetic-coded JPEGs", () => {
  it.each([
    ["sequential (SOF9)", false, 0xc9],
    ["progressive (SOF10)", true, 0xca],
  ])("%s decode to exactly the pixels of the Huffman-coded original", async (_name, progressive, marker) => {
    const huffman = await photoJpeg(640, 480);
    const arithmetic = toArithmetic(transcoder, huffman, progressive);
    expect(framesOf(arithmetic)[0]).toBe(marker);
    const ours = decodeJpegRgb(arithmetic, wasm.jpegDecoder);
    const reference = decodeJpegRgb(huffman, wasm.jpegDecoder);
    expect([ours.width, ours.height]).toEqual([640, 480]);
    expect(Buffer.compare(Buffer.from(ours.rgb), Buffer.from(reference.rgb))).toBe(0);
  });

  it("a 3000x2000 arithmetic-coded photo is fitted exactly as its Huffman-coded original", async () => {
    const huffman = await photoJpeg(3000, 2000);
    const arithmetic = toArithmetic(transcoder, huffman);
    const [a, b] = await Promise.all([
      fitImage(arithmetic, opts(262_144), wasm),
      fitImage(huffman, opts(262_144), wasm),
    ]);
    expect([a.width, a.height, a.quality]).toEqual([b.width, b.height, b.quality]);
    expect(Buffer.compare(Buffer.from(a.data), Buffer.from(b.data))).toBe(0);
    expect(a.original.mediaType).toBe("image/jpeg");
  });

  it("one that would fit the budget as it is, is re-encoded as a Huffman-coded JPEG, not passed through", async () => {
    const huffman = await photoJpeg(320, 240);
    const arithmetic = toArithmetic(transcoder, huffman);
    const passed = await fitImage(huffman, opts(262_144), wasm);
    expect(passed.passedThrough).toBe(true);
    const out = await fitImage(arithmetic, opts(262_144), wasm);
    expect(out.passedThrough).toBe(false);
    expect([out.width, out.height]).toEqual([320, 240]);
    expect(framesOf(out.data)).toEqual([0xc0]);
    // What a provider receives decodes everywhere: sharp (libvips) reads it as the same picture.
    const meta = await sharp(out.data).metadata();
    expect([meta.width, meta.height]).toEqual([320, 240]);
  });

  it("cut before its end, it is a 400 invalid_image", async () => {
    const arithmetic = toArithmetic(transcoder, await photoJpeg(320, 240));
    const error = await fitImage(arithmetic.subarray(0, arithmetic.length >> 1), opts(262_144), wasm).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(400);
    expect((error as AppError).code).toBe("invalid_image");
  });
});

describe("JPEG codings that stay unsupported", () => {
  it.each([
    ["lossless (SOF3)", 0xc3],
    ["hierarchical (SOF5)", 0xc5],
    ["lossless arithmetic (SOF11)", 0xcb],
  ])("%s is a 415 naming the coding", async (_name, marker) => {
    const jpeg = await photoJpeg(64, 48);
    const at = jpeg.findIndex((v, i) => v === 0xff && jpeg[i + 1] === 0xc0);
    jpeg[at + 1] = marker;
    const error = await fitImage(jpeg, opts(262_144), wasm).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(415);
    expect((error as AppError).message).toMatch(/lossless or hierarchical coding/);
  });
});

describe("the decoder's memory", () => {
  it("reads the file a chunk at a time and hands rows over a band at a time: a 4000x3000 baseline JPEG decodes in less WASM memory than its file", async () => {
    const jpeg = await photoJpeg(4000, 3000);
    let rows = 0;
    const sink = { pushRow: () => void rows++, wantsRow: () => true, finish: () => new Uint8Array(0) };
    const decoded = decodeJpegRows(
      jpeg,
      4000,
      3000,
      8,
      wasm.jpegDecoder,
      () => sink as unknown as StreamingResampler,
      undefined,
    );
    expect(rows).toBe(3000);
    // The frame is 36 MB of RGB and the file 2-3 MB; the decoder holds libjpeg's state, one 64 KB
    // chunk of the file and one 16-row band.
    expect(jpeg.length).toBeGreaterThan(2 * 1024 * 1024);
    expect(decoded.stats.wasmBytes).toBeLessThanOrEqual(1024 * 1024);
  });
});
