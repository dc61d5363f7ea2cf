/**
 * The proxy's claim on a heavy screenshot session (docs/proxy.md): 60 screenshots in 80 turns, an
 * agent that marks its system prompt and last 3 messages, billed by the LLM emulator under
 * Anthropic's cache rules. Sent through the proxy (the whole history, the cost strategy deciding)
 * it costs at least 20 % less at the model's prices than the same session sent directly with
 * Hermes's own 20/8/3 eviction, and the replay's cache model, given the requests the emulator
 * received, predicts the emulator's billed usage within 2 %.
 */
import { describe, expect, it } from "vitest";
import { evictContext } from "../../shared/eviction/evict.service";
import { ANTHROPIC_CACHE_MODEL, type Segment } from "../../cli/replay/cache.models";
import { replay } from "../../cli/replay/compare";
import { noEviction } from "../../cli/replay/rivals";
import { modelRules, usageCost } from "../../shared/llm/models.table";
import { encodePng, screenshotPixels, toBase64 } from "../fixtures/images";
import { systemAnd3 } from "./agent.support";
import { call, EMULATOR, uniqueToken } from "./helpers";
import { llmCalls } from "../support/emulator-client";

const MODEL = "claude-sonnet-4-5";
const TURNS = 80;

/** Turn i carries a screenshot unless i % 4 === 3: 60 screenshots in 80 turns. */
const hasShot = (i: number) => i % 4 !== 3;

function conversation(turns: number, shots: readonly string[]): any[] {
  const messages: any[] = [
    {
      role: "user",
      content: [{ type: "text", text: "Book the cheapest flight to Lisbon next Friday and report back." }],
    },
  ];
  for (let i = 0; i < turns; i++) {
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: `Step ${i}: ${"I look at the page and decide what to click next. ".repeat(20)}` },
        { type: "tool_use", id: `toolu_${i}`, name: "browser", input: { action: "click", i } },
      ],
    });
    const parts: any[] = hasShot(i)
      ? [{ type: "image", source: { type: "base64", media_type: "image/png", data: shots[i % shots.length]! } }]
      : [];
    parts.push({
      type: "text",
      text: `Result of step ${i}: ${"the page shows a list of flights with prices and times. ".repeat(50)}`,
    });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: parts }] });
  }
  return messages;
}

const system = (tag: string) => [
  {
    type: "text",
    text: `You are a browser agent (${tag}). ${"Follow the user's instructions carefully and use the browser tool. ".repeat(250)}`,
    cache_control: { type: "ephemeral" },
  },
];

async function sessionCost(tag: string): Promise<{ usd: number; calls: any[] }> {
  const calls: any[] = await llmCalls(EMULATOR, tag);
  const prices = modelRules("anthropic", MODEL).prices;
  let usd = 0;
  for (const c of calls) usd += usageCost(prices, c.usage).costUsd;
  return { usd, calls };
}

/**
 * The replay's prediction for the requests the emulator received (their blocks, tokens and
 * breakpoints as sent, nothing evicted again), against what the emulator billed: the share of the
 * billed input tokens the two disagree on, summed over writes, reads and uncached input.
 */
function replayError(calls: readonly any[]): number {
  const requests: Segment[][] = calls.map((c) => {
    const marks = new Set<number>(c.prompt.breakpoints);
    return c.prompt.tokens.map((tokens: number, i: number) => ({
      id: c.prompt.ids[i],
      tokens,
      message: i,
      ...(marks.has(i) ? { breakpoint: true } : {}),
    }));
  });
  const model = {
    ...ANTHROPIC_CACHE_MODEL,
    minCacheableTokens: modelRules("anthropic", MODEL).minCacheableTokens,
    breakpoints: "session" as const,
  };
  const predicted = replay(requests, noEviction, { model, times: calls.map((c) => c.at) }).perRequest;
  let billed = 0;
  let error = 0;
  calls.forEach((c, i) => {
    const p = predicted[i]!;
    const u = c.usage;
    billed += u.input + u.cacheWrite5m + u.cacheWrite1h + u.cacheRead;
    error +=
      Math.abs(p.cacheWriteTokens - (u.cacheWrite5m + u.cacheWrite1h)) +
      Math.abs(p.cacheReadTokens - u.cacheRead) +
      Math.abs(p.uncachedTokens - u.input);
  });
  return error / billed;
}

describe("a heavy screenshot session through the proxy", () => {
  it("costs at least 20 % less than sent directly under Hermes's 20/8/3", async () => {
    const shots: string[] = [];
    for (let s = 0; s < 4; s++)
      shots.push(toBase64(await encodePng(screenshotPixels(1200, 900, 10 + s), 1200, 900, 3)));
    const tag = uniqueToken();
    const directTag = `direct-${tag}`;
    const proxyTag = `proxy-${tag}`;
    for (let turn = 1; turn <= TURNS; turn++) {
      const history = conversation(turn, shots);
      // Direct: the agent evicts with Hermes's policy itself and sends to the provider.
      const hermes = evictContext({ format: "anthropic", messages: history, strategy: "hermes" }).messages;
      const direct = await fetch(`${EMULATOR}/llm/anthropic/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": `key-${directTag}` },
        body: JSON.stringify({
          model: MODEL,
          max_tokens: 256,
          system: system(directTag),
          messages: systemAnd3(hermes as any[]),
        }),
      });
      expect(direct.status).toBe(200);
      // Through the proxy: the whole history, the same breakpoints; the proxy decides.
      const proxied = await call("/anthropic/v1/messages", {
        method: "POST",
        raw: JSON.stringify({ model: MODEL, max_tokens: 256, system: system(proxyTag), messages: systemAnd3(history) }),
        headers: { "content-type": "application/json", "x-api-key": `key-${proxyTag}`, "x-session-id": proxyTag },
      });
      expect(proxied.status).toBe(200);
      await proxied.arrayBuffer();
    }
    const direct = await sessionCost(directTag);
    const proxy = await sessionCost(proxyTag);
    expect(direct.calls).toHaveLength(TURNS);
    expect(proxy.calls).toHaveLength(TURNS);
    console.log(
      `heavy session: direct (hermes 20/8/3) $${direct.usd.toFixed(4)}, proxy $${proxy.usd.toFixed(4)}, ${(100 * (1 - proxy.usd / direct.usd)).toFixed(1)} % less`,
    );
    expect(proxy.usd).toBeLessThanOrEqual(0.8 * direct.usd);
    const error = replayError(proxy.calls);
    console.log(
      `replay vs emulator on the proxied requests: ${(100 * error).toFixed(2)} % of billed input tokens apart`,
    );
    expect(error).toBeLessThanOrEqual(0.02);
  }, 300_000);
});
