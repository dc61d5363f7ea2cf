/**
 * `GET /v1/stats/sessions` and `GET /v1/stats` over the same LedgerDO rows, through the real Workers
 * entry (docs/stats.md, "Sessions"): hours counted before the as-sent counters existed are taken as
 * sent as billed, hour by hour, in both answers. Before, the sessions list showed such a session
 * as sent $0 while /v1/stats counted the same rows as sent = billed.
 */
import { describe, expect, it } from "vitest";
import type { LedgerRow } from "../../shared/ports";
import { durableLedgerStore } from "../../workers/deps";
import { callJson, testEnv, uniqueToken } from "./helpers";

const HOUR = 3_600_000;

describe("sessions counted before the as-sent counters", () => {
  it("answer as sent = billed for those hours, and sum to /v1/stats' figures for their model", async () => {
    const token = uniqueToken();
    // A name of its own that the model table still prices as Sonnet 4.5 ($3 input, $15 output per M).
    const model = `claude-sonnet-4-5-${token}`;
    const [old, spans] = [`old-${token}`, `spans-${token}`];
    // Two hours inside the 24 h window whichever clock hour the test runs in.
    const before = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
    const after = before + HOUR;
    const counted = (hour: number, session: string, counts: Record<string, number>): LedgerRow[] =>
      Object.entries(counts).flatMap(([counter, value]) => {
        const row: LedgerRow = { hour, tool: "llm", provider: "anthropic", model, counter, value };
        return [row, { ...row, session }];
      });
    await durableLedgerStore(testEnv).add([
      // $3 billed, no as-sent count.
      ...counted(before, old, { requests: 1, input_tokens: 1_000_000 }),
      // $7.50 billed, no as-sent count; then $4.50 billed and $16.50 as sent.
      ...counted(before, spans, { requests: 2, input_tokens: 2_000_000, output_tokens: 100_000 }),
      ...counted(after, spans, {
        requests: 1,
        input_tokens: 1_000_000,
        output_tokens: 100_000,
        as_sent_input_tokens: 5_000_000,
        as_sent_output_tokens: 100_000,
      }),
    ]);

    const listed = await callJson("/v1/stats/sessions?window=24h");
    expect(listed.status).toBe(200);
    const of = (name: string) => {
      const s = (listed.body.sessions as any[]).find((row) => row.session === name);
      return [s.cost_usd, s.cost_as_sent_usd, s.saved_usd];
    };
    expect(of(old)).toEqual([3, 3, 0]);
    expect(of(spans)).toEqual([12, 24, 12]);

    const stats = await callJson("/v1/stats?window=24h");
    expect(stats.status).toBe(200);
    const byModel = stats.body.by_model.llm[model];
    expect([byModel.cost_usd, byModel.cost_as_sent_usd, byModel.saved_usd]).toEqual([15, 27, 12]);
  });
});
