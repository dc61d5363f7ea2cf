/**
 * Every search adapter against the loopback emulator with a real fetch: mapping, counts, auth,
 * and the failure mapping a client would see (502/504, provider named, nothing upstream echoed).
 */
import { appErrorOf } from "../support/app-error";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppError } from "../../shared/http/errors";
import type { ProviderSettings } from "../../shared/web/providers/provider.types";
import {
  DEFAULT_BASE_URLS,
  SEARCH_PROVIDERS,
  type SearchProviderName,
  searchAdapters,
} from "../../shared/web/providers/providers.catalog";
import { parseDuckDuckGoResults, unwrapRedirect } from "../../shared/web/providers/keyless.provider";
import { EMULATOR_API_KEY, type EmulatorCall, type RunningEmulator, startEmulator } from "../emulator/server";
import { emulatorCallList, openGate, uniqueToken } from "../support/emulator-client";

let emulator: RunningEmulator;
beforeAll(async () => {
  emulator = await startEmulator();
});
afterAll(async () => {
  await emulator.close();
});

const KEYED: SearchProviderName[] = ["tavily", "brave", "exa", "firecrawl"];

function settings(name: SearchProviderName, overrides: Partial<ProviderSettings> = {}): ProviderSettings {
  return {
    name,
    baseUrl: `${emulator.url}/${name}`,
    apiKey: KEYED.includes(name) ? EMULATOR_API_KEY : undefined,
    timeoutMs: 5000,
    ...overrides,
  };
}

const token = () => uniqueToken("tok");

const callsFor = (provider: string, contains: string): Promise<EmulatorCall[]> =>
  emulatorCallList(emulator.url, provider, contains);

function expectNothingLeaked(error: AppError): void {
  const sent = JSON.stringify(error.toBody());
  expect(sent).not.toContain(EMULATOR_API_KEY);
  expect(sent).not.toContain("upstream-body-detail");
  expect(JSON.stringify(error.privateCause ?? null)).not.toContain(EMULATOR_API_KEY);
}

describe.each(SEARCH_PROVIDERS)("%s search adapter", (name) => {
  const search = (query: string, count: number, overrides: Partial<ProviderSettings> = {}) =>
    searchAdapters[name](settings(name, overrides), { query, count }, globalThis.fetch);

  it("maps the provider's results to ranked hits in provider order", async () => {
    const tok = token();
    const hits = await search(`edge caching ${tok}`, 10);
    expect(hits).toHaveLength(10);
    expect(hits.map((h) => h.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(hits[0]).toEqual({
      title: `Result 1 for edge caching ${tok}`,
      url: `https://example.com/edge-caching-${tok}/1`,
      description: `Snippet 1: what the web says about edge caching ${tok}.`,
      position: 1,
    });
    expect(hits[9]!.url).toBe(`https://example.com/edge-caching-${tok}/10`);
  });

  it("returns at most `count` hits", async () => {
    const hits = await search(`small ${token()}`, 3);
    expect(hits.map((h) => h.position)).toEqual([1, 2, 3]);
  });

  it("returns no hits when the provider finds nothing", async () => {
    expect(await search(`nothing here [empty] ${token()}`, 10)).toEqual([]);
  });

  it("maps an upstream 503 to a 502 naming the provider, without the upstream body or key", async () => {
    const error = await appErrorOf(search(`broken [fail:503] ${token()}`, 10));
    expect(error.status).toBe(502);
    expect(error.code).toBe("provider_error");
    expect(error.message).toContain(name);
    expect(error.message).toContain("HTTP 503");
    expectNothingLeaked(error);
  });

  it("maps 429 to a 502 that says it was rate limited", async () => {
    const error = await appErrorOf(search(`busy [fail:429] ${token()}`, 10));
    expect(error.status).toBe(502);
    expect(error.message).toContain("rate limited");
    expectNothingLeaked(error);
  });

  it("maps an answer that never comes to a 504 at the timeout, naming the provider", async () => {
    // The provider holds its answer until after the call: only the 200 ms timeout can end it.
    const held = token();
    const error = await appErrorOf(search(`slow [gate:${held}] ${held}`, 10, { timeoutMs: 200 }));
    await openGate(emulator.url, held);
    expect(error.status).toBe(504);
    expect(error.code).toBe("provider_timeout");
    expect(error.message).toContain(name);
    expect(error.message).toContain("0.2 s");
  });

  it("maps a refused connection to a 502 network error", async () => {
    const closed = await startEmulator();
    await closed.close();
    const error = await appErrorOf(search(`offline ${token()}`, 10, { baseUrl: `${closed.url}/${name}` }));
    expect(error.status).toBe(502);
    expect(error.message).toContain(name);
    expect(error.message).toContain("network error");
  });

  if (name !== "keyless") {
    it("maps a non-JSON 200 to a 502", async () => {
      const error = await appErrorOf(search(`garbled [badjson] ${token()}`, 10));
      expect(error.status).toBe(502);
      expect(error.message).toContain("not valid JSON");
      expectNothingLeaked(error);
    });
  }

  if (KEYED.includes(name)) {
    it("sends the configured key in the provider's header", async () => {
      const tok = token();
      const hits = await search(`keyed [auth] ${tok}`, 5);
      expect(hits).toHaveLength(5);
      const calls = await callsFor(name, tok);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.has_key).toBe(true);
      expect(calls[0]!.key_ok).toBe(true);
    });

    it("reports a rejected key as a 502 without repeating the key", async () => {
      const wrongKey = "wrong-key-3b8e1f0c99";
      const error = await appErrorOf(search(`keyed [auth] ${token()}`, 5, { apiKey: wrongKey }));
      expect(error.status).toBe(502);
      expect(error.message).toContain(name);
      expect(error.message).toContain("rejected the configured API key");
      expect(JSON.stringify(error.toBody())).not.toContain(wrongKey);
      expect(JSON.stringify(error.privateCause)).not.toContain(wrongKey);
    });

    it("says a key is needed when none is configured", async () => {
      const error = await appErrorOf(search(`keyed [auth] ${token()}`, 5, { apiKey: undefined }));
      expect(error.status).toBe(502);
      expect(error.message).toContain("needs an API key");
    });
  }
});

describe("provider-specific paging and caps", () => {
  it("brave pages by 20 (offset counts pages) to fill a tier of 50", async () => {
    const tok = token();
    const hits = await searchAdapters.brave(settings("brave"), { query: `paged ${tok}`, count: 50 }, globalThis.fetch);
    expect(hits).toHaveLength(50);
    expect(hits.map((h) => h.position)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(hits.map((h) => h.url)).toEqual(
      Array.from({ length: 50 }, (_, i) => `https://example.com/paged-${tok}/${i + 1}`),
    );
    const calls = await callsFor("brave", tok);
    expect(calls).toHaveLength(3);
    expect(calls.every((c) => c.count === 20)).toBe(true);
  });

  it("brave asks once for a tier of 10 or 20", async () => {
    const tok = token();
    await searchAdapters.brave(settings("brave"), { query: `one page ${tok}`, count: 20 }, globalThis.fetch);
    expect(await callsFor("brave", tok)).toHaveLength(1);
  });

  it("brave strips its <strong> highlights and decodes entities", async () => {
    const tok = token();
    const [hit] = await searchAdapters.brave(
      settings("brave"),
      { query: `fish & <chips> ${tok}`, count: 1 },
      globalThis.fetch,
    );
    expect(hit!.title).toBe(`Result 1 for fish & <chips> ${tok}`);
    expect(hit!.description).toBe(`Snippet 1: what the web says about fish & <chips> ${tok}.`);
  });

  it("tavily is capped at its 20-result maximum in one call", async () => {
    const tok = token();
    const hits = await searchAdapters.tavily(
      settings("tavily"),
      { query: `capped ${tok}`, count: 50 },
      globalThis.fetch,
    );
    expect(hits).toHaveLength(20);
    const calls = await callsFor("tavily", tok);
    expect(calls.map((c) => c.count)).toEqual([20]);
  });

  it("exa and firecrawl ask for the whole tier in one call", async () => {
    for (const name of ["exa", "firecrawl"] as const) {
      const tok = token();
      const hits = await searchAdapters[name](settings(name), { query: `tier ${tok}`, count: 100 }, globalThis.fetch);
      expect(hits).toHaveLength(100);
      expect((await callsFor(name, tok)).map((c) => c.count)).toEqual([100]);
    }
  });

  it("firecrawl's in-band `success: false` is a 502 naming it, without the upstream body, as is an answer with no `success`", async () => {
    const firecrawl = (query: string) =>
      searchAdapters.firecrawl(settings("firecrawl"), { query, count: 10 }, globalThis.fetch);
    const tok = token();
    const failed = await appErrorOf(firecrawl(`refused [failed] ${tok}`));
    expect([failed.status, failed.code]).toEqual([502, "provider_error"]);
    expect(failed.message).toBe(
      "The firecrawl provider failed: its answer had an unexpected shape (success: false). Try again later or configure another provider.",
    );
    expectNothingLeaked(failed);
    expect(await callsFor("firecrawl", tok)).toHaveLength(1);
    const shapeless = await appErrorOf(firecrawl(`shapeless [malformed:error] ${token()}`));
    expect(shapeless.message).toBe(
      "The firecrawl provider failed: its answer had an unexpected shape (success: invalid_value). Try again later or configure another provider.",
    );
    expectNothingLeaked(shapeless);
  });

  it("searxng reads pages until the tier is filled", async () => {
    const tok = token();
    const hits = await searchAdapters.searxng(
      settings("searxng"),
      { query: `pages ${tok}`, count: 20 },
      globalThis.fetch,
    );
    expect(hits).toHaveLength(20);
    expect(hits[19]!.url).toBe(`https://example.com/pages-${tok}/20`);
    expect(await callsFor("searxng", tok)).toHaveLength(2);
  });

  it("searxng stops paging when a page adds nothing", async () => {
    const tok = token();
    expect(
      await searchAdapters.searxng(settings("searxng"), { query: `none [empty] ${tok}`, count: 50 }, globalThis.fetch),
    ).toEqual([]);
    expect(await callsFor("searxng", tok)).toHaveLength(1);
  });

  it("keyless reads one results page, skips the ad, and unwraps redirect links", async () => {
    const tok = token();
    const hits = await searchAdapters.keyless(
      settings("keyless"),
      { query: `duck ${tok}`, count: 50 },
      globalThis.fetch,
    );
    expect(hits).toHaveLength(30);
    expect(hits.some((h) => h.url.includes("duckduckgo.com") || h.title.includes("Sponsored"))).toBe(false);
    expect(hits[0]!.url).toBe(`https://example.com/duck-${tok}/1`);
    const calls = await callsFor("keyless", tok);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.has_key).toBe(false);
  });
});

describe("DuckDuckGo HTML parsing", () => {
  it("reads titles, snippets and both link forms, decoding entities", () => {
    const html = `
      <div class="result results_links result--ad"><h2><a class="result__a" href="https://duckduckgo.com/y.js?ad=1">Ad</a></h2>
        <a class="result__snippet" href="#">ad text</a></div>
      <div class="result results_links web-result"><h2 class="result__title">
        <a rel="nofollow" class='result__a' href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fdocs.example.org%2Fa%3Fx%3D1%26y%3D2&amp;rut=ab">Docs &amp; <b>Guides</b></a></h2>
        <a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">The <b>best</b> docs &#8212; really.</a></div>
      <div class="result web-result"><a class="result__a" href="https://direct.example.com/page">Direct</a></div>
      <div class="result web-result"><a class="result__a" href="javascript:alert(1)">Script</a></div>`;
    const results = parseDuckDuckGoResults(html);
    expect(results.slice(0, 2)).toEqual([
      { title: "Docs & Guides", url: "https://docs.example.org/a?x=1&y=2", description: "The best docs — really." },
      { title: "Direct", url: "https://direct.example.com/page", description: "" },
    ]);
  });

  it("never throws on broken markup", () => {
    expect(() =>
      parseDuckDuckGoResults(`<a class="result__a" href="//duckduckgo.com/l/?uddg=%E0%A4%A">x</a><a class=result__a`),
    ).not.toThrow();
  });

  it("unwraps only DuckDuckGo redirects", () => {
    expect(unwrapRedirect("//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.example%2F&rut=1")).toBe("https://a.example/");
    expect(unwrapRedirect("https://b.example/x")).toBe("https://b.example/x");
    expect(unwrapRedirect("")).toBeNull();
    // An href is decoded as an attribute: "&copy=" and "&not=" stay query parameters, "&amp;" decodes.
    expect(unwrapRedirect("https://b.example/x?a=1&copy=2&not=3&amp;b=4")).toBe(
      "https://b.example/x?a=1&copy=2&not=3&b=4",
    );
  });
});

describe("search registry", () => {
  it("has one adapter per provider and a public URL for each except SearXNG", () => {
    expect(Object.keys(searchAdapters).sort()).toEqual([...SEARCH_PROVIDERS].sort());
    expect(DEFAULT_BASE_URLS.searxng).toBeNull();
    expect(DEFAULT_BASE_URLS.tavily).toBe("https://api.tavily.com");
    expect(DEFAULT_BASE_URLS.keyless).toBe("https://html.duckduckgo.com");
    expect(DEFAULT_BASE_URLS.jina).toBe("https://r.jina.ai");
  });
});
