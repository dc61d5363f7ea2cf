/**
 * The single-flight keys of web_search and web_extract calls, made by the service's own functions
 * from a loaded configuration: what a test asks a flight's joiner count for (the FlightDO on
 * workerd, test/deno/flight-probe.ts on Deno), to hold a provider's answer until every caller joined.
 */
import type { LoadedConfig } from "../../shared/config/config.load";
import { extractCacheKey } from "../../shared/web/extract.service";
import { resolveExtractProvider, resolveSearchProvider } from "../../shared/web/providers/resolve";
import { limitTier, normalizeQuery } from "../../shared/web/query";
import { searchCacheKey } from "../../shared/web/search.service";

/** The key of `POST /v1/web_search {query, limit}` (limit 5 by default). */
export function searchFlightKey(loaded: LoadedConfig, query: string, limit = 5): Promise<string> {
  return searchCacheKey(resolveSearchProvider(loaded), normalizeQuery(query), limitTier(limit));
}

/** The key of `POST /v1/web_extract` for `url` (markdown). */
export function extractFlightKey(loaded: LoadedConfig, url: string): Promise<string> {
  return extractCacheKey(resolveExtractProvider(loaded), new URL(url), "markdown");
}
