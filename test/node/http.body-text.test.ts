/**
 * A request body's text (shared/http/body.ts, decodeUtf8Body): a short all-ASCII body is made
 * text without the runtime's decoder, and must come out exactly as the strict decoder makes it,
 * with the same refusal for bytes that are not UTF-8, on either side of the shortcut's size.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeUtf8Body } from "../../shared/http/body";
import { AppError } from "../../shared/http/errors";

const strict = new TextDecoder("utf-8", { fatal: true });

/** What the strict decoder makes of `bytes`, or the code decodeUtf8Body refuses them with. */
function expected(bytes: Uint8Array): string {
  try {
    return strict.decode(bytes);
  } catch {
    return "refused: invalid_json";
  }
}

function actual(bytes: Uint8Array): string {
  try {
    return decodeUtf8Body(bytes);
  } catch (error) {
    if (error instanceof AppError) return `refused: ${error.code}`;
    throw error;
  }
}

describe("decodeUtf8Body", () => {
  it("makes the strict decoder's text of any bytes, short or long, or refuses them as it does", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.uint8Array({ maxLength: 1100 }), fc.uint8Array({ max: 0x7f, maxLength: 1100 })),
        (bytes) => actual(bytes) === expected(bytes),
      ),
      { numRuns: 2000 },
    );
  });

  it("makes the same text of mostly-ASCII bodies: a search, control characters, DEL, a BOM, accents", () => {
    const encoder = new TextEncoder();
    for (const text of [
      '{"query":"weather in vegas"}',
      "",
      "a\u0000b\u001f\u007f",
      "\uFEFF{}",
      '{"query":"café"}',
      "x".repeat(1024),
      "x".repeat(1025),
    ])
      expect(actual(encoder.encode(text))).toBe(expected(encoder.encode(text)));
  });

  it("refuses bytes that are not UTF-8 in a short body, with the message the decoder's refusal has", () => {
    expect(() => decodeUtf8Body(new Uint8Array([0x7b, 0xff, 0x7d]))).toThrow("The request body is not valid UTF-8");
  });
});
