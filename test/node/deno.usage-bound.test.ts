/**
 * Usage is bounded (issue 42, docs/stats.md "Usage is bounded"), on the Deno entry over real HTTP:
 * an upstream (the emulator's `[usage:N]` marker) that reports 10^15, -5, 12.5 or 10^9 tokens in a plain
 * answer or in a stream's last events, through `/anthropic/v1/messages` and
 * `/openai/v1/chat/completions`, gets its answer relayed unchanged and the request counted in
 * `/v1/stats`, but none of those figures and no money for them; Deno logs `ledger_count_refused`
 * without the caller's key. A figure just under 10^9 is counted. Each case has its own model name,
 * so its `/v1/stats` row is its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DenoOnEmulator, startDenoOnEmulator } from "../support/deno-service";
import { postJson, uniqueToken } from "../support/emulator-client";

let stack: DenoOnEmulator;
/** Everything the Deno process wrote (the service's own `output()` keeps only its tail). */
let logged = "";

beforeAll(async () => {
  stack = await startDenoOnEmulator({ SECURITY_ALLOW_ANONYMOUS: "true", LEDGER_FLUSH_MS: "0" });
  const keep = (chunk: unknown) => void (logged += String(chunk));
  stack.deno.process.stdout?.on("data", keep);
  stack.deno.process.stderr?.on("data", keep);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

const TOKEN_KEYS = ["input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens"] as const;

const stats = async (): Promise<any> => {
  const response = await fetch(`${stack.deno.url}/v1/stats?window=24h`);
  expect(response.status).toBe(200);
  return response.json();
};

/** The model's llm row once its one request is written. */
async function rowOfOne(model: string): Promise<Record<string, number>> {
  for (let tries = 0; tries < 100; tries++) {
    const row = (await stats()).by_model.llm[model];
    if (row?.requests === 1) return row;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no stats row of one request for ${model}`);
}

/** The `ledger_count_refused` lines Deno wrote after `from` (waits up to 5 s for the pipe to bring one). */
async function refusals(from: number): Promise<string[]> {
  const lines = () =>
    logged
      .slice(from)
      .split("\n")
      .filter((line) => line.includes("ledger_count_refused"));
  for (let tries = 0; tries < 50 && lines().length === 0; tries++)
    await new Promise((resolve) => setTimeout(resolve, 100));
  expect(lines().length, logged.slice(from)).toBeGreaterThan(0);
  return lines();
}

type Provider = "anthropic" | "openai";

/** A proxied conversation call, plain or streamed (OpenAI's asks for the usage chunk); the answer's text. */
async function send(provider: Provider, stream: boolean, model: string, marker: string, key: string): Promise<string> {
  const messages = [{ role: "user", content: `hi ${marker}` }];
  const response =
    provider === "anthropic"
      ? await postJson(
          `${stack.deno.url}/anthropic/v1/messages`,
          { model, max_tokens: 8, stream, messages },
          { "x-api-key": key },
        )
      : await postJson(
          `${stack.deno.url}/openai/v1/chat/completions`,
          { model, stream, ...(stream ? { stream_options: { include_usage: true } } : {}), messages },
          { authorization: `Bearer ${key}` },
        );
  const text = await response.text();
  expect(response.status, text.slice(0, 300)).toBe(200);
  return text;
}

const CASES: [string, Provider, boolean][] = [
  ["Anthropic, plain", "anthropic", false],
  ["Anthropic, streamed", "anthropic", true],
  ["OpenAI, plain", "openai", false],
  ["OpenAI, streamed", "openai", true],
];

const modelFor = (provider: Provider, tag: string) =>
  provider === "anthropic" ? `claude-sonnet-4-5-${tag}` : `gpt-4o-${tag}`;

describe("on Deno, a usage figure that is not a count under 10^9 is not counted", () => {
  for (const [label, provider, stream] of CASES) {
    it.each(["1e15", "-5", "12.5", "1000000000"])(`${label}: usage %s`, async (figure) => {
      const tag = uniqueToken("ub");
      const model = modelFor(provider, tag);
      const key = `sk-caller-${uniqueToken()}`;
      const warnedBefore = logged.length;
      const answer = await send(provider, stream, model, `[usage:${figure}] ${tag}`, key);
      // Relayed as the upstream sent it.
      expect(answer).toContain(JSON.stringify(Number(figure)));
      const row = await rowOfOne(model);
      for (const name of TOKEN_KEYS) expect(row[name] ?? 0, name).toBe(0);
      expect(row.cost_usd ?? 0).toBe(0);
      const all = await stats();
      expect(JSON.stringify(all)).not.toContain("1000000000000000");
      // Money stays sane: no request this file makes reports more than 999,999,999 tokens of a
      // kind (some USD 10^4 at most), where one 10^15 counted is some USD 10^10.
      expect(all.totals.llm.cost_usd).toBeLessThan(1_000_000);
      const refused = await refusals(warnedBefore);
      expect(refused.join("\n")).not.toContain(key);
      expect(refused.join("\n")).toContain("output_tokens");
    });
  }

  it("counts a figure just under 10^9", async () => {
    const tag = uniqueToken("ub");
    const model = modelFor("anthropic", tag);
    await send("anthropic", false, model, `[usage:999999999] ${tag}`, `sk-caller-${uniqueToken()}`);
    const row = await rowOfOne(model);
    expect(row.input_tokens).toBe(999_999_999);
    expect(row.output_tokens).toBe(999_999_999);
  });
});
