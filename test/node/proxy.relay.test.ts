/**
 * The answer's way back (shared/proxy/relay.ts) on streams shaped as the providers send them: the
 * bytes reach the caller unchanged, and the usage is read from the events as they pass, whatever
 * the chunking, in time linear in the stream and memory bounded per line.
 */
import { describe, expect, it } from "vitest";
import { ANTHROPIC } from "../../shared/llm/anthropic.provider";
import { OPENAI } from "../../shared/llm/openai.provider";
import type { LlmProviderSpec, LlmUsage } from "../../shared/llm/llm-provider.types";
import { relayAnswer } from "../../shared/proxy/relay";

const KiB = 1024;
const MiB = 1024 * KiB;

/** An event stream of `text`, delivered in chunks of `size` bytes (splitting lines and characters anywhere). */
function chunked(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(at, at + size));
      at += size;
    },
  });
}

/** Relays `text` as an event stream and returns what the caller received and the usage read. */
async function relay(spec: LlmProviderSpec, text: string, chunk: number) {
  let usage: LlmUsage | null | "unread" = "unread";
  const upstream = new Response(chunked(text, chunk), { headers: { "content-type": "text/event-stream" } });
  const answer = relayAnswer(upstream, spec, {}, (read) => {
    usage = read;
  });
  const received = await answer.text();
  return { received, usage: usage as LlmUsage | null | "unread" };
}

/** A Responses stream whose `response.completed` line repeats an output of `outputChars` characters. */
function responsesStream(outputChars: number): string {
  const text = "é".repeat(outputChars / 2);
  const completed = {
    type: "response.completed",
    response: {
      status: "completed",
      output: [{ type: "message", content: [{ type: "output_text", text }] }],
      usage: { input_tokens: 1200, input_tokens_details: { cached_tokens: 1024 }, output_tokens: 77 },
    },
  };
  return [
    `event: response.created\ndata: ${JSON.stringify({ type: "response.created", response: { usage: null } })}\n\n`,
    `event: response.output_text.delta\ndata: ${JSON.stringify({ type: "response.output_text.delta", delta: "hi" })}\n\n`,
    `event: response.completed\r\ndata: ${JSON.stringify(completed)}\r\n\r\n`,
  ].join("");
}

describe("usage from a stream", () => {
  it("reads Anthropic's message_start and message_delta across any chunking, relaying every byte", async () => {
    const stream = [
      `event: message_start\ndata: ${JSON.stringify({ type: "message_start", message: { usage: { input_tokens: 10, cache_creation_input_tokens: 300, cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 }, cache_read_input_tokens: 50, output_tokens: 1 } } })}\n\n`,
      `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", delta: { type: "text_delta", text: "ünïcode ✓" } })}\n\n`,
      `event: message_delta\ndata: ${JSON.stringify({ type: "message_delta", usage: { input_tokens: 10, cache_creation_input_tokens: 300, cache_read_input_tokens: 50, output_tokens: 42 } })}\n\n`,
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ].join("");
    for (const size of [1, 7, 64, 100_000]) {
      const { received, usage } = await relay(ANTHROPIC, stream, size);
      expect(received).toBe(stream);
      expect(usage, `chunks of ${size}`).toEqual({
        input: 10,
        cacheWrite5m: 100,
        cacheWrite1h: 200,
        cacheRead: 50,
        output: 42,
      });
    }
  });

  it("reads the usage at the end of a 6 MiB response.completed line arriving in 16 KiB chunks", async () => {
    const stream = responsesStream(6 * MiB);
    const { received, usage } = await relay(OPENAI, stream, 16 * KiB);
    expect(received.length).toBe(stream.length);
    expect(usage).toMatchObject({ input: 176, cacheRead: 1024, output: 77 });
  });

  it("relays a 40 MiB line whole without reading it (over 8 MiB), in time linear in its chunks", async () => {
    // Held and searched again on every chunk, this line took minutes (2,560 chunks, each a scan of
    // all that came before); the test's timeout is the check.
    const stream = responsesStream(40 * MiB);
    const { received, usage } = await relay(OPENAI, stream, 16 * KiB);
    expect(received.length).toBe(stream.length);
    expect(usage).toBeNull();
  }, 30_000);

  it("still reads the events after an overlong line", async () => {
    const overlong = `data: ${JSON.stringify({ type: "noise", text: "x".repeat(9 * MiB), usage: { input_tokens: 1 } })}\n\n`;
    const stream = `${overlong}${responsesStream(1000)}`;
    const { usage } = await relay(OPENAI, stream, 64 * KiB);
    expect(usage).toMatchObject({ input: 176, cacheRead: 1024, output: 77 });
  });
});
