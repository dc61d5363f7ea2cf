/**
 * The proxy's view of an OpenAI Responses `input` (shared/llm/openai.provider.ts): the
 * same tool loop sent as Responses items and as Chat Completions messages gets the same eviction.
 */
import { describe, expect, it } from "vitest";
import { evictRemembering, type SessionMemory } from "../../shared/eviction/evict.service";
import { OPENAI_CHAT } from "../../shared/llm/openai.chat";
import { OPENAI } from "../../shared/llm/openai.provider";
import { pngBase64 } from "./eviction.fixtures";

const RESPONSES = OPENAI.paths["/v1/responses"]!.format;
const SCREENSHOT = `data:image/png;base64,${pngBase64(1280, 880, 1_000)}`;
const NOTE = "x".repeat(4_000);

/** The same loop of `n` screenshot calls, as Chat messages and as Responses items (with reasoning before each call). */
function loop(n: number) {
  const chat: unknown[] = [{ role: "user", content: "task" }];
  const input: unknown[] = [{ role: "user", content: "task" }];
  for (let i = 0; i < n; i++) {
    const call = { id: `c${i}`, name: "screenshot", arguments: "{}" };
    chat.push({ role: "assistant", content: null, tool_calls: [{ id: call.id, type: "function", function: call }] });
    chat.push({
      role: "tool",
      tool_call_id: call.id,
      content: [
        { type: "text", text: NOTE },
        { type: "image_url", image_url: { url: SCREENSHOT } },
      ],
    });
    input.push({ type: "reasoning", id: `rs${i}`, summary: [] });
    input.push({ type: "function_call", call_id: call.id, name: call.name, arguments: call.arguments });
    input.push({
      type: "function_call_output",
      call_id: call.id,
      output: [
        { type: "input_text", text: NOTE },
        { type: "input_image", image_url: SCREENSHOT },
      ],
    });
  }
  return { chat, input };
}

describe("OpenAI Responses through the eviction", () => {
  it("counts one answered request per run of the model's items, as Chat counts its assistant messages", () => {
    const { input } = loop(3);
    input.push({ type: "reasoning", id: "last", summary: [] }, { type: "message", role: "assistant", content: [] });
    const roles = RESPONSES.messagesOf({ input })!.map((m) => (m as { role: string }).role);
    expect(roles).toEqual([
      "user",
      ...["assistant", "other", "tool"],
      ...["assistant", "other", "tool"],
      ...["assistant", "other", "tool"],
      "assistant",
      "other",
    ]);
  });

  it("reads a computer_call_output's screenshot as an image the eviction counts and never retires, and writes a new one back in place", () => {
    const input = [
      { role: "user", content: "task" },
      { type: "computer_call", call_id: "c1", action: { type: "screenshot" } },
      { type: "computer_call_output", call_id: "c1", output: { type: "computer_screenshot", image_url: SCREENSHOT } },
    ];
    const messages = RESPONSES.messagesOf({ input })!;
    const { carriers, uploads } = OPENAI_CHAT.inventory(messages);
    expect([carriers.length, uploads.length]).toEqual([0, 1]);
    const unchanged = RESPONSES.withMessages({ input }, RESPONSES.messagesOf({ input })!);
    expect((unchanged.input as unknown[])[2]).toBe(input[2]); // the same item, not a copy
    const fitted = messages.map((m, i) =>
      i === 2 ? { ...(m as object), content: [{ type: "input_image", image_url: "data:image/jpeg;base64,AAAA" }] } : m,
    );
    expect((RESPONSES.withMessages({ input }, fitted).input as unknown[])[2]).toEqual({
      type: "computer_call_output",
      call_id: "c1",
      output: { type: "computer_screenshot", image_url: "data:image/jpeg;base64,AAAA" },
    });
  });

  it("retires a 60-request screenshot loop sent as Responses items as it retires the same loop in Chat", () => {
    for (const model of ["gpt-5.6-terra", "gpt-4o"]) {
      const run = (kind: "chat" | "responses") => {
        let memory: SessionMemory | null = null;
        const retired: number[] = [];
        for (let n = 1; n <= 60; n++) {
          const { chat, input } = loop(n);
          const messages = (kind === "chat" ? chat : RESPONSES.messagesOf({ input })!) as Record<string, unknown>[];
          const { response, remember } = evictRemembering(
            { format: "openai", messages, strategy: "cost", model, session_id: "s", manage_cache: true },
            memory,
            n * 30_000,
          );
          memory = remember;
          retired.push(response.retired);
        }
        return retired;
      };
      // The moves of the front; the two forms weigh a call's few tokens a little differently, so a
      // move may come one request apart, never more, and there are as many.
      const moves = (retired: number[]) => retired.filter((r, i) => r > (retired[i - 1] ?? 0)).length;
      const chat = run("chat");
      const responses = run("responses");
      expect(moves(chat), model).toBeGreaterThan(2);
      expect(moves(responses), model).toBe(moves(chat));
      for (let n = 1; n < 60; n++)
        expect(responses[n], `${model}, request ${n + 1}`).toBeGreaterThanOrEqual(chat[n - 1]!);
    }
  });
});
