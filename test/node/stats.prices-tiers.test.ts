/**
 * `/v1/stats` shows the prices it used, tiers included (docs/stats.md, "Prices"): a model that bills
 * a prompt over a line at higher prices shows each tier's line and prices, moved with an
 * operator's `pricing.models` override, in the answer's schema (the OpenAPI document's).
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../shared/config/config.load";
import type { LedgerRow } from "../../shared/ports";
import { StatsResponse } from "../../shared/stats/stats.schema";
import { statsReport } from "../../shared/stats/stats.service";
import { recordingLedger } from "../support/recording-ledger";

const now = Date.parse("2026-12-02T09:30:00Z");
/** The rows the ledger writes for one request to each of `models`. */
async function requestsTo(...models: string[]): Promise<LedgerRow[]> {
  const { ledger, rows, flush } = recordingLedger();
  for (const model of models)
    ledger.record({ tool: "llm", provider: "anthropic", model, counts: { requests: 1 }, at: now });
  await flush();
  return rows;
}

describe("prices.models shows the tiers", () => {
  it("Haiku 5.5: the base prices and the 5x tier over 100,000 prompt tokens; a one-price model, none", async () => {
    const report = statsReport(
      await requestsTo("claude-haiku-5-5", "claude-opus-4-1"),
      "1h",
      now,
      loadConfig({}).config.pricing,
    );
    expect(report.prices.models["claude-haiku-5-5"]).toEqual({
      input: 0.1,
      cache_write_5m: 0.125,
      cache_write_1h: 0.2,
      cache_read: 0.01,
      output: 0.5,
      tiers: [
        {
          above_prompt_tokens: 100_000,
          input: 0.5,
          cache_write_5m: 0.625,
          cache_write_1h: 1,
          cache_read: 0.05,
          output: 2.5,
        },
      ],
    });
    expect(report.prices.models["claude-opus-4-1"]?.tiers).toEqual([]);
    expect(StatsResponse.safeParse(report).success).toBe(true);
  });

  it("an operator's override moves the tier with it", async () => {
    const pricing = loadConfig({ PRICING_MODELS: JSON.stringify({ "claude-haiku-5-5": { input: 1 } }) }).config.pricing;
    const shown = statsReport(await requestsTo("claude-haiku-5-5"), "1h", now, pricing).prices.models[
      "claude-haiku-5-5"
    ];
    expect([shown?.input, shown?.tiers[0]?.input]).toEqual([1, 5]);
  });
});
