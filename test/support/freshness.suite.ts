/**
 * One suite for freshness per request (docs/api.md, "Freshness, per request") over real requests,
 * run against every runtime: workerd with KV and the Durable Objects (test/workers/freshness.test.ts)
 * and the Deno entry (test/node/deno.test.ts). Provider call counts are the evidence.
 */
import { describe, expect, it } from "vitest";
import { answeredTogether, closeGate, gateArrivals, openGate, until } from "./emulator-client";

export interface FreshnessTarget {
  /** POSTs JSON to the service (anonymous access allowed) and reads the JSON answer. */
  post(
    path: string,
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; body: any }>;
  /** How many calls the emulator saw for `provider` whose query/URL contains `contains`. */
  providerCalls(provider: string, contains: string): Promise<number>;
  /** A token that makes a test's queries and URLs unique in the shared emulator. */
  unique(): string;
  /** The emulator's base URL (for its gates). */
  emulator: string;
  /**
   * How many callers of web_search `query` wait on the ones paying (workerd: the FlightDO's RPC;
   * Deno: test/deno/flight-probe.ts over HTTP). Concurrent cases hold the provider at a
   * `[gate:ID]` until every caller joined.
   */
  searchJoiners(query: string): Promise<number>;
}

/** Asserts the api.md error shape and returns the error object. */
function errorOf(body: any): { code: string; message: string } {
  expect(body?.success, JSON.stringify(body).slice(0, 300)).toBe(false);
  return body.error;
}

/**
 * @param runtime names the describe blocks ("workerd", "Deno")
 * @param target called once the file's beforeAll has started the service
 */
export function freshnessSuite(runtime: string, target: () => FreshnessTarget): void {
  const search = (body: Record<string, unknown>, headers?: Record<string, string>) =>
    target().post("/v1/web_search", body, headers);
  const extract = (body: Record<string, unknown>, headers?: Record<string, string>) =>
    target().post("/v1/web_extract", body, headers);
  const purge = (body: Record<string, unknown>) => target().post("/v1/cache/purge", body);
  const providerCalls = (provider: string, contains: string) => target().providerCalls(provider, contains);
  const uniqueToken = () => target().unique();
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** What holds the provider's answer to a query made with `token` until the test opens it. */
  const hold = (token: string) => `[gate:g-${token}]`;
  /**
   * Answers of concurrent web_search calls of one `query`, once the `paying` calls are held at the
   * gate and the others joined them; the gate closes again after.
   */
  async function together<T>(query: string, token: string, paying: number, calls: Promise<T>[]): Promise<T[]> {
    const { emulator, searchJoiners } = target();
    const gate = `g-${token}`;
    const count = () => searchJoiners(query);
    const answers = await answeredTogether(emulator, { gate, paying, joiners: calls.length - paying, count }, calls);
    await closeGate(emulator, gate);
    return answers;
  }

  describe(`max_age (${runtime})`, () => {
    it("8 concurrent max_age: 0 calls pay once, and their answer replaces the stored one", async () => {
      const token = uniqueToken();
      const query = `fresh ${hold(token)} ${token}`;
      const [first] = await together(query, token, 1, [search({ query })]);
      expect(first!.body.cache).toBe("miss");
      const fresh = await together(
        query,
        token,
        1,
        Array.from({ length: 8 }, () => search({ query, max_age: 0 })),
      );
      expect(fresh.map((r) => r.body.cache).sort()).toEqual([
        "coalesced",
        "coalesced",
        "coalesced",
        "coalesced",
        "coalesced",
        "coalesced",
        "coalesced",
        "miss",
      ]);
      expect(await providerCalls("tavily", token)).toBe(2);
      const refreshedAt = fresh.find((r) => r.body.cache === "miss")!.body.cached_at;
      expect(refreshedAt > first!.body.cached_at).toBe(true);
      const later = await search({ query });
      expect([later.body.cache, later.body.cached_at]).toEqual(["hit", refreshedAt]);
      expect(await providerCalls("tavily", token)).toBe(2);
    });

    it("serves an entry younger than max_age and pays for one older, in real time", async () => {
      const token = uniqueToken();
      const query = `aged ${token}`;
      const miss = await search({ query });
      expect([miss.body.cache, miss.body.age, miss.headers.get("age")]).toEqual(["miss", 0, "0"]);
      await sleep(1_100);
      const hit = await search({ query, max_age: 60 });
      expect([hit.body.cache, hit.body.cached_at, hit.headers.get("age")]).toEqual([
        "hit",
        miss.body.cached_at,
        String(hit.body.age),
      ]);
      expect(hit.body.age).toBeGreaterThanOrEqual(1);
      expect((await search({ query, max_age: 1 })).body.cache).toBe("miss");
      expect(await providerCalls("tavily", token)).toBe(2);
    });

    it("web_extract: max_age 0 pays again; every result says its age and cached_at", async () => {
      const url = `https://docs.example.com/${uniqueToken()}/fresh`;
      const first = await extract({ urls: [url] });
      const hit = await extract({ urls: [url] });
      expect([first.body.results[0].cached, hit.body.results[0].cached]).toEqual([false, true]);
      expect(first.body.results[0]).toMatchObject({ age: 0, cached_at: expect.any(String) });
      expect(hit.body.results[0].cached_at).toBe(first.body.results[0].cached_at);
      expect(hit.body.results[0].age).toBeGreaterThanOrEqual(0);
      const fresh = await extract({ urls: [url], max_age: 0 });
      expect([fresh.body.results[0].cached, fresh.headers.get("x-cache")]).toEqual([false, "HIT=0,MISS=1"]);
      expect(await providerCalls("tavily", url)).toBe(2);
    });
  });

  describe(`store: false (${runtime})`, () => {
    it("reads nothing, stores nothing, and merges only with other store: false calls", async () => {
      const token = uniqueToken();
      const query = `unstored ${hold(token)} ${token}`;
      // One call of each kind pays, the other of its kind joins it.
      const answers = await together(
        query,
        token,
        2,
        [{ store: false }, { store: false }, {}, {}].map((extra) => search({ query, ...extra })),
      );
      // Which request of each kind reaches the coordinator first is a race; each kind pays once.
      const kinds = answers.map((a) => a.body.cache);
      expect([kinds.slice(0, 2).sort(), kinds.slice(2).sort()]).toEqual([
        ["coalesced", "miss"],
        ["coalesced", "miss"],
      ]);
      expect(await providerCalls("tavily", token)).toBe(2);
      const [again] = await together(query, token, 1, [search({ query, store: false })]);
      expect(again!.body.cache).toBe("miss");
      expect(await providerCalls("tavily", token)).toBe(3);
      expect((await search({ query })).body.cache).toBe("hit");
    });

    it("web_extract with store: false leaves nothing for the next caller", async () => {
      const url = `https://docs.example.com/${uniqueToken()}/private`;
      expect((await extract({ urls: [url], store: false })).body.results[0].cached).toBe(false);
      expect((await extract({ urls: [url] })).body.results[0].cached).toBe(false);
      expect(await providerCalls("tavily", url)).toBe(2);
    });
  });

  describe(`Cache-Control request headers (${runtime})`, () => {
    it("no-cache and max-age=0 pay again, no-store stores nothing, a body field wins, malformed directives are ignored", async () => {
      const token = uniqueToken();
      const query = `headers ${token}`;
      expect((await search({ query })).body.cache).toBe("miss");
      expect((await search({ query }, { "cache-control": "no-cache" })).body.cache).toBe("miss");
      expect((await search({ query }, { "cache-control": "max-age=0" })).body.cache).toBe("miss");
      expect(await providerCalls("tavily", token)).toBe(3);
      expect((await search({ query, max_age: 3600 }, { "cache-control": "no-cache" })).body.cache).toBe("hit");
      expect(
        (
          await search(
            { query },
            { "cache-control": "max-age=abc, max-age=-1, max-age, no-cache=1, frobnicate, MAX-AGE=3600" },
          )
        ).body.cache,
      ).toBe("hit");
      expect(await providerCalls("tavily", token)).toBe(3);

      const unstored = `headers no-store ${token}`;
      expect((await search({ query: unstored }, { "cache-control": "no-store" })).body.cache).toBe("miss");
      expect((await search({ query: unstored })).body.cache).toBe("miss");
      expect(await providerCalls("tavily", unstored)).toBe(2);
    });

    it("web_extract takes the same headers", async () => {
      const url = `https://docs.example.com/${uniqueToken()}/headers`;
      await extract({ urls: [url] });
      expect((await extract({ urls: [url] }, { "cache-control": "no-cache" })).headers.get("x-cache")).toBe(
        "HIT=0,MISS=1",
      );
      expect(await providerCalls("tavily", url)).toBe(2);
    });
  });

  describe(`bad freshness values (${runtime})`, () => {
    const cases: [string, Record<string, unknown>][] = [
      ["max_age", { max_age: -1 }],
      ["max_age", { max_age: 1.5 }],
      ["max_age", { max_age: "60" }],
      ["max_age", { max_age: null }],
      ["store", { store: "no" }],
      ["store", { store: 0 }],
    ];
    for (const [field, extra] of cases) {
      it(`${JSON.stringify(extra)} is a 400 invalid_request naming ${field}, on both routes`, async () => {
        for (const response of [
          await search({ query: "bad freshness", ...extra }),
          await extract({ urls: ["https://docs.example.com/bad-freshness"], ...extra }),
        ]) {
          expect(response.status).toBe(400);
          const error = errorOf(response.body);
          expect(error.code).toBe("invalid_request");
          expect(error.message).toContain(field);
        }
      });
    }

    it("a year exactly is accepted, and any longer reads as a year (the spec says integer seconds, ≥ 0)", async () => {
      const query = `a year ${uniqueToken()}`;
      expect((await search({ query, max_age: 31_536_000 })).status).toBe(200);
      for (const max_age of [31_536_001, 1e20]) {
        const longer = await search({ query, max_age });
        expect(longer.status, String(max_age)).toBe(200);
        expect(longer.headers.get("x-cache")).toBe("HIT"); // a stored answer is young enough
      }
    });
  });

  describe(`POST /v1/cache/purge (${runtime})`, () => {
    it("drops a search (every tier without a limit) and a page (both formats without one) from KV and the Durable Object", async () => {
      const token = uniqueToken();
      const query = `Purge  Me ${token}`;
      const url = `https://docs.example.com/${token}/purged`;
      await search({ query, limit: 5 });
      await search({ query, limit: 30 });
      await extract({ urls: [url] });
      expect((await search({ query, limit: 5 })).body.cache).toBe("hit");
      const purged = await purge({ search: [{ query: ` purge me ${token}` }], extract: [{ url }] });
      expect([purged.status, purged.body]).toEqual([200, { success: true, purged: 3 }]);
      expect((await search({ query, limit: 5 })).body.cache).toBe("miss");
      expect((await search({ query, limit: 30 })).body.cache).toBe("miss");
      expect((await extract({ urls: [url] })).body.results[0].cached).toBe(false);
      expect(await providerCalls("tavily", token)).toBe(6);
      expect((await purge({ search: [{ query, limit: 5 }] })).body.purged).toBe(1);
      expect((await purge({ search: [{ query, limit: 5 }] })).body.purged).toBe(0);
    });

    it("a purge racing a flight does not stop it: its answer is stored as usual", async () => {
      const token = uniqueToken();
      const gate = `racing-${token}`;
      const query = `racing [gate:${gate}] ${token}`;
      const inFlight = search({ query });
      // The provider holds its answer until the gate opens: the call is in flight once it arrived.
      await until(
        async () => (await gateArrivals(target().emulator, gate)) === 1,
        () => "the call never arrived at the gate",
      );
      const purged = await purge({ search: [{ query }] });
      await openGate(target().emulator, gate);
      expect(purged.body).toEqual({ success: true, purged: 0 });
      expect((await inFlight).body.cache).toBe("miss");
      expect((await search({ query })).body.cache).toBe("hit");
      expect(await providerCalls("tavily", token)).toBe(1);
    });
  });
}
