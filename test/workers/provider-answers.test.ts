/**
 * Malformed provider answers (issue 8, finding 2): a 200 whose body is not the provider's
 * documented shape used to become a success with 0 results and was stored for the whole TTL.
 * Now every answer is parsed with its provider's schema: a mismatch is 502 `provider_error`
 * (in-band for extract), nothing is stored, and the next call pays again. A well-formed empty
 * answer is still stored.
 */
import { describe, expect, it } from "vitest";
import { callJson, expectErrorShape, providerCalls, uniqueToken } from "./helpers";

const MALFORMED = ["empty-object", "error", "results-string", "results-null", "bad-items"] as const;
const noRescue = { WEB_KEYLESS_FALLBACK: "false" };
const SEARCH_VARS: Record<string, Record<string, string>> = {
  tavily: noRescue,
  brave: { ...noRescue, WEB_SEARCH_PROVIDER: "brave", BRAVE_API_KEY: "brave-emulator-key" },
  exa: { ...noRescue, WEB_SEARCH_PROVIDER: "exa", EXA_API_KEY: "exa-emulator-key" },
  firecrawl: { ...noRescue, WEB_SEARCH_PROVIDER: "firecrawl", FIRECRAWL_API_KEY: "fc-emulator-key" },
  searxng: { ...noRescue, WEB_SEARCH_PROVIDER: "searxng" },
  keyless: { ...noRescue, WEB_SEARCH_PROVIDER: "keyless" },
};
const EXTRACT_VARS: Record<string, Record<string, string>> = {
  tavily: {},
  firecrawl: { WEB_EXTRACT_PROVIDER: "firecrawl", FIRECRAWL_API_KEY: "fc-emulator-key" },
  jina: { WEB_EXTRACT_PROVIDER: "jina", JINA_API_KEY: "jina-emulator-key" },
};

const search = (query: string, vars: Record<string, string>) => callJson("/v1/web_search", { body: { query }, vars });
const extract = (url: string, vars: Record<string, string>) =>
  callJson("/v1/web_extract", { body: { urls: [url] }, vars });

describe("a malformed search answer is a 502 and never stored", () => {
  for (const [provider, vars] of Object.entries(SEARCH_VARS)) {
    it.each(MALFORMED)(
      `${provider}: [malformed:%s] is 502 provider_error, and the next call pays again`,
      async (kind) => {
        const token = uniqueToken();
        const q = `broken answer [malformed:${kind}] ${token}`;
        const first = await search(q, vars);
        const second = await search(q, vars);
        expect(first.status).toBe(502);
        const error = expectErrorShape(first.body);
        expect(error.code).toBe("provider_error");
        expect(error.message).toContain(provider);
        expect(error.message).toContain("unexpected shape");
        expect(error.message).not.toContain("upstream-body-detail");
        expect(second.status).toBe(502);
        expect(await providerCalls(provider, token)).toBe(2);
      },
    );
  }

  it("stays a 502 when the keyless rescue gets a malformed answer too, and stores nothing", async () => {
    const token = uniqueToken();
    const q = `malformed rescued [malformed:results-null] ${token}`;
    const first = await callJson("/v1/web_search", { body: { query: q } });
    // The marker breaks keyless too, so nothing can answer: still a 502, still nothing stored.
    expect(first.status).toBe(502);
    const again = await callJson("/v1/web_search", { body: { query: q } });
    expect(again.status).toBe(502);
    expect(await providerCalls("tavily", token)).toBe(2);
  });
});

describe("a well-formed empty answer is stored", () => {
  for (const [provider, vars] of Object.entries(SEARCH_VARS)) {
    it(`${provider}: [empty] answers 0 results and the second call is a hit`, async () => {
      const token = uniqueToken();
      const q = `nothing at all [empty] ${token}`;
      const first = await search(q, vars);
      const second = await search(q, vars);
      expect(first.status).toBe(200);
      expect(first.body.results).toEqual([]);
      expect(second.body.cache).toBe("hit");
      expect(await providerCalls(provider, token)).toBe(1);
    });
  }
});

describe("a malformed extract answer is an in-band provider_error and never stored", () => {
  for (const [provider, vars] of Object.entries(EXTRACT_VARS)) {
    it.each(MALFORMED)(`${provider}: [malformed:%s]`, async (kind) => {
      const url = `https://docs.example.com/[malformed:${kind}]/${uniqueToken()}`;
      const first = await extract(url, vars);
      const second = await extract(url, vars);
      expect(first.status).toBe(200);
      expect(first.body.results[0].error.code).toBe("provider_error");
      expect(first.body.results[0].error.message).toContain(provider);
      expect(first.body.results[0].error.message).not.toContain("upstream-body-detail");
      expect(second.body.results[0].error.code).toBe("provider_error");
      expect(await providerCalls(provider, url)).toBe(2);
    });
  }
});
