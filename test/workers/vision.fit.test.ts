import { beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../shared/http/errors";
import { fitImage } from "../../shared/imaging/fit";
import { dataUrlLength, toBase64 } from "../../shared/media/data-url";
import type { FitOptions } from "../../shared/ports";
import { readImageHeader } from "../../shared/media/image-header";
import { visionWasm } from "../../workers/vision-codecs";
import mozjpeg from "@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm";
import transcoder from "../fixtures/jpeg-arith.wasm";
import { toArithmetic } from "../fixtures/jpeg-arith";
import {
  animatedGif,
  cornerMarkedJpeg,
  decodeRgba,
  encodePng,
  encodePngInterlaced,
  ftypHeader,
  junkBytes,
  photoJpeg,
  photoPixels,
  pngHeaderOnly,
  screenshotPixels,
  webpFrom,
} from "../fixtures/images";
import { gifOf, vp8lHeader, vp8x, webpOf } from "../fixtures/hostile";
import { UI_SCREENSHOTS, uiScreenshotPixels } from "../fixtures/ui-screenshots";

const KiB = 1024;
const opts = (embedTargetBytes: number, extra: Partial<FitOptions> = {}): FitOptions => ({
  embedTargetBytes,
  maxLongEdge: 1568,
  maxInputPixels: 16_777_216,
  ...extra,
});
const fitBytes = (bytes: Uint8Array, o: FitOptions) => fitImage(bytes, o, visionWasm);
/** Only the JPEG fixtures are made with MozJPEG; every fit runs on the production codecs. */
const fixtureWasm = { ...visionWasm, jpegEncoder: mozjpeg };

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

let photo: Uint8Array;
let screenshot: Uint8Array;
let phoneTable: Uint8Array;

beforeAll(async () => {
  photo = await photoJpeg(fixtureWasm, 4032, 3024);
  screenshot = await encodePng(screenshotPixels(2880, 1800), 2880, 1800, 3);
  phoneTable = await encodePng(screenshotPixels(1170, 2532, 5), 1170, 2532, 3);
}, 60_000);

describe("fitImage budgets", () => {
  for (const budget of [64 * KiB, 256 * KiB, 1024 * KiB]) {
    it(`12 MP photo fits ${budget / KiB} KiB with long edge <= 1568 and memory under the isolate limit`, async () => {
      const out = await fitBytes(photo, opts(budget));
      expect(out.dataUrlBytes).toBeLessThanOrEqual(budget);
      expect(out.dataUrlBytes).toBe(dataUrlLength("image/jpeg", out.data.length));
      expect(Math.max(out.width, out.height)).toBeLessThanOrEqual(1568);
      if (budget >= 256 * KiB) expect([out.width, out.height]).toEqual([1568, 1176]);
      expect(out.original).toEqual({ mediaType: "image/jpeg", width: 4032, height: 3024, bytes: photo.length });
      expect(out.passedThrough).toBe(false);
      expect(out.wasmPeakBytes).toBeLessThan(64 * 1024 * 1024);
      const decoded = decodeRgba(out.data);
      expect([decoded.width, decoded.height]).toEqual([out.width, out.height]);
    });
  }

  it("the 2880x1800 screenshot comes back exactly 1568x980 with the scale in the note", async () => {
    for (const budget of [256 * KiB, 1024 * KiB]) {
      const out = await fitBytes(screenshot, opts(budget));
      expect([out.width, out.height]).toEqual([1568, 980]);
      expect(out.dataUrlBytes).toBeLessThanOrEqual(budget);
      expect(out.note).toBe("Image downscaled from 2880x1800 to 1568x980 for vision; multiply coordinates by 1.84.");
      expect(out.encodeAttempts).toBeLessThanOrEqual(4);
    }
  });

  it("the tall phone table keeps its aspect ratio at the long-edge cap", async () => {
    const out = await fitBytes(phoneTable, opts(256 * KiB));
    expect([out.width, out.height]).toEqual([725, 1568]);
    expect(out.dataUrlBytes).toBeLessThanOrEqual(256 * KiB);
  });

  it("a budget too small for the lowest quality shrinks by the square root of the overshoot, not by halves", async () => {
    const out = await fitBytes(screenshot, opts(64 * KiB));
    expect(out.dataUrlBytes).toBeLessThanOrEqual(64 * KiB);
    expect(out.width).toBeLessThan(1568);
    expect([784, 392, 196]).not.toContain(out.width);
    expect(out.note).toMatch(
      /^Image downscaled from 2880x1800 to \d+x\d+ for vision; multiply coordinates by [\d.]+\.$/,
    );
  });
});

describe("fitImage SIMD kernels in workerd", () => {
  // The production codecs minus our SIMD module: the JS fallback the port promises.
  const { simd, ...withoutSimd } = visionWasm;

  it("the Workers entry hands in our SIMD module and workerd runs it (the JS path reports false)", async () => {
    expect(simd).toBeInstanceOf(WebAssembly.Module);
    expect(WebAssembly.Module.exports(simd!).map((e) => e.name)).toEqual(
      expect.arrayContaining(["hfilter", "vfilter", "rgbToYcc", "dctMcuRow"]),
    );
    const fast = await fitBytes(screenshot, opts(256 * KiB));
    expect(fast.simd).toBe(true);
    const slow = await fitImage(screenshot, opts(256 * KiB), withoutSimd);
    expect(slow.simd).toBe(false);
  });

  it("budgets, dimensions and qualities are those of the JS path, for photos, screenshots and phone tables", async () => {
    for (const [input, budget] of [
      [photo, 256 * KiB],
      [photo, 64 * KiB],
      [screenshot, 256 * KiB],
      [screenshot, 64 * KiB],
      [phoneTable, 256 * KiB],
    ] as const) {
      const fast = await fitBytes(input, opts(budget));
      const slow = await fitImage(input, opts(budget), withoutSimd);
      expect(fast.dataUrlBytes).toBeLessThanOrEqual(budget);
      expect([fast.width, fast.height, fast.note]).toEqual([slow.width, slow.height, slow.note]);
      // f32 vs f64 DCT can move a size across a quality step, never further.
      expect(Math.abs(fast.quality! - slow.quality!)).toBeLessThanOrEqual(1);
      expect(fast.encodeAttempts).toBeLessThanOrEqual(slow.encodeAttempts + 1);
      expect(fast.wasmPeakBytes).toBeLessThan(64 * 1024 * 1024);
      const a = decodeRgba(fast.data),
        b = decodeRgba(slow.data);
      let se = 0;
      for (let i = 0; i < a.rgba.length; i++) {
        const d = a.rgba[i]! - b.rgba[i]!;
        se += d * d;
      }
      const psnr = se === 0 ? 99 : 10 * Math.log10((255 * 255) / (se / a.rgba.length));
      expect(psnr).toBeGreaterThan(40);
    }
  });
});

describe("fitImage pass-through and pixels", () => {
  it("an image that fits is passed through byte-identical", async () => {
    const small = await encodePng(photoPixels(300, 200), 300, 200, 3);
    const out = await fitBytes(small, opts(256 * KiB));
    expect(out.passedThrough).toBe(true);
    expect(out.data).toBe(small);
    expect(out.mediaType).toBe("image/png");
    expect(out.encodeAttempts).toBe(0);
    expect(out.dataUrlBytes).toBe(`data:image/png;base64,${toBase64(small)}`.length);
  });

  it("transparency is flattened on white", async () => {
    const w = 2000,
      h = 1000;
    const rgba = new Uint8Array(w * h * 4);
    for (let i = 0; i < w * h; i++) {
      const x = i % w;
      rgba.set(x < w / 2 ? [0, 0, 0, 0] : [200, 0, 0, 255], i * 4);
    }
    const png = await encodePng(rgba, w, h, 4);
    const out = await fitBytes(png, opts(256 * KiB));
    const { rgba: px, width } = decodeRgba(out.data);
    const at = (x: number, y: number) => Array.from(px.subarray((y * width + x) * 4, (y * width + x) * 4 + 3));
    for (const v of at(100, 300)) expect(v).toBeGreaterThan(245);
    const red = at(1400, 300);
    expect(red[0]).toBeGreaterThan(180);
    expect(red[1]).toBeLessThan(30);
  });

  it("an animated GIF becomes its first frame", async () => {
    const gif = animatedGif();
    expect(readImageHeader(gif).animated).toBe(true);
    const out = await fitBytes(gif, opts(256 * KiB));
    expect(out.passedThrough).toBe(false);
    // A GIF is a lossless source: its first frame goes out as a PNG, which is smaller than the JPEG here.
    expect(out.mediaType).toBe("image/png");
    const { rgba } = decodeRgba(out.data);
    expect(rgba[0]).toBeGreaterThan(200);
    expect(rgba[2]).toBeLessThan(60);
  });

  it("an arithmetic-coded JPEG (progressive, SOF10) is fitted in workerd exactly as its Huffman-coded original", async () => {
    const huffman = await photoJpeg(fixtureWasm, 2400, 1600);
    const arithmetic = toArithmetic(transcoder, huffman, true);
    const [a, b] = [await fitBytes(arithmetic, opts(256 * KiB)), await fitBytes(huffman, opts(256 * KiB))];
    expect([a.width, a.height, a.quality, a.decodes]).toEqual([1568, 1045, b.quality, 1]);
    expect(Array.from(a.data)).toEqual(Array.from(b.data));
  });

  it("a WebP is decoded and fitted", async () => {
    const webp = webpFrom(photoPixels(2000, 1000), 2000, 1000);
    expect(readImageHeader(webp)).toMatchObject({ mediaType: "image/webp", width: 2000, height: 1000 });
    const out = await fitBytes(webp, opts(256 * KiB));
    expect([out.width, out.height]).toEqual([1568, 784]);
    expect(out.dataUrlBytes).toBeLessThanOrEqual(256 * KiB);
  });
});

describe("fitImage EXIF orientation", () => {
  const redAt = (out: { data: Uint8Array }, x: number, y: number) => {
    const { rgba, width } = decodeRgba(out.data);
    const p = (y * width + x) * 4;
    return rgba[p]! > 180 && rgba[p + 1]! < 70 && rgba[p + 2]! < 70;
  };

  it("orientation 6 (a phone held upright) comes back upright: size swapped, stored top-left at the top-right", async () => {
    const jpeg = await cornerMarkedJpeg(fixtureWasm, 6);
    expect(readImageHeader(jpeg)).toMatchObject({ width: 2000, height: 1000, orientation: 6 });
    const out = await fitBytes(jpeg, opts(256 * KiB));
    expect([out.width, out.height]).toEqual([784, 1568]);
    expect(out.original).toMatchObject({ width: 1000, height: 2000 });
    expect(out.note).toBe("Image downscaled from 1000x2000 to 784x1568 for vision; multiply coordinates by 1.28.");
    // The red block covers displayed x 800..1000, y 0..200, i.e. output x 627..784, y 0..157.
    expect(redAt(out, 740, 40)).toBe(true);
    expect(redAt(out, 40, 40)).toBe(false);
    expect(redAt(out, 740, 1500)).toBe(false);
  });

  it("a region is in displayed pixels", async () => {
    const jpeg = await cornerMarkedJpeg(fixtureWasm, 6);
    const out = await fitBytes(jpeg, opts(256 * KiB, { region: [800, 0, 1000, 400] }));
    expect([out.width, out.height]).toEqual([200, 400]);
    expect(out.crop).toEqual({ x: 800, y: 0, width: 200, height: 400 });
    expect(redAt(out, 100, 100)).toBe(true);
    expect(redAt(out, 100, 300)).toBe(false);
  });

  it("a small rotated JPEG that would fit is re-encoded upright rather than passed through", async () => {
    const jpeg = await cornerMarkedJpeg(fixtureWasm, 8);
    const out = await fitBytes(jpeg, opts(4 * 1024 * KiB, { maxLongEdge: 2000 }));
    expect(out.passedThrough).toBe(false);
    expect([out.width, out.height]).toEqual([1000, 2000]);
    // Orientation 8 turns the stored top-left to the bottom-left.
    expect(redAt(out, 100, 1900)).toBe(true);
    expect(redAt(out, 100, 100)).toBe(false);
  });
});

describe("fitImage regions", () => {
  it("crops in original pixels before scaling and says how to map back", async () => {
    const out = await fitBytes(screenshot, opts(256 * KiB, { region: [100, 200, 700, 600] }));
    expect([out.width, out.height]).toEqual([600, 400]);
    expect(out.crop).toEqual({ x: 100, y: 200, width: 600, height: 400 });
    expect(out.note).toContain("[100,200,700,600]");
    expect(out.note).toContain("add (100, 200)");
  });

  it("a large region is cropped then scaled, and the note gives both", async () => {
    const out = await fitBytes(photo, opts(256 * KiB, { region: [0, 0, 3136, 1000] }));
    expect([out.width, out.height]).toEqual([1568, 500]);
    expect(out.note).toBe(
      "Cropped to region [0,0,3136,1000] of the 4032x3024 original and downscaled to 1568x500; multiply coordinates by 2, then add (0, 0).",
    );
  });

  it("a region is clamped to the image", async () => {
    const out = await fitBytes(screenshot, opts(256 * KiB, { region: [2500, 1500, 99999, 99999] }));
    expect(out.crop).toEqual({ x: 2500, y: 1500, width: 380, height: 300 });
  });

  it("a region that covers the whole image (clamped) is no region: an image that fits passes through unchanged", async () => {
    const small = await encodePng(screenshotPixels(800, 500), 800, 500, 3);
    for (const region of [
      [0, 0, 5000, 5000],
      [0, 0, 800, 500],
      [-10, -10, 800, 500],
    ] as Array<[number, number, number, number]>) {
      const out = await fitBytes(small, opts(256 * KiB, { region }));
      expect(out.passedThrough).toBe(true);
      expect(out.data).toEqual(small);
      expect(out.crop).toBeUndefined();
      expect(out.note).toBe("Image passed through unchanged (800x500); coordinates are in original pixels.");
    }
    // One row short of the whole image is a real crop.
    const cropped = await fitBytes(small, opts(256 * KiB, { region: [0, 0, 800, 499] }));
    expect(cropped.passedThrough).toBe(false);
    expect([cropped.width, cropped.height]).toEqual([800, 499]);
  });

  it("a zero-area region is a 400 that gives the image size", async () => {
    const error = await refusal(fitBytes(screenshot, opts(256 * KiB, { region: [10, 10, 10, 500] })));
    expect(error.status).toBe(400);
    expect(error.message).toContain("2880x1800");
    const outside = await refusal(fitBytes(screenshot, opts(256 * KiB, { region: [5000, 5000, 6000, 6000] })));
    expect(outside.status).toBe(400);
  });
});

describe("fitImage output format (issue 24.4)", () => {
  it("a UI screenshot whose lossless PNG fits and is no larger than the JPEG comes back as that PNG, exact pixels", async () => {
    const spec = UI_SCREENSHOTS.find(([name]) => name.includes("phone chat"))![1];
    const pixels = uiScreenshotPixels(spec);
    const input = await encodePng(pixels, spec.width, spec.height, 3);
    const out = await fitBytes(input, opts(1024 * KiB, { region: [0, 0, 1170, 1500] }));
    expect(out.mediaType).toBe("image/png");
    expect(out.quality).toBeUndefined();
    expect(out.dataUrlBytes).toBe(dataUrlLength("image/png", out.data.length));
    expect(out.dataUrlBytes).toBeLessThanOrEqual(1024 * KiB);
    // Not scaled: the crop's pixels come back exactly (lossless), which no JPEG does.
    expect([out.width, out.height]).toEqual([1170, 1500]);
    const decoded = decodeRgba(out.data);
    let differing = 0;
    for (let y = 0; y < 1500; y++)
      for (let x = 0; x < 1170; x++)
        for (let c = 0; c < 3; c++)
          if (decoded.rgba[(y * 1170 + x) * 4 + c] !== pixels[(y * 1170 + x) * 3 + c]) differing++;
    expect(differing).toBe(0);
  });

  it("the PNG is sent only when it is no larger than the JPEG: a photo saved as PNG still comes back as a JPEG", async () => {
    const input = await encodePng(photoPixels(1600, 1200), 1600, 1200, 3);
    const out = await fitBytes(input, opts(1024 * KiB));
    expect(out.mediaType).toBe("image/jpeg");
    expect(out.dataUrlBytes).toBeLessThanOrEqual(1024 * KiB);
  });

  it("a JPEG source stays a JPEG, and the quality search goes above 90 when the budget allows it", async () => {
    const input = await photoJpeg(fixtureWasm, 1200, 800);
    const out = await fitBytes(input, opts(1024 * KiB, { region: [0, 0, 1200, 799] }));
    expect(out.mediaType).toBe("image/jpeg");
    expect(out.quality).toBeGreaterThan(90);
  });
});

describe("fitImage refusals", () => {
  it("HEIC and AVIF are 415s that name the format and say what to do", async () => {
    const heic = await refusal(fitBytes(ftypHeader("mif1", ["mif1", "heic"]), opts(256 * KiB)));
    expect(heic.status).toBe(415);
    expect(heic.code).toBe("unsupported_media_type");
    expect(heic.message).toContain("HEIC");
    expect(heic.message).toContain("JPEG or PNG");
    const avif = await refusal(fitBytes(ftypHeader("avif", ["mif1", "miaf"]), opts(256 * KiB)));
    expect(avif.status).toBe(415);
    expect(avif.message).toContain("AVIF");
  });

  it("a brand past the ftyp box's declared size does not count", () => {
    const bytes = ftypHeader("isom", ["mp41"]);
    const padded = new Uint8Array(bytes.length + 4);
    padded.set(bytes);
    padded.set(new TextEncoder().encode("heic"), bytes.length);
    expect(() => readImageHeader(padded)).toThrow(/ISO media container/);
  });

  it("junk bytes are a 415", async () => {
    const error = await refusal(fitBytes(junkBytes(), opts(256 * KiB)));
    expect(error.status).toBe(415);
  });

  it("a truncated header is a 400", async () => {
    const error = await refusal(fitBytes(pngHeaderOnly(100, 100).subarray(0, 20), opts(256 * KiB)));
    expect(error.status).toBe(400);
  });

  it("a 4000x3000 WebP is not refused for its size (no lower cap for WebP): its garbage VP8L data is a 400 from libwebp", async () => {
    const webp = webpOf([
      ["VP8X", vp8x(4000, 3000)],
      ["VP8L", vp8lHeader(4000, 3000)],
    ]);
    const error = await refusal(fitBytes(webp, opts(256 * KiB)));
    expect([error.status, error.code]).toEqual([400, "invalid_image"]);
    expect(error.message).toMatch(/^The WEBP image /);
  });

  it("a GIF and an interlaced PNG over photon's 6 MP cap are decoded row by row in workerd, as their non-interlaced PNG twin", async () => {
    const width = 2600,
      height = 2400; // 6.24 MP
    const pixels = screenshotPixels(width, height);
    const twin = await fitBytes(await encodePng(pixels, width, height, 3), opts(256 * KiB));
    const interlaced = await fitBytes(await encodePngInterlaced(pixels, width, height), opts(256 * KiB));
    expect([interlaced.width, interlaced.height]).toEqual([1568, 1447]);
    expect(interlaced.data).toEqual(twin.data);
    const gif = gifOf(width, height, [{ width: 400, height: 300, left: 1100, top: 1000 }]);
    const fitted = await fitBytes(gif, opts(256 * KiB));
    expect([fitted.width, fitted.height]).toEqual([1568, 1447]);
    const shown = decodeRgba(fitted.data);
    const at = (x: number, y: number) => [
      ...shown.rgba.subarray((y * shown.width + x) * 4, (y * shown.width + x) * 4 + 3),
    ];
    expect(at(10, 10).every((v) => v > 245)).toBe(true); // outside the frame: white
    expect(at(784, 693)[0]).toBeGreaterThan(235); // the frame (1300, 1150 in the original): index 0 of the table, red
    expect(at(784, 693)[2]).toBeLessThan(20);
  });

  it("a WebP over max_input_pixels is a 413 from its header alone, as every format (WebP has no cap of its own)", async () => {
    const error = await refusal(
      fitBytes(
        webpOf([
          ["VP8X", vp8x(5000, 4000)],
          ["VP8L", vp8lHeader(5000, 4000)],
        ]),
        opts(256 * KiB),
      ),
    );
    expect([error.status, error.code]).toEqual([413, "image_too_large"]);
    expect(error.message).toContain("5000x4000");
  });

  it("a 60 MP image is a 413 from its header alone (its body is not even decodable)", async () => {
    const error = await refusal(fitBytes(pngHeaderOnly(10000, 6000), opts(256 * KiB)));
    expect(error.status).toBe(413);
    expect(error.code).toBe("image_too_large");
    expect(error.message).toContain("10000x6000");
  });
});
