/**
 * Firecrawl scrape (`POST /v1/scrape`, markdown only). Firecrawl reports a page it could not
 * load inside a 200 (`success: false`, or the page's own status in metadata), so both are failures here.
 */
import * as z from "zod";
import { providerError } from "../../../http/errors";
import { parseAnswer, postJson } from "../http";
import type { ExtractAdapter } from "../adapter.types";
import { toExtractedPage } from "./page";

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
