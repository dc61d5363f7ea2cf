/**
 * Firecrawl search (`POST /v1/search`, Bearer key, `limit`). v1 answers `data` as a list; the
 * newer grouped shape (`data.web`) is read too so a self-hosted upgrade does not break us.
 */
import * as z from "zod";
import { parseAnswer, postJson, unexpectedShape } from "../http";
import type { SearchAdapter } from "../provider.types";
import { isRecord, rankHits } from "./hits";

export const FIRECRAWL_MAX_RESULTS = 100;

const FirecrawlHit = z.object({ url: z.string(), title: z.string().nullish(), description: z.string().nullish() });

/** Firecrawl's documented search answer: v1's list, or the grouped `data.web`. */
export const FirecrawlSearchResponse = z.object({
  success: z.literal(true),
  data: z.union([z.array(FirecrawlHit), z.object({ web: z.array(FirecrawlHit).optional() })]),
});
export type FirecrawlSearchResponse = z.infer<typeof FirecrawlSearchResponse>;

export const firecrawlSearch: SearchAdapter = async (settings, request, fetch) => {
  const answer = await postJson(settings, fetch, "/v1/search", { query: request.query, limit: Math.min(request.count, FIRECRAWL_MAX_RESULTS) });
  if (isRecord(answer) && answer.success === false) throw unexpectedShape(settings, "success: false");
  const { data } = parseAnswer(settings, FirecrawlSearchResponse, answer);
  const results = Array.isArray(data) ? data : (data.web ?? []);
  return rankHits(
    results.map((r) => ({ title: r.title, url: r.url, description: r.description })),
    request.count,
  );
};
