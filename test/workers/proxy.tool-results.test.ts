/**
 * Old text tool results retired through the proxy (docs/proxy.md, "Old tool results"), inside
 * workerd against the LLM emulator: the official `@anthropic-ai/sdk` and `openai` clients (Messages,
 * Chat Completions, Responses) with `X-Edge-Retire-Tool-Results: on`, the header's refusals, the
 * configuration's switch and the header's `off` over it, the ledger's counters, and the session
 * memory that keeps a retired result retired on the next request.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { retiredToolResultText } from "../../shared/llm/tool-result-blocks";
import {
  anthropicTextSession,
  chatTextSession,
  responsesTextSession,
  SYSTEM_PROMPT,
} from "../../cli/replay/text-sessions";
import { call, llmCalls, sha256, uniqueToken, withLedger } from "./helpers";

/** The SDKs' fetch, answered by the Workers entry itself (the real app in workerd, the emulator behind it). */
const serviceFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  const request = new Request(input, init);
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return call(`${url.pathname}${url.search}`, {
    method: request.method,
    headers,
    ...(request.method === "GET" ? {} : { raw: new Uint8Array(await request.arrayBuffer()) }),
  });
};

const anthropic = (session: string) =>
  new Anthropic({
    baseURL: "https://service.test/anthropic",
    apiKey: "sk-ant-tool-results",
    maxRetries: 0,
    fetch: serviceFetch,
    defaultHeaders: { "x-edge-retire-tool-results": "on", "x-session-id": session },
  });
const openai = (session: string) =>
  new OpenAI({
    baseURL: "https://service.test/openai/v1",
    apiKey: "sk-openai-tool-results",
    maxRetries: 0,
    fetch: serviceFetch,
    defaultHeaders: { "x-edge-retire-tool-results": "on", "x-session-id": session },
  });

/** A 20-turn session: sent whole for the first time, the strategy retires its older pages at once. */
const TURNS = 20;

describe("the official clients, with X-Edge-Retire-Tool-Results: on", () => {
  it("@anthropic-ai/sdk (Messages): old pages go as one short text, the newest 3 kept whole", async () => {
    const tag = uniqueToken();
    const messages = anthropicTextSession(TURNS);
    const { data, response } = await anthropic(tag)
      .messages.create({
        model: "claude-sonnet-4-6",
        max_tokens: 64,
        system: `${tag} ${SYSTEM_PROMPT}`,
        messages,
      })
      .withResponse();
    expect(data.type).toBe("message");
    const retired = Number(response.headers.get("x-edge-retired-tool-results"));
    expect(retired).toBeGreaterThanOrEqual(8);
    expect(retired).toBeLessThanOrEqual(TURNS - 3);
    const [seen] = await llmCalls(tag);
    const sentBytes = JSON.stringify({
      model: "claude-sonnet-4-6",
      max_tokens: 64,
      system: `${tag} ${SYSTEM_PROMPT}`,
      messages,
    }).length;
    // Every retired page of 12,000+ characters left the request.
    expect(sentBytes - seen.body_bytes).toBeGreaterThan(retired * 11_000);
  });

  it("openai (Chat Completions): role tool messages retired, named by the assistant's tool_calls", async () => {
    const tag = uniqueToken();
    const messages = chatTextSession(TURNS);
    messages[0] = { role: "system", content: `${tag} ${SYSTEM_PROMPT}` };
    const { data, response } = await openai(tag)
      .chat.completions.create({ model: "gpt-5.6-terra", messages })
      .withResponse();
    expect(data.choices[0]?.message).toBeDefined();
    const retired = Number(response.headers.get("x-edge-retired-tool-results"));
    expect(retired).toBeGreaterThanOrEqual(8);
    expect(retired).toBeLessThanOrEqual(TURNS - 3);
    const [seen] = await llmCalls(tag);
    expect(JSON.stringify({ model: "gpt-5.6-terra", messages }).length - seen.body_bytes).toBeGreaterThan(
      retired * 11_000,
    );
  });

  it("openai (Responses): function_call_output items retired, named by their function_call", async () => {
    const tag = uniqueToken();
    const input = responsesTextSession(TURNS);
    const { data, response } = await openai(tag)
      .responses.create({ model: "gpt-5.6-terra", instructions: `${tag} ${SYSTEM_PROMPT}`, input })
      .withResponse();
    expect(data.object).toBe("response");
    const retired = Number(response.headers.get("x-edge-retired-tool-results"));
    expect(retired).toBeGreaterThanOrEqual(8);
    expect(retired).toBeLessThanOrEqual(TURNS - 3);
  });
});

/** One Messages request of the session as raw bytes, through the proxy. */
const messagesBody = (tag: string, turns: number) =>
  JSON.stringify({
    model: "claude-sonnet-4-6",
    max_tokens: 64,
    system: `${tag} ${SYSTEM_PROMPT}`,
    messages: anthropicTextSession(turns),
  });

describe("the switch", () => {
  it("refuses any other value of X-Edge-Retire-Tool-Results in the provider's error shape, sending nothing", async () => {
    const tag = uniqueToken();
    const refusedA = await call("/anthropic/v1/messages", {
      raw: messagesBody(tag, 2),
      headers: { "content-type": "application/json", "x-api-key": "k", "x-edge-retire-tool-results": "yes" },
    });
    expect(refusedA.status).toBe(400);
    const bodyA = (await refusedA.json()) as any;
    expect(bodyA.type).toBe("error");
    expect(bodyA.error.type).toBe("invalid_request_error");
    expect(bodyA.error.message).toContain("X-Edge-Retire-Tool-Results");
    const refusedO = await call("/openai/v1/chat/completions", {
      raw: JSON.stringify({ model: "gpt-5.6-terra", messages: [{ role: "user", content: tag }] }),
      headers: { "content-type": "application/json", authorization: "Bearer k", "x-edge-retire-tool-results": "1" },
    });
    expect(refusedO.status).toBe(400);
    expect(((await refusedO.json()) as any).error.message).toContain("X-Edge-Retire-Tool-Results");
    expect(await llmCalls(tag)).toEqual([]);
  });

  it("proxy.retire_tool_results turns it on; the request's off wins and the bytes go as sent", async () => {
    const vars = { PROXY_RETIRE_TOOL_RESULTS: "true" };
    const on = uniqueToken();
    const byConfig = await call("/anthropic/v1/messages", {
      raw: messagesBody(on, TURNS),
      headers: { "content-type": "application/json", "x-api-key": "k", "x-session-id": on },
      vars,
    });
    expect(byConfig.status).toBe(200);
    expect(Number(byConfig.headers.get("x-edge-retired-tool-results"))).toBeGreaterThan(0);

    const off = uniqueToken();
    const raw = messagesBody(off, TURNS);
    const refused = await call("/anthropic/v1/messages", {
      raw,
      headers: { "content-type": "application/json", "x-api-key": "k", "x-edge-retire-tool-results": "OFF" },
      vars,
    });
    expect(refused.status).toBe(200);
    expect(refused.headers.get("x-edge-retired-tool-results")).toBe("0");
    const [seen] = await llmCalls(off);
    expect(seen.body_sha256).toBe(await sha256(raw));
  });
});

describe("the ledger and the session memory", () => {
  it("counts each retirement once and the characters not sent per request; later requests keep them retired", async () => {
    const tag = uniqueToken();
    const ledger = withLedger();
    const headers = { "x-api-key": "k", "x-session-id": tag, "x-edge-retire-tool-results": "on" };
    const counts: number[] = [];
    for (let turn = 10; turn <= 18; turn++) {
      const { response } = await ledger.send("/anthropic/v1/messages", JSON.parse(messagesBody(tag, turn)), headers);
      expect(response.status).toBe(200);
      counts.push(Number(response.headers.get("x-edge-retired-tool-results")));
    }
    // A retired page stays retired: the count never falls, and it moved at least once, in a batch.
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1]!);
    const moves = counts.filter((n, i) => n > (counts[i - 1] ?? 0));
    expect(moves.length).toBeGreaterThanOrEqual(1);
    expect(counts.at(-1)).toBeGreaterThanOrEqual(8);

    // Between moves, each request's prefix is the previous request's, byte for byte, up to its new turn.
    const calls = await llmCalls(tag);
    expect(calls).toHaveLength(counts.length);
    for (let i = 1; i < calls.length; i++) {
      if (counts[i] !== counts[i - 1]) continue;
      const [before, after] = [calls[i - 1].prompt.ids, calls[i].prompt.ids];
      const differs = before.findIndex((id: string, j: number) => after[j] !== id);
      expect(differs === -1 || differs >= before.length - 4, `request ${i + 1}`).toBe(true);
    }

    // The retired pages are the oldest ones: their sizes less the text each became, per request.
    const pages = anthropicTextSession(18)
      .filter((m) => Array.isArray(m.content) && m.content[0]?.type === "tool_result")
      .map((m) => m.content[0].content.length as number);
    const savedOf = (n: number) =>
      pages.slice(0, n).reduce((sum, chars) => sum + chars - retiredToolResultText("web_extract", chars).length, 0);
    const totals = await ledger.totals();
    expect(totals.requests).toBe(counts.length);
    expect(totals.tool_results_retired).toBe(counts.at(-1));
    expect(totals.tool_result_chars_saved).toBe(counts.reduce((sum, n) => sum + savedOf(n), 0));
    // The as-sent figure prices the requests as the agent wrote them: every page in every prompt.
    const prompt = (prefix: string) =>
      ["input_tokens", "cache_write_5m_tokens", "cache_write_1h_tokens", "cache_read_tokens"].reduce(
        (sum, kind) => sum + (totals[`${prefix}${kind}`] ?? 0),
        0,
      );
    expect(prompt("as_sent_")).toBeGreaterThan(prompt("") + (3 * savedOf(counts.at(-1)!)) / 8);
  });
});
