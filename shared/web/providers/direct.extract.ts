/**
 * The `direct` extractor: the service fetches the page itself through the SSRF-safe fetch (every
 * hop gated, body size limited) and converts HTML to markdown. Runs wherever the single-flight
 * owner runs, so its gate settings travel in the job.
 */
import { consoleLogger } from "../../log";
import type { DnsResolver, FetchFn } from "../../ports";
import { dnsResolverPool } from "../../safety/dns";
import { safeFetch } from "../../safety/safe-fetch";
import { assertNotChallenge, CHALLENGE_STATUSES, challengePage, detectChallenge } from "../challenge";
import { decodeHtmlBody, htmlToMarkdown, markdownToText } from "../reader/html-to-markdown";
import type { DirectFetchSettings, ExtractedPage, ExtractRequest, ProviderSettings } from "./provider.types";

/** What the direct fetch needs of the gate: serialisable, from the effective config. */
const READABLE = new Set(["text/html", "application/xhtml+xml", "text/markdown", "text/plain", "text/x-markdown"]);

/**
 * One resolver pool per fetch function (the isolate's, or the single-flight object's), so answers
 * are cached across jobs within their TTL and an unreachable resolver is logged, as on every
 * other gated path.
 */
const pools = new WeakMap<FetchFn, (url: string) => DnsResolver>();

function resolverFor(fetch: FetchFn, url: string): DnsResolver {
  let pool = pools.get(fetch);
  if (!pool) {
    pool = dnsResolverPool(fetch, Date.now, consoleLogger);
    pools.set(fetch, pool);
  }
  return pool(url);
}

/**
 * `fetch` reaches the operator's DoH resolver; `untrustedFetch` (AppPorts) the caller's page and
 * its redirects. `local`: some hop's host was open only under `security.allow_private_urls`.
 */
export async function directExtract(
  settings: ProviderSettings,
  direct: DirectFetchSettings,
  request: ExtractRequest,
  fetch: FetchFn,
  untrustedFetch: FetchFn = fetch,
): Promise<{ page: ExtractedPage; local: boolean }> {
  const resolver = resolverFor(fetch, direct.resolverUrl);
  const page = await safeFetch(request.url, {
    fetch: untrustedFetch,
    gate: { allowPrivate: direct.allowPrivate, resolver, blocklist: direct.blocklist },
    maxBytes: direct.maxBytes,
    timeoutMs: settings.timeoutMs,
    headers: { accept: "text/markdown, text/html;q=0.9, text/plain;q=0.5" },
    acceptContentType: (mediaType) => mediaType === "" || READABLE.has(mediaType),
    // A bot wall's 403/429/503 is a challenge_page, not an ordinary failed fetch.
    inspectFailure: {
      statuses: CHALLENGE_STATUSES,
      check: (status, headers, body) => {
        const vendor = detectChallenge({ status, html: decodeHtmlBody(body, headers.get("content-type")) });
        return vendor ? challengePage(request.url, vendor) : null;
      },
    },
  });
  const contentType = page.headers.get("content-type");
  const text = decodeHtmlBody(page.body, contentType);
  const isHtml = !contentType || /html/i.test(contentType);
  // On the page as served, before any conversion: the reader never sees a bot wall.
  assertNotChallenge(request.url, isHtml ? { status: page.status, html: text } : { status: page.status, text });
  const converted = isHtml
    ? htmlToMarkdown(text, page.finalUrl)
    : { title: firstHeading(text), markdown: text, truncated: false };
  return {
    page: {
      url: request.url,
      final_url: page.finalUrl,
      title: converted.title,
      // A page that is text already is text: nothing in it is markdown to take out.
      content: request.format === "text" && isHtml ? markdownToText(converted.markdown) : converted.markdown,
      ...(converted.truncated ? { truncated: true as const } : {}),
    },
    local: page.local,
  };
}

function firstHeading(markdown: string): string {
  return /^#{1,6}\s+(.+)$/m.exec(markdown)?.[1]?.trim() ?? "";
}
