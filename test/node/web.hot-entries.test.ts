/**
 * The memory copies of cache entries (shared/web/hot-entries.ts): the least recently used is
 * dropped first past the total size, whatever run of reads came before (a run of hits on one key
 * included), and the parsed entry a shared read gets is one frozen object until the copy goes.
 */
import { describe, expect, it } from "vitest";
import { HotEntries } from "../../shared/web/hot-entries";

const now = 1_000;
const later = now + 60_000;

describe("HotEntries", () => {
  it("drops the least recently used first, after runs of reads on one key", () => {
    const hot = new HotEntries(30);
    hot.set("a", "a".repeat(10), later, now);
    hot.set("b", "b".repeat(10), later, now);
    hot.set("c", "c".repeat(10), later, now);
    for (const key of ["a", "a", "b", "b", "a", "c", "c", "a"]) hot.get(key, now);
    // Used last: a, then c, then b: b goes first.
    hot.set("d", "d".repeat(10), later, now);
    expect(["a", "b", "c", "d"].map((key) => hot.get(key, now) !== undefined)).toEqual([true, false, true, true]);
    // Reads since: a, c, d (in that order above): a goes next.
    hot.set("e", "e".repeat(10), later, now);
    expect(hot.get("a", now)).toBeUndefined();
    expect(hot.get("c", now)).toBe("c".repeat(10));
  });

  it("keeps the newest key's place right after it is forgotten and set again", () => {
    const hot = new HotEntries(20);
    hot.set("a", "a".repeat(10), later, now);
    hot.set("b", "b".repeat(10), later, now);
    hot.get("b", now);
    hot.forget("b");
    hot.get("a", now);
    hot.set("b", "b".repeat(10), later, now);
    hot.get("a", now); // a used last
    hot.set("c", "c".repeat(10), later, now);
    expect([hot.get("a", now), hot.get("b", now)]).toEqual(["a".repeat(10), undefined]);
  });

  it("answers shared reads with one frozen parse until the copy is replaced, forgotten or due", () => {
    const hot = new HotEntries();
    hot.set("k", JSON.stringify({ value: { results: [{ url: "u" }] }, expiresAt: later }), later, now);
    const one = hot.getParsed("k", now) as { value: { results: { url: string }[] } };
    expect(hot.getParsed("k", now)).toBe(one);
    expect(Object.isFrozen(one.value.results[0])).toBe(true);
    expect(() => one.value.results.push({ url: "v" })).toThrow(TypeError);
    expect(hot.get("k", now)).toBe(JSON.stringify({ value: { results: [{ url: "u" }] }, expiresAt: later }));
    hot.set("k", JSON.stringify({ value: 2 }), later, now);
    expect(hot.getParsed("k", now)).toEqual({ value: 2 });
    hot.forget("k");
    expect(hot.getParsed("k", now)).toBeUndefined();
    hot.set("k", "1", later, now);
    expect(hot.getParsed("k", later)).toBeUndefined();
  });
});
