/**
 * The as-sent counts under their own tier (docs/stats.md, "The service's own saving"): a request the
 * service sent under 100,000 prompt tokens that the agent sent over it is counted as the proxy counts
 * it (`usageCounters` of the billed usage, and of the as-sent usage under "as_sent_"), through the
 * real ledger buffer, and both answers price it: the as-sent side at the 5x tier, once.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../shared/config/config.load";
import { modelRules, usageCost } from "../../shared/llm/models.table";
import { usageCounters } from "../../shared/stats/counters";
import { sessionsReport } from "../../shared/stats/sessions.service";
import { statsReport } from "../../shared/stats/stats.service";
import { recordingLedger } from "../support/recording-ledger";

const now = Date.parse("2026-12-02T09:30:00Z");
const pricing = loadConfig({}).config.pricing;
const MODEL = "claude-haiku-5-5";

describe("an as-sent request over the tier line, billed under it", () => {
  it("/v1/stats prices the as-sent side at 5x, once, and agrees with /v1/stats/sessions", async () => {
    const rules = modelRules("anthropic", MODEL);
    const billed = { input: 2_000, cacheWrite5m: 0, cacheWrite1h: 0, cacheRead: 88_000, output: 300 };
    const asSent = { input: 2_000, cacheWrite5m: 20_000, cacheWrite1h: 0, cacheRead: 88_000, output: 300 };
    const { ledger, rows, flush } = recordingLedger();
    ledger.record({
      tool: "llm",
      provider: "anthropic",
      model: MODEL,
      session: "long-docs",
      counts: { requests: 1, ...usageCounters(billed, rules), ...usageCounters(asSent, rules, "as_sent_") },
      at: now,
    });
    await flush();

    const cost = usageCost(rules.prices, billed).costUsd;
    const asSentCost = usageCost(rules.tiers[0]!.prices, asSent).costUsd;
    const llm = statsReport(rows, "1h", now, pricing).totals.llm;
    expect(llm.cost_usd).toBeCloseTo(cost, 9);
    expect(llm.cost_as_sent_usd).toBeCloseTo(asSentCost, 9);
    expect(llm.saved_usd).toBeCloseTo(asSentCost - cost, 9);
    const [session] = sessionsReport(rows, "1h", now, pricing).sessions;
    expect([session!.cost_usd, session!.cost_as_sent_usd, session!.saved_usd]).toEqual([
      llm.cost_usd,
      llm.cost_as_sent_usd,
      llm.saved_usd,
    ]);
  });
});
