/**
 * The as-sent shadow's arithmetic (shared/proxy/shadow.ts, docs/stats.md "The service's own
 * saving"), as properties over generated sessions: a request sent as the agent wrote it is its
 * bill exactly, whatever the bill; an as-sent count is never negative; and the shadow's state stays
 * within its bound however long the session.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../shared/config/config.load";
import { modelRules } from "../../shared/llm/models.table";
import type { LedgerRow } from "../../shared/ports";
import { statsReport } from "../../shared/stats/stats.service";
import {
  asSentUsage,
  estimatedSavingUsd,
  SHADOW_ENTRIES,
  type ShadowState,
  shadowStep,
} from "../../shared/proxy/shadow";

const SONNET = modelRules("anthropic", "claude-sonnet-4-5");
const GPT = modelRules("openai", "gpt-4o");

/** An Anthropic body of `turns` text turns, the last 3 marked, `words` words each. */
function anthropicBody(turns: number, words: number, drop = -1): Record<string, unknown> {
  const messages = Array.from({ length: turns * 2 + 1 }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: [
      {
        type: "text",
        text: i === drop ? "[screenshot removed to save context]" : `turn ${i} ${"word ".repeat(words + (i % 7))}`,
        ...(i >= turns * 2 - 2 ? { cache_control: { type: "ephemeral" } } : {}),
      },
    ],
  }));
  return { model: "claude-sonnet-4-5", system: "You are an agent. ".repeat(200), messages };
}

const usage = fc.record({
  input: fc.nat(50_000),
  cacheWrite5m: fc.nat(50_000),
  cacheWrite1h: fc.nat(5_000),
  cacheRead: fc.nat(200_000),
  output: fc.nat(2_000),
});

describe("the as-sent shadow", () => {
  it("property: a request sent as written is its bill exactly, and its header estimate is 0", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 200 }), usage, (turns, words, billed) => {
        let state: ShadowState | null = null;
        for (let t = 1; t <= turns; t++) {
          const body = anthropicBody(t, words);
          const step = shadowStep(state, body, body, t * 30_000, SONNET);
          state = step.state;
          const asSent = asSentUsage(billed, step.estimate);
          expect(asSent).toEqual({
            input: billed.input,
            cacheWrite5m: billed.cacheWrite5m,
            cacheWrite1h: billed.cacheWrite1h,
            cacheRead: billed.cacheRead,
          });
          expect(estimatedSavingUsd(step.estimate, SONNET.prices)).toBe(0);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("property: as-sent counts are never negative, whatever the bill and however the sides differ", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 25 }), fc.nat(20), usage, fc.boolean(), (turns, drop, billed, openai) => {
        let state: ShadowState | null = null;
        for (let t = 1; t <= turns; t++) {
          const asWritten = anthropicBody(t, 40);
          const sent = anthropicBody(t, 40, Math.min(drop, t));
          const step = shadowStep(state, asWritten, sent, t * 30_000, openai ? GPT : SONNET);
          state = step.state;
          for (const value of Object.values(asSentUsage(billed, step.estimate))) {
            expect(Number.isInteger(value)).toBe(true);
            expect(value).toBeGreaterThanOrEqual(0);
          }
        }
      }),
      { numRuns: 40 },
    );
  });

  it("keeps at most SHADOW_ENTRIES cache entries a side, the freshest, however long the session", () => {
    let state: ShadowState | null = null;
    for (let t = 1; t <= 300; t++) {
      const chat = {
        model: "gpt-4o",
        messages: Array.from({ length: t }, (_, i) => ({ role: "user", content: `message ${i} ${"x ".repeat(300)}` })),
      };
      state = shadowStep(state, chat, chat, t * 1000, GPT).state;
    }
    expect(state!.asSent.length).toBeLessThanOrEqual(SHADOW_ENTRIES);
    expect(state!.sent.length).toBeLessThanOrEqual(SHADOW_ENTRIES);
    expect(JSON.stringify(state).length).toBeLessThan(16 * 1024);
    // The newest request's entries are among those kept, its longest prefixes first: the next
    // request still reads nearly all of it.
    expect(state!.asSent.every(([, at]) => at === 300_000)).toBe(true);
    const next = {
      model: "gpt-4o",
      messages: Array.from({ length: 301 }, (_, i) => ({ role: "user", content: `message ${i} ${"x ".repeat(300)}` })),
    };
    const { asSent } = shadowStep(state, next, next, 301_000, GPT).estimate;
    const total = Object.values(asSent).reduce((sum, units) => sum + units.text + units.image, 0);
    expect(asSent.cacheRead.text).toBeGreaterThan(0.99 * total);
  });

  it("a bucket counted before the as-sent counters existed is taken as sent as billed: no saving claimed, none lost", () => {
    const now = Date.UTC(2026, 11, 7, 12, 30);
    const hour = Date.UTC(2026, 11, 7, 12);
    const row = (model: string, counter: string, value: number): LedgerRow => ({
      hour,
      tool: "llm",
      provider: "anthropic",
      model,
      counter,
      value,
    });
    const rows = [
      // Before: billed kinds only.
      row("claude-sonnet-4-5", "requests", 3),
      row("claude-sonnet-4-5", "cache_read_tokens", 90_000),
      row("claude-sonnet-4-5", "cache_write_5m_tokens", 10_000),
      row("claude-sonnet-4-5", "output_tokens", 500),
      // After: as sent beside the bill, 60,000 more reads.
      row("claude-opus-4-5", "requests", 2),
      row("claude-opus-4-5", "cache_read_tokens", 90_000),
      row("claude-opus-4-5", "output_tokens", 500),
      row("claude-opus-4-5", "as_sent_cache_read_tokens", 150_000),
      row("claude-opus-4-5", "as_sent_output_tokens", 500),
    ];
    const report = statsReport(rows, "24h", now, loadConfig({}).config.pricing);
    const before = report.by_model.llm["claude-sonnet-4-5"]!;
    expect(before.cost_as_sent_usd).toBe(before.cost_usd);
    expect(before.saved_usd).toBe(0);
    const after = report.by_model.llm["claude-opus-4-5"]!;
    expect(after.saved_usd).toBeCloseTo((60_000 * 0.5) / 1e6, 9);
    expect(report.totals.llm.saved_usd).toBeCloseTo(after.saved_usd!, 9);
    expect(report.series[0]!.llm!.saved_usd).toBeCloseTo(after.saved_usd!, 9);
  });
});
