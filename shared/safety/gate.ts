/**
 * The order of checks for user-supplied URLs, in one place (docs/web.md, "The order of steps":
 * the order is a security property). Routes call the steps separately so provider resolution can sit between
 * SSRF and policy; `gateUrl` runs them all for a single URL (and for every redirect hop).
 */
import { AppError } from "../http/errors";
import { fieldName } from "../http/validate";
import { compileHostList } from "./host-list";
import { findSecretInUrl } from "./secrets";
import { type SsrfOptions, checkUrlSafety } from "./ssrf";

export { isLocalLookingHost } from "./ssrf";

export interface GateOptions extends SsrfOptions {
  /** `security.website_blocklist` (exact host, `*.example.com`, or a bare suffix). */
  blocklist: readonly string[];
}

/** Compiled blocklists, keyed by the config array (config is parsed once per isolate). */
const compiledLists = new WeakMap<readonly string[], (host: string) => boolean>();

/**
 * A compiled host-list matcher, remembered per list (the config's arrays live for the isolate), so
 * the per-request path does no compiling. Used for the blocklist and for `web.cache_exempt_hosts`.
 */
export function hostListMatcher(list: readonly string[]): (host: string) => boolean {
  let matcher = compiledLists.get(list);
  if (matcher === undefined) {
    matcher = compileHostList(list);
    compiledLists.set(list, matcher);
  }
  return matcher;
}

/**
 * Step 2 for one URL: throws 422 `secret_in_url` when it looks like it carries a credential. The
 * message names the kind of secret, never the value or the URL.
 */
export function assertNoSecretInUrl(rawUrl: string, where = "A URL in this request"): void {
  const finding = findSecretInUrl(rawUrl);
  if (finding === null) return;
  throw new AppError(
    422,
    "secret_in_url",
    `${where} looks like it carries a secret (${finding.kind}); remove the credential from the URL and try again.`,
    { details: { kind: finding.kind } },
  );
}

/**
 * Step 2 for a whole call: run it on EVERY URL before anything else happens, because one secret
 * refuses the whole call (nothing fetched, nothing cached). `details.index` is the position of the
 * first offending URL, which the message names as the caller wrote it (`urls[1]`).
 */
export function assertNoSecretInUrls(rawUrls: readonly string[], field = "urls"): void {
  rawUrls.forEach((raw, index) => {
    const finding = findSecretInUrl(raw);
    if (finding === null) return;
    throw new AppError(
      422,
      "secret_in_url",
      `${fieldName([field, index])} looks like it carries a secret (${finding.kind}); remove the credential from the URL and try again.`,
      { details: { index, kind: finding.kind } },
    );
  });
}

/** Parse a user-supplied URL (400 `invalid_request` when it is not an absolute URL). */
export function parseTargetUrl(rawUrl: string): URL {
  try {
    return new URL(rawUrl);
  } catch {
    throw new AppError(400, "invalid_request", "The URL could not be parsed; give a full http or https URL.");
  }
}

/**
 * Step 3: throws 403 `blocked_private_address` when the URL's host is not public, 422
 * `host_not_found` when DNS has no address for its name, 503 `dns_unavailable` when the DoH resolver itself cannot be used (still refused),
 * 400 `invalid_request` for a scheme other than http/https, a missing host or user-info. Resolves
 * to whether the host passed only as a local one (`security.allow_private_urls`): what is read
 * there is never stored in the shared cache.
 */
export async function assertSsrfSafe(url: URL, options: SsrfOptions): Promise<{ local: boolean }> {
  const verdict = await checkUrlSafety(url, options);
  if (verdict.ok) return { local: verdict.local };
  if (verdict.code === "invalid_url") throw new AppError(400, "invalid_request", verdict.message);
  if (verdict.code === "dns_unavailable") throw new AppError(503, "dns_unavailable", verdict.message);
  if (verdict.code === "host_not_found") throw new AppError(422, "host_not_found", verdict.message);
  throw new AppError(403, "blocked_private_address", verdict.message);
}

/** Step 5: throws 403 `blocked_by_policy` when the host is on `security.website_blocklist`. */
export function assertAllowedByPolicy(url: URL, blocklist: readonly string[]): void {
  if (blocklist.length === 0 || !hostListMatcher(blocklist)(url.hostname)) return;
  throw new AppError(
    403,
    "blocked_by_policy",
    `The host ${url.hostname} is on this service's website blocklist, so it is not fetched.`,
  );
}

/**
 * Every check for one URL, in order: secrets, parse, SSRF, policy. Returns the parsed URL and
 * whether its host passed only as a local one (see assertSsrfSafe).
 * Used by safeFetch on each hop; a route that handles several URLs runs the steps itself so that
 * secrets are checked for all URLs first.
 *
 * @example
 * const { url } = await gateUrl(body.image.url, { allowPrivate: false, resolver, blocklist: cfg.website_blocklist });
 */
export async function gateUrl(rawUrl: string, options: GateOptions): Promise<{ url: URL; local: boolean }> {
  assertNoSecretInUrl(rawUrl, "The URL");
  const url = parseTargetUrl(rawUrl);
  const { local } = await assertSsrfSafe(url, options);
  assertAllowedByPolicy(url, options.blocklist);
  return { url, local };
}

/**
 * Extract cache key part for a URL (docs/web.md, "Extract cache"): lower-case scheme and host, no default
 * port, no fragment; path and query exactly as given (case, order, repeated keys). WHATWG URL
 * already lower-cases the scheme and host and drops default ports; only the fragment is removed.
 *
 * @example normalizeUrlForCache("HTTP://Example.COM:80/a#x") // "http://example.com/a"
 */
export function normalizeUrlForCache(url: URL | string): string {
  const copy = new URL(url.toString());
  copy.hash = "";
  return copy.href;
}
