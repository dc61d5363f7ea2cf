/**
 * The typical screenshots agents send (bench/vision-inputs.ts: 1280x800 to 2560x1440, light and
 * dark UIs with a gradient and a photo panel, RGB PNG) at the default budget: within the budget and
 * the long edge, as faithful as sharp's fit at the same size and quality (the fidelity tests'
 * threshold); and the sampled PNG prediction that spares them a PNG encode never skips a PNG that fits.
 */
import { describe, expect, it } from "vitest";
import sharp from "sharp";
import { PNG_SLACK, fitImage } from "../../shared/imaging/fit";
import { encodePng, pngPredictedOver } from "../../shared/imaging/codecs/png/png.encode";
import { loadVisionWasmNode } from "../../bench/vision-wasm-node";
import { psnrOf } from "../../bench/vision-psnr";
import { SCREENSHOT_SIZES, makeScreenshotInputs, typicalScreenshotPixels } from "../../bench/vision-inputs";
import { UI_SCREENSHOTS, uiScreenshotPixels } from "../fixtures/ui-screenshots";

const wasm = loadVisionWasmNode();
const BUDGET = 256 * 1024;
const opts = { embedTargetBytes: BUDGET, maxLongEdge: 1568, maxInputPixels: 16_777_216 };

function psnr(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  return psnrOf(a, b);
}
const pixelsOf = async (image: Uint8Array | Buffer) =>
  new Uint8Array(await sharp(image).removeAlpha().raw().toBuffer());
/** The cap-size render as libvips shows it (Lanczos-3): the reference, and the PNG prediction's input. */
const atCap = async (input: Buffer, width: number, height: number) =>
  new Uint8Array(await sharp(input).resize(width, height, { fit: "fill", kernel: "lanczos3" }).raw().toBuffer());
const capSize = (width: number, height: number) => {
  const scale = Math.min(1, 1568 / Math.max(width, height));
  return { width: Math.round(width * scale), height: Math.round(height * scale) };
};

describe("typical screenshots at the default budget", () => {
  it("fit the budget and the long edge, as faithful as sharp's fit at the same size and quality", async () => {
    const inputs = await makeScreenshotInputs();
    expect(inputs.map(([name]) => name)).toHaveLength(2 * SCREENSHOT_SIZES.length);
    for (const [name, input] of inputs) {
      const out = await fitImage(new Uint8Array(input), opts, wasm);
      expect(out.passedThrough, name).toBe(false);
      expect(out.dataUrlBytes, name).toBeLessThanOrEqual(BUDGET);
      expect(out.data.length, name).toBeLessThanOrEqual(
        Math.floor((BUDGET - "data:image/jpeg;base64,".length) / 4) * 3,
      );
      const meta = await sharp(input).metadata();
      expect({ width: out.width, height: out.height }, name).toEqual(capSize(meta.width!, meta.height!));
      const ref = await atCap(input, out.width, out.height);
      const ours = psnr(await pixelsOf(out.data), ref);
      const theirs = psnr(
        await pixelsOf(
          await sharp(input)
            .resize(out.width, out.height, { fit: "fill", kernel: "lanczos3" })
            .jpeg({ quality: out.quality!, chromaSubsampling: out.chroma ?? "4:2:0" })
            .toBuffer(),
        ),
        ref,
      );
      expect(ours, name).toBeGreaterThan(theirs - 0.5);
    }
  }, 240_000);
});

describe("the sampled PNG prediction", () => {
  it("never predicts a PNG that just fits over its limit (the UI corpus and the typical screenshots, at the cap size)", async () => {
    const images: Array<[string, Uint8Array, number, number]> = [];
    for (const [name, spec] of UI_SCREENSHOTS) {
      const { width, height } = capSize(spec.width, spec.height);
      const input = await sharp(Buffer.from(uiScreenshotPixels(spec)), {
        raw: { width: spec.width, height: spec.height, channels: 3 },
      })
        .png()
        .toBuffer();
      images.push([name, await atCap(input, width, height), width, height]);
    }
    for (const [width, height] of SCREENSHOT_SIZES) {
      const { width: w, height: h } = capSize(width, height);
      const input = await sharp(Buffer.from(typicalScreenshotPixels(width, height, "dark")), {
        raw: { width, height, channels: 3 },
      })
        .png()
        .toBuffer();
      images.push([`typical ${width}x${height}`, await atCap(input, w, h), w, h]);
    }
    for (const [name, rgb, width, height] of images) {
      const exact = encodePng(rgb, width, height, 4 << 20, wasm.zlib)!.length;
      // A limit the PNG meets exactly: the fit must encode it.
      expect(pngPredictedOver(rgb, width, height, exact, PNG_SLACK, wasm.zlib), name).toBe(false);
    }
  }, 120_000);

  it("spares a typical screenshot with a photo panel the PNG encode at the JPEG's size", async () => {
    for (const [name, input] of await makeScreenshotInputs()) {
      const out = await fitImage(new Uint8Array(input), opts, wasm);
      expect(out.mediaType, name).toBe("image/jpeg");
      const rgb = await atCap(input, out.width, out.height);
      expect(pngPredictedOver(rgb, out.width, out.height, out.data.length, PNG_SLACK, wasm.zlib), name).toBe(true);
    }
  }, 240_000);
});
