/**
 * A job is a serialisable description of one paid provider call: everything needed to make it,
 * so the single-flight owner (a Durable Object on Workers, the process on Deno) can run it for all
 * waiters; a job value is what it paid for. Data only (the single-flight port in shared/ports.ts
 * carries both); jobs.ts runs them.
 */
import type {
  DirectFetchSettings,
  ExtractedPage,
  ExtractRequest,
  ProviderSettings,
  SearchHit,
  SearchRequest,
} from "./providers/provider.types";
import type { ExtractProviderName, SearchProviderName } from "./providers/providers.catalog";

export interface SearchJob {
  kind: "search";
  provider: SearchProviderName;
  settings: ProviderSettings;
  request: SearchRequest;
  /**
   * The one-shot keyless rescue (`web.keyless_fallback`): tried once if the provider fails, inside
   * the same single flight, so every waiting caller shares one keyless call. Never stored.
   */
  rescue?: { provider: "keyless"; settings: ProviderSettings };
}

export interface ExtractJob {
  kind: "extract";
  provider: ExtractProviderName;
  settings: ProviderSettings;
  request: ExtractRequest;
  /** Gate settings for the `direct` provider (the service fetches the page itself). */
  direct?: DirectFetchSettings;
  /** Pages longer than this are answered but never stored (`web.max_page_chars`). */
  maxPageChars: number;
  /** `web.cache_exempt_hosts`: a page whose final URL is on one of them is answered but never stored. */
  cacheExemptHosts: readonly string[];
}

export type Job = SearchJob | ExtractJob;

export interface SearchValue {
  provider: SearchProviderName;
  results: SearchHit[];
  /** Answered by the keyless rescue after the provider failed: never stored. */
  rescued?: true;
}

export interface ExtractValue {
  provider: ExtractProviderName;
  page: ExtractedPage;
  /** The content was cut to the caller's `web.char_limit` (once: see cutForCaller); never stored. */
  truncated?: true;
  /** The direct fetch reached a host open only under `security.allow_private_urls` on some hop: never stored. */
  local?: true;
}

export type JobValue = SearchValue | ExtractValue;

/** The value a job of type J produces. */
export type ValueOf<J extends Job> = J extends SearchJob ? SearchValue : ExtractValue;
