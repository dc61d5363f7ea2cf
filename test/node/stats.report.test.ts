/**
 * The ledger's arithmetic (docs/stats.md): buffering, hourly buckets, the window, money from
 * counts and the price table, the LLM's cost with and without the cache.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../shared/config/config.load";
import { modelRules, shownModelPrices, usageCost } from "../../shared/llm/models.table";
import type { LedgerRow, LedgerStore } from "../../shared/ports";
import {
  LEDGER_FAILED_NAME,
  LEDGER_OTHER_NAME,
  LedgerBuffer,
  ledgerFlushDelay,
  recordWebCall,
} from "../../shared/stats/ledger";
import { ANSWER_NAMES, statsReport } from "../../shared/stats/stats.service";
import { combineCounter } from "../../shared/stats/counters";
import { sessionsReport } from "../../shared/stats/sessions.service";

const HOUR = 3_600_000;
const now = Date.parse("2026-12-02T09:30:00Z");
const pricing = loadConfig({}).config.pricing;
const silent = { info() {}, warn() {}, error() {} };

function memoryStore(): LedgerStore & { rows: LedgerRow[] } {
  const rows: LedgerRow[] = [];
  return {
    rows,
    async add(batch) {
      for (const row of batch) {
        const held = rows.find(
          (r) =>
            r.hour === row.hour &&
            r.tool === row.tool &&
            r.provider === row.provider &&
            r.model === row.model &&
            r.counter === row.counter &&
            r.session === row.session,
        );
        if (held) held.value = combineCounter(row.counter, held.value, row.value);
        else rows.push({ ...row });
      }
    },
    async report(request) {
      return statsReport(rows, request.window, request.now, request.pricing);
    },
    async sessions(request) {
      return sessionsReport(rows, request.window, request.now, request.pricing);
    },
  };
}

describe("the ledger", () => {
  it("gathers increments in memory and writes them as one batch per flush, by hour", async () => {
    const store = memoryStore();
    const ledger = new LedgerBuffer(store, silent);
    for (let i = 0; i < 10; i++) recordWebCall(ledger, "web_search", "tavily", i === 0 ? "miss" : "coalesced", now);
    recordWebCall(ledger, "web_search", "tavily", "hit", now - HOUR);
    ledger.record({ tool: "vision", counts: { loads: 1, bytes_in: 1000, bytes_out: -5, fitted: Number.NaN }, at: now });
    expect(store.rows).toEqual([]);
    await ledger.flush();
    const report = statsReport(store.rows, "24h", now, pricing);
    expect(report.totals.web_search).toMatchObject({
      requests: 11,
      provider_calls: 1,
      coalesced: 9,
      hits: 1,
      bypass: 0,
      errors: 0,
    });
    expect(report.totals.web_search.saved_usd).toBe(0.08);
    expect(report.totals.vision).toEqual({
      loads: 1,
      passed_through: 0,
      fitted: 0,
      bytes_in: 1000,
      bytes_out: 0,
      cap_refusals: 0,
    });
    expect(report.series.map((p) => p.t)).toEqual(["2026-12-02T08:00:00Z", "2026-12-02T09:00:00Z"]);
    expect(report.from).toBe("2026-12-01T10:00:00Z");
    expect(report.to).toBe("2026-12-02T10:00:00Z");
    await ledger.flush();
    expect(store.rows.find((r) => r.counter === "requests" && r.hour === now - (now % HOUR))?.value).toBe(10);
  });

  it("writes once per flush delay however many requests counted, losing none", async () => {
    const store = memoryStore();
    let writes = 0;
    const counting: LedgerStore = {
      add: (rows) => (writes++, store.add(rows)),
      report: store.report,
      sessions: store.sessions,
    };
    const ledger = new LedgerBuffer(counting, silent);
    const scheduled: Promise<void>[] = [];
    for (let i = 0; i < 50; i++) {
      recordWebCall(ledger, "web_search", "brave", "hit", now);
      const flush = ledger.flushAfter(20);
      if (flush) scheduled.push(flush);
    }
    expect(scheduled).toHaveLength(1);
    await Promise.all(scheduled);
    recordWebCall(ledger, "web_search", "brave", "hit", now);
    await ledger.flushAfter(0);
    expect(writes).toBe(2);
    expect(statsReport(store.rows, "1h", now, pricing).totals.web_search.hits).toBe(51);
    // A response that counted nothing schedules no write.
    expect(ledger.flushAfter(0)).toBeNull();
    expect(writes).toBe(2);
  });

  it(`counts a refused request under its model once an answer confirmed that name, else under ${LEDGER_FAILED_NAME}`, async () => {
    const store = memoryStore();
    const ledger = new LedgerBuffer(store, silent);
    const llm = (model: string, unconfirmed: boolean) =>
      ledger.record({ tool: "llm", provider: "anthropic", model, unconfirmed, counts: { requests: 1 }, at: now });
    llm("claude-sonnet-4-5", true); // refused before any answer named it
    llm("claude-sonnet-4-5", false); // answered
    llm("claude-sonnet-4-5", true); // a later 429: the name stands
    llm("made-up", true);
    // Confirmed names are bounded (the most recent 1,000): the first falls out after 1,000 more.
    for (let i = 0; i < 1_000; i++) llm(`model-${i}`, false);
    llm("claude-sonnet-4-5", true);
    await ledger.flush();
    const { by_model } = statsReport(store.rows, "1h", now, pricing);
    expect(by_model.llm["claude-sonnet-4-5"]?.requests).toBe(2);
    expect(by_model.llm[LEDGER_FAILED_NAME]?.requests).toBe(3);
    expect(by_model.llm["made-up"]).toBeUndefined();
  });

  it("reads LEDGER_FLUSH_MS as 0..10,000 ms, the default 1,000 when unset, negative or not a number", () => {
    expect(ledgerFlushDelay(undefined)).toBe(1000);
    expect(ledgerFlushDelay("")).toBe(1000);
    expect(ledgerFlushDelay("soon")).toBe(1000);
    expect(ledgerFlushDelay("-5")).toBe(1000);
    expect(ledgerFlushDelay("0")).toBe(0);
    expect(ledgerFlushDelay("250")).toBe(250);
    expect(ledgerFlushDelay(60_000)).toBe(10_000);
  });

  it("prices a model's tokens at its rates, and what the same input would cost uncached", () => {
    const hour = now - (now % HOUR);
    const row = (counter: string, value: number, model = "claude-sonnet-4-5"): LedgerRow => ({
      hour,
      tool: "llm",
      provider: "anthropic",
      model,
      counter,
      value,
    });
    const rows = [
      row("requests", 2),
      row("input_tokens", 1000),
      row("cache_write_5m_tokens", 10_000),
      row("cache_write_1h_tokens", 2_000),
      row("cache_read_tokens", 90_000),
      row("output_tokens", 500),
      // As the agent sent them, the requests would have read more (the images the proxy fitted).
      row("as_sent_input_tokens", 1000),
      row("as_sent_cache_write_5m_tokens", 10_000),
      row("as_sent_cache_write_1h_tokens", 2_000),
      row("as_sent_cache_read_tokens", 150_000),
      // Output is as billed, counted again beside the as-sent prompt (under its tier).
      row("as_sent_output_tokens", 500),
    ];
    const report = statsReport(rows, "1h", now, pricing);
    const asSent = usageCost(modelRules("anthropic", "claude-sonnet-4-5").prices, {
      input: 1000,
      cacheWrite5m: 10_000,
      cacheWrite1h: 2_000,
      cacheRead: 150_000,
      output: 500,
    });
    const expected = usageCost(modelRules("anthropic", "claude-sonnet-4-5").prices, {
      input: 1000,
      cacheWrite5m: 10_000,
      cacheWrite1h: 2_000,
      cacheRead: 90_000,
      output: 500,
    });
    expect(report.totals.llm.cache_write_tokens).toBe(12_000);
    expect(report.totals.llm.cost_usd).toBeCloseTo(expected.costUsd, 9);
    expect(report.totals.llm.cost_without_cache_usd).toBeCloseTo(expected.withoutCacheUsd, 9);
    // The provider's caching, apart; the service's own saving is as sent less as billed (output alike).
    expect(report.totals.llm.cache_saved_usd).toBeCloseTo(expected.withoutCacheUsd - expected.costUsd, 9);
    expect(report.totals.llm.cost_as_sent_usd).toBeCloseTo(asSent.costUsd, 9);
    expect(report.totals.llm.saved_usd).toBeCloseTo(asSent.costUsd - expected.costUsd, 9);
    expect(report.totals.llm.saved_usd).toBeCloseTo((60_000 * 0.3) / 1e6, 9);
    expect(report.saved_usd).toBe(report.totals.llm.saved_usd);
    expect(report.by_model.llm["claude-sonnet-4-5"]?.as_sent_cache_read_tokens).toBe(150_000);
    expect(report.by_model.llm["claude-sonnet-4-5"]?.requests).toBe(2);
    expect(report.prices.models["claude-sonnet-4-5"]).toEqual(
      shownModelPrices(modelRules("anthropic", "claude-sonnet-4-5")),
    );
    // pricing.models overrides a model's prices.
    const cheap = loadConfig({
      PRICING_MODELS: JSON.stringify({
        "claude-sonnet-4-5": { input: 1, cacheRead: 1, cacheWrite5m: 1, cacheWrite1h: 1 },
      }),
    }).config.pricing;
    expect(statsReport(rows, "1h", now, cheap).totals.llm.cache_saved_usd).toBe(0);
    // A stored sum of the two TTLs (as the proxy once wrote beside them) is not counted again.
    const withSum = statsReport([...rows, row("cache_write_tokens", 12_000)], "1h", now, pricing);
    expect(withSum.totals.llm.cache_write_tokens).toBe(12_000);
    expect(withSum.totals.llm.cost_usd).toBe(report.totals.llm.cost_usd);
    expect(withSum.by_model.llm["claude-sonnet-4-5"]?.cache_write_tokens).toBe(12_000);
  });

  it("breaks down by any model name a caller sends: __proto__ is a key, a missing name sums with 'unknown'", () => {
    const hour = now - (now % HOUR);
    const row = (model: string, value: number): LedgerRow => ({
      hour,
      tool: "llm",
      provider: "openai",
      model,
      counter: "requests",
      value,
    });
    const report = statsReport([row("__proto__", 3), row("", 2), row("unknown", 5)], "1h", now, pricing);
    const answered = JSON.parse(JSON.stringify(report));
    expect(answered.totals.llm.requests).toBe(10);
    expect(Object.keys(answered.by_model.llm).sort()).toEqual(["__proto__", "unknown"]);
    expect(Object.getOwnPropertyDescriptor(answered.by_model.llm, "__proto__")?.value.requests).toBe(3);
    expect(answered.by_model.llm.unknown.requests).toBe(7);
    expect(Object.keys(answered.prices.models).sort()).toEqual(["__proto__", "unknown"]);
  });

  it(`answers the ${ANSWER_NAMES} most requested model names and sums the rest, money included, under ${LEDGER_OTHER_NAME}`, () => {
    const hour = now - (now % HOUR);
    const rows: LedgerRow[] = [];
    // 300 names over three hours: name i was requested i + 1 times and read 1,000 cached tokens each time.
    for (let i = 0; i < 300; i++) {
      const model = `claude-sonnet-4-5-${String(i).padStart(3, "0")}`;
      const at = hour - (i % 3) * HOUR;
      rows.push({ hour: at, tool: "llm", provider: "anthropic", model, counter: "requests", value: i + 1 });
      rows.push({
        hour: at,
        tool: "llm",
        provider: "anthropic",
        model,
        counter: "cache_read_tokens",
        value: 1000 * (i + 1),
      });
    }
    const report = statsReport(rows, "24h", now, pricing);
    const names = Object.keys(report.by_model.llm);
    expect(names).toHaveLength(ANSWER_NAMES + 1);
    expect(report.by_model.llm["claude-sonnet-4-5-299"]?.requests).toBe(300);
    expect(report.by_model.llm["claude-sonnet-4-5-100"]?.requests).toBe(101);
    expect(report.by_model.llm["claude-sonnet-4-5-099"]).toBeUndefined();
    const other = report.by_model.llm[LEDGER_OTHER_NAME]!;
    expect(other.requests).toBe((100 * 101) / 2);
    const each = usageCost(modelRules("anthropic", "claude-sonnet-4-5").prices, {
      input: 0,
      cacheWrite5m: 0,
      cacheWrite1h: 0,
      cacheRead: 1000,
      output: 0,
    });
    expect(other.cost_usd).toBeCloseTo(each.costUsd * other.requests!, 9);
    expect(report.totals.llm.requests).toBe((300 * 301) / 2);
    expect(report.totals.llm.cost_usd).toBeCloseTo(each.costUsd * report.totals.llm.requests, 9);
    expect(Object.keys(report.prices.models)).toHaveLength(ANSWER_NAMES);
    expect(report.series).toHaveLength(3);
  });

  it("names the most requested models however many others were read first", () => {
    const hour = now - (now % HOUR);
    // 100 names an hour in the oldest 120 hours of the 30-day window, one request each (12,000 names),
    // then one model with a million requests in the current hour.
    const rows: LedgerRow[] = [];
    for (let h = 719; h >= 600; h--)
      for (let i = 0; i < 100; i++)
        rows.push({
          hour: hour - h * HOUR,
          tool: "llm",
          provider: "openai",
          model: `junk-${h}-${i}`,
          counter: "requests",
          value: 1,
        });
    rows.push({
      hour,
      tool: "llm",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      counter: "requests",
      value: 1_000_000,
    });
    const report = statsReport(rows, "30d", now, pricing);
    expect(report.by_model.llm["claude-sonnet-4-5"]?.requests).toBe(1_000_000);
    expect(report.by_model.llm[LEDGER_OTHER_NAME]?.requests).toBe(12_000 - (ANSWER_NAMES - 1));
    expect(report.prices.models["claude-sonnet-4-5"]).toEqual(
      shownModelPrices(modelRules("anthropic", "claude-sonnet-4-5")),
    );
  });

  it(`shows no one price for ${LEDGER_FAILED_NAME}, which sums requests to several providers`, () => {
    const hour = now - (now % HOUR);
    const failed = (provider: string, counter: string, value: number): LedgerRow => ({
      hour,
      tool: "llm",
      provider,
      model: LEDGER_FAILED_NAME,
      counter,
      value,
    });
    const report = statsReport(
      [failed("anthropic", "requests", 3), failed("openai", "requests", 2), failed("openai", "input_tokens", 1000)],
      "1h",
      now,
      pricing,
    );
    expect(report.by_model.llm[LEDGER_FAILED_NAME]?.requests).toBe(5);
    expect(report.prices.models[LEDGER_FAILED_NAME]).toBeUndefined();
  });

  it("leaves out buckets outside the window", () => {
    const row = (hour: number): LedgerRow => ({
      hour,
      tool: "evict",
      provider: "",
      model: "cost",
      counter: "requests",
      value: 1,
    });
    const current = now - (now % HOUR);
    const rows = [row(current), row(current - 23 * HOUR), row(current - 24 * HOUR), row(current - 30 * 24 * HOUR)];
    expect(statsReport(rows, "1h", now, pricing).totals.evict.requests).toBe(1);
    expect(statsReport(rows, "24h", now, pricing).totals.evict.requests).toBe(2);
    expect(statsReport(rows, "7d", now, pricing).totals.evict.requests).toBe(3);
    expect(statsReport(rows, "30d", now, pricing).totals.evict.requests).toBe(3);
    expect(statsReport(rows, "30d", now, pricing).by_model.evict.cost?.requests).toBe(3);
  });
});
