/**
 * What the single-flight object hands back (issue 8, findings 6 and 7): an answer over the RPC
 * limit (~32 MiB) used to fail on the way back, so the caller paid the provider again itself; and
 * every caller waiting on one failed search made its own keyless rescue call. Now the object cuts
 * content to `web.char_limit` before answering, and the rescue runs inside the same flight.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../shared/app/app";
import type { Logger } from "../../shared/ports";
import { workersDeps } from "../../workers/deps";
import { answeredTogether } from "../support/emulator-client";
import { extractJoiners, searchJoiners } from "./flight-joiners";
import { callJson, EMULATOR, providerCalls, testEnv, uniqueToken } from "./helpers";

/** A logger that remembers event names, to prove the single-flight object was reachable. */
function recordingLogger(): Logger & { events: string[] } {
  const events: string[] = [];
  const note = (event: string) => void events.push(event);
  return { events, info: note, warn: note, error: note };
}

describe("an answer of any size is paid once", () => {
  it("extracts a 34-million-character page with one provider call, cut to web.char_limit", async () => {
    const url = `https://docs.example.com/huge/[chars:34000000]/${uniqueToken()}`;
    const log = recordingLogger();
    const app = createApp(workersDeps(testEnv, { log }));
    const response = await app.request(
      "/v1/web_extract",
      { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ urls: [url] }) },
      testEnv,
    );
    expect(response.status).toBe(200);
    const result = ((await response.json()) as any).results[0];
    expect(result.error).toBeUndefined();
    expect(result.truncated).toBe(true);
    expect(result.content.length).toBeLessThanOrEqual(15_000);
    // Cut once: one marker, and what it omits is the rest of the 34-million-character page.
    const omitted = [...result.content.matchAll(/\[\.\.\. (\d+) characters omitted \.\.\.\]/g)].map((m) =>
      Number(m[1]),
    );
    expect(omitted).toHaveLength(1);
    expect(omitted[0]).toBeGreaterThan(34_000_000 - 15_000);
    expect(log.events).not.toContain("single_flight_unreachable");
    expect(await providerCalls("tavily", url)).toBe(1);
  });

  it("cuts to the caller's own char_limit and still reports truncated on a coalesced answer", async () => {
    const gate = `cut-${uniqueToken()}`;
    const url = `https://docs.example.com/long/[chars:40000]/[gate:${gate}]/${uniqueToken()}`;
    const vars = { WEB_CHAR_LIMIT: "5000" };
    const answers = await answeredTogether(
      EMULATOR,
      { gate, paying: 1, joiners: 2, count: () => extractJoiners(url, vars) },
      [1, 2, 3].map(() => callJson("/v1/web_extract", { body: { urls: [url] }, vars })),
    );
    for (const answer of answers) {
      expect(answer.body.results[0].truncated).toBe(true);
      expect(answer.body.results[0].content.length).toBeLessThanOrEqual(5000);
    }
    expect(await providerCalls("tavily", url)).toBe(1);
  });

  it("cuts and flags a page the same way when the cache is off (no single flight on that path)", async () => {
    const url = `https://docs.example.com/long/[chars:40000]/${uniqueToken()}`;
    const { body } = await callJson("/v1/web_extract", {
      body: { urls: [url] },
      vars: { WEB_CACHE_ENABLED: "false", WEB_CHAR_LIMIT: "5000" },
    });
    expect(body.results[0]).toMatchObject({ cached: false, truncated: true });
    expect(body.results[0].content.length).toBeLessThanOrEqual(5000);
    expect(body.results[0].content.match(/characters omitted/g)).toHaveLength(1);
  });
});

describe("a search answer over the transport limits is paid once", () => {
  it("a 40 MiB search answer is a provider_error for every concurrent caller, one provider call, nothing stored, no direct retry", async () => {
    const token = uniqueToken();
    const gate = `bloat-${token}`;
    const query = `huge answer [bloat:41943040] [gate:${gate}] ${token}`;
    const log = recordingLogger();
    const app = createApp(workersDeps(testEnv, { log }));
    const search = () =>
      app.request(
        "/v1/web_search",
        { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query, limit: 10 }) },
        testEnv,
      );
    const responses = await answeredTogether(
      EMULATOR,
      { gate, paying: 1, joiners: 2, count: () => searchJoiners(query, 10) },
      [1, 2, 3].map(search),
    );
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as any[];
    expect(responses.map((r) => r.status)).toEqual([502, 502, 502]);
    for (const body of bodies) {
      expect(body.error.code).toBe("provider_error");
      expect(body.error.message).toMatch(/tavily provider failed: its answer was too large/);
    }
    expect(log.events).not.toContain("single_flight_unreachable");
    expect(await providerCalls("tavily", token)).toBe(1);
    // Nothing was stored: the next caller pays again (and fails the same way).
    expect((await search()).status).toBe(502);
    expect(await providerCalls("tavily", token)).toBe(2);
  });
});

describe("the keyless rescue is one call for every waiting caller", () => {
  it("16 callers waiting on one failed search share one keyless call, and nothing is stored", async () => {
    const token = uniqueToken();
    const gate = `rescue-${token}`;
    const q = `coalesced rescue [fail:500@tavily] [gate:${gate}] ${token}`;
    const answers = await answeredTogether(
      EMULATOR,
      { gate, paying: 1, joiners: 15, count: () => searchJoiners(q) },
      Array.from({ length: 16 }, () => callJson("/v1/web_search", { body: { query: q } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(16).fill(200));
    for (const answer of answers) {
      expect(answer.body.provider).toBe("keyless");
      expect(answer.body.cache).toBe("bypass");
      expect(answer.headers.get("x-cache")).toBe("BYPASS");
      expect(answer.body.results.length).toBeGreaterThan(0);
    }
    expect(await providerCalls("tavily", token)).toBe(1);
    expect(await providerCalls("keyless", token)).toBe(1);
    // Never stored: the next caller pays (and is rescued) again.
    const later = await callJson("/v1/web_search", { body: { query: q } });
    expect(later.body.cache).toBe("bypass");
    expect(await providerCalls("tavily", token)).toBe(2);
    expect(await providerCalls("keyless", token)).toBe(2);
  });
});
