/**
 * The search adapter registry: one adapter per search provider of the table
 * (providers.catalog.ts; the record's type makes a missing one a typecheck error).
 */
import type { SearchAdapter } from "../adapter.types";
import type { SearchProviderName } from "../provider.types";
import { braveSearch } from "./brave";
import { exaSearch } from "./exa";
import { firecrawlSearch } from "./firecrawl";
import { keylessSearch } from "./keyless";
import { searxngSearch } from "./searxng";
import { tavilySearch } from "./tavily";

export const searchAdapters: Record<SearchProviderName, SearchAdapter> = {
  tavily: tavilySearch,
  brave: braveSearch,
  exa: exaSearch,
  firecrawl: firecrawlSearch,
  searxng: searxngSearch,
  keyless: keylessSearch,
};

export { DEFAULT_BASE_URLS, type ProviderBaseName } from "../providers.catalog";
