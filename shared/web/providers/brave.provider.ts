/**
 * Brave Search API: search.
 *
 * Brave web search (`GET /res/v1/web/search`). Brave returns at most 20 results per page and
 * counts `offset` in pages (0..9), so a larger tier is fetched page by page until it is filled
 * or Brave says there are no more.
 */
import * as z from "zod";
import { callProvider, parseAnswer, providerUrl } from "./http";
import type { SearchAdapter } from "./adapter.types";
import { htmlSnippetToText } from "../html-entities";
import { type HitCandidate, rankHits } from "./hits";
import { defineProvider } from "./provider.spec";

const BRAVE_PAGE_SIZE = 20;
const BRAVE_MAX_OFFSET = 9;

/**
 * Brave's documented web search answer (the fields we read). `web` is absent when Brave found no
 * web results, which is how it says "nothing"; `type` is always "search".
 */
export const BraveSearchResponse = z.object({
  type: z.literal("search"),
  query: z.object({ more_results_available: z.boolean().optional() }).optional(),
  web: z
    .object({
      results: z.array(z.object({ title: z.string().nullish(), url: z.string(), description: z.string().nullish() })),
    })
    .optional(),
});
export type BraveSearchResponse = z.infer<typeof BraveSearchResponse>;

export const braveSearch: SearchAdapter = async (settings, request, fetch) => {
  const pageSize = Math.min(request.count, BRAVE_PAGE_SIZE);
  const headers: Record<string, string> = {};
  if (settings.apiKey) headers["x-subscription-token"] = settings.apiKey;
  const candidates: HitCandidate[] = [];
  for (let offset = 0; offset <= BRAVE_MAX_OFFSET && candidates.length < request.count; offset++) {
    const url = new URL(providerUrl(settings.baseUrl, "/res/v1/web/search"));
    url.searchParams.set("q", request.query);
    url.searchParams.set("count", String(pageSize));
    if (offset > 0) url.searchParams.set("offset", String(offset));
    const body = parseAnswer(
      settings,
      BraveSearchResponse,
      await callProvider(settings, fetch, url.href, { method: "GET", headers }),
    );
    const page = body.web?.results ?? [];
    // Brave marks its highlights with <strong> and escapes entities; agents want plain text.
    for (const r of page) {
      candidates.push({ title: plain(r.title), url: r.url, description: plain(r.description) });
    }
    if (page.length < pageSize || body.query?.more_results_available === false) break;
  }
  return rankHits(candidates, request.count);
};

function plain(value: string | null | undefined): string {
  return typeof value === "string" ? htmlSnippetToText(value) : "";
}

export const brave = defineProvider({
  name: "brave",
  secret: "BRAVE_API_KEY",
  baseUrl: "https://api.search.brave.com",
  // The Search plan: $5 per 1,000 requests.
  search: { usdPerCall: 0.005, keyRequired: true, adapter: braveSearch },
});
