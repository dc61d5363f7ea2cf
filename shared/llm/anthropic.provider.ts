/**
 * Anthropic as the proxy sees it: the Messages API (`/v1/messages`, `/v1/messages/count_tokens`),
 * a key in `x-api-key` (or a bearer token, as Claude Code sends `ANTHROPIC_AUTH_TOKEN`), errors as
 * `{"type": "error", "error": {"type", "message"}}`, and usage with the cache-write split by TTL.
 */
import * as z from "zod";
import { ANTHROPIC_MESSAGES } from "./anthropic.messages";
import { asRecord as record } from "./image-blocks";
import { bearerOf, defineLlmProvider, noUsage, tokenCount, type LlmUsage } from "./llm-provider.types";

/**
 * The usage object of a Messages answer, of `message_start`'s message and of `message_delta`. Any
 * count may be null (the SDK's `MessageDeltaUsage`): a null is "not given here", never a failure
 * that would drop the counts beside it.
 */
export const AnthropicUsage = z.looseObject({
  input_tokens: z.number().nullish().describe("Uncached input tokens"),
  cache_creation_input_tokens: z.number().nullish().describe("Tokens written to the cache, both TTLs"),
  cache_read_input_tokens: z.number().nullish().describe("Tokens read from the cache"),
  cache_creation: z
    .looseObject({
      ephemeral_5m_input_tokens: z.number().nullish().describe("Tokens written with the 5-minute TTL"),
      ephemeral_1h_input_tokens: z.number().nullish().describe("Tokens written with the 1-hour TTL"),
    })
    .nullish()
    .describe("The cache write split by TTL"),
  output_tokens: z.number().nullish().describe("Output tokens (cumulative in message_delta)"),
});
export type AnthropicUsage = z.infer<typeof AnthropicUsage>;

/** Overlays the fields a usage object carries on what was read before (message_delta repeats or completes message_start's). */
function mergeUsage(raw: unknown, sofar: LlmUsage | null): LlmUsage | null {
  const parsed = AnthropicUsage.safeParse(raw);
  if (!parsed.success) return sofar;
  const u = parsed.data;
  const out = { ...(sofar ?? noUsage()) };
  if (u.input_tokens != null) out.input = tokenCount(u.input_tokens);
  if (u.cache_read_input_tokens != null) out.cacheRead = tokenCount(u.cache_read_input_tokens);
  if (u.output_tokens != null) out.output = tokenCount(u.output_tokens);
  if (u.cache_creation != null) {
    out.cacheWrite5m = tokenCount(u.cache_creation.ephemeral_5m_input_tokens);
    out.cacheWrite1h = tokenCount(u.cache_creation.ephemeral_1h_input_tokens);
  } else if (u.cache_creation_input_tokens != null) {
    // No split: message_delta repeats the total without it. The split read before (message_start's)
    // stands as far as the total covers it; any write it does not account for is at the default
    // (5-minute) TTL, as is every write of an answer that never gave a split.
    const total = tokenCount(u.cache_creation_input_tokens);
    out.cacheWrite1h = Math.min(out.cacheWrite1h, total);
    out.cacheWrite5m = total - out.cacheWrite1h;
  }
  return out;
}

/** Anthropic's error `type` for a status (its errors page). */
function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 504) return "timeout_error";
  if (status === 529) return "overloaded_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

export const ANTHROPIC = defineLlmProvider({
  name: "anthropic",
  defaultBaseUrl: "https://api.anthropic.com",
  secretName: "ANTHROPIC_API_KEY",
  credentialOf: (headers) => headers.get("x-api-key")?.trim() || bearerOf(headers),
  credentialHeaders: ["x-api-key", "authorization"],
  withCredential: (headers, key) => headers.set("x-api-key", key),
  errorBody: (status, message) => ({ type: "error", error: { type: errorType(status), message } }),
  paths: {
    "/v1/messages": { format: ANTHROPIC_MESSAGES, counted: true },
    "/v1/messages/count_tokens": { format: ANTHROPIC_MESSAGES, counted: false },
  },
  usage: {
    fromAnswer: (answer) => {
      const usage = record(answer)?.usage;
      return usage === undefined ? null : mergeUsage(usage, null);
    },
    // message_start carries the prompt's usage in `message.usage`; message_delta the output's (and, lately, the prompt's again).
    fromEvent: (event, sofar) => {
      const e = record(event);
      if (e?.type === "message_start") return mergeUsage(record(e.message)?.usage, sofar);
      if (e?.type === "message_delta") return mergeUsage(e.usage, sofar);
      return sofar;
    },
  },
});
