/**
 * Exa search (`POST /search`, header `x-api-key`). Exa returns no snippet unless contents are
 * asked for, so a short text excerpt is requested to fill the description.
 */
import { postJson } from "../http";
import type { SearchAdapter } from "../provider.types";
import { arrayField, isRecord, rankHits } from "./hits";

export const EXA_MAX_RESULTS = 100;
const EXCERPT_CHARS = 300;

export const exaSearch: SearchAdapter = async (settings, request, fetch) => {
  const payload = { query: request.query, numResults: Math.min(request.count, EXA_MAX_RESULTS), contents: { text: { maxCharacters: EXCERPT_CHARS } } };
  const body = await postJson(settings, fetch, "/search", payload, { keyHeader: "x-api-key" });
  const results = arrayField(body, "results").filter(isRecord);
  return rankHits(
    results.map((r) => ({ title: r.title, url: r.url, description: excerpt(r) })),
    request.count,
  );
};

function excerpt(result: Record<string, unknown>): string {
  if (typeof result.summary === "string" && result.summary.trim()) return result.summary;
  if (Array.isArray(result.highlights)) {
    const joined = result.highlights.filter((h): h is string => typeof h === "string").join(" … ");
    if (joined.trim()) return joined;
  }
  return typeof result.text === "string" ? result.text : "";
}
