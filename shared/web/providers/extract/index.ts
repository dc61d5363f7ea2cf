/**
 * The extract adapter registry for the paid and hosted providers. `direct` is not here: it
 * fetches through the SSRF-safe fetch (shared/safety) and converts with htmlToMarkdown.
 */
import type { ExtractProviderName } from "../provider.types";
import { firecrawlExtract } from "./firecrawl";
import { jinaExtract } from "./jina";
import type { ExtractAdapter } from "../adapter.types";
import { tavilyExtract } from "./tavily";

export { toExtractedPage } from "./page";

export const extractAdapters: Record<Exclude<ExtractProviderName, "direct">, ExtractAdapter> = {
  firecrawl: firecrawlExtract,
  tavily: tavilyExtract,
  jina: jinaExtract,
};
