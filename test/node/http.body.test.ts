/**
 * The request body's JSON parse (shared/http/body.ts): whatever it leaves as slices of the text,
 * the value is JSON.parse's, and the refusals (depth, lone surrogates, bad JSON) are the same.
 */
import { describe, expect, it } from "vitest";
import { AppError } from "../../shared/http/errors";
import { parseJsonText } from "../../shared/http/body";

const long = (seed: string, n: number) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n);

/** Texts where strings of 8+ characters would be sliced with `sliceFrom` 8. */
const texts = [
  `{"a":"${long("abc", 40)}","b":[1,"${long("xyz", 8)}","short"]}`,
  `"${long("root", 30)}"`,
  `["${long("q", 7)}","${long("r", 8)}","${long("s", 9)}"]`,
  // A long key stays a key; its value is sliced.
  `{"${long("key", 30)}" \n : "${long("val", 30)}", "${long("k2", 12)}":1}`,
  // Escapes and non-ASCII: not sliced (escaped) or sliced (plain non-ASCII), the same value.
  `{"esc":"${long("a", 10)}\\n${long("b", 10)}","slash":"a\\/b${long("c", 20)}","u":"${long("über✓", 30)}"}`,
  // Duplicate keys: the last wins, as in JSON.parse.
  `{"d":"${long("first", 20)}","d":"${long("second", 20)}"}`,
  `{"__proto__":"${long("p", 20)}","n":{"m":[["${long("deep", 20)}"]]}}`,
  `  {"space" : "${long("v", 20)}" , "x" : [ "${long("w", 20)}" ] }  `,
  `{"empty":"","nul":null,"t":true,"num":1.5e3}`,
];

describe("parseJsonText", () => {
  it.each(texts.map((text, i) => [i, text]))("text %i: the same value as JSON.parse, sliced or not", (_, text) => {
    const expected = JSON.parse(text);
    expect(parseJsonText(text, 8)).toEqual(expected);
    expect(parseJsonText(text)).toEqual(expected);
    expect(Object.keys(parseJsonText(text, 8) as object).sort()).toEqual(Object.keys(expected).sort());
  });

  it("refuses what JSON.parse refuses, a raw control character inside a long string included", () => {
    for (const text of [
      `{"a":"${long("x", 20)}\n${long("y", 20)}"}`,
      `{"a":"${long("x", 20)}"`,
      `{"a":"${long("x", 20)}",}`,
    ]) {
      expect(() => JSON.parse(text)).toThrow();
      let error: unknown;
      try {
        parseJsonText(text, 8);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe("invalid_json");
    }
  });

  it("still finds a lone surrogate, by its path, next to sliced strings", () => {
    const text = `{"images":["${long("A", 40)}"],"messages":[{"content":"ok"},{"content":"bad \\ud800 here"}]}`;
    let error: unknown;
    try {
      parseJsonText(text, 8);
    } catch (caught) {
      error = caught;
    }
    expect((error as AppError).code).toBe("invalid_request");
    expect((error as AppError).message).toContain("messages.1.content");
  });

  it("refuses nesting deeper than 256 levels before parsing", () => {
    expect(() => parseJsonText(`${"[".repeat(257)}${"]".repeat(257)}`)).toThrow(/nested more than 256 levels/);
    expect(parseJsonText(`${"[".repeat(256)}${"]".repeat(256)}`)).toBeInstanceOf(Array);
  });

  it("gives a 1 MiB base64 string back whole and equal", () => {
    const data = long("iVBORw0KGgoAAAANSUhEUgAA+/=", 1024 * 1024);
    const value = parseJsonText(JSON.stringify({ source: { type: "base64", data } })) as { source: { data: string } };
    expect(value.source.data.length).toBe(data.length);
    expect(value.source.data === data).toBe(true);
  });
});
