import { describe, expect, it } from "vitest";
import fc from "fast-check";
import sharp from "sharp";
import { readImageHeader, webpChunks } from "../../shared/media/image-header";
import { dataUrlLength, toBase64 } from "../../shared/media/data-url";
import { webpIccProfile } from "../../shared/imaging/codecs/webp/webp.codec";
import { firstWebpChunk, gifOf, vp8x, webpOf } from "../fixtures/hostile";
import { photoPixels } from "../fixtures/images";

const bytes = (...parts: Array<number[] | string>) =>
  new Uint8Array(parts.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p)));

describe("readImageHeader", () => {
  it("finds the JPEG size in SOF after other segments, without decoding", () => {
    const jpeg = bytes(
      [0xff, 0xd8, 0xff, 0xe0, 0, 16],
      "JFIF\0",
      [1, 1, 0, 0, 1, 0, 1, 0, 0],
      [0xff, 0xc2, 0, 17, 8, 0x0b, 0xd0, 0x0f, 0xc0, 3],
    );
    expect(readImageHeader(jpeg)).toMatchObject({
      mediaType: "image/jpeg",
      width: 4032,
      height: 3024,
      progressive: true,
    });
  });

  it("a JPEG cut before its SOF is a 400, not a 415", () => {
    expect(() => readImageHeader(bytes([0xff, 0xd8, 0xff, 0xe0, 0, 16], "JF"))).toThrow(
      expect.objectContaining({ status: 400 }),
    );
  });

  it("reads WebP VP8L and GIF sizes", () => {
    const w = 1999,
      h = 999; // stored minus one, 14 bits each
    const bits = w | (h << 14);
    const vp8l = bytes(
      "RIFF",
      [17, 0, 0, 0],
      "WEBPVP8L",
      [5, 0, 0, 0, 0x2f, bits & 0xff, (bits >> 8) & 0xff, (bits >> 16) & 0xff, (bits >>> 24) & 0xff],
      [0],
    );
    expect(readImageHeader(vp8l)).toMatchObject({ mediaType: "image/webp", width: 2000, height: 1000 });
    const gif = gifOf(528, 288, [{ width: 16, height: 8 }]);
    expect(readImageHeader(gif)).toMatchObject({ mediaType: "image/gif", width: 528, height: 288, animated: false });
  });

  it("names BMP, TIFF and SVG in its 415s", () => {
    expect(() => readImageHeader(bytes("BM", [0, 0, 0, 0]))).toThrow(/BMP/);
    expect(() => readImageHeader(bytes("II*\0", [8, 0, 0, 0]))).toThrow(/TIFF/);
    expect(() => readImageHeader(bytes('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>'))).toThrow(
      /SVG/,
    );
  });

  it("an SVG that opens with a comment or a doctype is refused 415 as an SVG", () => {
    const svgRefusal = expect.objectContaining({ status: 415, message: expect.stringMatching(/SVG/) });
    expect(() =>
      readImageHeader(bytes('<!-- x --><svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>')),
    ).toThrow(svgRefusal);
    const doctype =
      '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">';
    expect(() =>
      readImageHeader(bytes(`${doctype}<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>`)),
    ).toThrow(svgRefusal);
  });
});

describe("toBase64 and dataUrlLength", () => {
  it("match Node's base64 for any bytes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), (data) => {
        const b64 = toBase64(data);
        expect(b64).toBe(Buffer.from(data).toString("base64"));
        expect(dataUrlLength("image/jpeg", data.length)).toBe(`data:image/jpeg;base64,${b64}`.length);
      }),
    );
  });
});

describe("one RIFF chunk walk for a WebP's header and its ICCP profile", () => {
  it("the ICCP chunk right after VP8X is read through odd-sized (padded) chunks; elsewhere it is not a profile", async () => {
    const simple = new Uint8Array(
      await sharp(Buffer.from(photoPixels(64, 48)), { raw: { width: 64, height: 48, channels: 3 } })
        .webp({ lossless: true })
        .toBuffer(),
    );
    const profile = Uint8Array.from({ length: 131 }, (_, i) => (i * 7) & 0xff); // odd: a pad byte follows
    const extended = webpOf([["VP8X", vp8x(64, 48, 0x20)], ["ICCP", profile], firstWebpChunk(simple)]);
    expect(readImageHeader(extended)).toMatchObject({ mediaType: "image/webp", width: 64, height: 48 });
    expect(webpChunks(extended).map((c) => c.fourcc)).toEqual(["VP8X", "ICCP", "VP8L"]);
    expect(webpIccProfile(extended)).toEqual(profile);
    expect(webpIccProfile(simple)).toBeUndefined();
    const late = webpOf([["VP8X", vp8x(64, 48, 0x20)], firstWebpChunk(simple), ["ICCP", profile]]);
    expect(webpIccProfile(late)).toBeUndefined();
  });
});
