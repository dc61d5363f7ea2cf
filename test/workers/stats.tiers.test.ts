/**
 * `/v1/stats` prices each proxied request at its own price tier (docs/stats.md, "Prices"): a Haiku
 * 5.5 session whose prompt crosses 100,000 tokens, sent through the proxy in workerd to the LLM
 * emulator (which bills by its own tokenizer and cache rules), and its money read back from the
 * LedgerDO, against a per-request pricing of the usage the emulator returned.
 */
import { describe, expect, it, vi } from "vitest";
import { call, callJson, EMULATOR, uniqueToken } from "./helpers";

const MODEL = "claude-haiku-5-5";

/** Haiku 5.5's published prices (USD per MTok): up to 100,000 prompt tokens, and over (docs/eviction.md). */
const BASE = { input: 0.1, cacheWrite5m: 0.125, cacheWrite1h: 0.2, cacheRead: 0.01, output: 0.5 };
const OVER_100K = { input: 0.5, cacheWrite5m: 0.625, cacheWrite1h: 1, cacheRead: 0.05, output: 2.5 };

type Usage = typeof BASE;
const prompt = (u: Usage) => u.input + u.cacheWrite5m + u.cacheWrite1h + u.cacheRead;
/** One request as the provider bills it: every token at the prices of the band its prompt is in. */
const billed = (u: Usage) => {
  const p = prompt(u) > 100_000 ? OVER_100K : BASE;
  return (Object.keys(p) as (keyof Usage)[]).reduce((usd, kind) => usd + (u[kind] * p[kind]) / 1e6, 0);
};

const haikuStats = async () => {
  const res = await callJson("/v1/stats?window=24h");
  expect(res.status).toBe(200);
  const counts = (res.body.by_model.llm[MODEL] ?? {}) as Record<string, number>;
  // A breakdown answers its non-zero counts only.
  const of = (key: string) => counts[key] ?? 0;
  return { of };
};

describe("/v1/stats prices each request at its tier", () => {
  it("a Haiku 5.5 session crossing 100,000 prompt tokens: cost_usd within 1 % of the emulator's usage priced request by request", async () => {
    const tag = uniqueToken();
    const system = [
      {
        type: "text",
        text: `You read long documents (${tag}). ${"Answer from the documents only. ".repeat(200)}`,
        cache_control: { type: "ephemeral" },
      },
    ];
    // Each turn adds ~22,000 tokens of document: the prompt passes 100,000 at the fifth request.
    const messages: any[] = [];
    const before = await haikuStats();
    const sent = 7;
    for (let turn = 0; turn < sent; turn++) {
      messages.push({
        role: "user",
        content: [
          {
            type: "text",
            text: `Document ${turn} (${tag}): ${"The quarterly report lists revenue, costs and the outlook. ".repeat(1_500)}`,
            cache_control: { type: "ephemeral" },
          },
        ],
      });
      const response = await call("/anthropic/v1/messages", {
        body: { model: MODEL, max_tokens: 64, system, messages: messages.map(withoutOldMarks(messages.length)) },
        headers: { "x-api-key": `k-${tag}`, "x-session-id": tag },
      });
      expect(response.status).toBe(200);
      const answer = (await response.json()) as { content: unknown };
      messages.push({ role: "assistant", content: answer.content });
    }

    const calls = ((await (await fetch(`${EMULATOR}/llm/__calls?contains=${tag}`)).json()) as { calls: any[] }).calls;
    expect(calls).toHaveLength(sent);
    const usages = calls.map((c) => c.usage as Usage);
    // The session is on both sides of the line, and reads its cache: the case the tier changes.
    expect(usages.filter((u) => prompt(u) > 100_000).length).toBeGreaterThanOrEqual(2);
    expect(usages.filter((u) => prompt(u) <= 100_000).length).toBeGreaterThanOrEqual(2);
    expect(usages.some((u) => u.cacheRead > 0)).toBe(true);
    const expected = usages.reduce((usd, u) => usd + billed(u), 0);

    let after = before;
    await vi.waitFor(
      async () => {
        await call("/healthz"); // a later request's flush writes the answers' usage
        after = await haikuStats();
        expect(after.of("requests") - before.of("requests")).toBe(sent);
        expect(after.of("output_tokens") - before.of("output_tokens")).toBe(usages.reduce((n, u) => n + u.output, 0));
      },
      { timeout: 5_000, interval: 100 },
    );
    const cost = after.of("cost_usd") - before.of("cost_usd");
    expect(Math.abs(cost - expected) / expected).toBeLessThan(0.01);
    // The plain token names still answer every tier's tokens summed.
    const delta = (key: string) => after.of(key) - before.of(key);
    expect(delta("input_tokens")).toBe(usages.reduce((n, u) => n + u.input, 0));
    expect(delta("cache_read_tokens")).toBe(usages.reduce((n, u) => n + u.cacheRead, 0));
    expect(delta("cache_write_tokens")).toBe(usages.reduce((n, u) => n + u.cacheWrite5m + u.cacheWrite1h, 0));
  });
});

/** Anthropic takes at most 4 breakpoints: the system prompt's and the last 3 messages' (Hermes's system_and_3). */
function withoutOldMarks(count: number) {
  return (message: any, index: number) =>
    index >= count - 3 || !Array.isArray(message.content)
      ? message
      : { ...message, content: message.content.map(({ cache_control: _, ...block }: any) => block) };
}
