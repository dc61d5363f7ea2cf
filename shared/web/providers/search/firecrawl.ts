/**
 * Firecrawl search (`POST /v1/search`, Bearer key, `limit`). v1 answers `data` as a list; the
 * newer grouped shape (`data.web`) is read too so a self-hosted upgrade does not break us.
 */
import * as z from "zod";
import { parseAnswer, postJson, unexpectedShape } from "../http";
import type { SearchAdapter } from "../adapter.types";
import { rankHits } from "./hits";

const FIRECRAWL_MAX_RESULTS = 100;

const FirecrawlHit = z.object({ url: z.string(), title: z.string().nullish(), description: z.string().nullish() });

/** Firecrawl's documented search answer: a failure, or v1's list, or the grouped `data.web`. */
export const FirecrawlSearchResponse = z.discriminatedUnion("success", [
  z.object({ success: z.literal(false) }),
  z.object({
    success: z.literal(true),
    data: z.union([z.array(FirecrawlHit), z.object({ web: z.array(FirecrawlHit).optional() })]),
  }),
]);
export type FirecrawlSearchResponse = z.infer<typeof FirecrawlSearchResponse>;

export const firecrawlSearch: SearchAdapter = async (settings, request, fetch) => {
  const body = parseAnswer(
    settings,
    FirecrawlSearchResponse,
    await postJson(settings, fetch, "/v1/search", {
      query: request.query,
      limit: Math.min(request.count, FIRECRAWL_MAX_RESULTS),
    }),
  );
  if (!body.success) throw unexpectedShape(settings, "success: false");
  const results = Array.isArray(body.data) ? body.data : (body.data.web ?? []);
  return rankHits(
    results.map((r) => ({ title: r.title, url: r.url, description: r.description })),
    request.count,
  );
};
