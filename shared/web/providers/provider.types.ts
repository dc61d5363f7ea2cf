/**
 * The data a provider call is made of: provider names (from the provider table,
 * providers.catalog.ts), settings, requests and answers. Plain serialisable data, so the
 * single-flight port (shared/ports.ts) can carry a job without pulling the adapters in. The adapter signatures are in adapter.types.ts.
 */
export {
  DEFAULT_BASE_URLS,
  EXTRACT_PROVIDERS,
  type ExtractProviderName,
  type ProviderBaseName,
  SEARCH_PROVIDERS,
  type SearchProviderName,
} from "./providers.catalog";

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
