/**
 * POST /v1/cache/purge: drops the named search and extract entries everywhere they are kept (the
 * read tier, the single-flight owner's copy), keyed as the configured providers would key them.
 * A call in flight for a purged entry is not stopped; its answer is stored as usual.
 */
import type { RequestContext } from "../ports";
import { purgeCached } from "./cache";
import { extractCacheKey } from "./extract.service";
import { EXTRACT_FORMATS, type PurgeRequest, type PurgeResponse } from "./purge.schema";
import { resolveExtractProvider, resolveSearchProvider } from "./providers/resolve";
import { LIMIT_TIERS, limitTier, normalizeQuery } from "./query";
import { searchCacheKey } from "./search.service";

export async function purgeCache(ctx: RequestContext, input: PurgeRequest): Promise<PurgeResponse> {
  const keys: Promise<string>[] = [];
  if (input.search.length > 0) {
    const provider = resolveSearchProvider(ctx);
    for (const { query, limit } of input.search) {
      const tiers = limit === undefined ? LIMIT_TIERS : [limitTier(limit)];
      for (const tier of tiers) keys.push(searchCacheKey(provider, normalizeQuery(query), tier));
    }
  }
  if (input.extract.length > 0) {
    const provider = resolveExtractProvider(ctx);
    // Every URL passed the schema (absolute http or https) before any provider was resolved.
    for (const { url, format } of input.extract) {
      for (const each of format ? [format] : EXTRACT_FORMATS) keys.push(extractCacheKey(provider, new URL(url), each));
    }
  }
  const dropped = await Promise.all((await Promise.all(keys)).map((key) => purgeCached(ctx.ports, key)));
  return { success: true, purged: dropped.filter(Boolean).length };
}
