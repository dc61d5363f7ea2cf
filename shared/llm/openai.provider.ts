/**
 * OpenAI as the proxy sees it: Chat Completions (`/v1/chat/completions`, `messages`) and Responses
 * (`/v1/responses`, `input` items), a bearer key, errors as `{"error": {"message", "type", "param",
 * "code"}}`, and usage whose prompt count includes the cached (and, where reported, written) part.
 */
import * as z from "zod";
import { asRecord as record } from "./image-blocks";
import {
  bearerOf,
  COMPUTER_SCREENSHOT_ROLE,
  tokenCount,
  type ConversationFormat,
  type LlmProviderSpec,
  type LlmUsage,
  type StreamUsage,
} from "./llm-provider.types";

const Details = z.looseObject({
  cached_tokens: z.number().nullish().describe("Prompt tokens read from the cache"),
  cache_write_tokens: z.number().nullish().describe("Prompt tokens written to the cache, where the model reports them"),
});

/** Chat Completions usage (`prompt_tokens`) and Responses usage (`input_tokens`) in one schema. */
export const OpenAIUsage = z.looseObject({
  prompt_tokens: z.number().nullish().describe("Chat Completions: the whole prompt, cached part included"),
  completion_tokens: z.number().nullish().describe("Chat Completions: output tokens"),
  prompt_tokens_details: Details.nullish().describe("Chat Completions: the cached part of the prompt"),
  input_tokens: z.number().nullish().describe("Responses: the whole prompt, cached part included"),
  output_tokens: z.number().nullish().describe("Responses: output tokens"),
  input_tokens_details: Details.nullish().describe("Responses: the cached part of the prompt"),
});
export type OpenAIUsage = z.infer<typeof OpenAIUsage>;

function readUsage(raw: unknown): LlmUsage | null {
  const parsed = OpenAIUsage.safeParse(raw);
  if (!parsed.success) return null;
  const u = parsed.data;
  const prompt = tokenCount(u.prompt_tokens ?? u.input_tokens);
  const details = u.prompt_tokens_details ?? u.input_tokens_details;
  const cacheRead = Math.min(prompt, tokenCount(details?.cached_tokens));
  const cacheWrite = Math.min(prompt - cacheRead, tokenCount(details?.cache_write_tokens));
  return {
    input: prompt - cacheRead - cacheWrite,
    cacheWrite5m: cacheWrite,
    cacheWrite1h: 0,
    cacheRead,
    output: tokenCount(u.completion_tokens ?? u.output_tokens),
  };
}

/** Chat Completions: `body.messages`, the eviction module's OpenAI format as it is. */
const CHAT: ConversationFormat = {
  eviction: "openai",
  messagesOf: (body) => (Array.isArray(body.messages) ? body.messages : null),
  withMessages: (body, messages) => ({ ...body, messages }),
};

/** A computer_call_output's screenshot URL (a data: URL inline), or null (a file_id, or none). */
function screenshotUrl(item: Record<string, unknown>): string | null {
  const output = record(item.output);
  return output?.type === "computer_screenshot" && typeof output.image_url === "string" ? output.image_url : null;
}

/** Responses items that carry a tool's answer in `output` (a string, or a list of input parts). */
const TOOL_OUTPUTS = new Set(["function_call_output", "custom_tool_call_output"]);

/** Responses items the model wrote (besides an assistant message): a run of them answered one request. */
const MODEL_ITEMS = new Set([
  "reasoning",
  "function_call",
  "custom_tool_call",
  "computer_call",
  "local_shell_call",
  "shell_call",
  "apply_patch_call",
  "web_search_call",
  "file_search_call",
  "code_interpreter_call",
  "image_generation_call",
  "mcp_call",
  "mcp_list_tools",
  "mcp_approval_request",
]);

/**
 * Responses: `body.input` items seen as chat messages, so one eviction module reads both. A
 * `function_call_output` or `custom_tool_call_output` whose `output` is a list of parts is a
 * `role: "tool"` message (its images are tool images); a message item keeps its role and parts. What the model wrote for one request
 * (reasoning, calls, its message) is a run of items: the run's first item is the one `assistant`
 * message Chat Completions would have (the eviction counts requests by them), the rest are
 * messages without a role it counts. Any other item is a message without images. Edits go back to
 * the items they came from.
 */
const RESPONSES: ConversationFormat = {
  eviction: "openai",
  messagesOf: (body) => {
    if (!Array.isArray(body.input)) return null;
    let answering = false; // inside a run of the model's items
    return body.input.map((raw) => {
      const item = record(raw);
      const message = item && (item.type === "message" || (item.type === undefined && typeof item.role === "string"));
      const fromModel = (message && item.role === "assistant") || MODEL_ITEMS.has(item?.type as string);
      const opensRun = fromModel && !answering;
      answering = fromModel;
      if (TOOL_OUTPUTS.has(item?.type as string)) return { role: "tool", content: item!.output };
      if (item?.type === "computer_call_output") {
        const url = screenshotUrl(item);
        return {
          role: COMPUTER_SCREENSHOT_ROLE,
          content: url === null ? null : [{ type: "input_image", image_url: url }],
        };
      }
      if (message) return { role: opensRun || !fromModel ? item.role : "other", content: item.content };
      return { role: opensRun ? "assistant" : "other", content: null };
    });
  },
  withMessages: (body, messages) => {
    const before = RESPONSES.messagesOf(body)!;
    const input = (body.input as unknown[]).map((raw, i) => {
      const content = record(messages[i])?.content;
      if (record(raw)?.type === "computer_call_output") {
        // Its view is made anew on every read: compare the screenshot's URL, not the array.
        const url = Array.isArray(content) ? record(content[0])?.image_url : undefined;
        const item = record(raw)!;
        if (typeof url !== "string" || url === screenshotUrl(item)) return raw;
        return { ...item, output: { ...record(item.output), image_url: url } };
      }
      if (content === record(before[i])?.content) return raw;
      const item = record(raw)!;
      return TOOL_OUTPUTS.has(item.type as string) ? { ...item, output: content } : { ...item, content };
    });
    return { ...body, input };
  },
};

/**
 * Chat Completions streams usage only with `stream_options.include_usage` (its last chunk, with no
 * choices; every chunk before it carries `"usage": null`). A stream that did not ask is sent
 * asking, and relayed without the usage chunk and the nulls, as the caller's SDK expects it.
 */
const CHAT_STREAM_USAGE: StreamUsage = {
  ask: (body) => {
    if (body.stream !== true) return null;
    const options = record(body.stream_options);
    if (options?.include_usage === true) return null;
    return { ...body, stream_options: { ...options, include_usage: true } };
  },
  unasked: (event) => {
    if (!("usage" in event)) return event;
    if (Array.isArray(event.choices) && event.choices.length === 0) return null;
    const { usage: _asked, ...rest } = event;
    return rest;
  },
};

export const OPENAI: LlmProviderSpec = {
  name: "openai",
  defaultBaseUrl: "https://api.openai.com",
  secretName: "OPENAI_API_KEY",
  credentialOf: bearerOf,
  credentialHeaders: ["authorization", "api-key"],
  withCredential: (headers, key) => headers.set("authorization", `Bearer ${key}`),
  errorBody: (status, message, code) => ({
    error: {
      message,
      type: status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error",
      param: null,
      code,
    },
  }),
  paths: {
    "/v1/chat/completions": { format: CHAT, counted: true, streamUsage: CHAT_STREAM_USAGE },
    "/v1/responses": { format: RESPONSES, counted: true },
  },
  usage: {
    fromAnswer: (answer) => {
      const usage = record(answer)?.usage;
      return usage == null ? null : readUsage(usage);
    },
    // Chat: the chunk with `usage` (stream_options.include_usage); Responses: `response.completed`'s response.usage.
    fromEvent: (event, sofar) => {
      const e = record(event);
      if (e?.usage != null) return readUsage(e.usage) ?? sofar;
      const usage = record(e?.response)?.usage;
      if (usage != null && typeof e?.type === "string" && e.type.startsWith("response."))
        return readUsage(usage) ?? sofar;
      return sofar;
    },
  },
};
