/**
 * Tavily: search and extract (docs/stats.md "Prices" gives the page and the date of each price).
 *
 * Tavily search (`POST /search`). Tavily answers at most 20 results per call and has no paging,
 * so larger tiers get 20: the cap is the provider's, reported honestly by a shorter list.
 *
 * Tavily extract (`POST /extract`). A URL Tavily could not read comes back in `failed_results`
 * inside a 200, which is a provider failure for us.
 */
import * as z from "zod";
import { parseAnswer, postJson, unexpectedShape } from "./http";
import type { SearchAdapter, ExtractAdapter } from "./adapter.types";
import { rankHits } from "./hits";
import { providerError } from "../../http/errors";
import { toExtractedPage } from "./page";
import { defineProvider } from "./provider.spec";

const TAVILY_MAX_RESULTS = 20;

/** Tavily's documented search answer (the fields we read; others are ignored). */
export const TavilySearchResponse = z.object({
  results: z.array(z.object({ title: z.string().nullish(), url: z.string(), content: z.string().nullish() })),
});
export type TavilySearchResponse = z.infer<typeof TavilySearchResponse>;

export const tavilySearch: SearchAdapter = async (settings, request, fetch) => {
  const answer = await postJson(settings, fetch, "/search", {
    query: request.query,
    max_results: Math.min(request.count, TAVILY_MAX_RESULTS),
    search_depth: "basic",
    include_answer: false,
    include_raw_content: false,
  });
  const body = parseAnswer(settings, TavilySearchResponse, answer);
  return rankHits(
    body.results.map((r) => ({ title: r.title, url: r.url, description: r.content })),
    request.count,
  );
};

/** Tavily's documented extract answer (the fields we read). */
export const TavilyExtractResponse = z.object({
  results: z.array(z.object({ url: z.string(), raw_content: z.string().nullish(), title: z.string().nullish() })),
  failed_results: z.array(z.unknown()).optional(),
});
export type TavilyExtractResponse = z.infer<typeof TavilyExtractResponse>;

export const tavilyExtract: ExtractAdapter = async (settings, request, fetch) => {
  const body = parseAnswer(
    settings,
    TavilyExtractResponse,
    await postJson(settings, fetch, "/extract", { urls: [request.url], format: "markdown", extract_depth: "basic" }),
  );
  const result = body.results[0];
  if (!result) {
    const failed = (body.failed_results ?? []).length > 0;
    throw failed ? providerError(settings.name, "it could not read the page") : unexpectedShape(settings, "no results");
  }
  return toExtractedPage(request, {
    finalUrl: result.url,
    title: result.title,
    markdown: result.raw_content ?? "",
  });
};

export const tavily = defineProvider({
  name: "tavily",
  secret: "TAVILY_API_KEY",
  baseUrl: "https://api.tavily.com",
  // 1 credit a basic search; pay-as-you-go credit $0.008.
  search: { usdPerCall: 0.008, keyRequired: true, adapter: tavilySearch },
  // 1 credit per 5 URLs of a basic extract; we send one URL a call.
  extract: { usdPerCall: 0.0016, keyRequired: true, adapter: tavilyExtract },
});
