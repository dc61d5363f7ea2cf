/**
 * A Worker isolate's memory copy of what it read from KV (workers/cache.kv.ts, KV_COPY_MS): a key
 * read again within the bound is not another KV read, and nothing the copy stands for is lost: a
 * put, a purge or a refresh by the single-flight owner drops it at once, an entry's expiry and the
 * bound end it.
 */
import { describe, expect, it } from "vitest";
import type { CacheEntry } from "../../shared/ports";
import { KV_COPY_MS, KvStore } from "../../workers/cache.kv";
import { callJson, providerCalls, testEnv, uniqueToken } from "./helpers";

const entry = (value: string, expiresAt: number): CacheEntry<string> => ({ value, expiresAt, fetchedAt: 1 });
/** Writes KV directly, behind the store's back (as another isolate or the Durable Object does). */
const behindItsBack = (key: string, stored: CacheEntry<string>) =>
  testEnv.CACHE.put(key, JSON.stringify(stored), { expirationTtl: 60 });

describe("KvStore's memory copy", () => {
  it("answers a key read again within KV_COPY_MS from memory, then reads KV again", async () => {
    let now = 1_000_000;
    const store = new KvStore(testEnv.CACHE, () => now);
    const key = `copy:${uniqueToken()}`;
    const expiresAt = Date.now() + 600_000;
    await behindItsBack(key, entry("first", expiresAt));
    expect((await store.get<string>(key))?.value).toBe("first");
    await behindItsBack(key, entry("second", expiresAt));
    // The copy answers: KV is not read again within the bound.
    expect((await store.get<string>(key))?.value).toBe("first");
    now += KV_COPY_MS - 1;
    expect((await store.get<string>(key))?.value).toBe("first");
    now += 1;
    expect((await store.get<string>(key))?.value).toBe("second");
  });

  it("never keeps a copy past the entry's own expiry", async () => {
    let now = Date.now();
    const store = new KvStore(testEnv.CACHE, () => now);
    const key = `copy:${uniqueToken()}`;
    await behindItsBack(key, entry("expiring", now + 100));
    expect((await store.get<string>(key))?.value).toBe("expiring");
    await behindItsBack(key, entry("renewed", now + 600_000));
    now += 100;
    expect((await store.get<string>(key))?.value).toBe("renewed");
  });

  it("drops its copy at a put, a delete and forgetCopy", async () => {
    const now = Date.now();
    const store = new KvStore(testEnv.CACHE, () => now);
    const key = `copy:${uniqueToken()}`;
    await behindItsBack(key, entry("first", now + 600_000));
    await store.get(key);
    await store.put(key, entry("put", now + 600_000), 600_000);
    expect((await store.get<string>(key))?.value).toBe("put");
    await behindItsBack(key, entry("refreshed", now + 600_000));
    store.forgetCopy(key);
    expect((await store.get<string>(key))?.value).toBe("refreshed");
    expect(await store.delete(key)).toBe(true);
    expect(await store.get(key)).toBeNull();
  });
});

describe("web_search hits through the memory copy", () => {
  it("a refresh (max_age: 0) right after a hit is what the next hit serves", async () => {
    const token = uniqueToken();
    const query = `copy refresh ${token}`;
    const miss = await callJson("/v1/web_search", { body: { query } });
    const hit = await callJson("/v1/web_search", { body: { query } });
    expect([miss.body.cache, hit.body.cache, hit.body.cached_at]).toEqual(["miss", "hit", miss.body.cached_at]);
    const refreshed = await callJson("/v1/web_search", { body: { query, max_age: 0 } });
    expect(refreshed.body.cache).toBe("miss");
    const later = await callJson("/v1/web_search", { body: { query } });
    expect([later.body.cache, later.body.cached_at]).toEqual(["hit", refreshed.body.cached_at]);
    expect(await providerCalls("tavily", token)).toBe(2);
  });

  it("a purge right after a hit makes the next call pay", async () => {
    const token = uniqueToken();
    const query = `copy purge ${token}`;
    await callJson("/v1/web_search", { body: { query } });
    expect((await callJson("/v1/web_search", { body: { query } })).body.cache).toBe("hit");
    const purged = await callJson("/v1/cache/purge", { body: { search: [{ query }] } });
    expect(purged.body).toMatchObject({ success: true });
    expect(purged.body.purged).toBeGreaterThanOrEqual(1);
    expect((await callJson("/v1/web_search", { body: { query } })).body.cache).toBe("miss");
    expect(await providerCalls("tavily", token)).toBe(2);
  });
});
