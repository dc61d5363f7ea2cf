/**
 * web_search: normalize, tier, pay the provider at most once per key, slice per caller, and the
 * one-shot keyless rescue (answered, never stored) when the configured provider fails.
 */
import type { LoadedConfig } from "../config/config.load";
import { AppError } from "../http/errors";
import { sha256Hex } from "../hash";
import { paidCall, type PaidCallDeps } from "./cache";
import type { SearchJob, SearchValue } from "./jobs";
import { keylessSearchProvider, resolveSearchProvider, type ResolvedSearchProvider } from "./providers/resolve";
import { runJob } from "./jobs";
import { limitTier, normalizeQuery } from "./query";
import type { SearchRequest, SearchResponse } from "./search.schema";

export interface SearchDeps extends PaidCallDeps {
  config: LoadedConfig;
}

/**
 * Cache key: provider + where it is reached + limit tier + normalized query (hashed, so any query
 * length fits a KV key). Different providers never share an entry.
 */
export async function searchCacheKey(provider: ResolvedSearchProvider, normalizedQuery: string, tier: number): Promise<string> {
  return `search:v1:${provider.name}:${tier}:${await sha256Hex(`${provider.baseUrl}\n${normalizedQuery}`)}`;
}

export async function webSearch(deps: SearchDeps, input: SearchRequest): Promise<SearchResponse> {
  const { config } = deps.config;
  const provider = resolveSearchProvider(deps.config);
  const normalized = normalizeQuery(input.query);
  const tier = limitTier(input.limit);
  const job: SearchJob = { kind: "search", provider: provider.name, settings: provider, request: { query: normalized, count: tier } };
  const key = await searchCacheKey(provider, normalized, tier);

  let answer: { value: SearchValue; cache: SearchResponse["cache"] };
  try {
    answer = await paidCall(deps, key, job, {
      enabled: config.web.cache_enabled,
      ttlMs: config.web.cache_ttl_minutes * 60_000,
      store: true,
    });
  } catch (error) {
    const rescued = await keylessRescue(deps, job, error);
    if (!rescued) throw error;
    answer = { value: rescued, cache: "bypass" };
  }
  return {
    success: true,
    query: input.query,
    limit: input.limit,
    provider: answer.value.provider,
    results: answer.value.results.slice(0, input.limit).map((hit, index) => ({ ...hit, position: index + 1 })),
    cache: answer.cache,
  };
}

/** One keyless attempt after a provider failure (`web.keyless_fallback`); never cached. */
async function keylessRescue(deps: SearchDeps, failed: SearchJob, error: unknown): Promise<SearchValue | null> {
  const isProviderFailure = error instanceof AppError && (error.code === "provider_error" || error.code === "provider_timeout");
  if (!isProviderFailure || !deps.config.config.web.keyless_fallback || failed.provider === "keyless") return null;
  const keyless = keylessSearchProvider(deps.config);
  try {
    const value = await runJob({ ...failed, provider: "keyless", settings: keyless }, deps.fetch);
    deps.log.warn("search_rescued_by_keyless", { provider: failed.provider, code: error.code });
    return value;
  } catch {
    return null;
  }
}
