/**
 * The data a provider call is made of: settings, requests and answers. Plain serialisable data
 * with no imports, so a provider's file (and the job the single-flight port carries) can name it
 * without a loop. The provider names are the table's (providers.catalog.ts); the adapter
 * signatures are in adapter.types.ts.
 */
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
