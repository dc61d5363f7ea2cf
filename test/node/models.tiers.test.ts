/**
 * Price tiers by prompt size (docs/eviction.md, "The model table"): the tiers each model publishes,
 * the one pricing function that bills a request at its own tier, and the ledger's counter names
 * that keep each request's tokens under its tier.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { statsReport } from "../../shared/stats/stats.service";
import { counterTier, tieredCounter, usageCounters } from "../../shared/stats/counters";
import {
  billedCost,
  modelRules,
  modelTable,
  pricesAtTier,
  promptTokens,
  tierOf,
  type UsageTokens,
  usageCost,
} from "../../shared/llm/models.table";
import { loadConfig } from "../../shared/config/config.load";

const usage = (input: number, write = 0, read = 0, output = 0): UsageTokens => ({
  input,
  cacheWrite5m: write,
  cacheWrite1h: 0,
  cacheRead: read,
  output,
});

describe("price tiers in the model table", () => {
  it("Haiku 5.5 bills a prompt over 100,000 tokens whole at 5x: $0.50 / $2.50 / $0.05, writes $0.625 / $1", () => {
    const haiku = modelRules("anthropic", "claude-haiku-5-5");
    expect(haiku.prices).toEqual({ input: 0.1, cacheWrite5m: 0.125, cacheWrite1h: 0.2, cacheRead: 0.01, output: 0.5 });
    expect(haiku.tiers).toEqual([
      {
        abovePromptTokens: 100_000,
        prices: { input: 0.5, cacheWrite5m: 0.625, cacheWrite1h: 1, cacheRead: 0.05, output: 2.5 },
      },
    ]);
  });

  it("Sonnet 4 and 4.5 bill a prompt over 200,000 tokens at $6 / $22.50 (writes and reads in proportion); Sonnet 4.6 has one price", () => {
    for (const model of ["claude-sonnet-4-5", "claude-sonnet-4-20250514", "claude-sonnet-4-5[1m]"]) {
      expect(modelRules("anthropic", model).tiers, model).toEqual([
        {
          abovePromptTokens: 200_000,
          prices: { input: 6, cacheWrite5m: 7.5, cacheWrite1h: 12, cacheRead: 0.6, output: 22.5 },
        },
      ]);
    }
    expect(modelRules("anthropic", "claude-sonnet-4-6").tiers).toEqual([]);
    expect(modelRules("anthropic", "claude-sonnet-4-6").prices.input).toBe(3);
  });

  it("OpenAI GPT-5.4 and GPT-5.6 bill over 272,000 input tokens at 2x input and 1.5x output; older models have no tier", () => {
    const sol = modelRules("openai", "gpt-5.6-sol");
    expect(sol.tiers).toEqual([
      {
        abovePromptTokens: 272_000,
        prices: { input: 10, cacheWrite5m: 12.5, cacheWrite1h: 12.5, cacheRead: 1, output: 45 },
      },
    ]);
    expect(modelRules("openai", "gpt-5.4").tiers[0]!.prices.input).toBe(5);
    for (const model of ["gpt-4o", "gpt-4.1", "o3", "gpt-5-mini"])
      expect(modelRules("openai", model).tiers).toEqual([]);
  });

  it("an unknown model has no tier (nothing is published of it)", () => {
    expect(modelRules("anthropic", "claude-next").tiers).toEqual([]);
    expect(modelRules("openai", "my-gateway-model").tiers).toEqual([]);
  });

  it("every tier of the table is dearer than the prices under it, lines rising", () => {
    for (const rules of modelTable()) {
      let line = 0;
      let below = rules.prices;
      for (const tier of rules.tiers) {
        expect(tier.abovePromptTokens, rules.family).toBeGreaterThan(line);
        for (const key of Object.keys(below) as (keyof typeof below)[])
          expect(tier.prices[key], `${rules.family} ${key}`).toBeGreaterThan(below[key]);
        line = tier.abovePromptTokens;
        below = tier.prices;
      }
    }
  });

  it("an operator's price override moves the tier with it (the published factor is kept)", () => {
    const rules = modelRules("anthropic", "claude-haiku-5-5", { "claude-haiku-5-5": { input: 0.2 } });
    expect(rules.prices.input).toBe(0.2);
    expect(rules.tiers[0]!.prices.input).toBe(1);
    expect(rules.tiers[0]!.prices.output).toBe(2.5);
    const loaded = loadConfig({ PRICING_MODELS: '{"claude-sonnet-4-5": {"output": 10}}' });
    expect(modelRules("anthropic", "claude-sonnet-4-5", loaded.config.pricing.models).tiers[0]!.prices.output).toBe(15);
  });
});

describe("billedCost: a request at its own tier", () => {
  const haiku = modelRules("anthropic", "claude-haiku-5-5");

  it("the prompt is input + cache writes + cache reads, and the line is 'over': 100,000 is the base price, 100,001 the tier", () => {
    expect(promptTokens(usage(10, 20, 30))).toBe(60);
    expect(tierOf(haiku, 100_000)).toBe(0);
    expect(tierOf(haiku, 100_001)).toBe(1);
    // 1,000 uncached + 4,000 written + 95,001 read: over the line though little of it is new.
    const over = billedCost(haiku, usage(1_000, 4_000, 95_001, 2_000));
    expect(over.tier).toBe(1);
    expect(over.costUsd).toBeCloseTo((1_000 * 0.5 + 4_000 * 0.625 + 95_001 * 0.05 + 2_000 * 2.5) / 1e6, 12);
    const under = billedCost(haiku, usage(1_000, 4_000, 95_000, 2_000));
    expect(under.tier).toBe(0);
    expect(under.costUsd).toBeCloseTo((1_000 * 0.1 + 4_000 * 0.125 + 95_000 * 0.01 + 2_000 * 0.5) / 1e6, 12);
    // The cliff: one more prompt token costs the whole request 5x.
    expect(over.costUsd / under.costUsd).toBeGreaterThan(4.9);
  });

  it("a model without tiers is priced as before (usageCost at its prices)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("gpt-4o", "claude-sonnet-4-6", "claude-opus-5-5", "claude-next"),
        fc.array(fc.nat(2_000_000), { minLength: 5, maxLength: 5 }),
        (model, [input, w5, w1, read, output]) => {
          const rules = modelRules(undefined, model);
          const u = { input: input!, cacheWrite5m: w5!, cacheWrite1h: w1!, cacheRead: read!, output: output! };
          expect(billedCost(rules, u).costUsd).toBe(usageCost(rules.prices, u).costUsd);
        },
      ),
    );
  });

  it("a request's cost is the sum of its kinds each priced alone at the request's tier (what lets the ledger price counters one by one)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("claude-haiku-5-5", "claude-sonnet-4-5", "gpt-5.6-luna"),
        fc.array(fc.nat(400_000), { minLength: 5, maxLength: 5 }),
        (model, [input, w5, w1, read, output]) => {
          const rules = modelRules(undefined, model);
          const u = { input: input!, cacheWrite5m: w5!, cacheWrite1h: w1!, cacheRead: read!, output: output! };
          const whole = billedCost(rules, u);
          const zero = usage(0);
          let parts = 0;
          for (const key of Object.keys(u) as (keyof UsageTokens)[])
            parts += billedCost(rules, { ...zero, [key]: u[key] }, whole.tier).costUsd;
          expect(parts).toBeCloseTo(whole.costUsd, 9);
          expect(whole.costUsd).toBe(usageCost(pricesAtTier(rules, whole.tier), u).costUsd);
        },
      ),
    );
  });
});

describe("the ledger's counters under their tier", () => {
  it("a tiered name round-trips, and a plain or odd name is the base price", () => {
    fc.assert(
      fc.property(fc.constantFrom("input_tokens", "as_sent_cache_read_tokens"), fc.nat(10_000_000), (name, line) => {
        expect(counterTier(tieredCounter(name, line))).toEqual({ counter: name, abovePromptTokens: line });
      }),
    );
    expect(counterTier("input_tokens")).toEqual({ counter: "input_tokens", abovePromptTokens: null });
    expect(counterTier("input_tokens@x")).toEqual({ counter: "input_tokens@x", abovePromptTokens: null });
    expect(tieredCounter("input_tokens", undefined)).toBe("input_tokens");
  });

  it("usageCounters names every kind under the request's tier", () => {
    const haiku = modelRules("anthropic", "claude-haiku-5-5");
    expect(usageCounters(usage(50_000, 0, 50_001, 10), haiku)).toEqual({
      "input_tokens@100000": 50_000,
      "cache_write_5m_tokens@100000": 0,
      "cache_write_1h_tokens@100000": 0,
      "cache_read_tokens@100000": 50_001,
      "output_tokens@100000": 10,
    });
    expect(Object.keys(usageCounters(usage(50_000, 0, 50_000, 10), haiku))).toContain("input_tokens");
    expect(Object.keys(usageCounters(usage(1, 0, 0, 0), haiku, "as_sent_"))).toContain("as_sent_input_tokens");
  });

  it("/v1/stats money, summed from counters stored under their tiers, equals each request priced at its own tier", () => {
    const pricing = loadConfig({}).config.pricing;
    const now = Date.UTC(2026, 11, 7, 10, 30);
    fc.assert(
      fc.property(
        fc.constantFrom("claude-haiku-5-5", "claude-sonnet-4-5", "gpt-5.6-terra", "claude-opus-5-5"),
        fc.array(fc.array(fc.nat(160_000), { minLength: 5, maxLength: 5 }), { minLength: 1, maxLength: 12 }),
        (model, requests) => {
          const rules = modelRules(undefined, model);
          const provider = rules.provider;
          let expected = 0;
          let without = 0;
          const rows = requests.flatMap(([input, w5, w1, read, output]) => {
            const u = { input: input!, cacheWrite5m: w5!, cacheWrite1h: w1!, cacheRead: read!, output: output! };
            const billed = billedCost(rules, u);
            expected += billed.costUsd;
            without += billed.withoutCacheUsd;
            return Object.entries(usageCounters(u, rules)).map(([counter, value]) => ({
              hour: now - (now % 3_600_000),
              tool: "llm" as const,
              provider,
              model,
              counter,
              value,
            }));
          });
          const report = statsReport(rows, "1h", now, pricing);
          expect(report.totals.llm.cost_usd).toBeCloseTo(expected, 8);
          expect(report.totals.llm.cost_without_cache_usd).toBeCloseTo(without, 8);
          expect(report.totals.llm.input_tokens).toBe(requests.reduce((n, r) => n + r[0]!, 0));
        },
      ),
    );
  });
});
