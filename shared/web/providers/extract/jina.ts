/**
 * Jina Reader (`GET /{url}`, JSON answer). The key is optional: Jina serves keyless callers at a
 * lower rate limit, so one is sent only when configured.
 */
import { callProvider, providerUrl, unexpectedShape } from "../http";
import { isRecord } from "../search/hits";
import { type ExtractAdapter, toExtractedPage } from "./page";

export const jinaExtract: ExtractAdapter = async (settings, request, fetch) => {
  const headers: Record<string, string> = { accept: "application/json" };
  if (settings.apiKey) headers.authorization = `Bearer ${settings.apiKey}`;
  // The target goes in as written: Jina reads everything after the first slash as the URL.
  const body = await callProvider(settings, fetch, providerUrl(settings.baseUrl, request.url), { method: "GET", headers });
  const data = isRecord(body) && isRecord(body.data) ? body.data : null;
  if (!data) throw unexpectedShape(settings, "no data");
  return toExtractedPage(request, {
    finalUrl: data.url,
    title: data.title,
    markdown: typeof data.content === "string" ? data.content : "",
  });
};
