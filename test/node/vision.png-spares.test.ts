/**
 * The PNG decoder's SIMD lines (shared/imaging/codecs/png/png.decode.ts) take their instance from
 * the fit's SimdPool, as the resampler and the encoder do: once a fit has run, the next PNG fit
 * instantiates no SIMD module at all (a fresh instance every decode had an exports object of its
 * own, whose new hidden class deoptimised the decoder's calls into it, docs/speed.md), and its
 * bytes are those of a fit in a fresh process.
 */
import { describe, expect, it } from "vitest";
import { fitImage } from "../../shared/imaging/fit";
import { loadVisionWasmNode } from "../../bench/vision-wasm-node";
import { encodePng, screenshotPixels } from "../fixtures/images";

const wasm = loadVisionWasmNode();
/** Instances of our SIMD module made so far. */
let simdInstances = 0;
const Instance = WebAssembly.Instance;
WebAssembly.Instance = class extends Instance {
  constructor(module: WebAssembly.Module, imports?: WebAssembly.Imports) {
    super(module, imports);
    if (module === wasm.simd) simdInstances++;
  }
};
const opts = { embedTargetBytes: 256 * 1024, maxLongEdge: 1568, maxInputPixels: 16_777_216 };

describe("the PNG decoder's SIMD instance", () => {
  it("is the isolate's spare from fit to fit: a later PNG fit makes no SIMD instance", async () => {
    expect(wasm.simd).toBeDefined();
    const first = await encodePng(screenshotPixels(1920, 1080, 31), 1920, 1080, 3);
    const second = await encodePng(screenshotPixels(1920, 1080, 32), 1920, 1080, 3);
    const alone = await fitImage(second, opts, wasm);
    await fitImage(first, opts, wasm);
    const before = simdInstances;
    const again = await fitImage(second, opts, wasm);
    expect(simdInstances - before).toBe(0);
    expect(Buffer.from(again.data).equals(Buffer.from(alone.data))).toBe(true);
  });
});
