/**
 * How many callers of one web_search or web_extract wait in its FlightDO: the cache key made by
 * the service's own functions from the test environment, asked of the object by RPC. For
 * `answeredTogether` (test/support/emulator-client.ts), which holds the provider's answer until
 * every concurrent caller joined.
 */
import { CONFIG_PLACES, loadConfig } from "../../shared/config/config.load";
import { extractCacheKey } from "../../shared/web/extract.service";
import { resolveExtractProvider, resolveSearchProvider } from "../../shared/web/providers/resolve";
import { limitTier, normalizeQuery } from "../../shared/web/query";
import { searchCacheKey } from "../../shared/web/search.service";
import { workersDeps } from "../../workers/deps";
import { testEnv } from "./helpers";

const configWith = (vars: Record<string, unknown>) => loadConfig({ ...testEnv, ...vars }, CONFIG_PLACES.workers);

/** Callers of `POST /v1/web_search {query, limit}` (limit 5 by default) waiting on the one paying. */
export async function searchJoiners(query: string, limit = 5, vars: Record<string, unknown> = {}): Promise<number> {
  const key = await searchCacheKey(resolveSearchProvider(configWith(vars)), normalizeQuery(query), limitTier(limit));
  return workersDeps(testEnv).flight.joiners(key);
}

/** Callers of `POST /v1/web_extract` for `url` (markdown) waiting on the one paying. */
export async function extractJoiners(url: string, vars: Record<string, unknown> = {}): Promise<number> {
  const key = await extractCacheKey(resolveExtractProvider(configWith(vars)), new URL(url), "markdown");
  return workersDeps(testEnv).flight.joiners(key);
}
