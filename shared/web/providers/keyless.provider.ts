/**
 * Keyless search: DuckDuckGo's HTML results page, parsed; no key, no bill.
 *
 * Keyless search: DuckDuckGo's HTML results page, read with a small tolerant scan (no DOM, so it
 * runs the same on workerd and Deno). Only the first page is read (about 30 results): paging
 * needs a session token, and hammering a free endpoint is what gets it blocked.
 */
import { callProviderText, providerUrl, unexpectedShape } from "./http";
import { providerError } from "../../http/errors";
import type { SearchAdapter } from "./adapter.types";
import { decodeHtmlAttribute, htmlSnippetToText } from "../html-entities";
import { type HitCandidate, rankHits } from "./hits";
import { defineProvider } from "./provider.spec";

export const keylessSearch: SearchAdapter = async (settings, request, fetch) => {
  const html = await callProviderText(settings, fetch, providerUrl(settings.baseUrl, "/html/"), {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      accept: "text/html",
      // The page refuses requests without a browser-like agent string.
      "user-agent": "Mozilla/5.0 (compatible; edge-agent-tools/0.1)",
    },
    body: new URLSearchParams({ q: request.query }).toString(),
  });
  const candidates = parseDuckDuckGoResults(html);
  if (candidates.length === 0) {
    if (/anomaly-modal|challenge-form|g-recaptcha/i.test(html))
      throw providerError(settings.name, "rate limited (it answered with a bot challenge)");
    // "Nothing found" is stored like any answer, so only a page that says so may be empty.
    if (!NO_RESULTS.test(html)) throw unexpectedShape(settings, "neither results nor a no-results notice");
  }
  return rankHits(candidates, request.count);
};

/** DuckDuckGo's own "No results." block on a results page that found nothing. */
const NO_RESULTS = /class\s*=\s*["']?no-results\b/i;

const ANCHOR = /<a\b([^>]*)>([\s\S]*?)<\/a\s*>/gi;
const ATTRIBUTE = /([a-zA-Z_:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g;

/** Results in page order; ads (which go through DuckDuckGo's own ad redirect) are skipped. */
export function parseDuckDuckGoResults(html: string): HitCandidate[] {
  const results: HitCandidate[] = [];
  let current: HitCandidate | null = null;
  let previousEnd = 0;
  for (const match of html.matchAll(ANCHOR)) {
    const attributes = readAttributes(match[1] ?? "");
    const classes = (attributes.get("class") ?? "").split(/\s+/);
    if (classes.includes("result__a")) {
      const start = match.index ?? 0;
      const isAd = /result--ad\b/.test(html.slice(previousEnd, start));
      previousEnd = start + match[0].length;
      const url = unwrapRedirect(attributes.get("href") ?? "");
      current = null;
      if (isAd || !url || isDuckDuckGoUrl(url)) continue;
      current = { title: htmlSnippetToText(match[2] ?? ""), url, description: "" };
      results.push(current);
    } else if (classes.includes("result__snippet") && current && !current.description) {
      current.description = htmlSnippetToText(match[2] ?? "");
    }
  }
  return results;
}

/** `//duckduckgo.com/l/?uddg=<encoded target>&rut=...` → the target; direct links pass through. */
export function unwrapRedirect(href: string): string | null {
  const raw = decodeHtmlAttribute(href.trim());
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw, "https://duckduckgo.com/");
  } catch {
    return null;
  }
  if (isDuckDuckGoUrl(url.href) && url.pathname === "/l/") return url.searchParams.get("uddg");
  return url.href;
}

function isDuckDuckGoUrl(href: string): boolean {
  try {
    const host = new URL(href).hostname;
    return host === "duckduckgo.com" || host.endsWith(".duckduckgo.com");
  } catch {
    return false;
  }
}

function readAttributes(source: string): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const m of source.matchAll(ATTRIBUTE)) {
    const name = (m[1] ?? "").toLowerCase();
    if (!attributes.has(name)) attributes.set(name, m[2] ?? m[3] ?? m[4] ?? "");
  }
  return attributes;
}

export const keyless = defineProvider({
  name: "keyless",
  secret: null,
  baseUrl: "https://html.duckduckgo.com",
  search: { usdPerCall: 0, keyRequired: false, adapter: keylessSearch },
});
