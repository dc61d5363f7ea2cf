/**
 * Usage is bounded (issue 42, docs/stats.md "Usage is bounded"), inside workerd: an upstream that
 * reports 10^15 tokens (or -5, or 12.5) in a plain answer or in a stream's last events gets its
 * answer relayed unchanged, the request counted, and none of those figures in `/v1/stats`; the
 * service logs `ledger_count_refused` without the caller's key. A figure just under 10^9 is counted.
 * The emulator's `[usage:N]` marker plays the upstream.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, callJson, uniqueToken } from "./helpers";

const TOKEN_KEYS = ["input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens"] as const;

const llmTotals = async (): Promise<Record<string, number>> => {
  const { status, body } = await callJson("/v1/stats?window=24h");
  expect(status).toBe(200);
  return body.totals.llm;
};

/** The llm totals once one more request than `before` is written (a later request's flush writes it). */
async function totalsAfterOne(before: Record<string, number>): Promise<Record<string, number>> {
  let after = before;
  await vi.waitFor(
    async () => {
      await call("/healthz");
      after = await llmTotals();
      expect(after.requests! - before.requests!).toBe(1);
    },
    { timeout: 5000, interval: 100 },
  );
  return after;
}

type Send = (marker: string, key: string) => Promise<string>;

/** A proxied conversation call, plain or streamed (OpenAI's asks for the usage chunk); the answer's text. */
const sender =
  (provider: "anthropic" | "openai", stream: boolean): Send =>
  async (marker, key) => {
    const messages = [{ role: "user", content: `hi ${marker}` }];
    const response =
      provider === "anthropic"
        ? await call("/anthropic/v1/messages", {
            body: { model: "claude-sonnet-4-5", max_tokens: 8, stream, messages },
            headers: { "x-api-key": key },
          })
        : await call("/openai/v1/chat/completions", {
            body: { model: "gpt-4o", stream, ...(stream ? { stream_options: { include_usage: true } } : {}), messages },
            headers: { authorization: `Bearer ${key}` },
          });
    expect(response.status).toBe(200);
    return response.text();
  };

const SENDS: [string, Send][] = [
  ["Anthropic, plain", sender("anthropic", false)],
  ["Anthropic, streamed", sender("anthropic", true)],
  ["OpenAI, plain", sender("openai", false)],
  ["OpenAI, streamed", sender("openai", true)],
];

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a usage figure that is not a count under 10^9 is not counted", () => {
  for (const [label, send] of SENDS) {
    it.each(["1e15", "-5", "12.5", "1000000000"])(`${label}: usage %s`, async (figure) => {
      const warned: string[] = [];
      vi.spyOn(console, "warn").mockImplementation((line: unknown) => void warned.push(String(line)));
      const key = `sk-caller-${uniqueToken()}`;
      const before = await llmTotals();
      const answer = await send(`[usage:${figure}] ${uniqueToken()}`, key);
      // Relayed as the upstream sent it.
      expect(answer).toContain(JSON.stringify(Number(figure)));
      const after = await totalsAfterOne(before);
      for (const name of TOKEN_KEYS) expect(after[name]! - before[name]!, name).toBe(0);
      expect(after.cost_usd! - before.cost_usd!).toBeCloseTo(0, 9);
      expect(JSON.stringify(after)).not.toContain("1000000000000000");
      const refused = warned.filter((line) => line.includes("ledger_count_refused"));
      expect(refused.length, warned.join("\n")).toBeGreaterThan(0);
      expect(refused.join("\n")).not.toContain(key);
      expect(refused.join("\n")).toContain('"counter":"output_tokens"');
    });
  }

  it("counts a figure just under 10^9", async () => {
    const before = await llmTotals();
    await sender("anthropic", false)(`[usage:999999999] ${uniqueToken()}`, `sk-caller-${uniqueToken()}`);
    const after = await totalsAfterOne(before);
    expect(after.input_tokens! - before.input_tokens!).toBe(999_999_999);
    expect(after.output_tokens! - before.output_tokens!).toBe(999_999_999);
  });
});
