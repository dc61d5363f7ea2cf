/** The pure rules of the web caches: key versions, query normalization, limit tiers, truncation, freshness. */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cacheKeyPrefix } from "../../shared/web/cache";
import { cutForCaller, isServable } from "../../shared/web/flight";
import { cacheControlFields } from "../../shared/web/freshness.schema";
import type { ExtractValue, SearchValue } from "../../shared/web/job.types";
import { truncateContent } from "../../shared/web/truncate";
import { LIMIT_TIERS, limitTier, normalizeQuery } from "../../shared/web/query";

describe("cache key versions", () => {
  it("are v2 for search and v3 for extract, as docs/storage.md lists them, with no older prefix left there", () => {
    expect([cacheKeyPrefix("search"), cacheKeyPrefix("extract")]).toEqual(["search:v2:", "extract:v3:"]);
    const storage = readFileSync(new URL("../../docs/storage.md", import.meta.url), "utf8");
    expect(storage).toContain("`search:v2:<provider>:<tier>:");
    expect(storage).toContain("`extract:v3:<provider>:<format>:");
    expect(storage).not.toMatch(/(search|extract):v1:|extract:v2:/);
  });
});

describe("normalizeQuery", () => {
  it("trims, lower-cases and collapses whitespace", () => {
    expect(normalizeQuery("  Weather  in\tVegas ")).toBe("weather in vegas");
    expect(normalizeQuery("A\n\nB\u00a0C")).toBe("a b c");
  });

  it.each([
    ["Weather in Vegas", "weather in vegas"],
    ["  weather in vegas\n", "weather in vegas"],
    ["weather\u00a0in \t vegas", "weather in vegas"],
    ["WEATHER IN VEGAS", "weather in vegas"],
  ])("merges %j with %j (case and spacing only)", (a, b) => {
    expect(normalizeQuery(a)).toBe(normalizeQuery(b));
  });

  it.each([
    ["weather?", "weather"],
    ["weather!", "weather"],
    ["weather.", "weather"],
    ["c++", "c"],
    ["c#", "c"],
    ["node.js", "nodejs"],
    ["weather, vegas", "weather vegas"],
    ["weathervegas", "weather vegas"],
    ['"weather in vegas"', "weather in vegas"],
    ["-weather", "weather"],
    ["café", "cafe"],
  ])("keeps %j and %j apart (punctuation, accents and word breaks change a search)", (a, b) => {
    expect(normalizeQuery(a)).not.toBe(normalizeQuery(b));
  });

  it("is idempotent", () => {
    fc.assert(
      fc.property(fc.string(), (a) => {
        expect(normalizeQuery(normalizeQuery(a))).toBe(normalizeQuery(a));
      }),
    );
  });
});

describe("limitTier", () => {
  it.each([
    [1, 10],
    [5, 10],
    [10, 10],
    [11, 20],
    [20, 20],
    [21, 50],
    [50, 50],
    [51, 100],
    [99, 100],
    [100, 100],
  ])("limit %i → tier %i", (limit, tier) => expect(limitTier(limit)).toBe(tier));

  it("is the smallest tier at or above the limit", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100 }), (limit) => {
        const tier = limitTier(limit);
        expect(tier).toBeGreaterThanOrEqual(limit);
        expect(LIMIT_TIERS.filter((t) => t >= limit && t < tier)).toEqual([]);
      }),
    );
  });
});

describe("truncateContent", () => {
  it("leaves content within the limit alone", () => {
    expect(truncateContent("short", 2000)).toEqual({ content: "short", truncated: false });
  });

  it("keeps head and tail within the limit, saying how much was cut", () => {
    const text = `HEAD-${"x".repeat(50_000)}-TAIL`;
    const { content, truncated } = truncateContent(text, 15_000);
    expect(truncated).toBe(true);
    expect(content.length).toBeLessThanOrEqual(15_000);
    expect(content.startsWith("HEAD-")).toBe(true);
    expect(content.endsWith("-TAIL")).toBe(true);
    expect(content).toMatch(/\[\.\.\. \d+ characters omitted \.\.\.\]/);
  });

  it("never splits a surrogate pair and never passes the limit", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", minLength: 0, maxLength: 3000 }),
        fc.integer({ min: 200, max: 2500 }),
        (text, limit) => {
          const { content } = truncateContent(text, limit);
          expect(content.length).toBeLessThanOrEqual(limit);
          expect(content.isWellFormed()).toBe(text.isWellFormed());
        },
      ),
    );
  });
});

describe("cutForCaller", () => {
  const page = (content: string): ExtractValue => ({
    provider: "tavily",
    page: { url: "https://a.example/", final_url: "https://a.example/", title: "A", content },
  });
  const markers = (text: string) => text.match(/\[\.\.\. \d+ characters omitted \.\.\.\]/g) ?? [];

  it("cuts a 34-million-character page once, to the limit, and flags it", () => {
    const huge = "x".repeat(17_000_000) + "y".repeat(17_000_000);
    const cut = cutForCaller(page(huge), 15_000);
    expect(cut.truncated).toBe(true);
    expect(cut.page.content.length).toBeLessThanOrEqual(15_000);
    const found = markers(cut.page.content);
    expect(found).toHaveLength(1);
    // What the one marker says it omits plus what is kept is the whole page.
    const kept = cut.page.content.length - `\n\n${found[0]}\n\n`.length;
    expect(Number(/\d+/.exec(found[0]!)![0]) + kept).toBe(34_000_000);
    expect(cut.page.content.startsWith("x") && cut.page.content.endsWith("y")).toBe(true);
    // The flag means "already cut": a second pass (any limit) leaves it as it is.
    expect(cutForCaller(cut, 15_000)).toBe(cut);
    expect(cutForCaller(cut, 2_000)).toBe(cut);
  });

  it("flags a page the reader stopped short even when it fits the limit", () => {
    const partial: ExtractValue = {
      ...page("the first part of a page"),
      page: { ...page("the first part of a page").page, truncated: true },
    };
    const answered = cutForCaller(partial, 2_000);
    expect(answered.truncated).toBe(true);
    expect(answered.page.content).toBe("the first part of a page");
  });

  it("leaves content within the limit, search values and an absent limit alone", () => {
    const short = page("short");
    expect(cutForCaller(short, 2_000)).toBe(short);
    expect(cutForCaller(page("z".repeat(50_000)), undefined).truncated).toBeUndefined();
    const search: SearchValue = { provider: "tavily", results: [] };
    expect(cutForCaller(search, 2_000)).toBe(search);
  });
});

describe("freshness rules", () => {
  const headers = (value: string) => new Headers({ "cache-control": value });
  it("reads Cache-Control directives as body fields, ignoring what it does not know or cannot parse", () => {
    expect(cacheControlFields(new Headers())).toEqual({});
    expect(cacheControlFields(headers("No-Cache"))).toEqual({ max_age: 0 });
    expect(cacheControlFields(headers('max-age="600", no-store'))).toEqual({ max_age: 600, store: false });
    expect(cacheControlFields(headers("max-age=600, max-age=60"))).toEqual({ max_age: 60 });
    expect(cacheControlFields(headers("max-age=99999999999"))).toEqual({ max_age: 31_536_000 });
    // Any number of digits: leading zeros are zeros, a value past what a number holds is the cap.
    expect(cacheControlFields(headers(`max-age=${"0".repeat(20)}`))).toEqual({ max_age: 0 });
    expect(cacheControlFields(headers(`max-age=${"0".repeat(20)}60`))).toEqual({ max_age: 60 });
    expect(cacheControlFields(headers(`max-age=${"9".repeat(30)}`))).toEqual({ max_age: 31_536_000 });
    expect(
      cacheControlFields(headers("max-age=-5, max-age=1.5, max-age=, no-cache=x, no-store=1, private, max-stale=9")),
    ).toEqual({});
  });

  it("serves an entry only unexpired and fetched less than max_age before the call began (max_age 0: only after it began)", () => {
    const call = { now: 100_000, ttlMs: 60_000 };
    const entry = { value: 1, expiresAt: 150_000, fetchedAt: 90_000 };
    expect(isServable(entry, 100_000, call)).toBe(true);
    expect(isServable(entry, 150_000, call)).toBe(false);
    expect(isServable(entry, 100_000, { ...call, maxAgeMs: 11_000 })).toBe(true);
    expect(isServable(entry, 100_000, { ...call, maxAgeMs: 10_000 })).toBe(false);
    expect(isServable(entry, 100_000, { ...call, maxAgeMs: 0 })).toBe(false);
    expect(isServable({ ...entry, fetchedAt: 100_001 }, 100_002, { ...call, maxAgeMs: 0 })).toBe(true);
    // An entry stored before its fetch time was kept: fetched at its expiry less the TTL (90 s ago here).
    expect(isServable({ value: 1, expiresAt: 150_000 }, 100_000, { ...call, maxAgeMs: 20_000 })).toBe(true);
    expect(isServable({ value: 1, expiresAt: 150_000 }, 100_000, { ...call, maxAgeMs: 10_000 })).toBe(false);
    expect(isServable(null, 100_000, call)).toBe(false);
  });
});
