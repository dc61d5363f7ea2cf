/**
 * OpenAI as the proxy sees it: Chat Completions (`/v1/chat/completions`, `messages`) and Responses
 * (`/v1/responses`, `input` items), a bearer key, errors as `{"error": {"message", "type", "param",
 * "code"}}`, and usage whose prompt count includes the cached (and, where reported, written) part.
 */
import * as z from "zod";
import { asRecord as record } from "./image-blocks";
import { OPENAI_CHAT } from "./openai.chat";
import { OPENAI_RESPONSES } from "./openai.responses";
import { bearerOf, defineLlmProvider, tokenCount, type LlmUsage, type StreamUsage } from "./llm-provider.types";

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

export const OPENAI = defineLlmProvider({
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
    "/v1/chat/completions": { format: OPENAI_CHAT, counted: true, streamUsage: CHAT_STREAM_USAGE },
    "/v1/responses": { format: OPENAI_RESPONSES, counted: true },
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
});
