/**
 * The search adapter registry and every provider's public base URL (overridable through
 * `providers.<name>_base_url`).
 */
import type { SearchAdapter, SearchProviderName } from "../provider.types";
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

/**
 * Public endpoints per provider name (search and extract share one table). SearXNG has none:
 * it is always self-hosted, so it is usable only once an operator configures its URL.
 */
export const DEFAULT_BASE_URLS = {
  tavily: "https://api.tavily.com",
  brave: "https://api.search.brave.com",
  exa: "https://api.exa.ai",
  firecrawl: "https://api.firecrawl.dev",
  searxng: null,
  keyless: "https://html.duckduckgo.com",
  jina: "https://r.jina.ai",
} as const satisfies Record<string, string | null>;

export type ProviderBaseName = keyof typeof DEFAULT_BASE_URLS;
