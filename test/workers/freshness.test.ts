/**
 * Freshness per request in workerd (docs/api.md, "Freshness, per request"): the suite every
 * runtime runs (test/support/freshness.suite.ts), against KV and the Durable Objects; and here
 * what needs workerd's injected clock or variables: ages judged on a clock moved by minutes, and
 * the purge route behind the /v1 auth.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../shared/app/app";
import { silentLogger } from "../../shared/log";
import { workersDeps } from "../../workers/deps";
import { freshnessSuite } from "../support/freshness.suite";
import { searchJoiners } from "./flight-joiners";
import { call, callJson, EMULATOR, expectErrorShape, providerCalls, testEnv, uniqueToken } from "./helpers";

freshnessSuite("workerd", () => ({
  post: (path, body, headers) => callJson(path, { body, headers }),
  providerCalls,
  unique: uniqueToken,
  emulator: EMULATOR,
  searchJoiners: (query) => searchJoiners(query),
}));

const purge = (body: Record<string, unknown>) => callJson("/v1/cache/purge", { body });

describe("max_age on an injected clock", () => {
  it("serves an entry younger than max_age, pays for one older, and reports age and cached_at (Age header too)", async () => {
    let now = Date.now();
    const app = createApp(workersDeps(testEnv, { clock: () => now, log: silentLogger }));
    const token = uniqueToken();
    const post = async (body: Record<string, unknown>) => {
      const response = await app.request(
        "/v1/web_search",
        {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ query: `aged ${token}`, ...body }),
        },
        testEnv,
      );
      return { age: response.headers.get("age"), body: (await response.json()) as any };
    };
    const miss = await post({});
    expect([miss.body.cache, miss.body.age, miss.age]).toEqual(["miss", 0, "0"]);
    expect(Math.abs(Date.parse(miss.body.cached_at) - now)).toBeLessThan(5_000);
    now += 90_000;
    const hit = await post({ max_age: 120 });
    expect(hit.body.cache).toBe("hit");
    expect(hit.body.age).toBeGreaterThanOrEqual(89);
    expect(hit.body.age).toBeLessThanOrEqual(90);
    expect(hit.age).toBe(String(hit.body.age));
    expect(hit.body.cached_at).toBe(miss.body.cached_at);
    expect(await providerCalls("tavily", token)).toBe(1);
    const tooOld = await post({ max_age: 60 });
    expect([tooOld.body.cache, tooOld.body.age]).toEqual(["miss", 0]);
    expect(await providerCalls("tavily", token)).toBe(2);
  });
});

describe("POST /v1/cache/purge input and auth", () => {
  it("refuses a bad body naming the field, and sits behind the /v1 auth", async () => {
    const badUrl = await purge({ extract: [{ url: "not a url" }] });
    expect(badUrl.status).toBe(400);
    expect(expectErrorShape(badUrl.body).message).toContain("extract[0].url");
    // The URLs are checked before a provider is chosen: a missing provider key does not hide a bad URL.
    const badUrlNoKey = await call("/v1/cache/purge", {
      body: { search: [{ query: "anything" }], extract: [{ url: "ftp://example.com/x" }] },
      vars: { WEB_SEARCH_PROVIDER: "exa" },
    });
    expect(badUrlNoKey.status).toBe(400);
    expect(expectErrorShape(await badUrlNoKey.json()).message).toContain("extract[0].url");
    // A limit a search takes (clamped into 1..100) is taken by the purge too.
    const huge = await purge({ search: [{ query: "clamped limit", limit: 1e20 }] });
    expect([huge.status, huge.body.success]).toEqual([200, true]);
    const badQuery = await purge({ search: [{ query: 42 }] });
    expect([badQuery.status, expectErrorShape(badQuery.body).code]).toEqual([400, "invalid_request"]);
    const anonymous = await call("/v1/cache/purge", { body: { search: [] }, vars: { API_TOKENS: "purge-token-1" } });
    expect(anonymous.status).toBe(401);
    const authorised = await call("/v1/cache/purge", {
      body: { search: [] },
      headers: { authorization: "Bearer purge-token-1" },
      vars: { API_TOKENS: "purge-token-1" },
    });
    expect(authorised.status).toBe(200);
  });
});
