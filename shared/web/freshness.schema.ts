/**
 * How fresh a caller wants a web_search / web_extract answer (docs/api.md, "Freshness, per
 * request"): `max_age` and `store` in the body, or the same said with `Cache-Control` request
 * headers; and the `age` / `cached_at` every answer carries.
 */
import * as z from "zod";

/** A year in seconds: the longest `max_age` (no entry lives longer than `web.cache_ttl_minutes` anyway). */
export const MAX_AGE_LIMIT_SECONDS = 365 * 24 * 60 * 60;

export const FreshnessRequest = z.object({
  max_age: z
    .preprocess(
      // Clamped before the integer check, which stops at the safe-integer range: 1e20 is an integer too.
      (age) => (typeof age === "number" && Number.isInteger(age) ? Math.min(age, MAX_AGE_LIMIT_SECONDS) : age),
      z.number().int().min(0).optional(),
    )
    .describe(
      "Most seconds since the provider answered that a cached answer may have (integer ≥ 0; over a year reads as a year); older is not served and the call pays the provider, the fresh answer replacing the stored one. 0 always fetches (or joins an identical call already fetching). Header form: Cache-Control: max-age=N, or no-cache for 0",
    ),
  store: z
    .boolean()
    .optional()
    .describe(
      "false: the answer is neither read from nor written to the cache (default true). Header form: Cache-Control: no-store",
    ),
});
export type FreshnessRequest = z.infer<typeof FreshnessRequest>;

export const FreshnessAnswer = z.object({
  age: z.number().int().min(0).describe("Whole seconds since the provider answered (0 on a miss)"),
  cached_at: z.string().describe("When the provider answered (ISO time)"),
});
export type FreshnessAnswer = z.infer<typeof FreshnessAnswer>;

/**
 * The `Cache-Control` request directives as body fields (which win over them): `no-cache` is
 * `max_age: 0`, `max-age=N` is `max_age: N` (the smaller when both, capped at a year), `no-store`
 * is `store: false`. Unknown or malformed directives are ignored, as HTTP caches do.
 *
 * @example cacheControlFields(new Headers({ "cache-control": "max-age=60, no-store" })) // { max_age: 60, store: false }
 */
export function cacheControlFields(headers: Headers): FreshnessRequest {
  const fields: FreshnessRequest = {};
  const header = headers.get("cache-control");
  if (!header) return fields;
  const tighten = (seconds: number) =>
    (fields.max_age = Math.min(fields.max_age ?? seconds, seconds, MAX_AGE_LIMIT_SECONDS));
  for (const directive of header.split(",")) {
    const [rawName = "", ...rest] = directive.split("=");
    const name = rawName.trim().toLowerCase();
    const argument =
      rest.length === 0
        ? undefined
        : rest
            .join("=")
            .trim()
            .replace(/^"(.*)"$/, "$1");
    if (name === "no-cache" && argument === undefined) tighten(0);
    else if (name === "no-store" && argument === undefined) fields.store = false;
    else if (name === "max-age" && argument !== undefined && /^\d+$/.test(argument)) tighten(deltaSeconds(argument));
  }
  return fields;
}

/**
 * A `max-age` argument's seconds: leading zeros are only zeros, and a value too long to hold is
 * the cap (RFC 9111, 1.2.2: a delta-seconds past what a cache can represent is taken as its greatest).
 */
function deltaSeconds(digits: string): number {
  const significant = digits.replace(/^0+(?=\d)/, "");
  return significant.length > 15 ? MAX_AGE_LIMIT_SECONDS : Number(significant);
}
