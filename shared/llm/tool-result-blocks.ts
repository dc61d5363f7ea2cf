/**
 * Text tool results in a conversation's messages (docs/eviction.md, "Old tool results"): where each
 * sits, which tool wrote it and how long it is, and the outbound copy with some of them replaced by
 * one short fixed text. One small section per wire format, reached through the format objects
 * (`WireFormat.toolResults`); the decision (which of them, and when) is the eviction's `cost`
 * strategy, over images and text together (shared/eviction/tool-results.ts).
 */
import { asRecord } from "./image-blocks";

/** One text tool result: where it sits, which tool wrote it, how many characters it carries. */
export interface TextToolResult {
  /** Index in the `messages` view. */
  readonly message: number;
  /** Index of the `tool_result` block in the message's `content` (Anthropic); -1 for a whole OpenAI tool message. */
  readonly block: number;
  /** The tool's name (from the call it answers), or "tool" when no call names it. */
  readonly tool: string;
  /** Characters of its text. */
  readonly chars: number;
}

/** Longest tool name written into a retired result's text (providers allow 64 characters). */
const MAX_TOOL_NAME = 64;

/**
 * The text a retired tool result becomes. Fixed bytes for the same tool and size, nothing time-
 * or request-dependent, so later requests carry the same prefix; under 200 characters.
 *
 * @example retiredToolResultText("web_extract", 15234)
 * // "[web_extract result removed to save context: 15,234 characters; call the tool again if you need it]"
 */
export function retiredToolResultText(tool: string, chars: number): string {
  const name = tool.replace(/[^\w.:-]/g, "_").slice(0, MAX_TOOL_NAME) || "tool";
  const size = Math.max(0, Math.floor(chars)).toLocaleString("en-US");
  return `[${name} result removed to save context: ${size} characters; call the tool again if you need it]`;
}

/** The characters of a tool result's content when it is text only (a string, or text parts), else null. */
function textChars(content: unknown): number | null {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content) || content.length === 0) return null;
  let chars = 0;
  for (const raw of content) {
    const part = asRecord(raw);
    if (
      (part?.type !== "text" && part?.type !== "input_text" && part?.type !== "output_text") ||
      typeof part.text !== "string"
    )
      return null;
    chars += part.text.length;
  }
  return chars;
}

/** The name a call id was given, from a list of (id, name) pairs. */
function namesById(pairs: Iterable<[unknown, unknown]>): Map<string, string> {
  const names = new Map<string, string>();
  for (const [id, name] of pairs) if (typeof id === "string" && typeof name === "string") names.set(id, name);
  return names;
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages: `tool_result` blocks whose content is a string or text parts; the name from
// the `tool_use` block of the same id.

/** Anthropic Messages: every text `tool_result` block, oldest first. */
export function anthropicToolResults(messages: readonly unknown[]): TextToolResult[] {
  const names = namesById(
    messages.flatMap((raw) => {
      const content = asRecord(raw)?.content;
      if (!Array.isArray(content)) return [];
      return content
        .map(asRecord)
        .filter((block) => block?.type === "tool_use")
        .map((block) => [block!.id, block!.name] as [unknown, unknown]);
    }),
  );
  const found: TextToolResult[] = [];
  messages.forEach((raw, message) => {
    const content = asRecord(raw)?.content;
    if (!Array.isArray(content)) return;
    content.forEach((rawBlock, block) => {
      const entry = asRecord(rawBlock);
      if (entry?.type !== "tool_result") return;
      const chars = textChars(entry.content);
      if (chars === null) return;
      const tool = typeof entry.tool_use_id === "string" ? names.get(entry.tool_use_id) : undefined;
      found.push({ message, block, tool: tool ?? "tool", chars });
    });
  });
  return found;
}

/** The tool_result's content as one text: a string stays a string, parts become one text part (a breakpoint on them kept). */
function retiredContent(content: unknown, text: string): unknown {
  if (!Array.isArray(content)) return text;
  const part: Record<string, unknown> = { type: asRecord(content[0])?.type ?? "text", text };
  for (const raw of content) {
    const marker = asRecord(raw);
    for (const field of ["cache_control", "prompt_cache_breakpoint"])
      if (marker?.[field] !== undefined) part[field] = marker[field];
  }
  return [part];
}

// ---------------------------------------------------------------------------------------------
// OpenAI: a `role: "tool"` message is one tool result (Chat Completions; Responses'
// `function_call_output` / `custom_tool_call_output` items in the view). Chat names it from the
// assistant's `tool_calls` by `tool_call_id`; Responses from the `function_call` /
// `custom_tool_call` item of the same `call_id`, read from `body.input` (the view is index-aligned).

function chatNames(messages: readonly unknown[]): (message: number) => string | undefined {
  const names = namesById(
    messages.flatMap((raw) => {
      const calls = asRecord(raw)?.tool_calls;
      if (!Array.isArray(calls)) return [];
      return calls.map((call) => {
        const entry = asRecord(call);
        return [entry?.id, asRecord(entry?.function)?.name ?? asRecord(entry?.custom)?.name] as [unknown, unknown];
      });
    }),
  );
  return (message) => {
    const id = asRecord(messages[message])?.tool_call_id;
    return typeof id === "string" ? names.get(id) : undefined;
  };
}

function responsesNames(input: readonly unknown[]): (message: number) => string | undefined {
  const names = namesById(
    input
      .map(asRecord)
      .flatMap((item) =>
        item?.type === "function_call" || item?.type === "custom_tool_call"
          ? [[item.call_id, item.name] as [unknown, unknown]]
          : [],
      ),
  );
  return (message) => {
    const id = asRecord(input[message])?.call_id;
    return typeof id === "string" ? names.get(id) : undefined;
  };
}

function openaiResults(
  messages: readonly unknown[],
  nameOf: (message: number) => string | undefined,
): TextToolResult[] {
  const found: TextToolResult[] = [];
  messages.forEach((raw, message) => {
    const entry = asRecord(raw);
    if (entry?.role !== "tool") return;
    const chars = textChars(entry.content);
    if (chars === null) return;
    found.push({ message, block: -1, tool: nameOf(message) ?? "tool", chars });
  });
  return found;
}

/** OpenAI Chat Completions: every text `role: "tool"` message, named from the assistant's `tool_calls`. */
export const chatToolResults = (messages: readonly unknown[]): TextToolResult[] =>
  openaiResults(messages, chatNames(messages));

/**
 * OpenAI Responses: every text `function_call_output` / `custom_tool_call_output` in the view,
 * named from `body.input` (the view does not carry the call ids; it is index-aligned with the items).
 */
export const responsesToolResults = (messages: readonly unknown[], body?: Record<string, unknown>): TextToolResult[] =>
  openaiResults(messages, Array.isArray(body?.input) ? responsesNames(body.input) : () => undefined);

/**
 * A copy of `messages` with each of `retired` replaced by `retiredToolResultText` (ids, block
 * types, `is_error` and breakpoints kept). Untouched messages are shared; the input is never modified.
 */
export function retireToolResults(messages: readonly unknown[], retired: readonly TextToolResult[]): unknown[] {
  const outbound = messages.slice();
  for (const result of retired) {
    const message = asRecord(outbound[result.message])!;
    const text = retiredToolResultText(result.tool, result.chars);
    if (result.block < 0) {
      outbound[result.message] = { ...message, content: retiredContent(message.content, text) };
      continue;
    }
    const content = (message.content as unknown[]).slice();
    const block = asRecord(content[result.block])!;
    content[result.block] = { ...block, content: retiredContent(block.content, text) };
    outbound[result.message] = { ...message, content };
  }
  return outbound;
}
