/**
 * A streamed chat completion that asks for no usage (the OpenAI SDK's default) is counted at its
 * bill anyway (docs/proxy.md, "What is counted"): the proxy sends it asking and relays the stream
 * as the caller asked for it. Through the official OpenAI SDK against the Deno entry.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DenoOnEmulator, type DenoService, startDenoOnEmulator } from "../support/deno-service";

let emulator: DenoOnEmulator["emulator"];
let deno: DenoService;
let stack: DenoOnEmulator;

beforeAll(async () => {
  stack = await startDenoOnEmulator({ SECURITY_ALLOW_ANONYMOUS: "true", LEDGER_FLUSH_MS: "0" });
  ({ emulator, deno } = stack);
}, 90_000);

afterAll(() => stack?.stop());

describe("a chat stream without stream_options.include_usage", () => {
  it("reaches the SDK without a usage chunk, and the ledger counts its bill", async () => {
    const tag = `su${Date.now().toString(36)}`;
    const model = `gpt-4o-${tag}`;
    const openai = new OpenAI({ baseURL: `${deno.url}/openai/v1`, apiKey: `sk-${tag}`, maxRetries: 0 });
    const stream = await openai.chat.completions.create({
      model,
      stream: true,
      messages: [{ role: "user", content: `stream ${tag} ${"words of a question ".repeat(40)}` }],
    });
    let text = "";
    for await (const chunk of stream) {
      expect("usage" in chunk).toBe(false);
      expect(chunk.choices).toHaveLength(1);
      text += chunk.choices[0]!.delta.content ?? "";
    }
    expect(text).toMatch(/^Emulated answer/);
    const { calls } = (await (await fetch(`${emulator.url}/llm/__calls?contains=${tag}`)).json()) as {
      calls: { usage: { input: number; cacheRead: number; output: number } }[];
    };
    expect(calls).toHaveLength(1);
    const billed = calls[0]!.usage;
    let row: Record<string, number> | undefined;
    for (let tries = 0; tries < 100 && row?.output_tokens === undefined; tries++) {
      const stats = (await (await fetch(`${deno.url}/v1/stats?window=24h`)).json()) as any;
      row = stats.by_model.llm[model];
      if (row?.output_tokens === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect([row?.input_tokens, row?.output_tokens]).toEqual([billed.input, billed.output]);
  }, 60_000);
});
