/**
 * Tavily search (`POST /search`). Tavily answers at most 20 results per call and has no paging,
 * so larger tiers get 20: the cap is the provider's, reported honestly by a shorter list.
 */
import { postJson } from "../http";
import type { SearchAdapter } from "../provider.types";
import { arrayField, isRecord, rankHits } from "./hits";

export const TAVILY_MAX_RESULTS = 20;

export const tavilySearch: SearchAdapter = async (settings, request, fetch) => {
  const body = await postJson(settings, fetch, "/search", {
    query: request.query,
    max_results: Math.min(request.count, TAVILY_MAX_RESULTS),
    search_depth: "basic",
    include_answer: false,
    include_raw_content: false,
  });
  const results = arrayField(body, "results").filter(isRecord);
  return rankHits(
    results.map((r) => ({ title: r.title, url: r.url, description: r.content })),
    request.count,
  );
};
