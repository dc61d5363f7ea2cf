/**
 * web_search: normalize, tier, pay the provider at most once per key, slice per caller, and the
 * one-shot keyless rescue (answered, never stored) when the configured provider fails; the rescue
 * runs inside the same single flight (see SearchJob.rescue).
 */
import type { LoadedConfig } from "../config/config.load";
import { sha256Hex } from "../hash";
import { cacheKeyPrefix, paidCall, type PaidCallDeps } from "./cache";
import type { SearchJob } from "./jobs";
import { keylessSearchProvider, resolveSearchProvider, type ResolvedSearchProvider } from "./providers/resolve";
import { limitTier, normalizeQuery } from "./query";
import type { SearchRequest, SearchResponse } from "./search.schema";

export interface SearchDeps extends PaidCallDeps {
  config: LoadedConfig;
}

/**
 * Cache key: provider + where it is reached + limit tier + normalized query (hashed, so any query
 * length fits a KV key). Different providers never share an entry.
 */
async function searchCacheKey(provider: ResolvedSearchProvider, normalizedQuery: string, tier: number): Promise<string> {
  return `${cacheKeyPrefix("search")}${provider.name}:${tier}:${await sha256Hex(`${provider.baseUrl}\n${normalizedQuery}`)}`;
}

export async function webSearch(deps: SearchDeps, input: SearchRequest): Promise<SearchResponse> {
  const { config } = deps.config;
  const provider = resolveSearchProvider(deps.config);
  const normalized = normalizeQuery(input.query);
  const tier = limitTier(input.limit);
  const job: SearchJob = { kind: "search", provider: provider.name, settings: provider, request: { query: normalized, count: tier } };
  // The one-shot keyless rescue travels with the job, so the single flight makes it once for all.
  if (config.web.keyless_fallback && provider.name !== "keyless") job.rescue = { provider: "keyless", settings: keylessSearchProvider(deps.config) };
  const key = await searchCacheKey(provider, normalized, tier);

  const answer = await paidCall(deps, key, job, {
    enabled: config.web.cache_enabled,
    ttlMs: config.web.cache_ttl_minutes * 60_000,
    store: true,
  });
  const rescued = answer.value.rescued === true;
  if (rescued && answer.cache !== "coalesced") deps.log.warn("search_rescued_by_keyless", { provider: provider.name });
  return {
    success: true,
    query: input.query,
    limit: input.limit,
    provider: answer.value.provider,
    results: answer.value.results.slice(0, input.limit).map((hit, index) => ({ ...hit, position: index + 1 })),
    // A rescued answer is never cacheable, whoever paid for it (api.md: `bypass`).
    cache: rescued ? "bypass" : answer.cache,
  };
}
