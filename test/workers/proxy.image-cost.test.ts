/**
 * Learned image cost (docs/eviction.md): a model the table does not know, behind the OpenAI route,
 * counts images its own way (the emulator's `dense-vision` models: width × height / 300, uncapped,
 * where the pixel estimate says / 750, at most 1,600). The proxy learns its tokens per image from
 * the bills of one session, `/v1/config` shows it, and the eviction's estimate weighs images by it.
 */
import { describe, expect, it, vi } from "vitest";
import { pngHeaderOnly } from "../fixtures/images";
import { call, callJson, EMULATOR, uniqueToken } from "./helpers";

const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const SHOT = `data:image/png;base64,${toBase64(pngHeaderOnly(1_000, 600))}`;
/** What the emulator bills the screenshot on a dense-vision model, and what the pixel estimate says. */
const DENSE_TOKENS = Math.ceil((1_000 * 600) / 300);
const ESTIMATED_TOKENS = Math.ceil((1_000 * 600) / 750);

const turn = (i: number, tag: string) => ({
  role: "user",
  content: [
    { type: "text", text: `Step ${i} (${tag}): ${"the page after the click. ".repeat(30)}` },
    { type: "image_url", image_url: { url: SHOT } },
  ],
});

describe("learned image cost", () => {
  it("learns a gateway model's tokens per image from one session's bills, shows it in /v1/config, and eviction weighs images by it", async () => {
    const tag = uniqueToken();
    const model = `acme/dense-vision-${tag}`;
    const messages: any[] = [];
    for (let i = 0; i < 4; i++) {
      messages.push(turn(i, tag));
      const response = await call("/openai/v1/chat/completions", {
        body: { model, messages },
        headers: { authorization: `Bearer sk-${tag}`, "x-session-id": tag },
      });
      expect(response.status, await response.clone().text()).toBe(200);
      const answer = (await response.json()) as { choices: { message: { content: string } }[] };
      messages.push({ role: "assistant", content: answer.choices[0]!.message.content });
    }
    const calls = ((await (await fetch(`${EMULATOR}/llm/__calls?contains=${tag}`)).json()) as { calls: any[] }).calls;
    expect(calls).toHaveLength(4);

    let learned: any;
    await vi.waitFor(async () => {
      learned = (await callJson("/v1/config")).body.learned_image_tokens[model];
      expect(learned?.samples).toBe(3);
    });
    expect(Math.abs(learned.tokens_per_image - DENSE_TOKENS) / DENSE_TOKENS).toBeLessThan(0.02);

    // The estimate of one request carrying one screenshot: the learned model's against a model never seen.
    const estimate = async (name: string) => {
      const res = await callJson("/v1/context/evict", {
        body: { format: "openai", strategy: "cost", model: name, messages: [turn(0, tag)] },
      });
      expect(res.status).toBe(200);
      return res.body.stats.estimate.cache_write_tokens as number;
    };
    const unseen = await estimate(`acme/dense-vision-unseen-${tag}`);
    const seen = await estimate(model);
    expect(seen - unseen).toBe(learned.tokens_per_image - ESTIMATED_TOKENS);
  });
});
