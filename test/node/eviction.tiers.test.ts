/**
 * Eviction on a model with a price tier (docs/eviction.md, "Price tiers by prompt size"): the replay
 * bills each request at its own tier, for every rival, and the `cost` strategy treats the tier's
 * line as a cliff it may retire to stay under.
 */
import { describe, expect, it } from "vitest";
import { cacheModelFor } from "../../cli/replay/cache.models";
import { compare, replay } from "../../cli/replay/compare";
import { costPolicy, keepNewest, noEviction } from "../../cli/replay/rivals";
import { generateSession, requestsFromTurns, TIER_SESSIONS } from "../../cli/replay/sessions";
import { evictContext } from "../../shared/eviction/evict.service";
import { billedCost, modelRules } from "../../shared/llm/models.table";

const HAIKU = "claude-haiku-5-5";

/** The suite's heavy Haiku 5.5 session, whose text alone passes 100,000 tokens near its end (80 turns, 60 screenshots). */
const heavy = () => requestsFromTurns(generateSession(TIER_SESSIONS[0].shape), 4_000);

describe("the replay bills each request at its tier", () => {
  it("every request of every rival costs what billedCost says of its tokens at Haiku 5.5's prices", () => {
    const { model, prices } = cacheModelFor("anthropic", HAIKU);
    expect(prices.tiers).toEqual([{ abovePromptTokens: 100_000, factor: 5 }]);
    const rules = modelRules("anthropic", HAIKU);
    const report = replay(heavy(), keepNewest(3), { model, prices });
    let over = 0;
    for (const r of report.perRequest) {
      const usage = {
        input: r.uncachedTokens,
        cacheWrite5m: r.cacheWriteTokens,
        cacheWrite1h: 0,
        cacheRead: r.cacheReadTokens,
        output: 0,
      };
      expect(r.cost).toBeCloseTo(billedCost(rules, usage).costUsd, 12);
      expect(r.tier).toBe(r.inputTokens > 100_000 ? 1 : 0);
      if (r.tier > 0) over += 1;
    }
    expect(over).toBeGreaterThan(0);
    expect(report.requests_over_tier).toBe(over);
  });

  it("the no-eviction reference is priced at 5x for its requests over the line, not at the base price", () => {
    const { model, prices } = cacheModelFor("anthropic", HAIKU);
    const flat = { ...prices, tiers: [] };
    const tiered = replay(heavy(), noEviction, { model, prices });
    const untiered = replay(heavy(), noEviction, { model, prices: flat });
    expect(tiered.requests_over_tier).toBeGreaterThan(40);
    expect(untiered.requests_over_tier).toBe(0);
    expect(tiered.cost).toBeGreaterThan(3 * untiered.cost);
  });
});

describe("the cost strategy sees the tier's cliff", () => {
  it.each(TIER_SESSIONS)(
    "$name: no more requests over the line than keep-3 + 2, at most 0.7x the cheapest of no eviction, Hermes 20/8/3 and keep-3",
    (session) => {
      const { model, prices } = cacheModelFor("anthropic", session.model);
      const requests = requestsFromTurns(generateSession(session.shape), 4_000);
      const r = compare(requests, { model, prices, modelName: session.model });
      expect(r.keep3.requests_over_tier).toBeGreaterThan(0); // the text alone passes the line near the end
      expect(r.cost.requests_over_tier).toBeLessThanOrEqual(r.keep3.requests_over_tier + 2);
      const cheapest = Math.min(r.none.cost, r.batched.cost, r.keep3.cost);
      expect(r.cost.cost).toBeLessThanOrEqual(0.7 * cheapest);
      // Told the session's length, it does no worse.
      expect(r.cost_known.requests_over_tier).toBeLessThanOrEqual(r.keep3.requests_over_tier + 2);
    },
  );

  it("retires to stay under the line only when it brings the request under it: a request whose text alone is over keeps its images", () => {
    const { model, prices } = cacheModelFor("anthropic", HAIKU);
    // 3,000 text tokens a turn: past 100K by turn 34 whatever the images.
    const requests = requestsFromTurns(
      generateSession({ turns: 50, images: 10, imageEvery: 5, textTokens: 3_000, imageTokens: 1_600 }),
      4_000,
    );
    const report = replay(requests, costPolicy({ provider: "anthropic", model: HAIKU }), { model, prices });
    const textOnly = (i: number) => 4_000 + (i + 1) * 3_000 + 10 * 10;
    report.perRequest.forEach((r, i) => {
      if (r.rule === "price_tier") expect(textOnly(i)).toBeLessThanOrEqual(100_000);
    });
  });

  it("a model without a tier never moves by the tier rule, and bills no request over a tier", () => {
    const { model, prices } = cacheModelFor("anthropic", "claude-sonnet-4-6");
    const report = replay(heavy(), costPolicy({ provider: "anthropic", model: "claude-sonnet-4-6" }), {
      model,
      prices,
    });
    expect(report.perRequest.some((r) => r.rule === "price_tier")).toBe(false);
    expect(report.requests_over_tier).toBe(0);
  });
});

describe("the cost strategy's estimate prices this request's writes at its tier", () => {
  const estimate = (chars: number) =>
    evictContext({
      format: "anthropic",
      strategy: "cost",
      model: HAIKU,
      messages: [{ role: "user", content: "x".repeat(chars) }],
    }).stats.estimate!;

  it("a Haiku 5.5 request over 100,000 prompt tokens: its writes at $0.625 / MTok, under it at $0.125", () => {
    const over = estimate(4 * 120_000);
    expect(over.cache_write_tokens).toBe(120_000);
    expect(over.cache_write_usd).toBeCloseTo((120_000 * 0.625) / 1e6, 6);
    expect(over.hermes.cache_write_usd).toBeCloseTo((120_000 * 0.625) / 1e6, 6);
    const under = estimate(4 * 80_000);
    expect(under.cache_write_usd).toBeCloseTo((80_000 * 0.125) / 1e6, 6);
  });
});
