/**
 * Firecrawl scrape (`POST /v1/scrape`, markdown only). Firecrawl reports a page it could not
 * load inside a 200 (`success: false`, or the page's own status in metadata), so both are failures here.
 */
import { providerError } from "../../../http/errors";
import { postJson, unexpectedShape } from "../http";
import { isRecord } from "../search/hits";
import { type ExtractAdapter, toExtractedPage } from "./page";

export const firecrawlExtract: ExtractAdapter = async (settings, request, fetch) => {
  const body = await postJson(settings, fetch, "/v1/scrape", { url: request.url, formats: ["markdown"], onlyMainContent: true });
  if (!isRecord(body)) throw unexpectedShape(settings, "not an object");
  if (body.success === false) throw providerError(settings.name, "it could not scrape the page");
  const data = isRecord(body.data) ? body.data : null;
  if (!data) throw unexpectedShape(settings, "no data");
  const metadata = isRecord(data.metadata) ? data.metadata : {};
  const pageStatus = metadata.statusCode;
  if (typeof pageStatus === "number" && pageStatus >= 400) throw providerError(settings.name, `the page answered HTTP ${pageStatus}`);
  return toExtractedPage(request, {
    // `url` is where Firecrawl ended up after redirects; `sourceURL` is what it was asked for.
    finalUrl: metadata.url ?? metadata.sourceURL,
    title: metadata.title,
    markdown: typeof data.markdown === "string" ? data.markdown : "",
  });
};
