/**
 * A job is a serialisable description of one paid provider call: everything needed to make it,
 * so the single-flight owner (a Durable Object on Workers, the process on Deno) can run it for all
 * waiters. `runJob` is the only place a job becomes a provider call.
 */
import type { FetchFn } from "../ports";
import { directExtract, type DirectFetchSettings } from "./providers/extract/direct";
import { extractAdapters } from "./providers/extract";
import type { ExtractedPage, ExtractProviderName, ExtractRequest, ProviderSettings, SearchHit, SearchProviderName, SearchRequest } from "./providers/provider.types";
import { searchAdapters } from "./providers/search";

export interface SearchJob {
  kind: "search";
  provider: SearchProviderName;
  settings: ProviderSettings;
  request: SearchRequest;
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
}

export type Job = SearchJob | ExtractJob;

export interface SearchValue {
  provider: SearchProviderName;
  results: SearchHit[];
}

export interface ExtractValue {
  provider: ExtractProviderName;
  page: ExtractedPage;
}

export type JobValue = SearchValue | ExtractValue;

/** The value a job of type J produces. */
export type ValueOf<J extends Job> = J extends SearchJob ? SearchValue : ExtractValue;

/** Pays the provider once. Throws AppError on provider failure. */
export async function runJob(job: SearchJob, fetch: FetchFn): Promise<SearchValue>;
export async function runJob(job: ExtractJob, fetch: FetchFn): Promise<ExtractValue>;
export async function runJob(job: Job, fetch: FetchFn): Promise<JobValue>;
export async function runJob(job: Job, fetch: FetchFn): Promise<JobValue> {
  switch (job.kind) {
    case "search": {
      const results = await searchAdapters[job.provider](job.settings, job.request, fetch);
      return { provider: job.provider, results };
    }
    case "extract": {
      const page =
        job.provider === "direct"
          ? await directExtract(job.settings, job.direct!, job.request, fetch)
          : await extractAdapters[job.provider](job.settings, job.request, fetch);
      return { provider: job.provider, page };
    }
  }
}

/** Whether a successful value may be stored (e.g. empty or oversized pages are not). */
export function isStorable(job: Job, value: JobValue): boolean {
  switch (job.kind) {
    case "search":
      return "results" in value && Array.isArray(value.results);
    case "extract": {
      // Empty pages and pages over web.max_page_chars are answered but never stored.
      const content = "page" in value ? value.page.content : "";
      return content.trim() !== "" && content.length <= job.maxPageChars;
    }
  }
}
