/**
 * Old text tool results retired like images (docs/eviction.md, "Old tool results"): the three wire
 * formats' finding and rewriting (tool names, sizes, pairing kept), and the cost strategy's one
 * decision over them: the newest 3 never touched, a retired result stays retired on the next
 * request, the context window a ceiling, nothing retired without the option.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evictRemembering, outboundEviction, type SessionMemory } from "../../shared/eviction/evict.service";
import { KEEP_NEWEST_TOOL_RESULTS, toolResultCandidates } from "../../shared/eviction/tool-results";
import { retiredToolResultText, retireToolResults } from "../../shared/llm/tool-result-blocks";
import { ANTHROPIC } from "../../shared/llm/anthropic.provider";
import { OPENAI } from "../../shared/llm/openai.provider";
import { anthropicTextSession, chatTextSession, responsesTextSession } from "../../cli/replay/text-sessions";

const RESPONSES = OPENAI.paths["/v1/responses"]!.format;
const CHAT = OPENAI.paths["/v1/chat/completions"]!.format;
const MESSAGES = ANTHROPIC.paths["/v1/messages"]!.format;

describe("the retired text", () => {
  it("names the tool and the size, says to call it again, and stays under 200 characters", () => {
    const text = retiredToolResultText("web_extract", 15_234);
    expect(text).toBe(
      "[web_extract result removed to save context: 15,234 characters; call the tool again if you need it]",
    );
    const long = retiredToolResultText(`${"x".repeat(300)}<script>`, 999_999_999);
    expect(long.length).toBeLessThan(200);
    expect(long).not.toContain("<");
    expect(retiredToolResultText("web_extract", 15_234)).toBe(text); // fixed bytes
  });
});

describe("finding text tool results", () => {
  it("Anthropic: tool_result blocks of a string or text parts, named by their tool_use; images left to the image policy", () => {
    const messages: any[] = [
      { role: "user", content: "task" },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "a", name: "web_extract", input: {} },
          { type: "tool_use", id: "b", name: "browser", input: {} },
          { type: "tool_use", id: "c", name: "search", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "a", content: "x".repeat(9_000) },
          {
            type: "tool_result",
            tool_use_id: "b",
            content: [
              { type: "text", text: "shot" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
            ],
          },
          { type: "tool_result", tool_use_id: "c", content: [{ type: "text", text: "y".repeat(100) }] },
          { type: "tool_result", tool_use_id: "zz", content: "no call names me" },
        ],
      },
    ];
    expect(MESSAGES.toolResults(messages)).toEqual([
      { message: 2, block: 0, tool: "web_extract", chars: 9_000 },
      { message: 2, block: 2, tool: "search", chars: 100 },
      { message: 2, block: 3, tool: "tool", chars: 16 },
    ]);
  });

  it("Chat Completions: role tool messages, named by the assistant's tool_calls", () => {
    const messages = chatTextSession(4);
    const found = CHAT.toolResults(CHAT.messagesOf({ messages })!, { messages });
    expect(found.map((r) => [r.message, r.block, r.tool])).toEqual([
      [3, -1, "web_extract"],
      [5, -1, "web_extract"],
      [7, -1, "web_extract"],
      [9, -1, "web_extract"],
    ]);
    expect(found.every((r) => r.chars >= 12_000 && r.chars <= 20_000)).toBe(true);
  });

  it("Responses: function_call_output items, named by the function_call of the same call_id", () => {
    const input = responsesTextSession(4);
    input.push({ type: "custom_tool_call", call_id: "x", name: "apply_patch", input: "..." });
    input.push({ type: "custom_tool_call_output", call_id: "x", output: "z".repeat(10_000) });
    const body = { input };
    const found = RESPONSES.toolResults(RESPONSES.messagesOf(body)!, body);
    expect(found.map((r) => r.tool)).toEqual([
      "web_extract",
      "web_extract",
      "web_extract",
      "web_extract",
      "apply_patch",
    ]);
    expect(found.at(-1)).toMatchObject({ message: 10, chars: 10_000 });
  });
});

describe("rewriting them", () => {
  it("keeps ids, block types, is_error and breakpoints in every format; the input is never modified", () => {
    const anthropic: any[] = [
      { role: "user", content: "task" },
      { role: "assistant", content: [{ type: "tool_use", id: "a", name: "web_extract", input: {} }] },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "a",
            is_error: false,
            content: [
              { type: "text", text: "p".repeat(5_000) },
              { type: "text", text: "q".repeat(5_000), cache_control: { type: "ephemeral" } },
            ],
          },
        ],
      },
    ];
    const before = JSON.stringify(anthropic);
    const found = MESSAGES.toolResults(anthropic);
    const out = retireToolResults(anthropic, found) as any[];
    expect(JSON.stringify(anthropic)).toBe(before);
    expect(out[0]).toBe(anthropic[0]);
    expect(out[2].content[0]).toEqual({
      type: "tool_result",
      tool_use_id: "a",
      is_error: false,
      content: [
        { type: "text", text: retiredToolResultText("web_extract", 10_000), cache_control: { type: "ephemeral" } },
      ],
    });

    const messages = chatTextSession(1);
    const chat = retireToolResults(messages, CHAT.toolResults(messages, { messages })) as any[];
    expect(chat[3]).toEqual({
      ...messages[3],
      content: retiredToolResultText("web_extract", messages[3].content.length),
    });

    const input = responsesTextSession(1);
    const body = { model: "gpt-5.6-terra", input };
    const view = RESPONSES.messagesOf(body)!;
    const sent = RESPONSES.withMessages(body, retireToolResults(view, RESPONSES.toolResults(view, body)));
    expect((sent.input as any[])[2]).toEqual({
      type: "function_call_output",
      call_id: "call_0",
      output: retiredToolResultText("web_extract", input[2].output.length),
    });
    expect((sent.input as any[])[1]).toBe(input[1]);
  });
});

/** One request of a session through the proxy's own call of the cost strategy. */
function request(
  format: "anthropic" | "openai",
  messages: any[],
  body: Record<string, unknown>,
  memory: SessionMemory | null,
  at: number,
  model: string,
  text = true,
) {
  const found = (format === "anthropic" ? MESSAGES : Array.isArray(body.input) ? RESPONSES : CHAT).toolResults(
    messages,
    body,
  );
  const { evict, planning } = outboundEviction({
    format,
    messages,
    model,
    sessionKey: "s",
    movesClientBreakpoint: true,
  });
  const candidates = toolResultCandidates(found, 8_192);
  return {
    found,
    ...evictRemembering(
      evict,
      memory,
      at,
      text && candidates.length > 0 ? { ...planning, toolResults: candidates } : planning,
    ),
  };
}

describe("the cost strategy over text tool results", () => {
  it.each([
    ["anthropic", "claude-sonnet-4-6"],
    ["openai", "gpt-5.6-terra"],
  ] as const)(
    "%s: a 60-turn session retires in batches, never the newest 3, and what is retired stays retired",
    (format, model) => {
      let memory: SessionMemory | null = null;
      let previous = new Set<string>();
      let moves = 0;
      let retiredAtEnd = 0;
      for (let turn = 1; turn <= 60; turn++) {
        const messages = format === "anthropic" ? anthropicTextSession(turn) : chatTextSession(turn);
        const out = request(format, messages, { messages }, memory, turn * 30_000, model);
        memory = out.remember;
        const retired = new Set(out.toolResults.retired.map((r) => `${r.message}/${r.block}`));
        // The newest 3 tool results are never touched.
        const newest = out.found.slice(-KEEP_NEWEST_TOOL_RESULTS).map((r) => `${r.message}/${r.block}`);
        for (const key of newest) expect(retired.has(key)).toBe(false);
        // What the previous request sent retired is retired again: the prefix stays the same bytes.
        for (const key of previous) expect(retired.has(key), `turn ${turn}: ${key}`).toBe(true);
        if (retired.size > previous.size) moves += 1;
        expect(out.toolResults.retiredNow).toBe(retired.size - previous.size);
        previous = retired;
        retiredAtEnd = retired.size;
        // Every retired result reads as its fixed text in the outbound copy.
        for (const r of out.toolResults.retired) {
          const sent = out.response.messages[r.message] as any;
          const content = format === "anthropic" ? sent.content[r.block].content : sent.content;
          expect(content).toBe(retiredToolResultText("web_extract", r.chars));
        }
      }
      expect(retiredAtEnd).toBeGreaterThan(40);
      expect(moves).toBeGreaterThan(1);
      expect(moves).toBeLessThan(15); // batched, not one per request
    },
  );

  it("without the option, no text tool result is ever retired", () => {
    let memory: SessionMemory | null = null;
    for (let turn = 1; turn <= 60; turn++) {
      const messages = anthropicTextSession(turn);
      const out = request("anthropic", messages, { messages }, memory, turn * 30_000, "claude-sonnet-4-6", false);
      memory = out.remember;
      expect(out.toolResults.retired).toEqual([]);
      expect(out.response.retired).toBe(0);
    }
  });

  it("the context window is a ceiling: a request that would pass it retires down to the floor", () => {
    // 90 pages of ~16,000 characters (~360,000 tokens) on a 200k-context model, sent cold with no memory.
    const messages = anthropicTextSession(90);
    const out = request("anthropic", messages, { messages }, null, 0, "claude-haiku-4-5");
    expect(out.toolResults.retired.length).toBeGreaterThanOrEqual(90 - KEEP_NEWEST_TOOL_RESULTS - 45);
    expect(out.response.stats.fits).toBe(true);
    const left = out.found.length - out.toolResults.retired.length;
    expect(left * 16_000).toBeLessThan(200_000 * 4);
  });

  it("the Responses view retires the same results as Chat on the same session", () => {
    const chat = chatTextSession(30);
    const input = responsesTextSession(30);
    const a = request("openai", chat, { messages: chat }, null, 0, "gpt-5.6-terra");
    const view = RESPONSES.messagesOf({ input })!;
    const b = request("openai", view, { input }, null, 0, "gpt-5.6-terra");
    expect(b.found.map((r) => r.chars)).toEqual(a.found.map((r) => r.chars));
    expect(b.toolResults.retired.length).toBe(a.toolResults.retired.length);
    expect(MESSAGES.messagesOf({ messages: [] })).toEqual([]);
  });
});

describe("properties", () => {
  it("over random sizes and lengths: the newest 3 never retired, nothing un-retired, every retired result over the size", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 500, max: 30_000 }), { minLength: 4, maxLength: 45 }),
        fc.integer({ min: 1_024, max: 16_000 }),
        (sizes, minChars) => {
          let memory: SessionMemory | null = null;
          let previous = new Set<string>();
          const base = anthropicTextSession(sizes.length);
          for (let turn = 1; turn <= sizes.length; turn++) {
            // The fixture's session with the page of each turn cut to its drawn size.
            const messages = base.slice(0, 1 + 2 * turn).map((m: any) =>
              m.role === "user" && Array.isArray(m.content)
                ? {
                    ...m,
                    content: [
                      {
                        ...m.content[0],
                        content: m.content[0].content
                          .padEnd(30_000, "x")
                          .slice(0, sizes[Number(m.content[0].tool_use_id.slice(6))]),
                      },
                    ],
                  }
                : m,
            );
            const found = MESSAGES.toolResults(messages);
            const { evict, planning } = outboundEviction({
              format: "anthropic",
              messages,
              model: "claude-sonnet-4-6",
              sessionKey: "s",
            });
            const out = evictRemembering(evict, memory, turn * 30_000, {
              ...planning,
              toolResults: toolResultCandidates(found, minChars),
            });
            memory = out.remember;
            const retired = new Set(out.toolResults.retired.map((r) => `${r.message}/${r.block}`));
            for (const r of found.slice(-KEEP_NEWEST_TOOL_RESULTS))
              expect(retired.has(`${r.message}/${r.block}`)).toBe(false);
            for (const key of previous) expect(retired.has(key)).toBe(true);
            for (const r of out.toolResults.retired) expect(r.chars).toBeGreaterThan(minChars);
            previous = retired;
          }
        },
      ),
      { numRuns: 40, seed: 46 },
    );
  });
});
