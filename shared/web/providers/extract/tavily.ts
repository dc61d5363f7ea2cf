/**
 * Tavily extract (`POST /extract`). A URL Tavily could not read comes back in `failed_results`
 * inside a 200, which is a provider failure for us.
 */
import { providerError } from "../../../http/errors";
import { postJson, unexpectedShape } from "../http";
import { arrayField, isRecord } from "../search/hits";
import { type ExtractAdapter, toExtractedPage } from "./page";

export const tavilyExtract: ExtractAdapter = async (settings, request, fetch) => {
  const body = await postJson(settings, fetch, "/extract", { urls: [request.url], format: "markdown", extract_depth: "basic" });
  if (!isRecord(body)) throw unexpectedShape(settings, "not an object");
  const result = arrayField(body, "results").find(isRecord);
  if (!result) {
    const failed = arrayField(body, "failed_results").length > 0;
    throw failed ? providerError(settings.name, "it could not read the page") : unexpectedShape(settings, "no results");
  }
  return toExtractedPage(request, {
    finalUrl: result.url,
    title: result.title,
    markdown: typeof result.raw_content === "string" ? result.raw_content : "",
  });
};
