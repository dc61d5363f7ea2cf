/** The web_extract request and response (api.md); the same schemas feed OpenAPI and MCP. */
import * as z from "zod";
import { FreshnessAnswer, FreshnessRequest } from "./freshness.schema";

const URLS_SHAPE = 'urls must be an array of 1..5 URL strings, e.g. {"urls": ["https://example.com/"]}';

/** An absolute http or https URL (what web_extract fetches, and what a purge names). */
export const isHttpUrl = (url: string) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol);

export const ExtractRequest = z.object({
  urls: z
    .array(z.string().min(1).max(8192).describe("An http(s) URL"), {
      error: (issue) => (issue.input === undefined ? "urls is required" : URLS_SHAPE),
    })
    .min(1, URLS_SHAPE)
    .max(5, "urls takes at most 5 URLs per call; split the list into several calls")
    .describe("1..5 URLs; results come back in the same order"),
  format: z.enum(["markdown", "text"]).default("markdown").describe("markdown (default) or plain text"),
  ...FreshnessRequest.shape,
});
export type ExtractRequest = z.infer<typeof ExtractRequest>;

export const ExtractError = z.object({
  code: z
    .enum([
      "blocked_private_address",
      "host_not_found",
      "dns_unavailable",
      "blocked_by_policy",
      "fetch_failed",
      "provider_error",
      "too_large",
      "unsupported_content",
      "secret_in_url",
      "challenge_page",
    ])
    .describe(
      "Why this URL has no content; host_not_found: DNS has no address for the URL's host; challenge_page: a bot wall or challenge interstitial answered instead of the page (never stored)",
    ),
  message: z.string(),
});
export type ExtractError = z.infer<typeof ExtractError>;

export const ExtractResult = z.union([
  z.object({
    url: z.string().describe("As given"),
    final_url: z.string().describe("After redirects"),
    title: z.string(),
    content: z.string(),
    cached: z
      .boolean()
      .describe("Answered without paying the provider (from the cache, or joined an identical call in flight)"),
    truncated: z.boolean().describe("Content was cut to web.char_limit (head and tail kept)"),
    ...FreshnessAnswer.shape,
  }),
  z.object({ url: z.string(), error: ExtractError }),
]);
export type ExtractResult = z.infer<typeof ExtractResult>;

export const ExtractResponse = z.object({ success: z.literal(true), results: z.array(ExtractResult) });
export type ExtractResponse = z.infer<typeof ExtractResponse>;
