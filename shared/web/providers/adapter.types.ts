/**
 * The provider adapter contract. An adapter is a pure function of its settings, the request and
 * an injected fetch: no config lookups, no globals, so a Durable Object can run it from a
 * serialisable job description.
 */
import type { FetchFn } from "../../http/fetch.types";
import type { ExtractedPage, ExtractRequest, ProviderSettings, SearchHit, SearchRequest } from "./provider.types";

export type SearchAdapter = (
  settings: ProviderSettings,
  request: SearchRequest,
  fetch: FetchFn,
) => Promise<SearchHit[]>;

export type ExtractAdapter = (
  settings: ProviderSettings,
  request: ExtractRequest,
  fetch: FetchFn,
) => Promise<ExtractedPage>;
