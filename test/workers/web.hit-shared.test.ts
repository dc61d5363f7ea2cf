/**
 * A hit reads one parsed entry from the isolate's memory copy, shared by every hit on the key and
 * frozen (workers/cache.kv.ts `getShared`): each caller still gets its own answer shaped from it,
 * and nothing the copy stands for is lost: a put, a purge or a refresh drops it at once, and a
 * plain `get` (other users of the store) still gets a copy of its own.
 */
import { describe, expect, it } from "vitest";
import type { CacheEntry } from "../../shared/ports";
import { KvStore } from "../../workers/cache.kv";
import { callJson, providerCalls, testEnv, uniqueToken } from "./helpers";

interface Hit {
  url: string;
  position: number;
}

describe("hits answered from one shared parsed entry", () => {
  it("two callers with different limits each get their own slice, positions from 1, in provider order", async () => {
    const token = uniqueToken();
    const query = `shared slices ${token}`;
    const first = await callJson("/v1/web_search", { body: { query, limit: 7 } });
    expect(first.body.cache).toBe("miss");
    const all = first.body.results as Hit[];
    expect(all).toHaveLength(7);
    for (const limit of [2, 7, 1, 5, 7]) {
      const hit = await callJson("/v1/web_search", { body: { query: `  ${query.toUpperCase()} `, limit } });
      expect(hit.status).toBe(200);
      expect(hit.body).toMatchObject({ cache: "hit", limit, query: `  ${query.toUpperCase()} ` });
      expect(hit.body.results).toEqual(all.slice(0, limit).map((result, i) => ({ ...result, position: i + 1 })));
    }
    expect(await providerCalls("tavily", token)).toBe(1);
  });

  it("getShared answers one frozen entry per copy; get still answers a copy of its own", async () => {
    const store = new KvStore(testEnv.CACHE);
    const key = `shared:${uniqueToken()}`;
    const stored: CacheEntry<{ items: string[] }> = { value: { items: ["a"] }, expiresAt: Date.now() + 600_000 };
    await testEnv.CACHE.put(key, JSON.stringify(stored), { expirationTtl: 60 });
    const read = await store.getShared<{ items: string[] }>(key); // a KV read: the caller's own
    const one = await store.getShared<{ items: string[] }>(key);
    const two = await store.getShared<{ items: string[] }>(key);
    expect(one).toBe(two);
    expect(one).toEqual(read);
    if (!one) throw new Error("no shared entry");
    expect(() => one.value.items.push("b")).toThrow(TypeError);
    const own = await store.get<{ items: string[] }>(key);
    if (!own) throw new Error("no entry");
    own.value.items.push("b");
    expect((await store.getShared<{ items: string[] }>(key))?.value.items).toEqual(["a"]);
  });

  it("a put, a delete and forgetCopy drop the shared entry at once", async () => {
    const store = new KvStore(testEnv.CACHE);
    const key = `shared:${uniqueToken()}`;
    const entry = (value: string): CacheEntry<string> => ({ value, expiresAt: Date.now() + 600_000 });
    await store.put(key, entry("first"), 600_000);
    await store.getShared(key);
    expect((await store.getShared<string>(key))?.value).toBe("first");
    await store.put(key, entry("put"), 600_000);
    expect((await store.getShared<string>(key))?.value).toBe("put");
    expect((await store.getShared<string>(key))?.value).toBe("put");
    await testEnv.CACHE.put(key, JSON.stringify(entry("refreshed")), { expirationTtl: 60 });
    store.forgetCopy(key);
    expect((await store.getShared<string>(key))?.value).toBe("refreshed");
    expect((await store.getShared<string>(key))?.value).toBe("refreshed");
    expect(await store.delete(key)).toBe(true);
    expect(await store.getShared(key)).toBeNull();
  });
});
