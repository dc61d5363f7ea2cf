/**
 * web_extract, in the order docs/web.md ("The order of steps") makes a security property: validate, refuse the whole call on
 * a secret in any URL, SSRF per URL, resolve the provider, website policy per URL, and only then
 * the cache (KV, then the per-key single-flight), the provider, and the store. A cache hit may
 * skip the network, never a check: a hit's stored final URL, when it is not the requested one, is
 * checked again.
 */
import type { LoadedConfig } from "../config/config.load";
import { AppError } from "../http/errors";
import { fieldName } from "../http/validate";
import { rememberedSha256Hex } from "../hash";
import type { RequestContext } from "../ports";
import { recordWebCall } from "../stats/ledger";
import {
  assertAllowedByPolicy,
  assertNoSecretInUrls,
  assertSsrfSafe,
  hostListMatcher,
  normalizeUrlForCache,
  parseTargetUrl,
} from "../safety/gate";
import { cacheKeyPrefix, paidCall } from "./cache";
import {
  ExtractError as ExtractErrorSchema,
  type ExtractError,
  type ExtractRequest,
  type ExtractResponse,
  type ExtractResult,
  isHttpUrl,
} from "./extract.schema";
import type { ExtractJob } from "./job.types";
import { resolveExtractProvider, type ResolvedExtractProvider } from "./providers/resolve";

/** Bytes the direct provider reads from one page: a little over `web.max_page_chars` of UTF-8. */
const DIRECT_MAX_BYTES = 16 * 1024 * 1024;

/** The safety gate's refusals (counted as `refused` in the ledger, wherever in the call they happen). */
const GATE_REFUSALS: ReadonlySet<string> = new Set([
  "blocked_private_address",
  "host_not_found",
  "blocked_by_policy",
  "secret_in_url",
  "dns_unavailable",
]);

/** In-band error codes of api.md; anything else escapes as a real error. */
const IN_BAND: ReadonlySet<string> = new Set(ExtractErrorSchema.shape.code.options);

export interface ExtractAnswer {
  body: ExtractResponse;
  /** `HIT=n,MISS=n` for the X-Cache header. */
  cacheHeader: string;
}

export async function webExtract(ctx: RequestContext, input: ExtractRequest): Promise<ExtractAnswer> {
  const { ports, config } = ctx;
  // Step 2 before anything else: one secret refuses the whole call.
  assertNoSecretInUrls(input.urls);
  const targets = input.urls.map((raw, index) => {
    const url = isHttpUrl(raw) ? new URL(raw) : null;
    if (!url || url.hostname === "") {
      throw new AppError(400, "invalid_request", `${fieldName(["urls", index])} is not a full http or https URL.`, {
        details: [{ path: ["urls", index], message: `${fieldName(["urls", index])} is not a full http or https URL` }],
      });
    }
    return url;
  });
  const resolver = ports.dnsResolver(config.security.dns_resolver_url);
  const ssrfOptions = { allowPrivate: config.security.allow_private_urls, resolver };

  // Step 3, per URL, in-band; a host open only under security.allow_private_urls is never stored.
  const local = targets.map(() => false);
  const refusals = await Promise.all(
    targets.map((url, i) =>
      refusalOf(async () => {
        local[i] = (await assertSsrfSafe(url, ssrfOptions)).local;
      }),
    ),
  );
  // Step 4: which backend answers (503 when none can).
  const provider = resolveExtractProvider(ctx);
  // Step 5, per URL, in-band.
  for (const [i, url] of targets.entries()) {
    refusals[i] ??= await refusalOf(() => assertAllowedByPolicy(url, config.security.website_blocklist));
  }

  const exempt = hostListMatcher(config.web.cache_exempt_hosts);
  let hits = 0;
  let misses = 0;
  const results = await Promise.all(
    targets.map(async (url, i): Promise<ExtractResult> => {
      const given = input.urls[i]!;
      const refused = refusals[i];
      if (refused) {
        recordWebCall(ports.ledger, "web_extract", provider.name, "refused", ports.clock());
        return { url: given, error: refused };
      }
      try {
        const job = extractJob(ctx, provider, url, input.format);
        const key = await extractCacheKey(provider, url, input.format);
        const store = input.store !== false && !exempt(url.hostname) && !local[i];
        const answer = await paidCall(ports, key, job, {
          enabled: config.web.cache_enabled,
          ttlMs: config.web.cache_ttl_minutes * 60_000,
          store,
          maxAge: input.max_age,
          charLimit: config.web.char_limit,
        });
        const cached = answer.cache === "hit" || answer.cache === "coalesced";
        if (answer.cache !== "miss" || provider.name !== "direct") {
          // A final URL other than the requested one passes the same checks as a fresh one: on a
          // hit (policy may have changed since it was stored), and wherever a hosted extractor
          // followed the redirects. The direct fetch gated every hop of its own call; when the final
          // URL is the requested one, steps 3 and 5 checked it moments ago in this request.
          const final = parseTargetUrl(answer.value.page.final_url || job.request.url);
          if (final.href !== job.request.url) {
            await assertSsrfSafe(final, ssrfOptions);
            assertAllowedByPolicy(final, config.security.website_blocklist);
          }
        }
        if (cached) hits++;
        else misses++;
        recordWebCall(ports.ledger, "web_extract", provider.name, answer.cache, ports.clock());
        // paidCall answers the content already cut to char_limit, and flags the cut.
        const { page } = answer.value;
        return {
          url: given,
          final_url: page.final_url,
          title: page.title,
          content: page.content,
          cached,
          truncated: answer.value.truncated === true,
          age: answer.age,
          cached_at: answer.cachedAt,
        };
      } catch (error) {
        // A redirect hop or a hit's stored final URL the gate refuses is a refusal, not a failure.
        const outcome = error instanceof AppError && GATE_REFUSALS.has(error.code) ? "refused" : "error";
        recordWebCall(ports.ledger, "web_extract", provider.name, outcome, ports.clock());
        return { url: given, error: inBandError(error) };
      }
    }),
  );
  return { body: { success: true, results }, cacheHeader: `HIT=${hits},MISS=${misses}` };
}

/**
 * Cache key: provider + how it is reached + format + normalized URL (hashed). Path and query keep
 * their case and order, so two different resources never share an entry.
 */
export async function extractCacheKey(provider: ResolvedExtractProvider, url: URL, format: string): Promise<string> {
  return `${cacheKeyPrefix("extract")}${provider.name}:${format}:${await rememberedSha256Hex(`${provider.baseUrl}\n${normalizeUrlForCache(url)}`)}`;
}

function extractJob(
  loaded: LoadedConfig,
  provider: ResolvedExtractProvider,
  url: URL,
  format: ExtractRequest["format"],
): ExtractJob {
  const { config } = loaded;
  const job: ExtractJob = {
    kind: "extract",
    provider: provider.name,
    settings: provider,
    // Without the fragment, as in the key: it is never sent to a site, and a stored page must not
    // carry one caller's fragment (in its final URL) to the next.
    request: { url: normalizeUrlForCache(url), format },
    maxPageChars: config.web.max_page_chars,
    cacheExemptHosts: config.web.cache_exempt_hosts,
  };
  if (provider.name === "direct") {
    job.direct = {
      allowPrivate: config.security.allow_private_urls,
      resolverUrl: config.security.dns_resolver_url,
      blocklist: config.security.website_blocklist,
      maxBytes: DIRECT_MAX_BYTES,
    };
  }
  return job;
}

type InBandError = ExtractError;

function inBandError(error: unknown): InBandError {
  if (!(error instanceof AppError)) throw error;
  if (IN_BAND.has(error.code)) return { code: error.code as InBandError["code"], message: error.message };
  if (error.code === "provider_timeout") return { code: "provider_error", message: error.message };
  // A malformed redirect target is the page's failure, not the caller's request.
  if (error.code === "invalid_request") return { code: "fetch_failed", message: error.message };
  throw error;
}

/** Runs one gate step for one URL; its refusal becomes the URL's in-band error. */
async function refusalOf(check: () => void | Promise<void>): Promise<InBandError | undefined> {
  try {
    await check();
    return undefined;
  } catch (error) {
    return inBandError(error);
  }
}
