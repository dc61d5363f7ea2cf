/**
 * web_search through the real Workers entry, KV and Durable Objects, against the loopback
 * emulator: the provider is paid once per key, failures are never stored, the TTL is honoured.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../shared/app/app";
import { silentLogger } from "../../shared/log";
import { cacheKeyPrefix } from "../../shared/web/cache";
import { workersDeps } from "../../workers/deps";
import { answeredTogether, openGate } from "../support/emulator-client";
import { searchJoiners } from "./flight-joiners";
import { call, callJson, EMULATOR, expectErrorShape, providerCalls, testEnv, uniqueToken } from "./helpers";

const search = (query: string, extra: Record<string, unknown> = {}, vars?: Record<string, unknown>) =>
  callJson("/v1/web_search", { body: { query, ...extra }, vars });

describe("web_search pays the provider once", () => {
  it("answers the same query twice with one provider call", async () => {
    const q = `rust async runtimes ${uniqueToken()}`;
    const first = await search(q);
    const second = await search(q);
    expect(first.status).toBe(200);
    expect(first.body.cache).toBe("miss");
    expect(first.headers.get("x-cache")).toBe("MISS");
    expect(second.body.cache).toBe("hit");
    expect(second.headers.get("x-cache")).toBe("HIT");
    expect(second.body.results).toEqual(first.body.results);
    expect(await providerCalls("tavily", q.split(" ").pop()!)).toBe(1);
  });

  it("merges four identical concurrent searches into one provider call", async () => {
    const token = uniqueToken();
    const gate = `parallel-${token}`;
    const q = `parallel subagents [gate:${gate}] ${token}`;
    const answers = await answeredTogether(
      EMULATOR,
      { gate, paying: 1, joiners: 3, count: () => searchJoiners(q) },
      [1, 2, 3, 4].map(() => search(q)),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const statuses = answers.map((a) => a.body.cache).sort();
    expect(statuses.filter((s) => s === "miss")).toHaveLength(1);
    expect(statuses.filter((s) => s === "coalesced" || s === "hit")).toHaveLength(3);
    expect(await providerCalls("tavily", token)).toBe(1);
    for (const answer of answers) expect(answer.body.results).toEqual(answers[0]!.body.results);
  });

  it("serves limit 5 then limit 8 from one call to the limit tier", async () => {
    const token = uniqueToken();
    const five = await search(`tiers ${token}`, { limit: 5 });
    const eight = await search(`tiers ${token}`, { limit: 8 });
    expect(five.body.results).toHaveLength(5);
    expect(eight.body.results).toHaveLength(8);
    expect(eight.body.cache).toBe("hit");
    expect(eight.body.results.map((r: any) => r.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(eight.body.results.slice(0, 5)).toEqual(five.body.results);
    expect(await providerCalls("tavily", token)).toBe(1);
  });

  it("asks the provider for the tier, not the caller's limit", async () => {
    const token = uniqueToken();
    const eleven = await search(`tier ask ${token}`, { limit: 11 });
    expect(eleven.body.results).toHaveLength(11);
    const calls = await (await fetch(`${testEnv.EMULATOR_URL}/__calls?provider=tavily&contains=${token}`)).json<any>();
    expect(calls.calls[0].count).toBe(20);
  });

  it("shares one entry between spellings that normalize alike", async () => {
    const token = uniqueToken();
    const a = await search(`  Weather  in\tVegas ${token} `);
    const b = await search(`weather in vegas ${token.toUpperCase()}`);
    expect(a.body.query).toBe(`  Weather  in\tVegas ${token} `);
    expect(b.body.cache).toBe("hit");
    expect(await providerCalls("tavily", token)).toBe(1);
  });

  it("keeps the entry in the Durable Object when KV has not caught up", async () => {
    const token = uniqueToken();
    await search(`kv lag ${token}`);
    const keys = await testEnv.CACHE.list({ prefix: `${cacheKeyPrefix("search")}tavily:` });
    for (const key of keys.keys) await testEnv.CACHE.delete(key.name);
    const again = await search(`kv lag ${token}`);
    expect(again.body.cache).toBe("hit");
    expect(await providerCalls("tavily", token)).toBe(1);
  });

  it("puts the provider name in the key: another provider pays for itself", async () => {
    const token = uniqueToken();
    const brave = { WEB_SEARCH_PROVIDER: "brave", BRAVE_API_KEY: "brave-emulator-key" };
    const viaTavily = await search(`providers ${token}`);
    const viaBrave = await search(`providers ${token}`, {}, brave);
    const braveAgain = await search(`providers ${token}`, {}, brave);
    expect(viaTavily.body.provider).toBe("tavily");
    expect(viaBrave.body.provider).toBe("brave");
    expect(viaBrave.body.cache).toBe("miss");
    expect(braveAgain.body.cache).toBe("hit");
    expect(await providerCalls("tavily", token)).toBe(1);
    expect(await providerCalls("brave", token)).toBe(1);
  });

  it("pays on every call when the cache is disabled", async () => {
    const token = uniqueToken();
    const off = { WEB_CACHE_ENABLED: "false" };
    const first = await search(`no cache ${token}`, {}, off);
    const second = await search(`no cache ${token}`, {}, off);
    expect([first.body.cache, second.body.cache]).toEqual(["bypass", "bypass"]);
    expect(second.headers.get("x-cache")).toBe("BYPASS");
    expect(await providerCalls("tavily", token)).toBe(2);
  });
});

describe("web_search never stores a failure", () => {
  const noRescue = { WEB_KEYLESS_FALLBACK: "false" };

  it("maps an upstream 503 to 502 with the provider's name, and the next call pays again", async () => {
    const token = uniqueToken();
    const q = `failing [fail:503] ${token}`;
    const first = await search(q, {}, noRescue);
    const second = await search(q, {}, noRescue);
    expect(first.status).toBe(502);
    const error = expectErrorShape(first.body);
    expect(error.code).toBe("provider_error");
    expect(error.message).toContain("tavily");
    expect(error.message).not.toContain("emulator-tavily-key");
    expect(error.message).not.toContain("emulated upstream failure");
    expect(second.status).toBe(502);
    expect(await providerCalls("tavily", token)).toBe(2);
  });

  it("maps a provider that never answers to 504 at the timeout", async () => {
    const token = uniqueToken();
    // The provider holds its answer until after the call: only the 1 s timeout can end it.
    const slow = await search(`slow [gate:${token}] ${token}`, {}, { ...noRescue, WEB_SEARCH_TIMEOUT_SECONDS: "1" });
    await openGate(EMULATOR, token);
    expect(slow.status).toBe(504);
    expect(expectErrorShape(slow.body).code).toBe("provider_timeout");
  });

  it("answers once from keyless after a failure, and never stores that rescue", async () => {
    const token = uniqueToken();
    const q = `rescue [fail:500@tavily] ${token}`;
    const first = await search(q);
    const second = await search(q);
    expect(first.status).toBe(200);
    expect(first.body.provider).toBe("keyless");
    expect(first.body.cache).toBe("bypass");
    expect(first.body.results.length).toBeGreaterThan(0);
    expect(second.body.cache).toBe("bypass");
    expect(await providerCalls("tavily", token)).toBe(2);
    expect(await providerCalls("keyless", token)).toBe(2);
  });
});

describe("web_search TTL", () => {
  it("is a hit inside the TTL and pays again after it", async () => {
    let now = Date.UTC(2026, 0, 1);
    const app = createApp(workersDeps(testEnv, { clock: () => now, log: silentLogger }));
    const token = uniqueToken();
    const post = async () => {
      const response = await app.request(
        "/v1/web_search",
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ query: `ttl ${token}` }),
        },
        testEnv,
      );
      return ((await response.json()) as any).cache as string;
    };
    expect(await post()).toBe("miss");
    now += 19 * 60_000;
    expect(await post()).toBe("hit");
    now += 2 * 60_000; // 21 minutes after the first call: past the default 20-minute TTL
    expect(await post()).toBe("miss");
    expect(await providerCalls("tavily", token)).toBe(2);
  });

  it("still answers when the single-flight object is unreachable", async () => {
    const token = uniqueToken();
    const app = createApp(
      workersDeps(testEnv, {
        log: silentLogger,
        flight: {
          run: () => Promise.reject(new Error("Durable Object unavailable")),
          forget: () => Promise.reject(new Error("Durable Object unavailable")),
          joiners: () => Promise.reject(new Error("Durable Object unavailable")),
        },
      }),
    );
    const response = await app.request(
      "/v1/web_search",
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: `degraded ${token}` }),
      },
      testEnv,
    );
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).cache).toBe("miss");
    expect(await providerCalls("tavily", token)).toBe(1);
  });
});

describe("web_search input", () => {
  it("clamps the limit into 1..100 and reports the effective value", async () => {
    const token = uniqueToken();
    const brave = { WEB_SEARCH_PROVIDER: "brave", BRAVE_API_KEY: "brave-emulator-key" };
    const low = await search(`clamp ${token}`, { limit: 0 }, brave);
    const high = await search(`clamp ${token}`, { limit: 500 }, brave);
    // Integers past the safe-integer range are clamped too, not refused.
    const huge = await search(`clamp ${token}`, { limit: 1e20 }, brave);
    const negative = await search(`clamp ${token}`, { limit: -1e20 }, brave);
    expect([huge.status, huge.body.limit, negative.status, negative.body.limit]).toEqual([200, 100, 200, 1]);
    expect(low.body.limit).toBe(1);
    expect(low.body.results).toHaveLength(1);
    expect(high.body.limit).toBe(100);
    expect(high.body.results).toHaveLength(100);
    expect(high.body.results[99].position).toBe(100);
  });

  it.each([
    [{ query: "x", limit: 5.5 }, "limit"],
    [{ query: "x", limit: "5" }, "limit"],
    [{ query: "" }, "query"],
    [{ query: "   " }, "query"],
    [{ query: "x".repeat(2049) }, "query"],
    [{}, "query"],
  ])("refuses %j with a 400 naming %s", async (body, field) => {
    const response = await callJson("/v1/web_search", { body });
    expect(response.status).toBe(400);
    const error = expectErrorShape(response.body);
    expect(error.code).toBe("invalid_request");
    expect((error.details as any[]).some((d) => d.path[0] === field)).toBe(true);
  });

  it("answers 503 when the configured provider has no key", async () => {
    const response = await search("anything", {}, { WEB_SEARCH_PROVIDER: "exa" });
    expect(response.status).toBe(503);
    const error = expectErrorShape(response.body);
    expect(error.code).toBe("no_provider");
    expect(error.message).toContain(
      "EXA_API_KEY is not set (a secret: .dev.vars locally, then restart; wrangler secret put",
    );
  });

  it("uses keyless under auto when no provider has a key", async () => {
    const token = uniqueToken();
    const response = await search(`auto keyless ${token}`, {}, { TAVILY_API_KEY: "", PROVIDERS_SEARXNG_BASE_URL: "" });
    expect(response.body.provider).toBe("keyless");
    expect(await providerCalls("keyless", token)).toBe(1);
  });

  it("gets at most Tavily's own cap of 20 results from Tavily, whatever the limit", async () => {
    const token = uniqueToken();
    const response = await search(`tavily cap ${token}`, { limit: 50 });
    expect(response.body.limit).toBe(50);
    expect(response.body.results).toHaveLength(20);
  });

  it("sends the configured key to the provider", async () => {
    const token = uniqueToken();
    await search(`key sent ${token}`);
    const calls = await (await fetch(`${testEnv.EMULATOR_URL}/__calls?provider=tavily&contains=${token}`)).json<any>();
    expect(calls.calls[0].has_key).toBe(true);
  });
});

describe("the search cache with real KV", () => {
  it("writes the entry to KV with its expiry inside the value", async () => {
    const token = uniqueToken();
    const before = Date.now();
    await search(`kv entry ${token}`);
    const { keys } = await testEnv.CACHE.list({ prefix: `${cacheKeyPrefix("search")}tavily:10:` });
    const entries = await Promise.all(keys.map((k) => testEnv.CACHE.get<any>(k.name, "json")));
    const mine = entries.find((e) => JSON.stringify(e).includes(token));
    expect(mine).toBeTruthy();
    expect(mine.expiresAt).toBeGreaterThanOrEqual(before + 20 * 60_000);
    expect(mine.expiresAt).toBeLessThanOrEqual(Date.now() + 20 * 60_000);
  });

  it("returns the raw error shape, not a crash, for a GET", async () => {
    const response = await call("/v1/web_search");
    expect(response.status).toBe(405);
  });
});
