/**
 * Whose fault a failed fit is: a third-party decoder failing on the caller's bytes is the image's
 * (400 `invalid_image`, 413 when memory ran out); a trap in our own WASM kernels, or a decode of
 * our own output that fails, is ours and must never be answered as the caller's broken image.
 * Every error here is raised by the real module named, not built by hand.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import sharp from "sharp";
import { AppError } from "../../shared/http/errors";
import { DecoderFailure, decodeCallerBytes } from "../../shared/imaging/codecs/codec";
import { decodeJpegRgb } from "../../shared/imaging/codecs/jpeg/jpeg.decode";
import { decodeWebpRows } from "../../shared/imaging/codecs/webp/webp.decode";
import { fitImage } from "../../shared/imaging/fit";
import { StreamingResampler } from "../../shared/imaging/resample";
import { fitFailure } from "../../shared/vision/vision.service";
import { loadVisionWasmNode } from "../../bench/vision-wasm-node";
import { photoPixels } from "../fixtures/images";
import { toArithmetic } from "../fixtures/jpeg-arith";
import { vp8lHeader, webpOf } from "../fixtures/hostile";

const wasm = loadVisionWasmNode();
const toOne = (w: number, h: number) => new StreamingResampler(w, h, { x: 0, y: 0, width: w, height: h }, 1, 1);

/** The error `run` throws (the test fails if it throws nothing). */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

/** A real trap of our SIMD module: its unfilter kernel given a line far outside its memory. */
function ownKernelTrap(): unknown {
  const kernels = new WebAssembly.Instance(wasm.simd!, {}).exports as unknown as {
    unfilter(filter: number, cur: number, prev: number, n: number, bpp: number): void;
  };
  return thrown(() => kernels.unfilter(1, 0x7fff0000, 0, 64, 3));
}

/** A real allocation failure: a WASM memory grown past its declared maximum. */
const growPastMaximum = () => new WebAssembly.Memory({ initial: 1, maximum: 1 }).grow(1);

describe("a failed fit is answered by whose fault it is", () => {
  it("a trap in our own SIMD kernel is a 500 internal_error, not the caller's invalid_image", () => {
    const trap = ownKernelTrap();
    expect(trap).toBeInstanceOf(WebAssembly.RuntimeError);
    const answer = fitFailure(trap) as AppError;
    expect(answer).toBeInstanceOf(AppError);
    expect([answer.status, answer.code]).toEqual([500, "internal_error"]);
    expect(answer.privateCause).toBe(trap);
    expect(answer.message).not.toMatch(/image (is|could not)|re-save/i);
  });

  it("libjpeg-turbo giving up on data the walk let through (a scan naming a component the frame lacks) is tagged at the codec boundary and answered 400 invalid_image", async () => {
    const rgb = photoPixels(64, 48);
    const jpeg = new Uint8Array(
      await sharp(Buffer.from(rgb), { raw: { width: 64, height: 48, channels: 3 } })
        .jpeg()
        .toBuffer(),
    );
    const sos = jpeg.findIndex((v, i) => v === 0xff && jpeg[i + 1] === 0xda);
    jpeg[sos + 5] = 9; // the scan's first component selector: no component 9 in the frame
    const failure = await fitImage(jpeg, { embedTargetBytes: 4096, maxLongEdge: 1568, maxInputPixels: 1e8 }, wasm).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(DecoderFailure);
    expect((failure as DecoderFailure).decoder).toBe("libjpeg-turbo");
    const answer = fitFailure(failure) as AppError;
    expect([answer.status, answer.code]).toEqual([400, "invalid_image"]);
    expect(answer.message).toBe(
      "The JPEG image could not be decoded: its data is corrupt or uses an unsupported variant. Re-save or re-export it and send the complete file.",
    );
  });

  it("libwebp refusing a WebP's garbage VP8L data is a 400 invalid_image naming the format", () => {
    const refusal = thrown(() =>
      decodeWebpRows(webpOf([["VP8L", vp8lHeader(64, 48)]]), 64, 48, 1, wasm.webpDecoder, toOne),
    );
    expect(refusal).toBeInstanceOf(AppError);
    const answer = fitFailure(refusal) as AppError;
    expect([answer.status, answer.code]).toEqual([400, "invalid_image"]);
    expect(answer.message).toMatch(/^The WEBP image (could not be decoded: its data is corrupt|is cut short)/);
  });

  it("memory running out inside a decoder call, or anywhere in the engine, is a 413 image_too_large", () => {
    const inside = thrown(() =>
      decodeCallerBytes("libwebp", "WEBP", "could not be decoded: its data is corrupt", growPastMaximum),
    );
    expect(inside).toBeInstanceOf(DecoderFailure);
    expect((inside as DecoderFailure).exhausted).toBe(true);
    for (const error of [inside, thrown(growPastMaximum)]) {
      const answer = fitFailure(error) as AppError;
      expect([answer.status, answer.code]).toEqual([413, "image_too_large"]);
    }
  });

  it("our own refusals pass unchanged through the boundary and the classifier", () => {
    const refusal = new AppError(413, "image_too_large", "too big");
    expect(
      thrown(() =>
        decodeCallerBytes("libjpeg-turbo", "JPEG", "x", () => {
          throw refusal;
        }),
      ),
    ).toBe(refusal);
    expect(fitFailure(refusal)).toBe(refusal);
  });

  it("libjpeg-turbo failing on bytes we encoded (the fidelity check's decode) is our failure, not the caller's", () => {
    const notJpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xc0, 0x00, 0x02, 0xff, 0xd9]);
    const failure = thrown(() => decodeJpegRgb(notJpeg, wasm.jpegDecoder));
    expect(failure).not.toBeInstanceOf(AppError);
    expect(failure).not.toBeInstanceOf(DecoderFailure);
    expect(fitFailure(failure)).toBe(failure); // untagged: the error handler answers 500 and logs it
  });
});

describe("bytes flipped inside the image data (our libjpeg-turbo and libwebp builds)", () => {
  const transcoder = new WebAssembly.Module(readFileSync(new URL("../fixtures/jpeg-arith.wasm", import.meta.url)));
  const photo = () => sharp(Buffer.from(photoPixels(160, 120)), { raw: { width: 160, height: 120, channels: 3 } });
  const bytesOf = async (image: ReturnType<typeof sharp>) => new Uint8Array(await image.toBuffer());
  it.each([
    ["JPEG baseline", () => bytesOf(photo().jpeg())],
    ["JPEG progressive", () => bytesOf(photo().jpeg({ progressive: true }))],
    ["JPEG arithmetic", async () => toArithmetic(transcoder, await bytesOf(photo().jpeg()))],
    ["JPEG arithmetic progressive", async () => toArithmetic(transcoder, await bytesOf(photo().jpeg()), true)],
    ["WebP lossy", () => bytesOf(photo().webp())],
    ["WebP lossless with alpha", () => bytesOf(photo().ensureAlpha(0.5).webp({ lossless: true }))],
  ] as const)("%s: a fit or a 4xx, never a crash or a 500 (property)", async (_name, make) => {
    const whole = await make();
    // Past the headers: the last two thirds of the file are entropy-coded data.
    const from = Math.floor(whole.length / 3);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: from, max: whole.length - 3 }), fc.integer({ min: 1, max: 255 })), {
          minLength: 1,
          maxLength: 8,
        }),
        async (flips) => {
          const broken = whole.slice();
          for (const [at, mask] of flips) broken[at]! ^= mask;
          // A small budget: the image is decoded, never passed through on its structure alone.
          const outcome = await fitImage(
            broken,
            { embedTargetBytes: 4096, maxLongEdge: 1568, maxInputPixels: 1e8 },
            wasm,
          ).then(
            () => undefined,
            (e: unknown) => fitFailure(e),
          );
          if (outcome) expect([400, 413, 415]).toContain((outcome as AppError).status);
        },
      ),
      { numRuns: 40 },
    );
  });
});
