/**
 * A job is a serialisable description of one paid provider call: everything needed to make it,
 * so the single-flight owner (a Durable Object on Workers, the process on Deno) can run it for all
 * waiters. `runJob` is the only place a job becomes a provider call.
 */
import { AppError } from "../http/errors";
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
      try {
        const results = await searchAdapters[job.provider](job.settings, job.request, fetch);
        return { provider: job.provider, results };
      } catch (error) {
        const rescued = job.rescue && isProviderFailure(error) ? await rescueQuietly(job, fetch) : null;
        if (!rescued) throw error;
        return rescued;
      }
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

function isProviderFailure(error: unknown): boolean {
  return error instanceof AppError && (error.code === "provider_error" || error.code === "provider_timeout");
}

/** One keyless attempt; its own failure leaves the provider's error to be reported. */
async function rescueQuietly(job: SearchJob, fetch: FetchFn): Promise<SearchValue | null> {
  const rescue = job.rescue!;
  try {
    const results = await searchAdapters[rescue.provider](rescue.settings, job.request, fetch);
    return { provider: rescue.provider, results, rescued: true };
  } catch {
    return null;
  }
}

/** Whether a successful value may be stored (e.g. empty or oversized pages, rescues are not). */
export function isStorable(job: Job, value: JobValue): boolean {
  switch (job.kind) {
    case "search":
      return "results" in value && Array.isArray(value.results) && value.rescued !== true;
    case "extract": {
      // Empty pages, pages over web.max_page_chars and conversions cut short are answered but never stored.
      if (!("page" in value) || value.page.truncated) return false;
      const { content } = value.page;
      return content.trim() !== "" && content.length <= job.maxPageChars;
    }
  }
}
