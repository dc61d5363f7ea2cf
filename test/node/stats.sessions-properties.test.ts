/**
 * The sessions fold against the `/v1/stats` fold on any proxied traffic (docs/stats.md,
 * "Sessions"): every request is counted for its model and again under its session, in hours
 * counted before the as-sent counters existed or after. The sessions then sum to `/v1/stats`' LLM
 * figures (requests, tokens, billed, as sent, saved) in every window, "(other)" included, and the
 * answer does not depend on the order the rows come in.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../shared/config/config.load";
import type { LedgerRow } from "../../shared/ports";
import { sessionsReport } from "../../shared/stats/sessions.service";
import type { StatsWindow } from "../../shared/stats/stats.schema";
import { statsReport } from "../../shared/stats/stats.service";

const HOUR = 3_600_000;
const now = Date.parse("2026-12-07T12:30:00Z");
const current = now - (now % HOUR);
const pricing = loadConfig({}).config.pricing;

/** One proxied request: its hour, session, model and usage. */
const request = fc.record({
  hoursBack: fc.integer({ min: 0, max: 40 }),
  // More than the answer lists (200), so "(other)" is summed too.
  session: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 400 })).map((n) => `s${n}`),
  model: fc.constantFrom<[string, string]>(
    ["anthropic", "claude-sonnet-4-5"],
    ["anthropic", "claude-haiku-4-5"],
    ["openai", "gpt-4o"],
  ),
  input: fc.integer({ min: 0, max: 300_000 }),
  read: fc.integer({ min: 0, max: 300_000 }),
  write: fc.integer({ min: 0, max: 50_000 }),
  output: fc.integer({ min: 0, max: 5_000 }),
  // What the agent sent, as the shadow estimates it (only in hours after the counters).
  asSentInput: fc.integer({ min: 0, max: 600_000 }),
  at: fc.integer({ min: 0, max: HOUR - 1 }),
});

type Request = typeof request extends fc.Arbitrary<infer T> ? T : never;

/**
 * The rows the ledger stores for the requests: each count for the model and under its session;
 * an hour at or past `countersSince` hours back also carries the as-sent counts.
 */
function stored(requests: Request[], countersSince: number): LedgerRow[] {
  return requests.flatMap(({ hoursBack, session, model: [provider, model], at, ...usage }) => {
    const hour = current - hoursBack * HOUR;
    const counts: Record<string, number> = {
      requests: 1,
      input_tokens: usage.input,
      cache_read_tokens: usage.read,
      cache_write_5m_tokens: usage.write,
      output_tokens: usage.output,
    };
    if (hoursBack <= countersSince)
      Object.assign(counts, {
        as_sent_input_tokens: usage.asSentInput,
        as_sent_cache_read_tokens: usage.read,
        as_sent_output_tokens: usage.output,
      });
    const rows = Object.entries(counts).flatMap(([counter, value]) => {
      const row: LedgerRow = { hour, tool: "llm", provider, model, counter, value };
      return [row, { ...row, session }];
    });
    const times = ["first_at", "last_at"].map(
      (counter): LedgerRow => ({ hour, tool: "llm", provider, model, counter, value: hour + at, session }),
    );
    return [...rows, ...times];
  });
}

const close = (a: number, b: number, what: string) =>
  expect(Math.abs(a - b), `${what}: ${a} vs ${b}`).toBeLessThan(1e-6 * Math.max(1, Math.abs(b)));

describe("the sessions fold", () => {
  it("sums to /v1/stats' LLM figures in every window, hours before the as-sent counters included, in any row order", () => {
    fc.assert(
      fc.property(
        fc.array(request, { maxLength: 400 }),
        fc.integer({ min: -1, max: 41 }),
        fc.constantFrom<StatsWindow>("1h", "24h", "7d"),
        fc.integer(),
        (requests, countersSince, window, seed) => {
          const rows = stored(requests, countersSince);
          const llm = statsReport(rows, window, now, pricing).totals.llm;
          const answer = sessionsReport(rows, window, now, pricing);
          const sum = (field: "requests" | "input_tokens" | "cost_usd" | "cost_as_sent_usd" | "saved_usd") =>
            answer.sessions.reduce((n, s) => n + s[field], 0);
          for (const field of ["requests", "input_tokens", "cost_usd", "cost_as_sent_usd", "saved_usd"] as const)
            close(sum(field), llm[field], field);
          // Shuffled, the same answer as sent (JSON: a saving summed to -0 in one order is 0 in another).
          const shuffled = [...rows];
          let state = seed;
          for (let i = shuffled.length - 1; i > 0; i--) {
            state = (state * 1_103_515_245 + 12_345) & 0x7fffffff;
            const j = state % (i + 1);
            [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
          }
          expect(JSON.stringify(sessionsReport(shuffled, window, now, pricing))).toBe(JSON.stringify(answer));
        },
      ),
      { numRuns: 60 },
    );
  });
});
