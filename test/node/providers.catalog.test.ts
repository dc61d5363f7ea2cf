/**
 * The provider table (shared/web/providers/providers.catalog.ts) is the one place a provider's
 * identity is written: these check that every table derived from it agrees with it.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../shared/config/config.load";
import { SECRET_NAMES } from "../../shared/config/config.schema";
import { LLM_PROVIDERS } from "../../shared/llm/llm-providers.catalog";
import {
  EXTRACT_SPECS,
  extractAdapters,
  PROVIDER_SPECS,
  SEARCH_SPECS,
  searchAdapters,
} from "../../shared/web/providers/providers.catalog";
import { resolveExtractProvider, resolveSearchProvider } from "../../shared/web/providers/resolve";
import { emulatorVars } from "../../scripts/local-stack";

describe("the provider table", () => {
  const defaults = loadConfig({}).config;

  it("gives every provider reached at a URL its providers.<name>_base_url, defaulting to its spec", () => {
    // Search and extract providers from their table, the proxy's LLM providers from theirs.
    const reached = [
      ...PROVIDER_SPECS.filter((spec) => spec.baseUrl !== undefined).map((spec) => ({
        name: spec.name,
        url: spec.baseUrl,
      })),
      ...LLM_PROVIDERS.map((spec) => ({ name: spec.name, url: spec.defaultBaseUrl })),
    ];
    expect(Object.keys(defaults.providers).sort()).toEqual(reached.map((spec) => `${spec.name}_base_url`).sort());
    for (const spec of reached)
      expect(defaults.providers[`${spec.name}_base_url` as keyof typeof defaults.providers]).toBe(spec.url);
    expect(defaults.providers.searxng_base_url).toBeNull();
    expect(defaults.providers.tavily_base_url).toBe("https://api.tavily.com");
  });

  it("gives every provider a price per call of each kind it does, overridable per provider", () => {
    expect(Object.keys(defaults.pricing.search)).toEqual(SEARCH_SPECS.map((s) => s.name));
    expect(Object.keys(defaults.pricing.extract)).toEqual(EXTRACT_SPECS.map((s) => s.name));
    for (const spec of SEARCH_SPECS) expect(defaults.pricing.search[spec.name]).toBe(spec.search.usdPerCall);
    for (const spec of EXTRACT_SPECS) expect(defaults.pricing.extract[spec.name]).toBe(spec.extract.usdPerCall);
    expect(defaults.pricing.search.tavily).toBe(0.008);
    const set = loadConfig({ PRICING_SEARCH_BRAVE: "0.009", pricing: { extract: { jina: 0.0004 } } }).config.pricing;
    expect(set.search.brave).toBe(0.009);
    expect(set.extract.jina).toBe(0.0004);
    expect(() => loadConfig({ PRICING_SEARCH_EXA: "-1" })).toThrow(/pricing\.search\.exa/);
  });

  it("lists every provider secret once among the secrets", () => {
    const secrets = [...new Set(PROVIDER_SPECS.flatMap((spec) => (spec.secret ? [spec.secret] : [])))];
    expect(secrets).toEqual(["TAVILY_API_KEY", "BRAVE_API_KEY", "EXA_API_KEY", "FIRECRAWL_API_KEY", "JINA_API_KEY"]);
    for (const secret of secrets) expect(SECRET_NAMES).toContain(secret);
  });

  it("has an adapter for every provider of each kind (direct is the service's own fetch)", () => {
    expect(Object.keys(searchAdapters).sort()).toEqual(SEARCH_SPECS.map((s) => s.name).sort());
    expect(Object.keys(extractAdapters).sort()).toEqual(
      EXTRACT_SPECS.map((s) => s.name)
        .filter((n) => n !== "direct")
        .sort(),
    );
  });

  it("points every provider at the emulator in the local stack", () => {
    const vars = emulatorVars("http://127.0.0.1:1");
    for (const spec of PROVIDER_SPECS.filter((s) => s.baseUrl !== undefined)) {
      expect(vars[`PROVIDERS_${spec.name.toUpperCase()}_BASE_URL`]).toBe(`http://127.0.0.1:1/${spec.name}`);
    }
  });

  it("resolves auto in table order: the first search provider with its key or URL, the first keyed extractor else direct", () => {
    expect(resolveSearchProvider(loadConfig({})).name).toBe("keyless");
    expect(resolveSearchProvider(loadConfig({ EXA_API_KEY: "k", BRAVE_API_KEY: "k" })).name).toBe("brave");
    expect(resolveSearchProvider(loadConfig({ PROVIDERS_SEARXNG_BASE_URL: "http://127.0.0.1:9" })).name).toBe(
      "searxng",
    );
    expect(resolveExtractProvider(loadConfig({})).name).toBe("direct");
    expect(resolveExtractProvider(loadConfig({ JINA_API_KEY: "k", TAVILY_API_KEY: "k" })).name).toBe("tavily");
    expect(() => resolveExtractProvider(loadConfig({ WEB_EXTRACT_PROVIDER: "firecrawl" }))).toThrow(
      /FIRECRAWL_API_KEY is not set/,
    );
    expect(resolveExtractProvider(loadConfig({ WEB_EXTRACT_PROVIDER: "jina" })).apiKey).toBeUndefined();
  });
});
