/**
 * SearXNG: search on an instance the operator runs; no key, no public endpoint, no bill.
 *
 * SearXNG (`GET /search?format=json`), usually self-hosted and keyless. Its page size is set by
 * the instance, not the caller, so pages are read in order until the tier is filled, a page adds
 * nothing new, or MAX_PAGES is reached.
 */
import * as z from "zod";
import { callProvider, parseAnswer, providerUrl } from "./http";
import type { SearchAdapter } from "./adapter.types";
import { type HitCandidate, rankHits } from "./hits";
import { defineProvider } from "./provider.spec";

/** An instance page is typically 10 or more results; 10 pages covers the largest tier (100). */
const MAX_PAGES = 10;

/** SearXNG's JSON search answer (the fields we read). */
export const SearxngSearchResponse = z.object({
  results: z.array(z.object({ url: z.string(), title: z.string().nullish(), content: z.string().nullish() })),
});
export type SearxngSearchResponse = z.infer<typeof SearxngSearchResponse>;

export const searxngSearch: SearchAdapter = async (settings, request, fetch) => {
  const headers: Record<string, string> = {};
  // Some operators put their instance behind a token; send it when one is configured.
  if (settings.apiKey) headers.authorization = `Bearer ${settings.apiKey}`;
  const candidates: HitCandidate[] = [];
  const seen = new Set<string>();
  for (let page = 1; page <= MAX_PAGES && seen.size < request.count; page++) {
    const url = new URL(providerUrl(settings.baseUrl, "/search"));
    url.searchParams.set("q", request.query);
    url.searchParams.set("format", "json");
    if (page > 1) url.searchParams.set("pageno", String(page));
    const body = parseAnswer(
      settings,
      SearxngSearchResponse,
      await callProvider(settings, fetch, url.href, { method: "GET", headers }),
    );
    const before = seen.size;
    for (const r of body.results) {
      seen.add(r.url);
      candidates.push({ title: r.title, url: r.url, description: r.content });
    }
    if (seen.size === before) break;
  }
  return rankHits(candidates, request.count);
};

export const searxng = defineProvider({
  name: "searxng",
  secret: null,
  baseUrl: null,
  search: { usdPerCall: 0, keyRequired: false, adapter: searxngSearch },
});
