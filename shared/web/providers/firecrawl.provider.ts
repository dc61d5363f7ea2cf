/**
 * Firecrawl: search and scrape (extract).
 *
 * Firecrawl search (`POST /v1/search`, Bearer key, `limit`). v1 answers `data` as a list; the
 * newer grouped shape (`data.web`) is read too so a self-hosted upgrade does not break us.
 *
 * Firecrawl scrape (`POST /v1/scrape`, markdown only). Firecrawl reports a page it could not
 * load inside a 200 (`success: false`, or the page's own status in metadata), so both are failures here.
 */
import * as z from "zod";
import { parseAnswer, postJson, unexpectedShape } from "./http";
import type { SearchAdapter, ExtractAdapter } from "./adapter.types";
import { rankHits } from "./hits";
import { providerError } from "../../http/errors";
import { toExtractedPage } from "./page";
import { defineProvider } from "./provider.spec";

const FIRECRAWL_MAX_RESULTS = 100;

const FirecrawlHit = z.object({ url: z.string(), title: z.string().nullish(), description: z.string().nullish() });

/** Firecrawl's documented search answer: a failure, or v1's list, or the grouped `data.web`. */
export const FirecrawlSearchResponse = z.discriminatedUnion("success", [
  z.object({ success: z.literal(false) }),
  z.object({
    success: z.literal(true),
    data: z.union([z.array(FirecrawlHit), z.object({ web: z.array(FirecrawlHit).optional() })]),
  }),
]);
export type FirecrawlSearchResponse = z.infer<typeof FirecrawlSearchResponse>;

export const firecrawlSearch: SearchAdapter = async (settings, request, fetch) => {
  const body = parseAnswer(
    settings,
    FirecrawlSearchResponse,
    await postJson(settings, fetch, "/v1/search", {
      query: request.query,
      limit: Math.min(request.count, FIRECRAWL_MAX_RESULTS),
    }),
  );
  if (!body.success) throw unexpectedShape(settings, "success: false");
  const results = Array.isArray(body.data) ? body.data : (body.data.web ?? []);
  return rankHits(
    results.map((r) => ({ title: r.title, url: r.url, description: r.description })),
    request.count,
  );
};

/** Firecrawl's documented scrape answer: a failure, or the page's markdown and metadata. */
export const FirecrawlScrapeResponse = z.discriminatedUnion("success", [
  z.object({ success: z.literal(false) }),
  z.object({
    success: z.literal(true),
    data: z.object({
      markdown: z.string().nullish(),
      // `title` may be a list when a page has several <title>s; toExtractedPage keeps strings only.
      metadata: z
        .object({
          title: z.unknown(),
          url: z.string().nullish(),
          sourceURL: z.string().nullish(),
          statusCode: z.number().nullish(),
        })
        .optional(),
    }),
  }),
]);
export type FirecrawlScrapeResponse = z.infer<typeof FirecrawlScrapeResponse>;

export const firecrawlExtract: ExtractAdapter = async (settings, request, fetch) => {
  const body = parseAnswer(
    settings,
    FirecrawlScrapeResponse,
    await postJson(settings, fetch, "/v1/scrape", { url: request.url, formats: ["markdown"], onlyMainContent: true }),
  );
  if (!body.success) throw providerError(settings.name, "it could not scrape the page");
  const metadata = body.data.metadata;
  const pageStatus = metadata?.statusCode ?? undefined;
  const page = toExtractedPage(request, {
    // `url` is where Firecrawl ended up after redirects; `sourceURL` is what it was asked for.
    finalUrl: metadata?.url ?? metadata?.sourceURL,
    title: metadata?.title,
    markdown: body.data.markdown ?? "",
    status: pageStatus,
  });
  // After the challenge check: a bot wall's 403 is a challenge_page, any other 4xx/5xx a failure.
  if (pageStatus !== undefined && pageStatus >= 400)
    throw providerError(settings.name, `the page answered HTTP ${pageStatus}`);
  return page;
};

export const firecrawl = defineProvider({
  name: "firecrawl",
  secret: "FIRECRAWL_API_KEY",
  baseUrl: "https://api.firecrawl.dev",
  // 2 credits per 10 results; a credit at the Standard plan's $83 / 100,000.
  search: { usdPerCall: 0.00166, keyRequired: true, adapter: firecrawlSearch },
  // 1 credit a page.
  extract: { usdPerCall: 0.00083, keyRequired: true, adapter: firecrawlExtract },
});
