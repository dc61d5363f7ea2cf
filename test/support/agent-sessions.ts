/**
 * Agent sessions as an agent writes them, request by request, for the as-sent tests and the
 * attribution benchmark (docs/stats.md): a browser agent whose tool answers carry screenshots (or
 * text only), in Anthropic Messages or Chat Completions, each request the whole history so far.
 * Pure: runs in workerd, Node and Deno alike.
 */

export interface AgentSession {
  /** Anthropic Messages or OpenAI Chat Completions. */
  readonly format: "anthropic" | "chat";
  readonly model: string;
  /** Written into the system prompt: the emulator's `__calls?contains=` finds the session by it. */
  readonly tag: string;
  readonly turns: number;
  /** Base64 PNG screenshots, used in turn order (cycled); none: a text-only session. */
  readonly shots: readonly string[];
  /** Turn i carries a screenshot when `i % shotEvery !== shotEvery - 1` (1: every turn). */
  readonly shotEvery?: number;
}

const STEP_TEXT = "I look at the page and decide what to click next, then check the result. ";
const RESULT_TEXT = "The page shows a list of flights with prices, times and the airline of each. ";

const hasShot = (session: AgentSession, i: number) => {
  const every = session.shotEvery ?? 1;
  return session.shots.length > 0 && (every <= 1 || i % every !== every - 1);
};

/** The request body the agent sends at `turn` (1-based): the system prompt, the task, and `turn` steps. */
export function agentRequest(session: AgentSession, turn: number): Record<string, unknown> {
  const system = `You are a browser agent (${session.tag}). ${"Follow the user's instructions and use the browser tool. ".repeat(120)}`;
  const task = "Book the cheapest flight to Lisbon next Friday and report back.";
  if (session.format === "anthropic") {
    const messages: Record<string, unknown>[] = [{ role: "user", content: [{ type: "text", text: task }] }];
    for (let i = 0; i < turn; i++) {
      messages.push({
        role: "assistant",
        content: [
          { type: "text", text: `Step ${i}: ${STEP_TEXT.repeat(6 + (i % 5))}` },
          { type: "tool_use", id: `toolu_${i}`, name: "browser", input: { action: "click", i } },
        ],
      });
      const parts: Record<string, unknown>[] = hasShot(session, i)
        ? [
            {
              type: "image",
              source: { type: "base64", media_type: "image/png", data: session.shots[i % session.shots.length]! },
            },
          ]
        : [];
      parts.push({ type: "text", text: `Result of step ${i}: ${RESULT_TEXT.repeat(10 + (i % 7))}` });
      messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${i}`, content: parts }] });
    }
    // The agent marks its system prompt and its last 3 messages (Hermes's layout).
    const marked = messages.map((m, i) =>
      i < messages.length - 3
        ? m
        : {
            ...m,
            content: (m.content as Record<string, unknown>[]).map((b, j, all) =>
              j === all.length - 1 ? { ...b, cache_control: { type: "ephemeral" } } : b,
            ),
          },
    );
    return {
      model: session.model,
      max_tokens: 256,
      system: [{ type: "text", text: system, cache_control: { type: "ephemeral" } }],
      tools: [{ name: "browser", description: "Drive the browser", input_schema: { type: "object" } }],
      messages: marked,
    };
  }
  const messages: Record<string, unknown>[] = [
    { role: "system", content: system },
    { role: "user", content: task },
  ];
  for (let i = 0; i < turn; i++) {
    messages.push({
      role: "assistant",
      content: `Step ${i}: ${STEP_TEXT.repeat(6 + (i % 5))}`,
      tool_calls: [{ id: `call_${i}`, type: "function", function: { name: "browser", arguments: `{"i":${i}}` } }],
    });
    const parts: Record<string, unknown>[] = [
      { type: "text", text: `Result of step ${i}: ${RESULT_TEXT.repeat(10 + (i % 7))}` },
    ];
    if (hasShot(session, i))
      parts.push({
        type: "image_url",
        image_url: { url: `data:image/png;base64,${session.shots[i % session.shots.length]!}` },
      });
    messages.push({ role: "tool", tool_call_id: `call_${i}`, content: parts });
  }
  return {
    model: session.model,
    messages,
    tools: [{ type: "function", function: { name: "browser", parameters: { type: "object" } } }],
  };
}

/** Where a session's requests go on a provider's API (after the base URL, or `/anthropic`, `/openai` on the service). */
export const agentPath = (session: AgentSession) =>
  session.format === "anthropic" ? "/v1/messages" : "/v1/chat/completions";

/** The credential header a session sends with `key`. */
export const agentKeyHeader = (session: AgentSession, key: string): Record<string, string> =>
  session.format === "anthropic" ? { "x-api-key": key } : { authorization: `Bearer ${key}` };
