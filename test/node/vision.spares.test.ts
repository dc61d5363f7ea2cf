/**
 * What a fit keeps for the next one (SimdPool.release, shared/imaging/wasm/simd.instances.ts): the
 * encoder's coefficient array and the SIMD instances go from one fit to the next, never to two
 * fits at once, and nothing a finished fit prepared can run on them afterwards.
 */
import { describe, expect, it } from "vitest";
import { fitImage } from "../../shared/imaging/fit";
import { prepareJpeg } from "../../shared/imaging/jpeg.baseline";
import { SimdPool } from "../../shared/imaging/wasm/simd.instances";
import { loadVisionWasmNode } from "../../bench/vision-wasm-node";
import { encodePng, photoPixels, screenshotPixels } from "../fixtures/images";

const wasm = loadVisionWasmNode();
const opts = { embedTargetBytes: 96 * 1024, maxLongEdge: 800, maxInputPixels: 16_777_216 };

describe("the coefficient array and instances kept between fits", () => {
  it("hands the array a finished fit filled to the next fit instead of a new one", () => {
    const first = new SimdPool(wasm.simd!);
    const filled = first.coefficientStore(6 * 64 * 100);
    first.release();
    const next = new SimdPool(wasm.simd!);
    expect(next.coefficientStore(6 * 64 * 80).buffer).toBe(filled.buffer);
    // Taken: a third fit running beside the second gets an array of its own.
    expect(new SimdPool(wasm.simd!).coefficientStore(6 * 64 * 80).buffer).not.toBe(filled.buffer);
    next.release();
  });

  it("leases the next fit the instance a finished fit used, zeroed as a fresh one", () => {
    const first = new SimdPool(wasm.simd!);
    const used = first.lease("jpeg", 4096).k;
    new Uint8Array(used.memory.buffer).fill(7, 0, 4096);
    first.release();
    const again = new SimdPool(wasm.simd!).lease("jpeg", 4096).k;
    expect(again).toBe(used);
    expect(new Uint8Array(again.memory.buffer, 0, 4096).every((b) => b === 0)).toBe(true);
    // Taken: a pool beside it gets a fresh instance.
    expect(new SimdPool(wasm.simd!).lease("jpeg", 4096).k).not.toBe(used);
  });

  it("refuses to run a finished fit's encoder, whose array the next fit may own", () => {
    const pool = new SimdPool(wasm.simd!);
    const prepared = prepareJpeg(photoPixels(96, 64, 3), 96, 64, pool);
    expect(prepared.sizeAt(80)).toBeGreaterThan(0);
    pool.release();
    expect(() => prepared.sizeAt(70)).toThrow(/SIMD kernels used after/);
  });

  it("gives every fit the bytes it gets alone, also with fits in flight together", async () => {
    const inputs = [
      await encodePng(screenshotPixels(1280, 800, 4), 1280, 800, 3),
      await encodePng(photoPixels(1200, 900, 5), 1200, 900, 3),
      await encodePng(screenshotPixels(1000, 1400, 6), 1000, 1400, 3),
    ];
    const alone: Uint8Array[] = [];
    for (const input of inputs) alone.push((await fitImage(input, opts, wasm)).data);
    for (let round = 0; round < 2; round++) {
      const together = await Promise.all(inputs.map((input) => fitImage(input, opts, wasm)));
      together.forEach((fit, i) => expect(Buffer.from(fit.data).equals(Buffer.from(alone[i]!))).toBe(true));
    }
  });
});
