/**
 * The `/v1/stats` fold's invariants on any set of stored counters (docs/stats.md): each tool's
 * totals are the sum of its providers', of its models' and of its hours', money included, however
 * the rows are ordered, split across buckets or cut by the answer's name bound.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../shared/config/config.load";
import type { LedgerRow, LedgerTool } from "../../shared/ports";
import { TOOL_COUNTERS } from "../../shared/stats/counters";
import { ANSWER_NAMES, statsReport } from "../../shared/stats/stats.service";

const HOUR = 3_600_000;
const now = Date.parse("2026-12-03T12:30:00Z");
const current = now - (now % HOUR);
const pricing = loadConfig({}).config.pricing;

const row: fc.Arbitrary<LedgerRow> = fc
  .record({
    hoursBack: fc.integer({ min: 0, max: 30 }),
    tool: fc.constantFrom<LedgerTool>("web_search", "web_extract", "vision", "evict", "llm"),
    provider: fc.constantFrom("anthropic", "openai", "tavily", "firecrawl", ""),
    model: fc.oneof(
      fc.constantFrom("claude-sonnet-4-5", "gpt-5", "gpt-4o-mini", "cost", ""),
      fc.string({ minLength: 1, maxLength: 6 }),
    ),
    counter: fc.constantFrom(
      "requests",
      "hits",
      "coalesced",
      "errors",
      "input_tokens",
      "cache_write_5m_tokens",
      "cache_write_1h_tokens",
      "cache_read_tokens",
      "output_tokens",
      "fit_skipped",
    ),
    value: fc.integer({ min: 1, max: 1_000_000 }),
  })
  .map(({ hoursBack, ...rest }) => ({ hour: current - hoursBack * HOUR, ...rest }));

/** The sum of one field over a breakdown's groups. */
const sumOf = (groups: Record<string, Record<string, number>>, field: string) =>
  Object.values(groups).reduce((n, counts) => n + (counts[field] ?? 0), 0);

const close = (a: number, b: number) => expect(Math.abs(a - b)).toBeLessThan(1e-6 * Math.max(1, Math.abs(b)));

describe("the /v1/stats fold", () => {
  it("answers totals equal to the sums of providers, models and hours, money included, in any row order", () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 300 }), fc.integer(), (rows, seed) => {
        const report = statsReport(rows, "24h", now, pricing);
        for (const tool of ["web_search", "web_extract", "llm"] as const) {
          const totals = report.totals[tool] as Record<string, number>;
          for (const counter of [...TOOL_COUNTERS[tool], "saved_usd"])
            close(sumOf(report.by_provider[tool], counter), totals[counter] ?? 0);
        }
        for (const tool of ["llm", "evict"] as const) {
          const totals = report.totals[tool] as Record<string, number>;
          for (const counter of TOOL_COUNTERS[tool]) close(sumOf(report.by_model[tool], counter), totals[counter] ?? 0);
        }
        for (const field of ["cost_usd", "cost_without_cache_usd", "saved_usd"])
          close(sumOf(report.by_model.llm, field), (report.totals.llm as Record<string, number>)[field] ?? 0);
        for (const tool of ["web_search", "web_extract", "vision", "evict", "llm"] as const) {
          const hours = report.series.map((point) => (point[tool] ?? {}) as Record<string, number>);
          for (const counter of TOOL_COUNTERS[tool])
            close(
              hours.reduce((n, counts) => n + (counts[counter] ?? 0), 0),
              (report.totals[tool] as Record<string, number>)[counter] ?? 0,
            );
        }
        close(
          report.saved_usd,
          report.totals.web_search.saved_usd + report.totals.web_extract.saved_usd + report.totals.llm.saved_usd,
        );
        // Any order of the same rows gives the same answer (the stores read in their own key order).
        const shuffled = [...rows].sort(() => (((seed = (seed * 1103515245 + 12345) | 0) >>> 16) & 1 ? 1 : -1));
        expect(statsReport(shuffled, "24h", now, pricing).totals).toEqual(report.totals);
      }),
      { numRuns: 200 },
    );
  });

  it(`keeps the totals whole when more than ${ANSWER_NAMES} names are cut into (other)`, () => {
    fc.assert(
      fc.property(fc.integer({ min: ANSWER_NAMES - 5, max: ANSWER_NAMES + 50 }), (names) => {
        const rows: LedgerRow[] = Array.from({ length: names }, (_, i) => ({
          hour: current,
          tool: "llm",
          provider: "openai",
          model: `gpt-5-${i}`,
          counter: "input_tokens",
          value: 1000 + i,
        }));
        const report = statsReport(rows, "1h", now, pricing);
        expect(Object.keys(report.by_model.llm).length).toBe(Math.min(names, ANSWER_NAMES + 1));
        expect(sumOf(report.by_model.llm, "input_tokens")).toBe(report.totals.llm.input_tokens);
        close(sumOf(report.by_model.llm, "cost_usd"), report.totals.llm.cost_usd);
      }),
      { numRuns: 30 },
    );
  });
});
