/** The web_search request and response (api.md); the same schemas feed OpenAPI and MCP. */
import * as z from "zod";
import { FreshnessAnswer, FreshnessRequest } from "./freshness.schema";

/** A result count: integers outside 1..100 are clamped; absent stays absent. */
export const ClampedLimit = z.preprocess(
  // Clamped before the integer check, which stops at the safe-integer range: 1e20 is an integer too.
  (limit) => (typeof limit === "number" && Number.isInteger(limit) ? Math.min(100, Math.max(1, limit)) : limit),
  z.number().int().optional(),
);

export const SearchRequest = z.object({
  query: z
    .string()
    .min(1, { error: "query must not be empty", abort: true })
    .max(2048)
    .refine((q) => q.trim() !== "", { message: "query must not be blank" })
    .describe("What to search for, 1..2048 characters"),
  limit: ClampedLimit.transform((limit) => limit ?? 5).describe(
    "How many results (default 5); integers outside 1..100 are clamped",
  ),
  ...FreshnessRequest.shape,
});
export type SearchRequest = z.infer<typeof SearchRequest>;

export const SearchResult = z.object({
  title: z.string().describe("Page title"),
  url: z.string().describe("Page URL"),
  description: z.string().describe("Snippet"),
  position: z.number().int().describe("1-based rank in provider order"),
});

export const SearchResponse = z.object({
  success: z.literal(true),
  query: z.string().describe("The query as given"),
  limit: z.number().int().describe("The effective limit"),
  provider: z.string().describe("The backend that answered"),
  results: z.array(SearchResult),
  cache: z.enum(["hit", "miss", "coalesced", "bypass"]).describe("How this answer was obtained"),
  ...FreshnessAnswer.shape,
});
export type SearchResponse = z.infer<typeof SearchResponse>;
