/**
 * The data a provider call is made of: provider names, settings, requests and answers. Plain
 * serialisable types with no imports, so the single-flight port (shared/ports.ts) can carry a job
 * without pulling the adapters in. The adapter signatures are in adapter.types.ts.
 */
export const SEARCH_PROVIDERS = ["tavily", "brave", "exa", "firecrawl", "searxng", "keyless"] as const;
export type SearchProviderName = (typeof SEARCH_PROVIDERS)[number];

export const EXTRACT_PROVIDERS = ["firecrawl", "tavily", "jina", "direct"] as const;
export type ExtractProviderName = (typeof EXTRACT_PROVIDERS)[number];

/**
 * Public endpoints per provider name (search and extract share one table; the config's
 * `providers.<name>_base_url` defaults come from here). SearXNG has none: it is always
 * self-hosted, so it is usable only once an operator configures its URL.
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

/** Everything an adapter needs to reach its backend. Serialisable. */
export interface ProviderSettings {
  name: string;
  /** Operator-configured base URL, trusted, without a trailing slash. */
  baseUrl: string;
  /** Secret; never logged, never put in an error message. */
  apiKey?: string;
  timeoutMs: number;
}

export interface SearchHit {
  title: string;
  url: string;
  description: string;
  position: number;
}

export interface SearchRequest {
  query: string;
  /** How many results to ask the backend for (the limit tier). */
  count: number;
}

export type ExtractFormat = "markdown" | "text";

export interface ExtractedPage {
  url: string;
  final_url: string;
  title: string;
  content: string;
  /** The content is not the whole page (the direct reader stopped at its cap): answered, never stored. */
  truncated?: true;
}

export interface ExtractRequest {
  url: string;
  format: ExtractFormat;
}

/** Gate settings for the `direct` extract provider (the service fetches the page itself). */
export interface DirectFetchSettings {
  allowPrivate: boolean;
  resolverUrl: string;
  blocklist: string[];
  /** Bytes read from a page before it is `too_large`. */
  maxBytes: number;
}
