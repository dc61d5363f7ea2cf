/**
 * The structure walks and the pass-through verification against files written by real encoders
 * (sharp: libpng, libjpeg-turbo/mozjpeg, cgif, libwebp), so they accept every honest variant, and
 * against the same files damaged in the ways only a full check notices.
 */
import { crc32 as zlibCrc32, deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import sharp from "sharp";
import { AppError } from "../../shared/http/errors";
import { fitImage } from "../../shared/imaging/fit";
import { JPEG_MAX_SCANS, JpegMarkerWalk, readImageHeader, walkGifFrames } from "../../shared/media/image-header";
import { crc32, parseChunks } from "../../shared/imaging/codecs/png/png.decode";
import { decodeJpegRgb, decodeJpegWithoutRows } from "../../shared/imaging/codecs/jpeg/jpeg.decode";
import { codecFor } from "../../shared/imaging/codecs/codec.registry";
import { loadVisionWasmNode } from "../../bench/vision-wasm-node";
import { photoPixels, screenshotPixels } from "../fixtures/images";
import { jpegManyScans, pngOf, smallPng } from "../fixtures/hostile";
import { sampledJpeg } from "../fixtures/jpeg-writer";

const wasm = loadVisionWasmNode();
const walkJpeg = (bytes: Uint8Array) => new JpegMarkerWalk(bytes).toEnd();
const raw = (rgb: Uint8Array, width: number, height: number) =>
  sharp(Buffer.from(rgb), { raw: { width, height, channels: 3 } });
const photo = () => raw(photoPixels(96, 64), 96, 64);
const screen = () => raw(screenshotPixels(96, 64), 96, 64);
const bytesOf = async (image: ReturnType<typeof sharp>) => new Uint8Array(await image.toBuffer());

/** The pass-through check: the codec the header chooses walks the structure, then verifies the data. */
async function verify(bytes: Uint8Array): Promise<void> {
  const header = readImageHeader(bytes);
  await codecFor(header).open({ bytes, header }, wasm).verify();
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe("invalid_image");
  return error as AppError;
}

describe("honest files from real encoders pass the walks and the verification", () => {
  it.each([
    ["PNG RGB", () => photo().png()],
    ["PNG RGBA adaptive-filtered", () => photo().ensureAlpha(0.5).png({ adaptiveFiltering: true })],
    ["PNG palette", () => screen().png({ palette: true })],
    ["PNG grey", () => screen().greyscale().png()],
    ["PNG 16-bit", () => photo().toColourspace("rgb16").png()],
    ["PNG interlaced (Adam7)", () => photo().png({ progressive: true })],
    ["JPEG baseline 4:2:0", () => photo().jpeg()],
    ["JPEG 4:4:4", () => photo().jpeg({ chromaSubsampling: "4:4:4" })],
    ["JPEG progressive", () => photo().jpeg({ progressive: true })],
    ["JPEG mozjpeg", () => photo().jpeg({ mozjpeg: true })],
    ["GIF photo (LZW codes up to 12 bits)", () => photo().gif()],
    ["GIF screenshot", () => screen().gif()],
    ["WebP lossy", () => photo().webp()],
    ["WebP lossless", () => photo().webp({ lossless: true })],
    ["WebP with alpha (VP8X + ALPH)", () => photo().ensureAlpha(0.5).webp()],
  ] as const)("%s", async (_name, make) => {
    const bytes = await bytesOf(make());
    const header = readImageHeader(bytes);
    expect([header.width, header.height]).toEqual([96, 64]);
    await expect(verify(bytes)).resolves.toBeUndefined();
  });

  it("animated GIF and WebP: every frame is walked, and the header says animated", async () => {
    const strip = Buffer.concat([Buffer.from(photoPixels(96, 64)), Buffer.from(screenshotPixels(96, 64))]);
    const frames = () => sharp(strip, { raw: { width: 96, height: 128, channels: 3, pageHeight: 64 } } as never);
    const gif = await bytesOf(frames().gif());
    expect(readImageHeader(gif)).toMatchObject({ width: 96, height: 64, animated: true });
    expect(walkGifFrames(gif, 96, 64)).toHaveLength(2);
    await expect(verify(gif)).resolves.toBeUndefined();
    const webp = await bytesOf(frames().webp());
    expect(readImageHeader(webp)).toMatchObject({ width: 96, height: 64, animated: true });
  });

  it("walkJpeg counts scans: one for baseline, several for progressive, all under the limit", async () => {
    expect(walkJpeg(await bytesOf(photo().jpeg())).scans).toBe(1);
    const progressive = walkJpeg(await bytesOf(photo().jpeg({ progressive: true }))).scans;
    expect(progressive).toBeGreaterThan(1);
    expect(progressive).toBeLessThan(JPEG_MAX_SCANS);
    expect(() => walkJpeg(jpegManyScans(JPEG_MAX_SCANS))).not.toThrow();
    expect(() => walkJpeg(jpegManyScans(JPEG_MAX_SCANS + 1))).toThrow(
      expect.objectContaining({ status: 413, code: "image_too_large" }),
    );
  });
});

describe("damage only a full check notices", () => {
  it("a real encoder's GIF cut at a sub-block boundary and closed again is refused with the pixel count", async () => {
    const gif = await bytesOf(photo().gif());
    const [frame] = walkGifFrames(gif, 96, 64);
    let at = frame!.dataStart + 1;
    at += gif[at]! + 1; // keep the first sub-block only
    const closed = new Uint8Array([...gif.subarray(0, at), 0x00, 0x3b]);
    readImageHeader(closed); // the structure is whole...
    const error = await rejection(verify(closed)); // ...the pixels are not
    expect(error.message).toMatch(/^The GIF image is truncated: frame 1 has data for \d+ of its 6144 pixels\./);
  });

  it("an interlaced PNG whose zlib stream is cut (chunks rebuilt, CRCs right) is refused", async () => {
    const png = await bytesOf(photo().png({ progressive: true }));
    const info = parseChunks(png);
    const idat = Buffer.concat(info.idat);
    const header = png.subarray(16, 29);
    const cut = pngOf([
      ["IHDR", header],
      ["IDAT", idat.subarray(0, idat.length - 40)],
      ["IEND", new Uint8Array(0)],
    ]);
    expect((await rejection(verify(cut))).message).toContain("zlib");
  });

  it("a JPEG from libjpeg-turbo cut before EOI is refused by the walk", async () => {
    const jpeg = await bytesOf(photo().jpeg({ progressive: true }));
    expect(() => walkJpeg(jpeg.subarray(0, jpeg.length - 2))).toThrow(/before its end marker \(EOI\)/);
  });
});

describe("no strict prefix of a file is ever passed through", () => {
  it.each([
    ["PNG", () => photo().png({ adaptiveFiltering: true })],
    ["PNG interlaced", () => photo().png({ progressive: true })],
    ["JPEG progressive", () => photo().jpeg({ progressive: true })],
    ["GIF", () => photo().gif()],
    ["WebP lossy", () => photo().webp()],
    ["WebP with alpha", () => photo().ensureAlpha(0.5).webp()],
  ] as const)("%s cut anywhere is a clean 4xx (property)", async (_name, make) => {
    const whole = await bytesOf(make());
    const fitOpts = { embedTargetBytes: 262_144, maxLongEdge: 1568, maxInputPixels: 14_745_600 };
    expect((await fitImage(whole, fitOpts, wasm)).passedThrough).toBe(true);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: whole.length - 1 }), async (cut) => {
        const error = await fitImage(whole.subarray(0, cut), fitOpts, wasm).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(AppError);
        expect([400, 415]).toContain((error as AppError).status);
      }),
      { numRuns: 60 },
    );
  });
});

describe("PNG chunk order (the spec's rules, one case each)", () => {
  const palette = new Uint8Array([0, 0, 0, 255, 255, 255]);
  const ihdr3 = new Uint8Array([0, 0, 0, 4, 0, 0, 0, 2, 8, 3, 0, 0, 0]);
  const gAMA = new Uint8Array([0, 0, 0xb1, 0x8f]);
  const order = async (...types: string[]) => {
    const rows = deflateSync(new Uint8Array([0, 0, 1, 0, 1, 0, 1, 0, 1, 0]));
    const data: Record<string, Uint8Array> = {
      IHDR: ihdr3,
      PLTE: palette,
      tRNS: new Uint8Array([0, 255]),
      gAMA,
      iCCP: new Uint8Array([65, 0, 0, 120, 156, 3, 0, 0, 0, 0, 1]),
      IDAT: rows,
      tEXt: new TextEncoder().encode("k\0v"),
      prIv: new Uint8Array(2),
      IEND: new Uint8Array(0),
    };
    return () => parseChunks(pngOf(types.map((t) => [t, data[t]!])));
  };

  it("accepts the spec's order, with text and private ancillary chunks anywhere", async () => {
    expect((await order("IHDR", "gAMA", "tEXt", "PLTE", "tRNS", "prIv", "IDAT", "tEXt", "IEND"))()).toMatchObject({
      width: 4,
      height: 2,
      colorType: 3,
    });
  });

  it.each([
    [["IHDR", "PLTE", "gAMA", "IDAT", "IEND"], "its gAMA chunk is out of place (after PLTE)"],
    [["IHDR", "PLTE", "IDAT", "iCCP", "IEND"], "its iCCP chunk is out of place (after the image data)"],
    [["IHDR", "tRNS", "PLTE", "IDAT", "IEND"], "its tRNS chunk does not follow a palette it fits"],
    [["IHDR", "PLTE", "IDAT", "tRNS", "IEND"], "its tRNS chunk is out of place (after the image data)"],
    [["IHDR", "PLTE", "PLTE", "IDAT", "IEND"], "it has two PLTE chunks"],
    [["IHDR", "IDAT", "IEND"], "it has a palette color type but no palette"],
    [["PLTE", "IHDR", "IDAT", "IEND"], "its first chunk is not IHDR"],
  ])("refuses %j", async (types, message) => {
    const read = await order(...types);
    expect(read).toThrow(message);
    expect(read).toThrow(expect.objectContaining({ status: 400, code: "invalid_image" }));
  });

  it("bytes after IEND are not read", async () => {
    const { png } = await smallPng(4, 4);
    expect(parseChunks(new Uint8Array([...png, 1, 2, 3, 4, 5])).width).toBe(4);
  });
});

describe("crc32", () => {
  it("matches zlib's for any bytes and any sub-range", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(), fc.nat(), (data, a, b) => {
        const start = data.length ? a % data.length : 0;
        const end = start + (data.length - start ? b % (data.length - start + 1) : 0);
        expect(crc32(data, start, end)).toBe(zlibCrc32(data.subarray(start, end)));
      }),
    );
  });
});

describe("one JPEG marker walk serves the header, the colour segments and the structure check", () => {
  const segment = (marker: number, payload: number[]) => [
    0xff,
    marker,
    (payload.length + 2) >> 8,
    (payload.length + 2) & 0xff,
    ...payload,
  ];
  const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));
  const exif6 = [
    ...ascii("Exif"),
    0,
    0,
    0x4d,
    0x4d,
    0,
    42,
    0,
    0,
    0,
    8,
    0,
    1,
    0x01,
    0x12,
    0,
    3,
    0,
    0,
    0,
    1,
    0,
    6,
    0,
    0,
    0,
    0,
    0,
    0,
  ];
  const iccChunk = (seq: number, data: number[]) => segment(0xe2, [...ascii("ICC_PROFILE"), 0, seq, 2, ...data]);
  const sof0 = segment(0xc0, [8, 0, 16, 0, 24, 3, 1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1]); // 24x16, 3 components
  const sos = segment(0xda, [3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0]);

  it("fill bytes before markers, APPn before and after SOF, RSTn and stuffed bytes in a scan, DNL between scans", () => {
    const file = new Uint8Array([
      0xff,
      0xd8,
      0xff,
      0xff,
      ...segment(0xe1, exif6), // fill bytes before the first segment
      ...iccChunk(2, [4, 5]), // chunks out of order: joined by sequence number
      ...segment(0xee, [...ascii("Adobe"), 0, 100, 0, 0, 0, 0, 1]),
      0xff,
      0xff,
      0xff,
      ...sof0,
      ...iccChunk(1, [1, 2, 3]), // after SOF, before the first scan: still a colour segment
      ...segment(0xdd, [0, 2]), // DRI
      ...sos,
      0x12,
      0xff,
      0x00,
      0x34,
      0xff,
      0xd0,
      0x56,
      0xff,
      0xd7,
      0x78, // stuffed 0x00, RST0, RST7
      0xff,
      0xff,
      ...segment(0xdc, [0, 16]), // fill, then DNL after the first scan
      ...iccChunk(3, [9]), // after the first scan: not part of the profile
      ...sos,
      0x9a,
      0xff,
      0xd1,
      0xbc,
      0xff,
      0xff,
      0xd9,
    ]);
    const walk = new JpegMarkerWalk(file);
    expect(walk.header()).toMatchObject({
      mediaType: "image/jpeg",
      width: 24,
      height: 16,
      orientation: 6,
      components: 3,
      progressive: false,
    });
    expect(readImageHeader(file)).toEqual(walk.header());
    const structure = walk.toEnd();
    expect(structure.scans).toBe(2);
    expect(structure.adobe).toBe(true);
    expect([...structure.icc!]).toEqual([1, 2, 3, 4, 5]);
    // The resumed walk and a fresh one agree: nothing depends on where the header walk stopped.
    expect(new JpegMarkerWalk(file).toEnd()).toEqual(structure);
  });

  it("a second SOF after the first scan and a cut inside the second scan are refused by the resumed walk", () => {
    const head = [0xff, 0xd8, ...sof0, ...sos, 0x11, 0x22];
    expect(() => new JpegMarkerWalk(new Uint8Array([...head, ...sof0, ...sos, 0x33, 0xff, 0xd9])).toEnd()).toThrow(
      /second frame header/,
    );
    expect(() => new JpegMarkerWalk(new Uint8Array([...head, 0xff, 0xff, ...sos, 0x33, 0x44])).toEnd()).toThrow(
      "The JPEG image is truncated: it ends in scan 2, before its end marker (EOI).",
    );
  });

  it("a real encoder's file with fill bytes before every header marker and an APP14 before SOF walks, verifies and fits as the original", async () => {
    const original = await bytesOf(photo().jpeg({ progressive: true }));
    const scanStart = original.indexOf(0xda, 2) - 1;
    const parts: number[] = [0xff, 0xd8];
    for (let at = 2; at < scanStart; ) {
      const length = (original[at + 2]! << 8) | original[at + 3]!;
      if (original[at + 1] === 0xc2) parts.push(...segment(0xee, [...ascii("Adobe"), 0, 100, 0, 0, 0, 0, 1]));
      parts.push(0xff, 0xff, ...original.subarray(at, at + 2 + length));
      at += 2 + length;
    }
    const padded = new Uint8Array([...parts, ...original.subarray(scanStart)]);
    expect(padded.length).toBeGreaterThan(original.length);
    const walked = new JpegMarkerWalk(padded).toEnd();
    expect(walked.scans).toBe(walkJpeg(original).scans);
    expect(walked.adobe).toBe(true);
    await verify(padded);
    const opts = {
      embedTargetBytes: 262144,
      maxLongEdge: 1568,
      maxInputPixels: 16_777_216,
      region: [0, 0, 96, 63] as [number, number, number, number],
    }; // one row short: a whole-image region is no region and would pass through
    const [a, b] = await Promise.all([fitImage(original, opts, wasm), fitImage(padded, opts, wasm)]);
    expect(b.data).toEqual(a.data);
  });
});

describe("the pass-through JPEG check decodes without a row sink", () => {
  it("reads every coefficient at 1/8, checks the frame against the header, and refuses damaged entropy data", async () => {
    const jpeg = await bytesOf(photo().jpeg({ progressive: true })); // 96x64
    expect(decodeJpegWithoutRows(jpeg, 96, 64, wasm.jpegDecoder)).toMatchObject({ decodedWidth: 12, decodedHeight: 8 });
    expect(() => decodeJpegWithoutRows(jpeg, 104, 64, wasm.jpegDecoder)).toThrow(
      "The JPEG image has a frame of another size than its header says (104x64).",
    );
    const patched = new Uint8Array([...jpeg.subarray(0, jpeg.length >> 1), 0xff, 0xd9]);
    expect(() => decodeJpegWithoutRows(patched, 96, 64, wasm.jpegDecoder)).toThrow(
      expect.objectContaining({ status: 400, code: "invalid_image" }),
    );
  });
});

describe("valid JPEG sampling factors (T.81: 1..4 per component) are decoded, never called corrupt", () => {
  const width = 101,
    height = 75; // neither divides by an MCU: partial MCUs on both edges
  const rgb = photoPixels(width, height, 5);
  const psnr = (a: Uint8Array, b: Uint8Array) => {
    let se = 0;
    for (let i = 0; i < a.length; i++) {
      const d = a[i]! - b[i]!;
      se += d * d;
    }
    return se === 0 ? 99 : 10 * Math.log10((255 * 255 * a.length) / se);
  };
  const whole: [number, number][][] = [];
  for (const luma of [
    [1, 1],
    [2, 1],
    [1, 2],
    [2, 2],
    [4, 1],
    [1, 4],
    [4, 2],
    [2, 4],
    [4, 4],
    [3, 1],
    [1, 3],
    [3, 3],
  ] as [number, number][]) {
    for (const chroma of [
      [1, 1],
      [2, 1],
      [1, 2],
      [2, 2],
    ] as [number, number][]) {
      const all = [luma, chroma, chroma];
      const hMax = Math.max(...all.map(([h]) => h)),
        vMax = Math.max(...all.map(([, v]) => v));
      if (all.every(([h, v]) => hMax % h === 0 && vMax % v === 0)) whole.push(all);
    }
  }
  whole.push(
    [
      [2, 2],
      [1, 2],
      [2, 1],
    ],
    [
      [1, 1],
      [2, 2],
      [1, 1],
    ],
    [
      [4, 2],
      [2, 1],
      [1, 1],
    ],
  );

  it.each(whole.map((factors) => [factors.map(([h, v]) => `${h}x${v}`).join(" "), factors] as const))(
    "%s: decoded as sharp decodes it, verified, fitted and passed through",
    async (_name, factors) => {
      const jpeg = sampledJpeg(rgb, width, height, factors);
      const reference = new Uint8Array(await sharp(jpeg).raw().toBuffer());
      const ours = decodeJpegRgb(jpeg, wasm.jpegDecoder);
      expect([ours.width, ours.height]).toEqual([width, height]);
      expect(psnr(ours.rgb, reference)).toBeGreaterThan(40);
      await expect(verify(jpeg)).resolves.toBeUndefined();
      const passed = await fitImage(
        jpeg,
        { embedTargetBytes: 262_144, maxLongEdge: 1568, maxInputPixels: 16_777_216 },
        wasm,
      );
      expect(passed.passedThrough).toBe(true);
      const scaled = await fitImage(
        jpeg,
        { embedTargetBytes: 262_144, maxLongEdge: 50, maxInputPixels: 16_777_216 },
        wasm,
      );
      expect([scaled.width, scaled.height]).toEqual([50, 37]);
      const shown = new Uint8Array(await sharp(scaled.data).raw().toBuffer());
      const expected = new Uint8Array(
        await sharp(jpeg).resize(50, 37, { fit: "fill", kernel: "lanczos3" }).raw().toBuffer(),
      );
      expect(psnr(shown, expected)).toBeGreaterThan(28);
    },
  );

  it("4:1:0 (4x2 luma, 1x1 chroma) a layout TurboJPEG's API has no name for, is decoded at every DCT scale", async () => {
    const big = photoPixels(640, 480, 9);
    const jpeg = sampledJpeg(big, 640, 480, [
      [4, 2],
      [1, 1],
      [1, 1],
    ]);
    for (const maxLongEdge of [80, 160, 320, 400]) {
      const out = await fitImage(jpeg, { embedTargetBytes: 262_144, maxLongEdge, maxInputPixels: 16_777_216 }, wasm);
      const expected = new Uint8Array(
        await sharp(jpeg).resize(out.width, out.height, { fit: "fill", kernel: "lanczos3" }).raw().toBuffer(),
      );
      expect(psnr(new Uint8Array(await sharp(out.data).raw().toBuffer()), expected)).toBeGreaterThan(28);
    }
  });

  it("fractional ratios (3x1 luma, 2x1 chroma), which no libjpeg upsamples (sharp neither), are a 415 naming the factors; a factor of 0 or 5 is a 400", async () => {
    const jpeg = sampledJpeg(rgb, width, height, [
      [3, 1],
      [2, 1],
      [2, 1],
    ]);
    await expect(sharp(jpeg).raw().toBuffer()).rejects.toThrow(/Fractional sampling/);
    const error = await fitImage(
      jpeg,
      { embedTargetBytes: 262_144, maxLongEdge: 1568, maxInputPixels: 16_777_216 },
      wasm,
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ status: 415, code: "unsupported_media_type" });
    expect((error as AppError).message).toContain("samples its components at 3x1, 2x1, 2x1: a valid layout");
    const sof = Buffer.from(jpeg).indexOf(Buffer.from([0xff, 0xc0]));
    const bogus = jpeg.slice();
    bogus[sof + 11] = 0x51; // component 1 at 5x1 (marker, length, precision, size, count, id, then HV)
    expect(() => walkJpeg(bogus)).toThrow("component 1 declares sampling factors 5x1 (1 to 4 allowed)");
  });
});

describe("a PNG whose ancillary chunk has a wrong CRC", () => {
  const damage = (png: Uint8Array, type: string) => {
    const at = Buffer.from(png).indexOf(type) + 4; // first data byte
    const out = png.slice();
    out[at] = out[at]! ^ 0x01;
    return out;
  };
  const withChunk = async (type: string, data: Uint8Array) => {
    const { png, header, idat } = await smallPng(64, 48);
    return {
      png,
      damaged: damage(
        pngOf([
          ["IHDR", header],
          [type, data],
          ["IDAT", idat],
          ["IEND", new Uint8Array(0)],
        ]),
        type,
      ),
    };
  };

  it("is decoded without the chunk (as libpng and sharp do) and never passed through", async () => {
    const { png, damaged } = await withChunk("tEXt", new TextEncoder().encode("Comment\0hello"));
    expect(parseChunks(damaged).droppedChunks).toEqual(["tEXt"]);
    await expect(sharp(damaged).raw().toBuffer()).resolves.toBeDefined();
    const fitOpts = { embedTargetBytes: 262_144, maxLongEdge: 1568, maxInputPixels: 16_777_216 };
    expect((await fitImage(png, fitOpts, wasm)).passedThrough).toBe(true);
    const out = await fitImage(damaged, fitOpts, wasm);
    expect(out.passedThrough).toBe(false);
    // Re-encoded from the decoded pixels: a PNG source whose lossless PNG is no larger than the JPEG goes out as that PNG (issue 24.4).
    expect(out.mediaType).toBe("image/png");
    expect(out.data).not.toEqual(damaged);
    expect([out.width, out.height]).toEqual([64, 48]);
    const shown = new Uint8Array(await sharp(out.data).raw().toBuffer());
    const expected = new Uint8Array(await sharp(png).removeAlpha().raw().toBuffer());
    let se = 0;
    for (let i = 0; i < shown.length; i++) {
      const d = shown[i]! - expected[i]!;
      se += d * d;
    }
    expect(10 * Math.log10((255 * 255 * shown.length) / se)).toBeGreaterThan(35);
  });

  it("a damaged iCCP is dropped like any ancillary chunk (the pixels are then sRGB); a damaged critical chunk (IHDR, PLTE, IDAT, IEND) is still a 400", async () => {
    const { damaged } = await withChunk("iCCP", new Uint8Array([65, 0, 0, 120, 156, 3, 0, 0, 0, 0, 1]));
    expect(parseChunks(damaged).droppedChunks).toEqual(["iCCP"]);
    expect(parseChunks(damaged).iccp).toBeUndefined();
    const { png } = await smallPng(64, 48);
    for (const type of ["IHDR", "IDAT", "IEND"]) {
      const broken = png.slice();
      const crcAt =
        Buffer.from(png).indexOf(type) + 4 + new DataView(png.buffer).getUint32(Buffer.from(png).indexOf(type) - 4);
      broken[crcAt] = broken[crcAt]! ^ 0x01;
      expect(() => parseChunks(broken)).toThrow(`its ${type} chunk has a wrong CRC`);
    }
  });
});
