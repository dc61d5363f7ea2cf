/**
 * The Durable Objects' own housekeeping: storage does not grow without bound. A session's
 * counters go after a day of inactivity; a cache key's authoritative copy goes after it expires.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SESSION_IDLE_MS } from "../../shared/vision/repeat-cap";
import { cacheKeyPrefix } from "../../shared/web/cache";
import { testEnv, uniqueToken } from "./helpers";

describe("SessionDO", () => {
  it("schedules deletion a day after the last use, and forgets every counter when it fires", async () => {
    const stub = testEnv.SESSIONS.get(testEnv.SESSIONS.idFromName(uniqueToken()));
    const before = Date.now();
    await stub.reserve("image-a", 3);
    await stub.reserve("image-a", 3);
    const alarm = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThanOrEqual(before + SESSION_IDLE_MS);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await stub.reserve("image-a", 3)).toEqual({ ok: true, count: 1 });
  });
});

describe("FlightDO", () => {
  it("keeps the entry until it expires, then the alarm deletes its storage", async () => {
    const key = `${cacheKeyPrefix("search")}test:${uniqueToken()}`;
    const stub = testEnv.FLIGHT.get(testEnv.FLIGHT.idFromName(key));
    const job = {
      kind: "search" as const,
      provider: "tavily" as const,
      settings: { name: "tavily", baseUrl: `${testEnv.EMULATOR_URL}/tavily`, apiKey: "k", timeoutMs: 5000 },
      request: { query: `housekeeping ${key}`, count: 10 },
    };
    const now = Date.now();
    const outcome = await stub.run(key, job, { now, ttlMs: 60_000, store: true });
    expect(outcome.ok && outcome.cache).toBe("miss");
    const alarm = await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm());
    expect(alarm).toBe(now + 60_000 + 1000);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const keys = await runInDurableObject(stub, async (_instance, state) => [...(await state.storage.list()).keys()]);
    expect(keys).toEqual([]);
  });
});
