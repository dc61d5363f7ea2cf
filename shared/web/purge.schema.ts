/** The cache purge request and response (docs/api.md, "Freshness, per request"). */
import * as z from "zod";
import { FIELD } from "../http/validate";
import { ExtractRequest, isHttpUrl } from "./extract.schema";
import { ClampedLimit, SearchRequest } from "./search.schema";

/** Most entries one purge names, per kind. */
const MAX_PURGE_ITEMS = 25;

export const PurgeRequest = z.object({
  search: z
    .array(
      z.object({
        query: SearchRequest.shape.query,
        limit: ClampedLimit.describe(
          "The limit the searches used, clamped into 1..100 as they were (its tier's entry is dropped); absent: every tier of the query",
        ),
      }),
    )
    .max(MAX_PURGE_ITEMS)
    .default([])
    .describe("Searches whose cached answers to drop (as the configured search provider answered them)"),
  extract: z
    .array(
      z.object({
        url: z
          .string()
          .min(1)
          .max(8192)
          .refine(isHttpUrl, { message: `${FIELD} is not a full http or https URL` })
          .describe("An http(s) URL, as web_extract was given it"),
        format: z.enum(["markdown", "text"]).optional().describe("The format of the cached read to drop; absent: both"),
      }),
    )
    .max(MAX_PURGE_ITEMS)
    .default([])
    .describe("Pages whose cached reads to drop (as the configured extract provider read them)"),
});
export type PurgeRequest = z.infer<typeof PurgeRequest>;

export const PurgeResponse = z.object({
  success: z.literal(true),
  purged: z.number().int().min(0).describe("How many cached entries were found and dropped"),
});
export type PurgeResponse = z.infer<typeof PurgeResponse>;

/** The formats a page can be cached in. */
export const EXTRACT_FORMATS = ExtractRequest.shape.format.unwrap().options;
