/**
 * Firecrawl search (`POST /v1/search`, Bearer key, `limit`). v1 answers `data` as a list; the
 * newer grouped shape (`data.web`) is read too so a self-hosted upgrade does not break us.
 */
import { postJson, unexpectedShape } from "../http";
import type { SearchAdapter } from "../provider.types";
import { arrayField, isRecord, rankHits } from "./hits";

export const FIRECRAWL_MAX_RESULTS = 100;

export const firecrawlSearch: SearchAdapter = async (settings, request, fetch) => {
  const body = await postJson(settings, fetch, "/v1/search", { query: request.query, limit: Math.min(request.count, FIRECRAWL_MAX_RESULTS) });
  if (isRecord(body) && body.success === false) throw unexpectedShape(settings, "success: false");
  const data = isRecord(body) ? body.data : undefined;
  const results = (Array.isArray(data) ? data : arrayField(data, "web")).filter(isRecord);
  return rankHits(
    results.map((r) => ({ title: r.title, url: r.url, description: r.description })),
    request.count,
  );
};
