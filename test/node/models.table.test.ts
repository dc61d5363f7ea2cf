import { describe, expect, it } from "vitest";
import { loadConfig, publicConfig } from "../../shared/config/config.load";
import { MODEL_TABLE_READ_ON, modelRules, modelTable, normaliseModel, usageCost } from "../../shared/llm/models.table";

describe("model table: prices and cache multipliers per model (docs/eviction.md, read 2026-12-01)", () => {
  it("Anthropic reads at 0.1x for most models, 0.05x for Opus 5.5 and Sonnet 5.5, 0.025x for Fable 5.1; writes at 1.25x (5 min) and 2x (1 h)", () => {
    const read = (model: string) => modelRules("anthropic", model).multipliers.read;
    expect(read("claude-sonnet-4-5")).toBeCloseTo(0.1, 10);
    expect(read("claude-haiku-4-5")).toBeCloseTo(0.1, 10);
    expect(read("claude-opus-5")).toBeCloseTo(0.1, 10);
    expect(read("claude-opus-5-5")).toBeCloseTo(0.05, 10);
    expect(read("claude-sonnet-5-5")).toBeCloseTo(0.05, 10);
    expect(read("claude-fable-5-1")).toBeCloseTo(0.025, 10);
    for (const rules of modelTable().filter((r) => r.provider === "anthropic")) {
      // Haiku 3's page price is $0.30 on $0.25 input: 1.2x, the one exception
      expect(rules.multipliers.write5m, rules.family).toBeCloseTo(rules.family === "claude-haiku-3" ? 1.2 : 1.25, 10);
      expect(rules.multipliers.write1h, rules.family).toBeCloseTo(2, 10);
      expect(rules.cache.writesBilled).toBe(true);
    }
    expect(modelRules("anthropic", "claude-opus-5-5").prices).toEqual({
      input: 4,
      cacheWrite5m: 5,
      cacheWrite1h: 8,
      cacheRead: 0.2,
      output: 20,
    });
  });

  it("prices OpenAI's small variants at their own rates, not their family's (gpt-4o-mini is not gpt-4o at 16x)", () => {
    const price = (model: string) => {
      const { input, cacheRead, output } = modelRules("openai", model).prices;
      return [input, cacheRead, output];
    };
    expect(price("gpt-4o-mini")).toEqual([0.15, 0.075, 0.6]);
    expect(price("gpt-4o-mini-2024-07-18")).toEqual([0.15, 0.075, 0.6]);
    expect(price("gpt-4o-2024-08-06")).toEqual([2.5, 1.25, 10]);
    expect(price("gpt-4.1-mini")).toEqual([0.4, 0.1, 1.6]);
    expect(price("gpt-4.1-nano-2025-04-14")).toEqual([0.1, 0.025, 0.4]);
    expect(price("o4-mini")).toEqual([1.1, 0.275, 4.4]);
    expect(price("o3-mini")).toEqual([1.1, 0.55, 4.4]);
    expect(price("o3")).toEqual([2, 0.5, 8]);
    expect(price("gpt-5-mini")).toEqual([0.25, 0.025, 2]);
    expect(price("gpt-5-nano")).toEqual([0.05, 0.005, 0.4]);
    expect(price("gpt-5")).toEqual([1.25, 0.125, 10]);
    expect(modelRules("openai", "openai/gpt-4o-mini").known).toBe(true);
  });

  it("OpenAI bills writes at 1.25x from GPT-5.6 with explicit breakpoints (4 written, the latest 80 considered, no lookback, 30 min); before it, prefix caching with no write premium", () => {
    const sol = modelRules("openai", "gpt-5.6-sol");
    expect(sol.prices).toEqual({ input: 5, cacheWrite5m: 6.25, cacheWrite1h: 6.25, cacheRead: 0.5, output: 30 });
    expect(sol.multipliers.write5m).toBeCloseTo(1.25, 10);
    expect(sol.cache).toMatchObject({
      style: "prompt_cache_breakpoint",
      maxBreakpoints: 4,
      consideredBreakpoints: 80,
      lookbackBlocks: null,
      ttlMs: 30 * 60_000,
      writesBilled: true,
    });
    expect(modelRules("openai", "gpt-5.6-luna").prices.input).toBe(1);
    expect(modelRules("openai", "gpt-5.6-terra").prices.input).toBe(2.5);
    const gpt4o = modelRules("openai", "gpt-4o");
    expect(gpt4o.multipliers).toEqual({ write5m: 1, write1h: 1, read: 0.5 });
    expect(gpt4o.cache).toMatchObject({ style: "prefix", step: 128, writesBilled: false });
    expect(modelRules("openai", "gpt-4.1-mini").multipliers.read).toBe(0.25);
    expect(modelRules("openai", "gpt-5-mini").multipliers.read).toBeCloseTo(0.1, 10);
    expect(modelRules("openai", "gpt-5.4").family).toBe("gpt-5.4");
    expect(modelRules("openai", "gpt-5.5").cache.writesBilled).toBe(false);
  });

  it("Anthropic's breakpoint rules: 4 a request (a top-level automatic one counts), 20 blocks of lookback, 5 minutes or 1 hour", () => {
    const rules = modelRules("anthropic", "claude-sonnet-4-5").cache;
    expect(rules).toMatchObject({
      style: "cache_control",
      maxBreakpoints: 4,
      lookbackBlocks: 20,
      automatic: "top_level",
      ttlMs: 5 * 60_000,
      longTtlMs: 60 * 60_000,
    });
  });

  it("image ceilings per model: 100 on 200k-context models, 600 on the others; over 20 images 2,000 px each; 5 MB an image, 32 MB a request", () => {
    expect(modelRules("anthropic", "claude-haiku-4-5").images.maxImages).toBe(100);
    expect(modelRules("anthropic", "claude-sonnet-4-5").images.maxImages).toBe(100);
    expect(modelRules("anthropic", "claude-sonnet-5-5").images.maxImages).toBe(600);
    expect(modelRules("anthropic", "claude-opus-5").images.maxImages).toBe(600);
    expect(modelRules("anthropic", "claude-opus-5-5").images).toEqual({
      maxImages: 600,
      manyImages: 20,
      maxEdgeWhenMany: 2_000,
      maxEdge: 8_000,
      maxImageBytes: 5_242_880,
      maxRequestBytes: 32_000_000,
    });
    expect(modelRules("openai", "gpt-4o").images.maxImages).toBe(500);
  });

  it("minimum cacheable lengths per model", () => {
    expect(modelRules("anthropic", "claude-opus-4-5").minCacheableTokens).toBe(4_096);
    expect(modelRules("anthropic", "claude-opus-4-7").minCacheableTokens).toBe(2_048);
    expect(modelRules("anthropic", "claude-sonnet-4-5").minCacheableTokens).toBe(1_024);
    expect(modelRules("anthropic", "claude-opus-5").minCacheableTokens).toBe(512);
    expect(modelRules("anthropic", "claude-3-haiku-20240307").minCacheableTokens).toBe(2_048);
    expect(modelRules("openai", "gpt-5.6-sol").minCacheableTokens).toBe(1_024);
  });

  it("names as clients and clouds spell them: dates, router and cloud prefixes, Vertex and Bedrock suffixes; a newer version is never taken for an older family", () => {
    expect(normaliseModel("us.anthropic.claude-opus-4-1-20250805-v1:0")).toBe("claude-opus-4-1-20250805");
    for (const geography of ["global", "apac", "us-gov"])
      expect(modelRules(undefined, `${geography}.anthropic.claude-opus-4-1-20250805-v1:0`).family, geography).toBe(
        "claude-opus-4",
      );
    expect(modelRules(undefined, "anthropic/claude-opus-4-5").family).toBe("claude-opus-4-5");
    expect(modelRules(undefined, "claude-opus-4-1@20250805").family).toBe("claude-opus-4");
    expect(modelRules("anthropic", "CLAUDE-SONNET-4-5-20250929").family).toBe("claude-sonnet-4");
    expect(modelRules("anthropic", "claude-opus-4-20250514").family).toBe("claude-opus-4");
    expect(modelRules(undefined, "gpt-5.6-sol").provider).toBe("openai");
    expect(modelRules("azure", "gpt-4o-2024-08-06").family).toBe("gpt-4o");
    // claude-opus-4-9 is not Opus 4 ($15), gpt-5.7 is not GPT-5: both unknown, so the provider's default
    expect(modelRules("anthropic", "claude-opus-4-9")).toMatchObject({ family: "default", known: false });
    expect(modelRules("openai", "gpt-5.7")).toMatchObject({ family: "default", known: false });
  });

  it("an unknown model gets the provider's default: Anthropic at Sonnet 4 prices and the smaller 100-image ceiling; OpenAI with GPT-5.6's billed writes", () => {
    const claude = modelRules("anthropic", "claude-next-1");
    expect(claude).toMatchObject({ provider: "anthropic", family: "default", known: false });
    expect(claude.prices.input).toBe(3);
    expect(claude.images.maxImages).toBe(100);
    expect(modelRules(undefined, undefined).provider).toBe("anthropic");
    const openai = modelRules("openai", "some-model");
    expect(openai).toMatchObject({ provider: "openai", known: false });
    expect(openai.multipliers.write5m).toBeCloseTo(1.25, 10);
  });

  it("price overrides (pricing.models) replace single prices and move the multipliers with them; a bad figure is ignored", () => {
    const rules = modelRules("anthropic", "claude-sonnet-4-5", {
      "claude-sonnet-4-5": { cacheRead: 0.15, output: -1 },
    });
    expect(rules.prices.cacheRead).toBe(0.15);
    expect(rules.prices.output).toBe(15);
    expect(rules.multipliers.read).toBeCloseTo(0.05, 10);
    expect(modelRules("anthropic", "claude-sonnet-4-5", { other: { input: 1 } }).prices.input).toBe(3);
  });

  it("reads pricing.models keyed by any name, __proto__ included, as a table of its own keys", () => {
    const loaded = loadConfig({ PRICING_MODELS: '{"__proto__": {"input": 1}, "gpt-4o": {"input": 2}}' });
    if (loaded instanceof Error) throw loaded;
    const models = loaded.config.pricing.models;
    expect(Object.keys(models).sort()).toEqual(["__proto__", "gpt-4o"]);
    expect(Object.getPrototypeOf(models)).toBe(Object.prototype);
    expect(modelRules("openai", "__proto__", models).prices.input).toBe(1);
    expect(modelRules("openai", "gpt-4o", models).prices.input).toBe(2);
  });

  it("reads pricing.models under snake_case names (the camelCase ones too), and /v1/config shows them snake_case", () => {
    const loaded = loadConfig({
      PRICING_MODELS: JSON.stringify({
        "claude-sonnet-4-5": { cache_write_5m: 4, cache_read: 0.2 },
        "gpt-4o": { cacheRead: 1 },
      }),
    });
    expect(modelRules("anthropic", "claude-sonnet-4-5", loaded.config.pricing.models).prices).toMatchObject({
      cacheWrite5m: 4,
      cacheRead: 0.2,
    });
    expect(modelRules("openai", "gpt-4o", loaded.config.pricing.models).prices.cacheRead).toBe(1);
    expect((publicConfig(loaded).pricing as { models: unknown }).models).toEqual({
      "claude-sonnet-4-5": { cache_write_5m: 4, cache_read: 0.2 },
      "gpt-4o": { cache_read: 1 },
    });
    expect(() => loadConfig({ PRICING_MODELS: '{"m": {"cache_reed": 1}}' })).toThrow(
      /m\.cache_reed is not one of input, cache_write_5m, cache_write_1h, cache_read, output/,
    );
  });

  it("usage priced at the model's rates, and the same input without a cache", () => {
    const { prices } = modelRules("anthropic", "claude-sonnet-4-5");
    const usage = {
      input: 1_000_000,
      cacheWrite5m: 1_000_000,
      cacheWrite1h: 1_000_000,
      cacheRead: 1_000_000,
      output: 1_000_000,
    };
    const { costUsd, withoutCacheUsd } = usageCost(prices, usage);
    expect(costUsd).toBeCloseTo(3 + 3.75 + 6 + 0.3 + 15, 10);
    expect(withoutCacheUsd).toBeCloseTo(4 * 3 + 15, 10);
  });

  it("every row is whole: positive prices, writes never cheaper than input, reads cheaper; family names unique; a read date", () => {
    const table = modelTable();
    expect(new Set(table.map((r) => r.family)).size).toBe(table.length);
    for (const r of table) {
      expect(r.prices.input, r.family).toBeGreaterThan(0);
      expect(r.multipliers.write5m, r.family).toBeGreaterThanOrEqual(1);
      expect(r.multipliers.read, r.family).toBeLessThan(1);
      expect(r.multipliers.read, r.family).toBeGreaterThan(0);
      expect(r.images.maxImages, r.family).toBeGreaterThanOrEqual(100);
    }
    expect(MODEL_TABLE_READ_ON).toBe("2026-12-01");
  });
});
