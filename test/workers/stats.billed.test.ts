/**
 * The ledger's billed side is the bill (docs/stats.md "What is counted"): for each kind of proxied
 * call (Anthropic Messages, Chat Completions and Responses, each plain and streamed), the token
 * kinds the ledger holds equal the usage the emulated provider billed, cache writes and reads
 * included, through the real Workers entry and the LedgerDO.
 */
import { describe, expect, it } from "vitest";
import { call, EMULATOR, ledgerCountsAfter, uniqueToken } from "./helpers";

interface Billed {
  input: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
  output: number;
}

/** What the emulator billed for the calls whose last message contains `marker`. */
async function billed(marker: string): Promise<Billed> {
  const res = await fetch(`${EMULATOR}/llm/__calls?contains=${encodeURIComponent(marker)}`);
  const { calls } = (await res.json()) as { calls: { usage: Billed | null }[] };
  const sum: Billed = { input: 0, cacheWrite5m: 0, cacheWrite1h: 0, cacheRead: 0, output: 0 };
  for (const c of calls) for (const key of Object.keys(sum) as (keyof Billed)[]) sum[key] += c.usage?.[key] ?? 0;
  return sum;
}

/** A text long enough to pass every model's minimum cacheable length. */
const LONG = "The quick brown fox jumps over the lazy dog near the river bank. ".repeat(400);

type Kind = {
  name: string;
  path: string;
  headers: Record<string, string>;
  model: (tag: string) => string;
  body: (model: string, text: string, stream: boolean) => Record<string, unknown>;
};

const ANTHROPIC: Kind = {
  name: "anthropic",
  path: "/anthropic/v1/messages",
  headers: { "x-api-key": "sk-ant-billed" },
  model: (tag) => `claude-sonnet-4-5-${tag}`,
  body: (model, text, stream) => ({
    model,
    max_tokens: 64,
    stream,
    system: [{ type: "text", text: LONG, cache_control: { type: "ephemeral", ttl: "1h" } }],
    messages: [{ role: "user", content: [{ type: "text", text, cache_control: { type: "ephemeral" } }] }],
  }),
};
const CHAT: Kind = {
  name: "chat",
  path: "/openai/v1/chat/completions",
  headers: { authorization: "Bearer sk-openai-billed" },
  model: (tag) => `gpt-4o-${tag}`,
  body: (model, text, stream) => ({
    model,
    stream,
    messages: [
      { role: "system", content: LONG },
      { role: "user", content: text },
    ],
  }),
};
const RESPONSES: Kind = {
  name: "responses",
  path: "/openai/v1/responses",
  headers: { authorization: "Bearer sk-openai-billed" },
  model: (tag) => `gpt-4o-${tag}`,
  body: (model, text, stream) => ({
    model,
    stream,
    instructions: LONG,
    input: [{ role: "user", content: text }],
  }),
};

const ledgerOf = (model: string, requests: number) => ledgerCountsAfter(model, requests);

describe("the ledger's tokens are the provider's bill", () => {
  for (const kind of [ANTHROPIC, CHAT, RESPONSES])
    for (const stream of [false, true])
      it(`${kind.name} ${stream ? "streamed" : "plain"}: each token kind as billed, over a cold and a warm call`, async () => {
        const tag = uniqueToken();
        const model = kind.model(tag);
        // Twice: the first call writes the cache, the second reads it. A streamed chat asks for no
        // usage, as the SDKs' default sends it.
        for (const turn of [1, 2]) {
          const response = await call(kind.path, {
            body: kind.body(model, `${tag} question ${LONG}`, stream),
            headers: kind.headers,
          });
          expect(response.status, `turn ${turn}`).toBe(200);
          await response.text();
        }
        if (kind === CHAT && stream) {
          // Sent asking for usage, relayed as the caller asked for it: no usage chunk, no nulls.
          const response = await call(kind.path, {
            body: kind.body(model, `${tag} again`, true),
            headers: kind.headers,
          });
          const text = await response.text();
          expect(text).not.toContain('"usage"');
          expect(text).toContain('"finish_reason":"stop"');
          expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
        }
        const bill = await billed(tag);
        expect(bill.cacheRead).toBeGreaterThan(0);
        const counts = await ledgerOf(model, kind === CHAT && stream ? 3 : 2);
        expect({
          input: counts.input_tokens ?? 0,
          cacheWrite: counts.cache_write_tokens ?? 0,
          cacheRead: counts.cache_read_tokens ?? 0,
          output: counts.output_tokens ?? 0,
        }).toEqual({
          input: bill.input,
          cacheWrite: bill.cacheWrite5m + bill.cacheWrite1h,
          cacheRead: bill.cacheRead,
          output: bill.output,
        });
      });
});

describe("a stream the caller stops", () => {
  it("reaches the ledger's store without waiting for another request", async () => {
    const tag = uniqueToken();
    const model = ANTHROPIC.model(tag);
    const response = await call(ANTHROPIC.path, {
      body: ANTHROPIC.body(model, `${tag} [slowstream:200] ${LONG}`, true),
      headers: ANTHROPIC.headers,
    });
    const reader = response.body!.getReader();
    let seen = "";
    while (!seen.includes("message_start")) seen += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const bill = await billed(tag);
    expect(bill.cacheWrite1h).toBeGreaterThan(0);
    const counts = await ledgerOf(model, 1);
    expect([counts.input_tokens ?? 0, counts.cache_write_tokens ?? 0, counts.cache_read_tokens ?? 0]).toEqual([
      bill.input,
      bill.cacheWrite5m + bill.cacheWrite1h,
      bill.cacheRead,
    ]);
  });
});
