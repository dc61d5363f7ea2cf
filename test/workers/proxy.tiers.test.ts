/**
 * The cliff through the proxy (docs/eviction.md, "Prices as billed"): a heavy screenshot session on
 * Haiku 5.5 (a prompt over 100,000 tokens billed whole at 5x), billed by the LLM emulator under its
 * own tokenizer and Anthropic's cache rules, sent four ways: as the agent sends it, with keep-3, with
 * Hermes 20/8/3, and through the proxy (the cost strategy deciding). The proxy sends no more
 * requests over the line than keep-3 + 2 and costs at most 0.7x the cheapest of the other three.
 */
import { describe, expect, it } from "vitest";
import { evictContext } from "../../shared/eviction/evict.service";
import { encodePng, screenshotPixels } from "../fixtures/images";
import { sendDirect, systemAnd3 } from "./agent.support";
import { call, EMULATOR, uniqueToken } from "./helpers";

const MODEL = "claude-haiku-5-5";
const TURNS = 80;
const LINE = 100_000;
/** Haiku 5.5's published prices (USD per MTok), up to the line and over it. */
const BASE = { input: 0.1, cacheWrite5m: 0.125, cacheWrite1h: 0.2, cacheRead: 0.01, output: 0.5 };
const OVER = { input: 0.5, cacheWrite5m: 0.625, cacheWrite1h: 1, cacheRead: 0.05, output: 2.5 };
type Usage = typeof BASE;
const promptOf = (u: Usage) => u.input + u.cacheWrite5m + u.cacheWrite1h + u.cacheRead;
const billed = (u: Usage) => {
  const p = promptOf(u) > LINE ? OVER : BASE;
  return (Object.keys(p) as (keyof Usage)[]).reduce((usd, kind) => usd + (u[kind] * p[kind]) / 1e6, 0);
};

const base64 = (bytes: Uint8Array) => {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
};

/** Turn i: the agent's step, then the tool's result with a screenshot unless i % 4 === 3 (60 in 80). */
function history(turns: number, shots: readonly string[]): any[] {
  const out: any[] = [{ role: "user", content: "Find the cheapest train to Porto tomorrow and book it." }];
  for (let i = 0; i < turns; i++) {
    out.push({
      role: "assistant",
      content: [
        { type: "text", text: `Step ${i}. ${"Reading the page before the next click. ".repeat(25)}` },
        { type: "tool_use", id: `toolu_${i}`, name: "browser", input: { step: i } },
      ],
    });
    const result: any[] = [
      { type: "text", text: `Page ${i}: ${"a timetable row with a price and a time. ".repeat(110)}` },
    ];
    if (i % 4 !== 3)
      result.unshift({
        type: "image",
        source: { type: "base64", media_type: "image/png", data: shots[i % shots.length]! },
      });
    out.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: result }] });
  }
  return out;
}

const system = (tag: string) => [
  {
    type: "text",
    text: `You drive a browser (${tag}). ${"Use the browser tool step by step. ".repeat(400)}`,
    cache_control: { type: "ephemeral" },
  },
];

/** What the emulator billed one way of sending: dollars at the tier, and requests over the line. */
async function bill(tag: string): Promise<{ usd: number; over: number; calls: number }> {
  const calls = ((await (await fetch(`${EMULATOR}/llm/__calls?contains=${tag}`)).json()) as { calls: any[] }).calls;
  const usages = calls.map((c) => c.usage as Usage);
  return {
    usd: usages.reduce((n, u) => n + billed(u), 0),
    over: usages.filter((u) => promptOf(u) > LINE).length,
    calls: calls.length,
  };
}

describe("the cost strategy on Haiku 5.5, through the proxy, billed by the emulator", () => {
  it("stays under the 100K line as keep-3 does (+2) and costs at most 0.7x the cheapest of as sent, keep-3 and Hermes 20/8/3", async () => {
    const shots: string[] = [];
    for (let s = 0; s < 4; s++) shots.push(base64(await encodePng(screenshotPixels(1200, 900, 20 + s), 1200, 900, 3)));
    const tag = uniqueToken();
    const ways = {
      sent: (m: any[]) => m,
      keep3: (m: any[]) =>
        evictContext({
          format: "anthropic",
          messages: m,
          strategy: "hermes",
          limits: { max_blocks: 3, batch: 1, floor: 3 },
        }).messages,
      hermes: (m: any[]) => evictContext({ format: "anthropic", messages: m, strategy: "hermes" }).messages,
    };
    for (let turn = 1; turn <= TURNS; turn++) {
      const messages = history(turn, shots);
      for (const [way, evict] of Object.entries(ways))
        await sendDirect(way, tag, {
          model: MODEL,
          max_tokens: 64,
          system: system(`${way}-${tag}`),
          messages: systemAnd3(evict(messages) as any[]),
        });
      const proxied = await call("/anthropic/v1/messages", {
        raw: JSON.stringify({
          model: MODEL,
          max_tokens: 64,
          system: system(`proxy-${tag}`),
          messages: systemAnd3(messages),
        }),
        headers: {
          "content-type": "application/json",
          "x-api-key": `key-proxy-${tag}`,
          "x-session-id": `proxy-${tag}`,
        },
      });
      expect(proxied.status).toBe(200);
      await proxied.arrayBuffer();
    }
    const sent = await bill(`sent-${tag}`);
    const keep3 = await bill(`keep3-${tag}`);
    const hermes = await bill(`hermes-${tag}`);
    const proxy = await bill(`proxy-${tag}`);
    for (const way of [sent, keep3, hermes, proxy]) expect(way.calls).toBe(TURNS);
    const cheapest = Math.min(sent.usd, keep3.usd, hermes.usd);
    console.log(
      `Haiku 5.5 through the emulator: as sent $${sent.usd.toFixed(4)} / ${sent.over} over, keep-3 $${keep3.usd.toFixed(4)} / ${keep3.over}, hermes 20/8/3 $${hermes.usd.toFixed(4)} / ${hermes.over}, proxy $${proxy.usd.toFixed(4)} / ${proxy.over} (${(proxy.usd / cheapest).toFixed(2)}x the cheapest)`,
    );
    expect(keep3.over).toBeGreaterThan(0); // the text alone passes the line near the end
    expect(proxy.over).toBeLessThanOrEqual(keep3.over + 2);
    expect(proxy.usd).toBeLessThanOrEqual(0.7 * cheapest);
  }, 600_000);
});
