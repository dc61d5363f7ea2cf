/**
 * The validated inputs the app keeps for repeats of a small body (shared/tools/input-memo.ts):
 * one key per tool, header values and text, nothing kept for a long body, at most
 * INPUT_MEMO_ENTRIES kept (the least recently used dropped first), each kept deep-frozen.
 */
import { describe, expect, it } from "vitest";
import { INPUT_MEMO_CHARS, INPUT_MEMO_ENTRIES, InputMemo } from "../../shared/tools/input-memo";

describe("InputMemo", () => {
  it("keys a body by its tool, the values of the headers the tool reads, and its text", () => {
    const memo = new InputMemo();
    const text = '{"query":"a"}';
    const keys = [
      memo.key("web_search", [null], text),
      memo.key("web_search", ["no-cache"], text),
      memo.key("web_search", [""], text),
      memo.key("web_extract", [null], text),
      memo.key("web_search", [null], '{"query":"b"}'),
      memo.key("web_search", [null, null], text),
      memo.key("web_search", [], text),
    ];
    expect(new Set(keys).size).toBe(keys.length);
    expect(memo.key("web_search", [null], text)).toBe(keys[0]);
    expect(memo.key("web_search", [null], "x".repeat(INPUT_MEMO_CHARS))).not.toBeNull();
    expect(memo.key("web_search", [null], "x".repeat(INPUT_MEMO_CHARS + 1))).toBeNull();
  });

  it("gives back the input kept, deep-frozen, and drops the least recently used past its bound", () => {
    const memo = new InputMemo();
    const kept = memo.set("first", { query: "a", nested: { list: [1] } });
    expect(memo.get("first")).toBe(kept);
    expect(Object.isFrozen(kept) && Object.isFrozen(kept.nested) && Object.isFrozen(kept.nested.list)).toBe(true);
    expect(() => kept.nested.list.push(2)).toThrow(TypeError);
    memo.set("second", { query: "b" });
    for (let i = 0; i < INPUT_MEMO_ENTRIES - 2; i++) memo.set(`filler ${i}`, { i });
    expect(memo.get("first")).toBe(kept); // used: now the most recent
    memo.set("one more", {});
    expect(memo.get("second")).toBeUndefined();
    expect(memo.get("first")).toBe(kept);
  });
});
