/**
 * Tavily extract (`POST /extract`). A URL Tavily could not read comes back in `failed_results`
 * inside a 200, which is a provider failure for us.
 */
import * as z from "zod";
import { providerError } from "../../../http/errors";
import { parseAnswer, postJson, unexpectedShape } from "../http";
import type { ExtractAdapter } from "../adapter.types";
import { toExtractedPage } from "./page";

/** Tavily's documented extract answer (the fields we read). */
export const TavilyExtractResponse = z.object({
  results: z.array(z.object({ url: z.string(), raw_content: z.string().nullish(), title: z.string().nullish() })),
  failed_results: z.array(z.unknown()).optional(),
});
export type TavilyExtractResponse = z.infer<typeof TavilyExtractResponse>;

export const tavilyExtract: ExtractAdapter = async (settings, request, fetch) => {
  const body = parseAnswer(
    settings,
    TavilyExtractResponse,
    await postJson(settings, fetch, "/extract", { urls: [request.url], format: "markdown", extract_depth: "basic" }),
  );
  const result = body.results[0];
  if (!result) {
    const failed = (body.failed_results ?? []).length > 0;
    throw failed ? providerError(settings.name, "it could not read the page") : unexpectedShape(settings, "no results");
  }
  return toExtractedPage(request, {
    finalUrl: result.url,
    title: result.title,
    markdown: result.raw_content ?? "",
  });
};
