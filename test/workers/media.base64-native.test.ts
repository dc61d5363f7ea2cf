/**
 * Base64 in workerd, where shared/media/data-url.ts hands the work to the runtime's own
 * `Uint8Array.fromBase64`/`toBase64`: the bytes and the refusals stay those of the project's own
 * decoder (docs/proxy.md, "Fitting": a fit's bytes and text must not change), including the inputs
 * where the two decoders' rules differ (a form feed, base64url, short or misplaced padding).
 */
import { describe, expect, it } from "vitest";
import { decodeBase64Loop, decodeImageData, toBase64, toBase64Loop } from "../../shared/media/data-url";

const bytesOf = (text: string) => Array.from(decodeImageData(text).bytes);
const refused = (text: string) => {
  try {
    decodeImageData(text);
    return false;
  } catch {
    return true;
  }
};

describe("base64 on the runtime's own codec", () => {
  it("runs where the runtime has it (else this file tests nothing new)", () => {
    expect(typeof (Uint8Array as unknown as { fromBase64?: unknown }).fromBase64).toBe("function");
    expect(typeof (Uint8Array.prototype as unknown as { toBase64?: unknown }).toBase64).toBe("function");
  });

  it("writes the same text as standard padded base64, for every length mod 3 and a subarray", () => {
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => (i * 37 + 11) & 0xff);
    expect(toBase64(bytes.subarray(0, 3))).toBe("CzBV");
    expect(toBase64(bytes.subarray(0, 4))).toBe("CzBVeg==");
    expect(toBase64(bytes.subarray(0, 5))).toBe("CzBVep8=");
    expect(toBase64(bytes.subarray(1, 4))).toBe("MFV6");
    expect(toBase64(new Uint8Array(0))).toBe("");
    const round = decodeImageData(toBase64(bytes)).bytes;
    expect(Array.from(round)).toEqual(Array.from(bytes));
  });

  it("reads what the project's decoder reads, to the same bytes", () => {
    expect(bytesOf("QUJD")).toEqual([65, 66, 67]);
    expect(bytesOf("QUI=")).toEqual([65, 66]);
    expect(bytesOf("QUI")).toEqual([65, 66]);
    expect(bytesOf("QR==")).toEqual([65]); // bits left over are ignored
    expect(bytesOf("QU JD\r\n\tRA==")).toEqual([65, 66, 67, 68]);
    expect(bytesOf("data:image/png;base64,QUJD")).toEqual([65, 66, 67]);
    expect(decodeImageData("data:image/png;base64,QUJD").declaredType).toBe("image/png");
    // base64url and mixed alphabets, which the runtime's decoder refuses here.
    expect(bytesOf("-_-_")).toEqual([251, 255, 191]);
    expect(bytesOf("+/-_")).toEqual([251, 255, 191]);
    // Padding the project's decoder takes and the runtime's refuses.
    expect(bytesOf("QQ=")).toEqual([65]);
    expect(bytesOf("QUJD=")).toEqual([65, 66, 67]);
    expect(bytesOf("")).toEqual([]);
  });

  it("refuses what the project's decoder refuses, a form feed included", () => {
    expect(refused("QU\fJD")).toBe(true);
    expect(refused("Q")).toBe(true);
    expect(refused("QQ==QQ==")).toBe(true);
    expect(refused("QUJD===")).toBe(true);
    expect(refused("QU!D")).toBe(true);
    expect(refused("QUĀD")).toBe(true);
    expect(refused("data:image/png,QUJD")).toBe(true);
  });

  it("decodes every short mix of the characters where the two decoders' rules meet as the loop does", () => {
    // Every string of up to 5 characters over these 9: a character with no low bits and one with
    // some, the standard alphabet's "/", base64url's "-", padding, two whitespaces the loop skips, a
    // form feed (which only the runtime's skips), a character outside both alphabets.
    const characters = ["A", "Q", "/", "-", "=", " ", "\n", "\f", "!"];
    const outcome = (decode: () => Uint8Array) => {
      try {
        return Array.from(decode()).join(",");
      } catch (error) {
        return `refused: ${(error as Error).message}`;
      }
    };
    let compared = 0;
    const differing: string[][] = [];
    const walk = (text: string) => {
      const runtime = outcome(() => decodeImageData(text).bytes);
      const loop = outcome(() => decodeBase64Loop(text));
      if (runtime !== loop) differing.push([JSON.stringify(text), runtime, loop]);
      compared++;
      if (text.length < 5) for (const c of characters) walk(text + c);
    };
    walk("");
    expect(compared).toBe(66_430);
    expect(differing.slice(0, 10)).toEqual([]);
  });

  it("writes what the loop writes, for every length up to 100 and a screenshot-sized buffer", () => {
    const bytes = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7919 + (i >> 8)) & 0xff);
    for (let length = 0; length <= 100; length++)
      expect(toBase64(bytes.subarray(7, 7 + length))).toBe(toBase64Loop(bytes.subarray(7, 7 + length)));
    expect(toBase64(bytes)).toBe(toBase64Loop(bytes));
  });
});
