/**
 * Tavily search (`POST /search`). Tavily answers at most 20 results per call and has no paging,
 * so larger tiers get 20: the cap is the provider's, reported honestly by a shorter list.
 */
import * as z from "zod";
import { parseAnswer, postJson } from "../http";
import type { SearchAdapter } from "../adapter.types";
import { rankHits } from "./hits";

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
