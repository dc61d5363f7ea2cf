/**
 * Hours counted before the as-sent counters existed (docs/stats.md, "The service's own saving"):
 * `/v1/stats` and `/v1/stats/sessions` take them as sent as billed by the one rule
 * (UnpairedBuckets), so a session recorded then shows as sent = billed and no saving, a session
 * that spans those hours and later ones claims only the later saving, and the sessions sum to the
 * totals. Both answers are built by the folds the stores run, from the same rows.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../shared/config/config.load";
import type { LedgerRow } from "../../shared/ports";
import { SessionsFold, sessionsReport } from "../../shared/stats/sessions.service";
import { statsReport } from "../../shared/stats/stats.service";

const now = Date.UTC(2026, 11, 7, 12, 30);
const before = Date.UTC(2026, 11, 7, 9);
const after = Date.UTC(2026, 11, 7, 11);
const pricing = loadConfig({}).config.pricing;

/** A request's counts as the ledger stores them: the LLM's row, and the same under its session. */
function counted(session: string, hour: number, model: string, counts: Record<string, number>): LedgerRow[] {
  return Object.entries(counts).flatMap(([counter, value]) => {
    const row: LedgerRow = { hour, tool: "llm", provider: "anthropic", model, counter, value };
    return [row, { ...row, session }];
  });
}

const sessionTimes = (session: string, hour: number): LedgerRow[] => [
  {
    hour,
    tool: "llm",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    counter: "first_at",
    value: hour + 60_000,
    session,
  },
  {
    hour,
    tool: "llm",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    counter: "last_at",
    value: hour + 120_000,
    session,
  },
];

const billedOnly = {
  requests: 2,
  input_tokens: 1_000,
  cache_read_tokens: 80_000,
  cache_write_5m_tokens: 10_000,
  output_tokens: 400,
};
const withAsSent = {
  requests: 1,
  input_tokens: 500,
  cache_read_tokens: 40_000,
  output_tokens: 200,
  as_sent_input_tokens: 500,
  as_sent_cache_read_tokens: 100_000,
  as_sent_output_tokens: 200,
};

const rows: LedgerRow[] = [
  ...counted("recorded-before", before, "claude-sonnet-4-5", billedOnly),
  ...sessionTimes("recorded-before", before),
  ...counted("spans-both", before, "claude-sonnet-4-5", billedOnly),
  ...sessionTimes("spans-both", before),
  ...counted("spans-both", after, "claude-sonnet-4-5", withAsSent),
  ...counted("recorded-after", after, "claude-sonnet-4-5", withAsSent),
  ...sessionTimes("recorded-after", after),
];

describe("as sent, for hours counted before the as-sent counters", () => {
  it("a session recorded before them shows as sent = billed and no saving, as /v1/stats counts it", () => {
    const sessions = sessionsReport(rows, "24h", now, pricing).sessions;
    const of = (name: string) => sessions.find((s) => s.session === name)!;
    const old = of("recorded-before");
    expect(old.cost_usd).toBeGreaterThan(0);
    expect(old.cost_as_sent_usd).toBe(old.cost_usd);
    expect(old.saved_usd).toBe(0);
    // A session spanning both claims the later hour's saving only: the earlier hour is neither a loss nor a gain.
    const later = of("recorded-after");
    expect(later.saved_usd).toBeGreaterThan(0);
    const spans = of("spans-both");
    expect(spans.saved_usd).toBeCloseTo(later.saved_usd, 9);
    expect(spans.cost_as_sent_usd).toBeCloseTo(old.cost_usd + later.cost_as_sent_usd, 9);
  });

  it("the sessions sum to /v1/stats' LLM totals: billed, as sent and saved", () => {
    const totals = statsReport(rows, "24h", now, pricing).totals.llm;
    const sessions = sessionsReport(rows, "24h", now, pricing).sessions;
    const sum = (field: "cost_usd" | "cost_as_sent_usd" | "saved_usd") =>
      sessions.reduce((total, s) => total + s[field], 0);
    expect(sum("cost_usd")).toBeCloseTo(totals.cost_usd!, 9);
    expect(sum("cost_as_sent_usd")).toBeCloseTo(totals.cost_as_sent_usd!, 9);
    expect(sum("saved_usd")).toBeCloseTo(totals.saved_usd!, 9);
  });

  it("answers the same whatever order the rows come in; a store's rows out of the order of their hours are refused", () => {
    const answer = sessionsReport(rows, "24h", now, pricing);
    expect(sessionsReport([...rows].reverse(), "24h", now, pricing)).toEqual(answer);
    // The stores list their rows hour by hour: the fold settles an hour when the next begins.
    const fold = new SessionsFold({ window: "24h", now, pricing });
    fold.add(rows.find((row) => row.session !== undefined && row.hour === after)!);
    expect(() => fold.add(rows.find((row) => row.session !== undefined && row.hour === before)!)).toThrow(
      /out of the order of their hours/,
    );
  });
});
