/**
 * The savings ledger counts what happened (docs/stats.md, docs/proxy.md "What is counted"): a
 * stream that stops half way, a search the keyless rescue answered, and eviction's retired images.
 */
import { describe, expect, it } from "vitest";
import { createApp } from "../../shared/app/app";
import { workersDeps } from "../../workers/deps";
import { recordingLedger } from "../support/recording-ledger";
import { answeredTogether, llmCalls } from "../support/emulator-client";
import { searchJoiners } from "./flight-joiners";
import { bothTtlsBody, callJson, EMULATOR, messageStart, sseEvent, testEnv, uniqueToken } from "./helpers";

const MODEL = "claude-sonnet-4-5";
const MESSAGE_START = messageStart(MODEL, {
  input_tokens: 20,
  cache_creation_input_tokens: 3000,
  cache_read_input_tokens: 50_000,
  cache_creation: { ephemeral_5m_input_tokens: 3000, ephemeral_1h_input_tokens: 0 },
  output_tokens: 1,
});
const TEXT_DELTA = sseEvent("content_block_delta", {
  type: "content_block_delta",
  index: 0,
  delta: { type: "text_delta", text: "Hello" },
});

/** The streamed request each route is sent. */
const ROUTES = {
  anthropic: {
    path: "/anthropic/v1/messages",
    headers: { "x-api-key": "sk-ant-caller" },
    body: () => ({
      model: MODEL,
      max_tokens: 64,
      stream: true,
      messages: [{ role: "user", content: `hi ${uniqueToken()}` }],
    }),
  },
  chat: {
    path: "/openai/v1/chat/completions",
    headers: { authorization: "Bearer sk-openai-caller" },
    body: () => ({ model: "gpt-4o", stream: true, messages: [{ role: "user", content: `hi ${uniqueToken()}` }] }),
  },
  responses: {
    path: "/openai/v1/responses",
    headers: { authorization: "Bearer sk-openai-caller" },
    body: () => ({ model: "gpt-4o", stream: true, input: `hi ${uniqueToken()}` }),
  },
} as const;

/** An app whose provider answers with `upstream`, recording into the real ledger buffer (test/support/recording-ledger.ts). */
function proxyWith(upstream: () => ReadableStream<Uint8Array>, route: keyof typeof ROUTES = "anthropic") {
  const { ledger, rows, flush, sum } = recordingLedger();
  const app = createApp(
    workersDeps(testEnv, {
      ledger,
      // A stand-in for the provider: a stream of exactly these events (or this failure).
      fetch: async () => new Response(upstream(), { headers: { "content-type": "text/event-stream" } }),
    }),
  );
  const send = () =>
    app.fetch(
      new Request(`https://service.test${ROUTES[route].path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...ROUTES[route].headers },
        body: JSON.stringify(ROUTES[route].body()),
      }),
      testEnv,
    );
  return { rows, send, flush, sum };
}

const encode = (text: string) => new TextEncoder().encode(text);

/**
 * An upstream body that gives `events` one read at a time, then ends, or fails with `failure` (in
 * pull(), not start(): an error in start() would drop the events unread).
 */
const eventsThen = (events: readonly string[], failure?: Error) => () => {
  const left = [...events];
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = left.shift();
      if (next) controller.enqueue(encode(next));
      else if (failure) controller.error(failure);
      else controller.close();
    },
  });
};

describe("a streamed answer that does not reach its end", () => {
  it("counts the prompt's usage message_start gave when the caller cancels the stream (Esc in Claude Code)", async () => {
    // The provider keeps streaming (it never ends by itself): the caller stops reading.
    const { send, flush, sum } = proxyWith(
      () =>
        new ReadableStream({
          start(controller) {
            controller.enqueue(encode(MESSAGE_START));
            controller.enqueue(encode(TEXT_DELTA));
          },
        }),
    );
    const response = await send();
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let seen = "";
    while (!seen.includes("content_block_delta")) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += new TextDecoder().decode(value);
    }
    await reader.cancel();
    await flush();
    expect(sum("requests")).toBe(1);
    // Anthropic bills the prompt of a request it started answering: 20 uncached input tokens,
    // 3,000 written and 50,000 read. The ledger counts none of them.
    expect([sum("input_tokens"), sum("cache_write_5m_tokens"), sum("cache_read_tokens")]).toEqual([20, 3000, 50_000]);
  });

  it("counts the prompt's usage message_start gave when the provider's stream breaks off", async () => {
    // The emulator's connection drops after message_start (a real socket closed mid-stream).
    const { ledger, flush, sum } = recordingLedger();
    const app = createApp(workersDeps(testEnv, { ledger }));
    const tag = uniqueToken();
    const response = await app.fetch(
      new Request("https://service.test/anthropic/v1/messages", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": `sk-ant-${tag}` },
        body: JSON.stringify(bothTtlsBody(MODEL, `[fail-midstream] ${tag}`, true)),
      }),
      testEnv,
    );
    expect(response.status).toBe(200);
    const relayed = await response.text().catch(() => "");
    expect(relayed).not.toContain("message_stop");
    await flush();
    const [billed] = (await llmCalls(EMULATOR, tag)) as any[];
    expect(billed.usage.cacheWrite5m).toBeGreaterThan(0);
    expect(sum("requests")).toBe(1);
    expect([sum("input_tokens"), sum("cache_write_5m_tokens"), sum("cache_write_1h_tokens")]).toEqual([
      billed.usage.input,
      billed.usage.cacheWrite5m,
      billed.usage.cacheWrite1h,
    ]);
  });
});

describe("a streamed answer that fails after its 200", () => {
  it("counts Anthropic's in-stream error event (overloaded_error) as an error, with the prompt it billed", async () => {
    const events = [
      MESSAGE_START,
      sseEvent("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
    ];
    const { rows, send, flush, sum } = proxyWith(eventsThen(events));
    const response = await send();
    expect(response.status).toBe(200);
    await response.text();
    await flush();
    expect([sum("requests"), sum("errors"), sum("input_tokens")]).toEqual([1, 1, 20]);
    // The provider accepted the request (its 200): counted under its model, not "(failed)".
    expect(new Set(rows.map((row) => row.model))).toEqual(new Set([MODEL]));
  });

  it("counts OpenAI's failures after a 200 as errors: a Chat Completions error chunk, a Responses error or response.failed event", async () => {
    const data = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
    const chunk = data({
      id: "c1",
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta: { content: "Hi" } }],
    });
    for (const [route, events] of [
      ["chat", [chunk, data({ error: { message: "The server had an error", type: "server_error" } })]],
      ["responses", [sseEvent("error", { type: "error", code: "server_error", message: "The server had an error" })]],
      ["responses", [sseEvent("response.failed", { type: "response.failed", response: { status: "failed" } })]],
      ["chat", [chunk, "data: [DONE]\n\n"]],
    ] as const) {
      const { send, flush, sum } = proxyWith(eventsThen(events), route);
      const response = await send();
      expect(response.status).toBe(200);
      await response.text();
      await flush();
      // The last stream ends well: no error.
      expect([sum("requests"), sum("errors")], events.join("")).toEqual([1, events.at(-1)!.includes("[DONE]") ? 0 : 1]);
    }
  });

  it("counts no error for a stream that ends well", async () => {
    const events = [MESSAGE_START, TEXT_DELTA, sseEvent("message_stop", { type: "message_stop" })];
    const { send, flush, sum } = proxyWith(eventsThen(events));
    await (await send()).text();
    await flush();
    expect([sum("requests"), sum("errors"), sum("input_tokens")]).toEqual([1, 0, 20]);
  });
});

describe("web_search saved_usd", () => {
  it("prices no saving for calls that joined a keyless rescue (keyless has no bill; the failed paid provider billed nothing)", async () => {
    const before = (await callJson("/v1/stats?window=24h")).body;
    const token = uniqueToken();
    const gate = `price-${token}`;
    const q = `ledger rescue price [fail:500@tavily] [gate:${gate}] ${token}`;
    const answers = await answeredTogether(
      EMULATOR,
      { gate, paying: 1, joiners: 7, count: () => searchJoiners(q) },
      Array.from({ length: 8 }, () => callJson("/v1/web_search", { body: { query: q } })),
    );
    expect(answers.every((a) => a.status === 200 && a.body.provider === "keyless")).toBe(true);
    const after = (await callJson("/v1/stats?window=24h")).body;
    expect(after.totals.web_search.coalesced - before.totals.web_search.coalesced).toBe(7);
    // 7 joined a free keyless call: nothing of tavily's $0.008 a call was avoided.
    expect(after.totals.web_search.saved_usd - before.totals.web_search.saved_usd).toBeCloseTo(0, 9);
  });
});

describe("evict images_retired", () => {
  it("counts image blocks replaced, as its description says and as the proxy counts them, not tool results", async () => {
    const before = (await callJson("/v1/stats?window=24h")).body;
    const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } };
    // Each tool result carries two images.
    const messages = Array.from({ length: 8 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: i % 2 ? "ok" : [{ type: "tool_result", tool_use_id: `t${i}`, content: [image, image] }],
    }));
    const res = await callJson("/v1/context/evict", {
      body: { format: "anthropic", messages, limits: { max_blocks: 4, batch: 2, floor: 1 } },
    });
    expect(res.status).toBe(200);
    const blocks = res.body.stats.retired_blocks;
    expect(blocks).toBeGreaterThan(res.body.retired); // two blocks per carrier
    const after = (await callJson("/v1/stats?window=24h")).body;
    // "images_retired: Images replaced by placeholders" (stats.schema.ts); the proxy's is retired_blocks.
    expect(after.totals.evict.images_retired - before.totals.evict.images_retired).toBe(blocks);
  });
});
