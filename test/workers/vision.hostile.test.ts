/**
 * vision_analyze against hostile and broken files, through the real Workers entry in workerd:
 * containers that lie about their frame, a second IHDR, decompression bombs and scan bombs are
 * refused before they cost memory or CPU; truncated or damaged files that would fit the budget are
 * refused (400 invalid_image, naming what is wrong) instead of being passed through unverified.
 */
import { beforeAll, describe, expect, it } from "vitest";
import mozjpeg from "@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm";
import { concatBytes } from "../../shared/bytes";
import { toBase64 } from "../../shared/media/data-url";
import { visionWasm } from "../../workers/vision-codecs";
import {
  firstWebpChunk,
  gifOf,
  jpegManyScans,
  pngOf,
  pngOverlongData,
  pngSecondIhdr,
  pngZeros,
  smallPng,
  svgWithBom,
  vp8lHeader,
  vp8x,
  webpOf,
} from "../fixtures/hostile";
import { animatedGif, decodeRgba, deflate, ihdr, photoJpeg, photoPixels, webpFrom } from "../fixtures/images";
import { sampledJpeg } from "../fixtures/jpeg-writer";
import { callJson, expectErrorShape, imageBase64, uniqueToken } from "./helpers";

const analyze = (bytes: Uint8Array, extra: Record<string, unknown> = {}) =>
  callJson("/v1/vision_analyze", { body: { image: { data: toBase64(bytes) }, session_id: uniqueToken(), ...extra } });

/** Calls the route and checks the api.md error shape, the status and the code; returns the message. */
async function refused(
  bytes: Uint8Array,
  status: number,
  code: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const answer = await analyze(bytes, extra);
  expect(answer.status).toBe(status);
  const error = expectErrorShape(answer.body);
  expect(error.code).toBe(code);
  return error.message;
}

const EMPTY = new Uint8Array(0);
let png: Awaited<ReturnType<typeof smallPng>>;
let jpeg: Uint8Array;
let webp: Uint8Array;
let gif: Uint8Array;

beforeAll(async () => {
  png = await smallPng(64, 48);
  jpeg = await photoJpeg({ ...visionWasm, jpegEncoder: mozjpeg }, 320, 240);
  webp = webpFrom(photoPixels(64, 48), 64, 48);
  gif = gifOf(64, 48, [{ width: 64, height: 48 }]);
});

describe("what is decoded is what was checked against the limits", () => {
  it("a WebP whose VP8X canvas says 1x1 around an 8000x8000 VP8L frame is a 400 naming both", async () => {
    const message = await refused(
      webpOf([
        ["VP8X", vp8x(1, 1)],
        ["VP8L", vp8lHeader(8000, 8000)],
      ]),
      400,
      "invalid_image",
    );
    expect(message).toBe(
      "The WebP image does not match its container: its VP8L frame is 8000x8000 inside a 1x1 VP8X canvas. Re-save or re-export it and send the complete file.",
    );
  });

  it("an animated WebP frame reaching outside its canvas is a 400 naming the frame", async () => {
    const frame = concatBytes([
      new Uint8Array([0, 0, 0, 0, 0, 0]),
      new Uint8Array([0x3f, 0x1f, 0, 0x3f, 0x1f, 0]),
      new Uint8Array(4),
      new TextEncoder().encode("VP8L"),
      new Uint8Array([69, 0, 0, 0]),
      vp8lHeader(8000, 8000),
      new Uint8Array(1),
    ]);
    const message = await refused(
      webpOf([
        ["VP8X", vp8x(64, 48, 0x02)],
        ["ANIM", new Uint8Array(6)],
        ["ANMF", frame],
      ]),
      400,
      "invalid_image",
    );
    expect(message).toContain("animation frame 1 (8000x8000 at 0,0) reaches outside the 64x48 VP8X canvas");
  });

  it("a GIF whose logical screen says 1x1 around an 8000x8000 frame is a 400 naming both", async () => {
    const message = await refused(gifOf(1, 1, [{ width: 8000, height: 8000, coded: 64 }]), 400, "invalid_image");
    expect(message).toBe(
      "The GIF image does not match its container: frame 1 (8000x8000 at 0,0) reaches outside the 1x1 logical screen. Re-save or re-export it and send the complete file.",
    );
  });

  it("every GIF frame is checked, not only the first", async () => {
    const message = await refused(
      gifOf(64, 48, [
        { width: 64, height: 48 },
        { left: 32, top: 0, width: 4000, height: 48, coded: 64 },
      ]),
      400,
      "invalid_image",
    );
    expect(message).toContain("frame 2 (4000x48 at 32,0) reaches outside the 64x48 logical screen");
  });

  it.each([
    [4294967295, 1],
    [30000, 30000],
  ])("a PNG with a second IHDR (%ix%i) after the first is a 400, with or without a region", async (width, height) => {
    const bytes = await pngSecondIhdr(width, height);
    expect(await refused(bytes, 400, "invalid_image")).toContain("its IHDR chunk is out of place (a second IHDR)");
    expect(await refused(bytes, 400, "invalid_image", { region: [0, 0, 1, 1] })).toContain("a second IHDR");
  });

  it("a 30000x30000 PNG of zeros (a decompression bomb) is a 413 from its header, before any inflate", async () => {
    const message = await refused(
      await pngOf([
        ["IHDR", ihdr(30000, 30000, 0)],
        ["IDAT", await deflate(new Uint8Array(30001 * 8))],
        ["IEND", EMPTY],
      ]),
      413,
      "image_too_large",
    );
    expect(message).toContain("30000x30000 (900.0 MP)");
  });

  it("a 3840x3840 PNG of zeros inside the limits is streamed, not held: fitted black at the long-edge cap", async () => {
    const bomb = await pngZeros(3840, 3840);
    expect(bomb.length).toBeLessThan(64 * 1024);
    const { status, body } = await analyze(bomb);
    expect(status).toBe(200);
    expect([body.image.width, body.image.height]).toEqual([1568, 1568]);
    const { rgba } = decodeRgba(Uint8Array.from(atob(imageBase64(body)), (c) => c.charCodeAt(0)));
    let brightest = 0;
    for (let i = 0; i < rgba.length; i += 4) brightest = Math.max(brightest, rgba[i]!, rgba[i + 1]!, rgba[i + 2]!);
    expect(brightest).toBeLessThanOrEqual(2);
  });

  it("a 1x1 PNG whose zlib stream inflates to 20 MB is refused at its first extra byte", async () => {
    const message = await refused(await pngOverlongData(20_000_000), 400, "invalid_image");
    expect(message).toContain("its compressed data holds more than the 1x1 pixels it declares");
  });

  it("a JPEG of 65 scans (a scan bomb) is a 413 before TurboJPEG runs", async () => {
    const message = await refused(jpegManyScans(65), 413, "image_too_large");
    expect(message).toBe(
      "The JPEG image has more than 64 scans, which would cost seconds of CPU to decode (real encoders write 10 to 20). Re-save it as a standard JPEG and send it again.",
    );
  });
});

describe("nothing unverified is passed through", () => {
  it("good small PNG, JPEG, GIF and WebP files still pass through byte-identical", async () => {
    for (const [bytes, type] of [
      [png.png, "image/png"],
      [jpeg, "image/jpeg"],
      [gif, "image/gif"],
      [webp, "image/webp"],
    ] as const) {
      const { status, body } = await analyze(bytes);
      expect(status).toBe(200);
      expect(body.image.media_type).toBe(type);
      expect(imageBase64(body)).toBe(toBase64(bytes));
      expect(body.note).toContain("passed through unchanged");
    }
  });

  it("a WebP re-wrapped in a VP8X whose canvas matches its frame passes through", async () => {
    const wrapped = webpOf([["VP8X", vp8x(64, 48)], firstWebpChunk(webp)]);
    const { status, body } = await analyze(wrapped);
    expect(status).toBe(200);
    expect(imageBase64(body)).toBe(toBase64(wrapped));
  });

  it("PNG: cut before IEND, a wrong CRC, a damaged zlib stream, a short zlib stream, no IDAT: each a 400 naming it", async () => {
    expect(await refused(png.png.subarray(0, png.png.length - 12), 400, "invalid_image")).toMatch(
      /^The PNG image is truncated: it ends at byte \d+, before its IEND chunk\./,
    );
    const flipped = png.png.slice();
    flipped[8 + 25 + 8 + 4]! ^= 0x10; // a byte inside the IDAT data
    expect(await refused(flipped, 400, "invalid_image")).toContain("its IDAT chunk has a wrong CRC");
    const badAdler = png.idat.slice();
    badAdler[badAdler.length - 1]! ^= 1;
    expect(
      await refused(
        pngOf([
          ["IHDR", png.header],
          ["IDAT", badAdler],
          ["IEND", EMPTY],
        ]),
        400,
        "invalid_image",
      ),
    ).toContain("its compressed image data (zlib) is corrupt or ends early");
    const short = png.idat.subarray(0, png.idat.length >> 1);
    expect(
      await refused(
        pngOf([
          ["IHDR", png.header],
          ["IDAT", short],
          ["IEND", EMPTY],
        ]),
        400,
        "invalid_image",
      ),
    ).toContain("zlib");
    expect(
      await refused(
        pngOf([
          ["IHDR", png.header],
          ["IEND", EMPTY],
        ]),
        400,
        "invalid_image",
      ),
    ).toContain("it has no image data (no IDAT chunk)");
  });

  it("PNG chunk order: PLTE after IDAT, split IDATs and an unknown critical chunk are 400s", async () => {
    const palette = new Uint8Array(12);
    expect(
      await refused(
        pngOf([
          ["IHDR", png.header],
          ["IDAT", png.idat],
          ["PLTE", palette],
          ["IEND", EMPTY],
        ]),
        400,
        "invalid_image",
      ),
    ).toContain("its PLTE chunk is out of place (after the image data)");
    const half = png.idat.length >> 1;
    expect(
      await refused(
        pngOf([
          ["IHDR", png.header],
          ["IDAT", png.idat.subarray(0, half)],
          ["tEXt", new TextEncoder().encode("a\0b")],
          ["IDAT", png.idat.subarray(half)],
          ["IEND", EMPTY],
        ]),
        400,
        "invalid_image",
      ),
    ).toContain("its IDAT chunks are not consecutive");
    expect(
      await refused(
        pngOf([
          ["IHDR", png.header],
          ["ZZZZ", EMPTY],
          ["IDAT", png.idat],
          ["IEND", EMPTY],
        ]),
        400,
        "invalid_image",
      ),
    ).toContain("unknown critical chunk ZZZZ");
  });

  it("JPEG: cut inside its scan, or cut and given an EOI, is a 400 (a region gets the same)", async () => {
    const cut = jpeg.subarray(0, jpeg.length - 100);
    expect(await refused(cut, 400, "invalid_image")).toBe(
      "The JPEG image is truncated: it ends in scan 1, before its end marker (EOI). Re-save or re-export it and send the complete file.",
    );
    expect(await refused(cut, 400, "invalid_image", { region: [0, 0, 100, 100] })).toContain(
      "before its end marker (EOI)",
    );
    const patched = concatBytes([jpeg.subarray(0, jpeg.length >> 1), new Uint8Array([0xff, 0xd9])]);
    expect(await refused(patched, 400, "invalid_image")).toContain("The JPEG image could not be decoded");
  });

  it("GIF: cut before its trailer, a frame whose data ends early, no frame at all: each a 400", async () => {
    expect(await refused(gif.subarray(0, gif.length - 20), 400, "invalid_image")).toContain(
      "is truncated: it ends inside frame 1, before its trailer",
    );
    expect(await refused(gifOf(64, 48, [{ width: 64, height: 48, coded: 100 }]), 400, "invalid_image")).toContain(
      "frame 1 has data for 100 of its 3072 pixels",
    );
    expect(await refused(gifOf(64, 48, []), 400, "invalid_image")).toContain("has no image in it");
  });

  it("an animated GIF is still fitted to its first frame", async () => {
    const { status, body } = await analyze(animatedGif());
    expect(status).toBe(200);
    // Re-encoded, not passed through: the first frame as a PNG (lossless source, smaller than the JPEG).
    expect(body.image.media_type).toBe("image/png");
  });

  it("WebP: truncated (RIFF size past the end), or a VP8 partition past its chunk: each a 400", async () => {
    expect(await refused(webp.subarray(0, webp.length - 10), 400, "invalid_image")).toBe(
      `The WebP image is truncated: its RIFF header declares ${webp.length} bytes but the file has ${webp.length - 10}. Re-save or re-export it and send the complete file.`,
    );
    const lossy = webpOf([["VP8 ", new Uint8Array([0xf0, 0xff, 0x0f, 0x9d, 0x01, 0x2a, 64, 0, 48, 0, 0, 0])]]);
    expect(await refused(lossy, 400, "invalid_image")).toContain(
      "its VP8 frame's first partition (32767 bytes) runs past its 12-byte chunk",
    );
  });

  it("a WebP whose VP8L data is garbage (libwebp refuses it) is a 400, with its slot given back", async () => {
    // Header and chunk sizes are right, so only the decoder meets the garbage.
    const garbage = webpOf([["VP8L", vp8lHeader(64, 48, 200)]]);
    const session = uniqueToken();
    for (let i = 0; i < 4; i++) {
      const message = await refused(garbage, 400, "invalid_image", {
        region: [0, 0, 32, 32],
        session_id: session,
        caller: "subagent",
      });
      expect(message).toBe(
        "The WEBP image could not be decoded: its data is corrupt. Re-save or re-export it and send the complete file.",
      );
    }
  });

  it("a refused broken file gives its repeat-cap slot back: four tries under a cap of 3 are four 400s, no 409", async () => {
    const session = uniqueToken();
    const broken = gif.subarray(0, gif.length - 20);
    for (let i = 0; i < 4; i++) {
      const answer = await analyze(broken, { session_id: session, caller: "subagent" });
      expect(answer.status).toBe(400);
      expect(expectErrorShape(answer.body).code).toBe("invalid_image");
    }
  });

  it("an SVG that starts with a UTF-8 byte order mark is a 415 naming SVG", async () => {
    const message = await refused(svgWithBom(), 415, "unsupported_media_type");
    expect(message).toContain("SVG");
  });
});

describe("valid files with unusual structure are answered, not refused (in workerd)", () => {
  it("a 4:1:0 JPEG (4x2 luma, 1x1 chroma) passes through when it fits and is fitted when it does not", async () => {
    const rgb = photoPixels(320, 240);
    const jpeg410 = sampledJpeg(rgb, 320, 240, [
      [4, 2],
      [1, 1],
      [1, 1],
    ]);
    const whole = await analyze(jpeg410);
    expect(whole.status).toBe(200);
    expect(imageBase64(whole.body)).toBe(toBase64(jpeg410));
    const cropped = await analyze(jpeg410, { region: [0, 0, 160, 120] });
    expect(cropped.status).toBe(200);
    expect(cropped.body.image.media_type).toBe("image/jpeg");
    expect(cropped.body.note).toContain("Cropped to region [0,0,160,120]");
  });

  it("a PNG whose tEXt chunk has a wrong CRC is decoded without it (re-encoded, as a lossless PNG), never passed through with the damage", async () => {
    const withText = pngOf([
      ["IHDR", png.header],
      ["tEXt", new TextEncoder().encode("Comment\0hello")],
      ["IDAT", png.idat],
      ["IEND", EMPTY],
    ]);
    const damaged = withText.slice();
    damaged[withText.indexOf(0x43 /* C */, 33)]! ^= 0x01; // inside the tEXt data: its CRC no longer matches
    const { status, body } = await analyze(damaged);
    expect(status).toBe(200);
    // Re-encoded from the decoded pixels; a PNG source whose PNG is no larger than the JPEG goes out as PNG (issue 24.4).
    expect(body.image.media_type).toBe("image/png");
    expect(body.note).not.toContain("passed through");
    const shown = decodeRgba(Uint8Array.from(atob(imageBase64(body)), (c) => c.charCodeAt(0)));
    expect([shown.width, shown.height]).toEqual([64, 48]);
    expect(
      Math.abs(shown.rgba[0]! - 200) + Math.abs(shown.rgba[1]! - 120) + Math.abs(shown.rgba[2]! - 40),
    ).toBeLessThan(12);
  });

  it("a JPEG with fractional sampling ratios (3x1 luma, 2x1 chroma) is a 415 naming its factors, not a corrupt file", async () => {
    const message = await refused(
      sampledJpeg(photoPixels(96, 64), 96, 64, [
        [3, 1],
        [2, 1],
        [2, 1],
      ]),
      415,
      "unsupported_media_type",
    );
    expect(message).toContain("samples its components at 3x1, 2x1, 2x1: a valid layout");
  });
});
