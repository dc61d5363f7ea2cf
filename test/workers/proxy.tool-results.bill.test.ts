/**
 * Old text tool results retired through the proxy, billed by the LLM emulator under Anthropic's
 * cache rules (docs/eviction.md, "Old tool results: when retiring text pays"): a 60-turn research
 * session whose tool results are 12,000–20,000 characters of page text, sent five ways: as the
 * agent writes it, under Anthropic's context editing at its defaults (over 100,000 input tokens,
 * every tool result but the newest 3 cleared, on every request once triggered), the simplest
 * client-side batch (every 15 requests, all but the newest 3 cleared), and through the proxy with
 * `X-Edge-Retire-Tool-Results: on` and without it. Targets: the proxy at least 45 % cheaper than
 * the agent's own requests, at least 40 % cheaper than context editing, and no dearer than the
 * batch; without the option every request reaches the provider as the agent sent it.
 */
import { describe, expect, it } from "vitest";
import { textTokens } from "../../shared/llm/estimate";
import { anthropicTextSession, SYSTEM_PROMPT } from "../../cli/replay/text-sessions";
import { sendDirect, systemAnd3 } from "./agent.support";
import { call, EMULATOR, sha256, uniqueToken } from "./helpers";

const MODEL = "claude-sonnet-4-6";
/** Claude Sonnet 4.6's prices, USD per MTok. */
const PRICES = { input: 3, cacheWrite5m: 3.75, cacheWrite1h: 6, cacheRead: 0.3, output: 15 };
type Usage = typeof PRICES;
const billed = (u: Usage) =>
  (Object.keys(PRICES) as (keyof Usage)[]).reduce((usd, kind) => usd + (u[kind] * PRICES[kind]) / 1e6, 0);

/** What context editing leaves of a cleared tool result (a short fixed text, as the provider's). */
const CLEARED = "[cleared to save context]";
/** Context editing's defaults: trigger over 100,000 input tokens, keep the newest 3 tool uses. */
const TRIGGER = 100_000;
const KEEP = 3;
/** The simplest client-side batch: every 15 requests. */
const EVERY = 15;

/** The session with its oldest `cleared` tool results replaced by CLEARED. */
function clearOldest(messages: any[], cleared: number): any[] {
  let seen = 0;
  return messages.map((m) => {
    if (m.role !== "user" || !Array.isArray(m.content)) return m;
    return {
      ...m,
      content: m.content.map((b: any) =>
        b.type === "tool_result" && seen++ < cleared ? { ...b, content: CLEARED } : b,
      ),
    };
  });
}

const system = (tag: string) => [
  { type: "text", text: `(${tag}) ${SYSTEM_PROMPT}`, cache_control: { type: "ephemeral" } },
];

async function bill(tag: string): Promise<{ usd: number; writes: number; reads: number; calls: any[] }> {
  const calls = ((await (await fetch(`${EMULATOR}/llm/__calls?contains=${tag}`)).json()) as { calls: any[] }).calls;
  const usages = calls.map((c) => c.usage as Usage);
  return {
    usd: usages.reduce((n, u) => n + billed(u), 0),
    writes: usages.reduce((n, u) => n + u.cacheWrite5m + u.cacheWrite1h, 0),
    reads: usages.reduce((n, u) => n + u.cacheRead, 0),
    calls,
  };
}

/** The same session sent five ways, turn by turn; what the emulator billed each way. */
async function sendFiveWays(turns: number) {
  const tag = uniqueToken();
  let batchFront = 0;
  let editing = false;
  const ways: Record<string, (m: any[], turn: number) => any[]> = {
    sent: (m) => m,
    editing: (m, turn) => {
      editing ||= textTokens(m) + textTokens(SYSTEM_PROMPT) > TRIGGER;
      return editing ? clearOldest(m, turn - KEEP) : m;
    },
    batch: (m, turn) => {
      if (turn % EVERY === 0) batchFront = turn - KEEP;
      return clearOldest(m, batchFront);
    },
  };
  const offHashes: string[] = [];
  const retiredOn: number[] = [];
  for (let turn = 1; turn <= turns; turn++) {
    const messages = anthropicTextSession(turn);
    for (const [way, edit] of Object.entries(ways))
      await sendDirect(way, tag, {
        model: MODEL,
        max_tokens: 64,
        system: system(`${way}-${tag}`),
        messages: systemAnd3(edit(messages, turn)),
      });
    for (const way of ["on", "off"]) {
      const raw = JSON.stringify({
        model: MODEL,
        max_tokens: 64,
        system: system(`proxy${way}-${tag}`),
        messages: systemAnd3(messages),
      });
      if (way === "off") offHashes.push(await sha256(raw));
      const proxied = await call("/anthropic/v1/messages", {
        raw,
        headers: {
          "content-type": "application/json",
          "x-api-key": `key-proxy${way}-${tag}`,
          "x-session-id": `proxy${way}-${tag}`,
          ...(way === "on" ? { "x-edge-retire-tool-results": "on" } : {}),
        },
      });
      expect(proxied.status).toBe(200);
      if (way === "off") expect(proxied.headers.get("x-edge-retired-tool-results")).toBe("0");
      else retiredOn.push(Number(proxied.headers.get("x-edge-retired-tool-results")));
      await proxied.arrayBuffer();
    }
  }
  const sent = await bill(`sent-${tag}`);
  const editingBill = await bill(`editing-${tag}`);
  const batch = await bill(`batch-${tag}`);
  const on = await bill(`proxyon-${tag}`);
  const off = await bill(`proxyoff-${tag}`);
  for (const way of [sent, editingBill, batch, on, off]) expect(way.calls.length).toBe(turns);
  const row = (name: string, b: Awaited<ReturnType<typeof bill>>) =>
    `| ${name} | $${b.usd.toFixed(2)} | ${(b.usd / sent.usd - 1) * 100 > 0 ? "+" : ""}${((b.usd / sent.usd - 1) * 100).toFixed(0)} % | ${b.writes.toLocaleString("en-US")} | ${b.reads.toLocaleString("en-US")} |`;
  console.log(
    [
      `| the same ${turns} requests | billed | vs as sent | cache writes | cache reads |`,
      "|---|---:|---:|---:|---:|",
      row("as the agent writes them", sent),
      row("context editing at its defaults", editingBill),
      row("the simplest client-side batch (every 15)", batch),
      row("through the proxy, retire_tool_results off", off),
      row("through the proxy, retire_tool_results on", on),
    ].join("\n"),
  );
  // Off: every request reached the provider byte for byte as the agent sent it.
  expect(off.calls.map((c) => c.body_sha256)).toEqual(offHashes);
  return { sent, editing: editingBill, batch, on, retiredOn };
}

describe("old text tool results retired through the proxy, billed by the emulator", () => {
  it("60 turns: at least 45 % less than as sent, 40 % less than context editing, no more than the batch; off, every request goes as sent", async () => {
    const { sent, editing, batch, on } = await sendFiveWays(60);
    expect(on.usd).toBeLessThanOrEqual(0.55 * sent.usd);
    expect(on.usd).toBeLessThanOrEqual(0.6 * editing.usd);
    expect(on.usd).toBeLessThanOrEqual(batch.usd);
  }, 900_000);

  it("10 turns, where retiring would not pay back its rewrite: nothing is retired and it costs what the agent's own requests cost", async () => {
    const { sent, on, retiredOn } = await sendFiveWays(10);
    expect(retiredOn).toEqual(Array(10).fill(0));
    expect(on.usd).toBeLessThanOrEqual(1.01 * sent.usd);
  }, 900_000);
});
