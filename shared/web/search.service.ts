/**
 * web_search: normalize, tier, pay the provider at most once per key, slice per caller, and the
 * one-shot keyless rescue (answered, never stored) when the configured provider fails; the rescue
 * runs inside the same single flight (see SearchJob.rescue).
 */
import { rememberedSha256Hex } from "../hash";
import type { RequestContext } from "../ports";
import { recordWebCall } from "../stats/ledger";
import { cacheKeyPrefix, paidCall } from "./cache";
import type { SearchJob } from "./job.types";
import { keylessSearchProvider, resolveSearchProvider, type ResolvedSearchProvider } from "./providers/resolve";
import { limitTier, normalizeQuery } from "./query";
import type { SearchRequest, SearchResponse } from "./search.schema";

/**
 * Cache key: provider + where it is reached + limit tier + normalized query (hashed, so any query
 * length fits a KV key). Different providers never share an entry.
 */
export async function searchCacheKey(
  provider: ResolvedSearchProvider,
  normalizedQuery: string,
  tier: number,
): Promise<string> {
  return `${cacheKeyPrefix("search")}${provider.name}:${tier}:${await rememberedSha256Hex(`${provider.baseUrl}\n${normalizedQuery}`)}`;
}

export async function webSearch(ctx: RequestContext, input: SearchRequest): Promise<SearchResponse> {
  const { ports, config } = ctx;
  const provider = resolveSearchProvider(ctx);
  const normalized = normalizeQuery(input.query);
  const tier = limitTier(input.limit);
  const job: SearchJob = {
    kind: "search",
    provider: provider.name,
    settings: provider,
    request: { query: normalized, count: tier },
  };
  // The one-shot keyless rescue travels with the job, so the single flight makes it once for all.
  if (config.web.keyless_fallback && provider.name !== "keyless")
    job.rescue = { provider: "keyless", settings: keylessSearchProvider(ctx) };
  const key = await searchCacheKey(provider, normalized, tier);

  const answer = await paidCall(ports, key, job, {
    enabled: config.web.cache_enabled,
    ttlMs: config.web.cache_ttl_minutes * 60_000,
    store: input.store !== false,
    maxAge: input.max_age,
  }).catch((error: unknown) => {
    recordWebCall(ports.ledger, "web_search", provider.name, "error", ports.clock());
    throw error;
  });
  const rescued = answer.value.rescued === true;
  // A rescue is a bypass for the one call that made it; its joiners are coalesced calls. Both are
  // the rescuer's (keyless: no bill), so joining one saves nothing of the failed provider's price.
  const paidRescue = rescued && answer.cache === "miss";
  recordWebCall(
    ports.ledger,
    "web_search",
    rescued ? answer.value.provider : provider.name,
    answer.cache,
    ports.clock(),
    paidRescue ? { bypass: 1 } : {},
  );
  if (paidRescue) ports.log.warn("search_rescued_by_keyless", { provider: provider.name });
  return {
    success: true,
    query: input.query,
    limit: input.limit,
    provider: answer.value.provider,
    results: answer.value.results.slice(0, input.limit).map((hit, index) => ({ ...hit, position: index + 1 })),
    // A rescued answer is never cacheable, whoever paid for it (api.md: `bypass`).
    cache: rescued ? "bypass" : answer.cache,
    age: answer.age,
    cached_at: answer.cachedAt,
  };
}
