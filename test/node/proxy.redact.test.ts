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

const escaped = (text: string, upper = false) =>
  [...text]
    .map((c) => {
      const hex = c.charCodeAt(0).toString(16).padStart(4, "0");
      return `\\u${upper ? hex.toUpperCase() : hex}`;
    })
    .join("");

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
};

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

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
