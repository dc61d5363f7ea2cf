/**
 * web_search: normalize, tier, pay the provider at most once per key, slice per caller, and the
 * one-shot keyless rescue (answered, never stored) when the configured provider fails; the rescue
 * runs inside the same single flight (see SearchJob.rescue).
 */
import { deepFreeze } from "../frozen";
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

/** What a search request's input resolves to under one configuration (the same for a repeat of it). */
interface SearchPlan {
  config: object;
  secrets: object;
  provider: ResolvedSearchProvider;
  key: string;
  job: SearchJob;
  /** The last hit's answer built from it, for a hit on the same stored answer at the same age. */
  last?: { value: object; age: number; cachedAt: string; body: Readonly<SearchResponse> };
}

/**
 * Plans kept per input object: a repeated request's input is one object (the app keeps a small
 * body's validated input, docs/speed.md), so its provider, key and job are worked out once.
 */
const plans = new WeakMap<object, SearchPlan>();

async function planOf(ctx: RequestContext, input: SearchRequest): Promise<SearchPlan> {
  const { config, secrets } = ctx;
  const known = plans.get(input);
  if (known && known.config === config && known.secrets === secrets) return known;
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
  const plan = { config, secrets, provider, key: await searchCacheKey(provider, normalized, tier), job };
  if (Object.isFrozen(input)) plans.set(input, plan);
  return plan;
}

export async function webSearch(ctx: RequestContext, input: SearchRequest): Promise<Readonly<SearchResponse>> {
  const { ports, config } = ctx;
  const plan = await planOf(ctx, input);
  const { provider, key, job } = plan;

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
  const last = plan.last;
  if (
    last &&
    answer.cache === "hit" &&
    last.value === answer.value &&
    last.age === answer.age &&
    last.cachedAt === answer.cachedAt
  )
    return last.body;
  const body: SearchResponse = {
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
  // Only a hit's answer is the same again: kept frozen, so no reader changes the next one's.
  if (answer.cache === "hit" && plans.get(input) === plan)
    plan.last = {
      value: answer.value,
      age: answer.age,
      cachedAt: answer.cachedAt,
      body: deepFreeze(body),
    };
  return body;
}
