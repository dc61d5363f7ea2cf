/**
 * Exa: search.
 *
 * Exa search (`POST /search`, header `x-api-key`). Exa returns no snippet unless contents are
 * asked for, so a short text excerpt is requested to fill the description.
 */
import * as z from "zod";
import { parseAnswer, postJson } from "./http";
import type { SearchAdapter } from "./adapter.types";
import { rankHits } from "./hits";
import { defineProvider } from "./provider.spec";

const EXA_MAX_RESULTS = 100;
const EXCERPT_CHARS = 300;

const ExaResult = z.object({
  url: z.string(),
  title: z.string().nullish(),
  text: z.string().nullish(),
  summary: z.string().nullish(),
  highlights: z.array(z.string()).nullish(),
});
type ExaResult = z.infer<typeof ExaResult>;

/** Exa's documented search answer (the fields we read). */
export const ExaSearchResponse = z.object({ results: z.array(ExaResult) });
export type ExaSearchResponse = z.infer<typeof ExaSearchResponse>;

export const exaSearch: SearchAdapter = async (settings, request, fetch) => {
  const payload = {
    query: request.query,
    numResults: Math.min(request.count, EXA_MAX_RESULTS),
    contents: { text: { maxCharacters: EXCERPT_CHARS } },
  };
  const body = parseAnswer(
    settings,
    ExaSearchResponse,
    await postJson(settings, fetch, "/search", payload, { keyHeader: "x-api-key" }),
  );
  return rankHits(
    body.results.map((r) => ({ title: r.title, url: r.url, description: excerpt(r) })),
    request.count,
  );
};

function excerpt(result: ExaResult): string {
  if (result.summary?.trim()) return result.summary;
  const joined = (result.highlights ?? []).join(" … ");
  if (joined.trim()) return joined;
  return result.text ?? "";
}

export const exa = defineProvider({
  name: "exa",
  secret: "EXA_API_KEY",
  baseUrl: "https://api.exa.ai",
  // Search with up to 10 results: $7 per 1,000 requests.
  search: { usdPerCall: 0.007, keyRequired: true, adapter: exaSearch },
});
