/**
 * The provider proxy through the clients users run: the official `@anthropic-ai/sdk` and `openai`
 * packages, pointed at the service by base URL only, against the LLM emulator behind it. Run on
 * `wrangler dev` and on Deno by test/node/proxy.clients.test.ts.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { llmCalls } from "./emulator-client";

export interface ProxyTarget {
  /** The service, e.g. http://127.0.0.1:8790 */
  url: string;
  emulatorUrl: string;
}

const MODEL = "claude-sonnet-4-5";
const unique = () => `pc${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/** A 2x2 PNG, base64: small enough to pass, a real image for the provider. */
const TINY_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==";

const emulatorCalls = (target: ProxyTarget, tag: string): Promise<any[]> => llmCalls(target.emulatorUrl, tag);

export function llmClientSuite(runtime: string, target: () => ProxyTarget) {
  const anthropic = (options: { maxRetries?: number } = {}) =>
    new Anthropic({
      baseURL: `${target().url}/anthropic`,
      apiKey: "sk-ant-suite-key",
      maxRetries: options.maxRetries ?? 2,
    });
  const openai = (options: { maxRetries?: number } = {}) =>
    new OpenAI({
      baseURL: `${target().url}/openai/v1`,
      apiKey: "sk-openai-suite-key",
      maxRetries: options.maxRetries ?? 2,
    });

  describe(`@anthropic-ai/sdk through the proxy (${runtime})`, () => {
    it("plain, streamed and counted calls", async () => {
      const tag = unique();
      const message = await anthropic().messages.create({
        model: MODEL,
        max_tokens: 64,
        system: `suite ${tag}`,
        messages: [{ role: "user", content: `hello ${tag}` }],
      });
      expect(message.content[0]).toMatchObject({ type: "text" });
      expect(message.usage.input_tokens).toBeGreaterThan(0);
      expect(message._request_id).toMatch(/^req_emu/);

      const stream = anthropic().messages.stream({
        model: MODEL,
        max_tokens: 64,
        system: `suite ${tag}`,
        messages: [{ role: "user", content: `stream ${tag}` }],
      });
      const texts: string[] = [];
      stream.on("text", (text) => texts.push(text));
      const final = await stream.finalMessage();
      expect(texts.join("")).toBe((final.content[0] as { text: string }).text);
      expect(texts.length).toBeGreaterThan(1);
      expect(final.usage.output_tokens).toBeGreaterThan(0);

      const count = await anthropic().messages.countTokens({
        model: MODEL,
        system: `suite ${tag}`,
        messages: [{ role: "user", content: `count ${tag}` }],
      });
      expect(count.input_tokens).toBeGreaterThan(0);
      expect(await emulatorCalls(target(), tag)).toHaveLength(3);
    });

    it("tool use and images", async () => {
      const tag = unique();
      const tools = [
        {
          name: "screenshot",
          description: "Takes a screenshot",
          input_schema: { type: "object" as const, properties: {} },
        },
      ];
      const call = await anthropic().messages.create({
        model: MODEL,
        max_tokens: 64,
        system: `suite ${tag}`,
        tools,
        messages: [{ role: "user", content: `[use_tool] ${tag}` }],
      });
      expect(call.stop_reason).toBe("tool_use");
      const use = call.content[0] as { type: string; id: string; name: string };
      expect(use).toMatchObject({ type: "tool_use", name: "screenshot" });
      const answer = await anthropic().messages.create({
        model: MODEL,
        max_tokens: 64,
        system: `suite ${tag}`,
        tools,
        messages: [
          {
            role: "user",
            content: [
              { type: "image", source: { type: "base64", media_type: "image/png", data: TINY_PNG } },
              { type: "text", text: `[use_tool] ${tag}` },
            ],
          },
          { role: "assistant", content: call.content },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: use.id,
                content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: TINY_PNG } }],
              },
              { type: "text", text: `what do you see ${tag}` },
            ],
          },
        ],
      });
      expect(answer.content[0]).toMatchObject({ type: "text" });
      const calls = await emulatorCalls(target(), tag);
      expect(calls.at(-1).images).toBe(2);
    });

    it("errors reach the SDK as its own error classes, and its retries work", async () => {
      const tag = unique();
      const bad = await anthropic({ maxRetries: 0 })
        .messages.create({ model: MODEL, max_tokens: 8, messages: [{ role: "user", content: `[fail:400] ${tag}` }] })
        .catch((e) => e);
      expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
      const limited = await anthropic({ maxRetries: 0 })
        .messages.create({ model: MODEL, max_tokens: 8, messages: [{ role: "user", content: `[fail:429] ${tag}` }] })
        .catch((e) => e);
      expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
      expect(limited.headers.get("retry-after")).toBe("1");
      const overloaded = await anthropic({ maxRetries: 0 })
        .messages.create({ model: MODEL, max_tokens: 8, messages: [{ role: "user", content: `[fail:529] ${tag}` }] })
        .catch((e) => e);
      expect(overloaded.status).toBe(529);
      expect(overloaded.error?.error?.type).toBe("overloaded_error");

      const retryTag = unique();
      const retried = await anthropic().messages.create({
        model: MODEL,
        max_tokens: 8,
        messages: [{ role: "user", content: `[fail-once:529:${retryTag}] ${retryTag}` }],
      });
      expect(retried.type).toBe("message");
      expect(await emulatorCalls(target(), retryTag)).toHaveLength(2);
    });
  });

  describe(`openai through the proxy (${runtime})`, () => {
    it("chat completions: plain, streamed with usage, tool calls, images", async () => {
      const tag = unique();
      const plain = await openai().chat.completions.create({
        model: "gpt-4o",
        messages: [
          { role: "system", content: `suite ${tag}` },
          { role: "user", content: `hello ${tag}` },
        ],
      });
      expect(plain.choices[0]!.message.content).toContain("Emulated answer");
      expect(plain.usage?.prompt_tokens).toBeGreaterThan(0);
      // OpenAI's own request id (X-Request-Id) reaches the SDK, not the service's.
      expect(plain._request_id).toMatch(/^req_emu/);

      const chunks: string[] = [];
      let usage: unknown = null;
      const stream = await openai().chat.completions.create({
        model: "gpt-4o",
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: `stream ${tag}` }],
      });
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta?.content) chunks.push(chunk.choices[0].delta.content);
        if (chunk.usage) usage = chunk.usage;
      }
      expect(chunks.join("")).toContain("Emulated answer");
      expect(usage).toMatchObject({ prompt_tokens: expect.any(Number) });

      const tools = [
        {
          type: "function" as const,
          function: {
            name: "screenshot",
            description: "Takes a screenshot",
            parameters: { type: "object", properties: {} },
          },
        },
      ];
      const call = await openai().chat.completions.create({
        model: "gpt-4o",
        tools,
        messages: [{ role: "user", content: `[use_tool] ${tag}` }],
      });
      const toolCall = call.choices[0]!.message.tool_calls![0]!;
      expect(call.choices[0]!.finish_reason).toBe("tool_calls");
      const image = `data:image/png;base64,${TINY_PNG}`;
      const answer = await openai().chat.completions.create({
        model: "gpt-4o",
        tools,
        messages: [
          {
            role: "user",
            content: [
              { type: "image_url", image_url: { url: image } },
              { type: "text", text: `[use_tool] ${tag}` },
            ],
          },
          call.choices[0]!.message,
          { role: "tool", tool_call_id: toolCall.id, content: [{ type: "text", text: "shot taken" }] },
          { role: "user", content: `what now ${tag}` },
        ],
      });
      expect(answer.choices[0]!.message.content).toContain("Emulated answer");
      expect((await emulatorCalls(target(), tag)).at(-1).images).toBe(1);
    });

    it("responses: plain and streamed", async () => {
      const tag = unique();
      const plain = await openai().responses.create({
        model: "gpt-4o",
        instructions: `suite ${tag}`,
        input: `hello ${tag}`,
      });
      expect(plain.output_text).toContain("Emulated answer");
      const stream = openai().responses.stream({
        model: "gpt-4o",
        instructions: `suite ${tag}`,
        input: `stream ${tag}`,
      });
      const deltas: string[] = [];
      stream.on("response.output_text.delta", (event) => deltas.push(event.delta));
      const final = await stream.finalResponse();
      expect(deltas.join("")).toBe(final.output_text);
      expect(final.usage?.input_tokens).toBeGreaterThan(0);
    });

    it("a file upload of 66 MiB (past what a conversation may have) streams through to the provider", async () => {
      const size = 66 * 1024 * 1024;
      const file = await openai().files.create({
        file: await OpenAI.toFile(new Uint8Array(size).fill(97), `${unique()}.jsonl`),
        purpose: "batch",
      });
      expect(file.object).toBe("file");
      expect(file.bytes).toBeGreaterThan(size); // the multipart body: the file and its part headers
    }, 60_000);

    it("errors and retries", async () => {
      const tag = unique();
      const limited = await openai({ maxRetries: 0 })
        .chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: `[fail:429] ${tag}` }] })
        .catch((e) => e);
      expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
      expect(limited.requestID).toMatch(/^req_emu/);
      const missing = await openai({ maxRetries: 0 })
        .chat.completions.create({ model: "gpt-nonexistent-1", messages: [{ role: "user", content: tag }] })
        .catch((e) => e);
      expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
      const retryTag = unique();
      const retried = await openai().chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: `[fail-once:429:${retryTag}] ${retryTag}` }],
      });
      expect(retried.choices[0]!.message.content).toContain("Emulated answer");
      expect(await emulatorCalls(target(), retryTag)).toHaveLength(2);
    });
  });
}
