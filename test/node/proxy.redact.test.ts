/**
 * The operator's key taken out of an answer (shared/proxy/redact.ts): every form of it, however a
 * stream is cut into chunks, with every other byte passed as it came and nothing held that cannot
 * begin a key (an event's end never waits for the next chunk).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { concatBytes } from "../../shared/bytes";
import { keyRedactor } from "../../shared/proxy/redact";

const KEY = `sk-ant-api03-${"Ab3_dE9-".repeat(11)}Zq7w`;
const last4 = KEY.slice(-4);

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

const escaped = (text: string, upper = false) =>
  [...text]
    .map((c) => {
      const hex = c.charCodeAt(0).toString(16).padStart(4, "0");
      return `\\u${upper ? hex.toUpperCase() : hex}`;
    })
    .join("");

/** `text` as base64 after `offset` other bytes, only the characters made of `text`'s bits (what is redacted). */
function base64Of(text: string, offset: number, urlSafe = false): string {
  const encoded = Buffer.from(`${"@".repeat(offset)}${text}`).toString(urlSafe ? "base64url" : "base64");
  return encoded.slice(Math.ceil((4 * offset) / 3), Math.floor((4 * (offset + text.length)) / 3));
}

/** Every byte of `text` as `%xx`. */
const percent = (text: string) => [...encode(text)].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join("");

/** Every spelling of the key an answer may carry, each redacted whole. */
const FORMS: Record<string, string> = {
  plain: KEY,
  escaped: escaped(KEY),
  "escaped, upper-case hex": escaped(KEY, true),
  "partly escaped": `${escaped("sk")}${KEY.slice(2)}`,
  ellipsis: `${KEY.slice(0, 13)}…${last4}`,
  "escaped ellipsis": `${KEY.slice(0, 13)}\\u2026${last4}`,
  stars: `${KEY.slice(0, 7)}***${last4}`,
  "OpenAI's mask": `${KEY.slice(0, 8)}${"*".repeat(KEY.length - 12)}${last4}`,
  dots: `sk-...${last4}`,
  x: `${KEY.slice(0, 8)}xxxxxxxx${last4}`,
  bullets: `sk-ant-••••${last4}`,
  "two characters of prefix": `sk…${last4}`,
  "percent-encoded": percent(KEY).toUpperCase(),
  "percent-encoded, lower-case hex": percent(KEY),
  "partly percent-encoded": `sk${percent("-ant-")}${KEY.slice(7)}`,
  "last character percent-encoded": `${KEY.slice(0, -1)}${percent(KEY.slice(-1))}`,
  "4th character from the end percent-encoded": `${KEY.slice(0, -4)}${percent(KEY.slice(-4, -3))}${KEY.slice(-3)}`,
  "masked, 2nd character from the end percent-encoded": `sk-ant-***${last4.slice(0, 2)}${percent(last4[2]!)}${last4[3]}`,
  "percent-encoded ellipsis": `${KEY.slice(0, 13)}%E2%80%A6${last4}`,
  "base64 at offset 0": base64Of(KEY, 0),
  "base64 at offset 1": base64Of(KEY, 1),
  "base64 at offset 2": base64Of(KEY, 2),
  "url-safe base64 at offset 0": base64Of(KEY, 0, true),
  "url-safe base64 at offset 1": base64Of(KEY, 1, true),
  "url-safe base64 at offset 2": base64Of(KEY, 2, true),
};

/** `bytes` through a body scrubber in chunks cut at `cuts`; what the caller receives. */
function scrubbed(bytes: Uint8Array, cuts: number[]): Uint8Array {
  const scrubber = keyRedactor(KEY).body();
  const out: Uint8Array[] = [];
  let from = 0;
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
    out.push(scrubber.push(bytes.subarray(from, cut)));
    from = cut;
  }
  out.push(scrubber.push(bytes.subarray(from)), scrubber.end());
  return concatBytes(out);
}

describe("the operator's key in an answer", () => {
  it.each(Object.entries(FORMS))("redacts the %s form in a body, cut into chunks anywhere", (_, form) => {
    const body = `{"content":[{"type":"text","text":"Your key is ${form}, keep it safe. Ünïcødé ✓"}]}`;
    const expected = body.replace(form, "[redacted]");
    const bytes = encode(body);
    for (let cut = 0; cut <= bytes.length; cut++) expect(decode(scrubbed(bytes, [cut]))).toBe(expected);
    fc.assert(
      fc.property(fc.array(fc.nat({ max: bytes.length }), { maxLength: 12 }), (cuts) => {
        expect(decode(scrubbed(bytes, cuts))).toBe(expected);
      }),
      { numRuns: 200 },
    );
  });

  it.each(Object.entries(FORMS))("redacts the %s form in a header value", (_, form) => {
    // A header value is its bytes as latin-1 characters: an ellipsis arrives as three.
    const latin1 = String.fromCharCode(...encode(`Bearer ${form}; v=1`));
    expect(keyRedactor(KEY).text(latin1)).toBe("Bearer [redacted]; v=1");
  });

  it("redacts a key whose base64 holds + and / at each offset: standard, url-safe, JSON-escaped, percent-encoded", () => {
    const key = "sk-test-???>>>-operator0Secret-~~~-Key0For0Tests-Zq7w";
    const redactor = keyRedactor(key);
    for (const offset of [0, 1, 2]) {
      const standard = base64Of(key, offset);
      expect(standard).toMatch(/\+/);
      expect(standard).toMatch(/\//);
      for (const form of [
        standard,
        base64Of(key, offset, true),
        standard.replaceAll("/", "\\/"),
        standard.replaceAll("+", "%2B").replaceAll("/", "%2F"),
      ]) {
        const body = encode(`{"token":"eyJhbGciOiJub25lIn0.${form}.c2ln"}`);
        const scrubber = redactor.body();
        const streamed = decode(
          concatBytes([scrubber.push(body.subarray(0, 40)), scrubber.push(body.subarray(40)), scrubber.end()]),
        );
        expect(streamed, form).toBe(`{"token":"eyJhbGciOiJub25lIn0.[redacted].c2ln"}`);
        expect(redactor.text(`Basic ${form}`), form).toBe("Basic [redacted]");
      }
    }
  });

  it("leaves text that only looks like a key alone: another key, the last 4 without a prefix, a prefix without the last 4", () => {
    const body = `sk-ant-api03-other0key0Zq7x ...${last4} sk-ant-***abcd task***${last4.slice(1)} desk`;
    expect(decode(scrubbed(encode(body), [10, 30]))).toBe(body);
  });

  it("passes bytes that hold no key as they came, invalid UTF-8 included", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 4096 }),
        fc.array(fc.nat({ max: 4096 }), { maxLength: 8 }),
        (bytes, cuts) => {
          fc.pre(!decode(bytes).includes(last4));
          expect(
            scrubbed(
              bytes,
              cuts.filter((cut) => cut <= bytes.length),
            ),
          ).toEqual(bytes);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("holds nothing back at an event's end: each server-sent event goes on whole as it arrives", () => {
    const scrubber = keyRedactor(KEY).body();
    const event = encode(`event: content_block_delta\ndata: {"delta":{"text":"ends with a key-like word sk"}}\n\n`);
    expect(scrubber.push(event)).toEqual(event);
    // A chunk ending inside a word holds only that word, and sends it with the next.
    const partial = scrubber.push(encode(`data: {"text":"almost sk-ant`));
    expect(decode(partial)).toBe(`data: {"text":"almost `);
    expect(decode(scrubber.push(encode(`-api03"}\n\n`)))).toBe(`sk-ant-api03"}\n\n`);
    expect(scrubber.end()).toHaveLength(0);
  });

  it("finds a key in a long run of key-like characters cut into small chunks (past the tail it holds)", () => {
    const body = `${"A".repeat(10_000)} ${KEY} ${"B".repeat(10_000)}`;
    const cuts = Array.from({ length: 300 }, (_, i) => i * 70);
    expect(decode(scrubbed(encode(body), cuts))).toBe(body.replace(KEY, "[redacted]"));
  });
});
