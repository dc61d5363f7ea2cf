/**
 * The as-sent side is priced at its own tier (docs/stats.md, "The service's own saving"): a Haiku
 * 5.5 session whose requests as the agent sent them cross 100,000 prompt tokens while the ones the
 * service sent (screenshots retired) stay under, through the real Workers entry, KV and the
 * LedgerDO, against the emulator. `/v1/stats` prices the as-sent side over the line at the 5x tier,
 * and `/v1/stats/sessions` answers the same money for the session as `/v1/stats` for its model.
 */
import { describe, expect, it, vi } from "vitest";
import { toBase64 } from "../../shared/media/data-url";
import { modelRules, usageCost } from "../../shared/llm/models.table";
import { encodePng, screenshotPixels } from "../fixtures/images";
import { agentRequest, type AgentSession } from "../support/agent-sessions";
import { call, callJson, EMULATOR, ledgerCountsAfter, uniqueToken } from "./helpers";

/** Text that puts every request of the session near the line (the emulator counts it, not us). */
const PAD = "The archive holds the booking rules, fares and the airline's terms. ".repeat(2_900);

describe("the as-sent side at its own price tier", () => {
  it("as sent over 100,000 tokens, as billed under: cost_as_sent_usd at the 5x tier, and the sessions answer agrees with /v1/stats", async () => {
    const tag = uniqueToken();
    const width = 1200;
    const height = 900;
    const shots: string[] = [];
    for (let s = 0; s < 4; s++)
      shots.push(toBase64(await encodePng(screenshotPixels(width, height, 40 + s), width, height, 3)));
    const session: AgentSession = { format: "anthropic", model: `claude-haiku-5-5-${tag}`, tag, turns: 30, shots };
    const retired: number[] = [];
    for (let turn = 1; turn <= session.turns; turn++) {
      const body = agentRequest(session, turn) as { system: { text: string }[] };
      body.system[0]!.text += PAD;
      const response = await call("/anthropic/v1/messages", {
        body,
        headers: { "x-api-key": `k-${tag}`, "x-session-id": tag },
        vars: { PROXY_STRATEGY: "hermes" },
      });
      expect(response.status, await response.clone().text()).toBe(200);
      await response.text();
      retired.push(Number(response.headers.get("x-edge-retired") ?? 0));
    }
    const calls = ((await (await fetch(`${EMULATOR}/llm/__calls?contains=${tag}`)).json()) as { calls: any[] }).calls;
    expect(calls).toHaveLength(session.turns);
    const prompts = calls.map((c) => c.usage.input + c.usage.cacheWrite5m + c.usage.cacheWrite1h + c.usage.cacheRead);

    // Every request the provider billed is under the line: the billed side is at the base price.
    expect(Math.max(...prompts)).toBeLessThanOrEqual(100_000);

    const counts = await ledgerCountsAfter(session.model, session.turns, (c) =>
      expect(c.as_sent_cache_read_tokens ?? 0).toBeGreaterThan(0),
    );

    const rules = modelRules("anthropic", session.model);
    const n = (name: string) => counts[name] ?? 0;
    const asSentUsage = {
      input: n("as_sent_input_tokens"),
      cacheWrite5m: n("as_sent_cache_write_5m_tokens"),
      cacheWrite1h: n("as_sent_cache_write_1h_tokens"),
      cacheRead: n("as_sent_cache_read_tokens"),
      output: n("output_tokens"),
    };
    const atBase = usageCost(rules.prices, asSentUsage).costUsd;
    const allOver = usageCost(rules.tiers[0]!.prices, asSentUsage).costUsd;

    let model: any;
    let row: any;
    await vi.waitFor(
      async () => {
        await call("/healthz"); // a later request's flush writes the earlier ones' counts
        model = (await callJson("/v1/stats?window=24h")).body.by_model.llm[session.model];
        row = ((await callJson("/v1/stats/sessions?window=24h")).body.sessions as any[]).find((s) => s.session === tag);
        expect(model?.requests).toBe(session.turns);
        expect(row?.requests).toBe(session.turns);
      },
      { timeout: 10_000, interval: 100 },
    );
    // The billed side is at the base price: what the emulator billed, priced at the base rates.
    expect(model.cost_usd).toBeCloseTo(
      usageCost(rules.prices, {
        input: n("input_tokens"),
        cacheWrite5m: n("cache_write_tokens"),
        cacheWrite1h: 0,
        cacheRead: n("cache_read_tokens"),
        output: n("output_tokens"),
      }).costUsd,
      6,
    );
    // Some of the as-sent requests are over the line, not all: more than the base price, less than 5x throughout.
    expect(model.cost_as_sent_usd).toBeGreaterThan(atBase * 1.05);
    expect(model.cost_as_sent_usd).toBeLessThan(allOver);
    expect(model.saved_usd).toBeCloseTo(model.cost_as_sent_usd - model.cost_usd, 6);
    // One session of one model: both answers say the same money.
    expect(row.cost_usd).toBeCloseTo(model.cost_usd, 6);
    expect(row.cost_as_sent_usd).toBeCloseTo(model.cost_as_sent_usd, 6);
    expect(row.saved_usd).toBeCloseTo(model.saved_usd, 6);
  });
});
