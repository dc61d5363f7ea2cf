/** Search-cache arithmetic: query normalization and limit tiers (docs/web.md, "Search cache"). */

export const LIMIT_TIERS = [10, 20, 50, 100] as const;

/**
 * Trim, lower-case, collapse internal whitespace, so trivially different spellings share an entry.
 * @example normalizeQuery("  Weather  in\tVegas ") // "weather in vegas"
 */
export function normalizeQuery(query: string): string {
  return query.trim().toLowerCase().replace(/\s+/gu, " ");
}

/**
 * The smallest tier ≥ limit; the provider is asked for the tier and each caller gets its own slice.
 * @example limitTier(11) // 20
 */
export function limitTier(limit: number): number {
  return LIMIT_TIERS.find((tier) => tier >= limit) ?? 100;
}
