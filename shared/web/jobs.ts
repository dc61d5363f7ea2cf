/**
 * Runs a job (job.types.ts): `runJob` is the only place a job becomes a provider call, and
 * `isStorable` the one rule for what a paid answer may be stored as.
 */
import { AppError } from "../http/errors";
import { hostListMatcher, isLocalLookingHost } from "../safety/gate";
import { findSecretInUrl } from "../safety/secrets";
import type { FetchFn } from "../ports";
import { directExtract } from "./providers/direct.extract";
import { extractAdapters, searchAdapters } from "./providers/providers.catalog";
import type { ExtractJob, ExtractValue, Job, JobValue, SearchJob, SearchValue } from "./job.types";

/**
 * Pays the provider once. Throws AppError on provider failure. `untrustedFetch` (AppPorts) reaches
 * the caller's own URL for the direct extractor; providers are reached with `fetch`.
 */
export async function runJob(job: SearchJob, fetch: FetchFn, untrustedFetch?: FetchFn): Promise<SearchValue>;
export async function runJob(job: ExtractJob, fetch: FetchFn, untrustedFetch?: FetchFn): Promise<ExtractValue>;
export async function runJob(job: Job, fetch: FetchFn, untrustedFetch?: FetchFn): Promise<JobValue>;
export async function runJob(job: Job, fetch: FetchFn, untrustedFetch?: FetchFn): Promise<JobValue> {
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
      if (job.provider !== "direct")
        return { provider: job.provider, page: await extractAdapters[job.provider](job.settings, job.request, fetch) };
      const { page, local } = await directExtract(job.settings, job.direct!, job.request, fetch, untrustedFetch);
      return { provider: job.provider, page, ...(local ? { local: true as const } : {}) };
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
      if (!("page" in value) || value.page.truncated || value.local) return false;
      const { content, final_url } = value.page;
      // Nor is a page that ended on a local or exempt host, whatever host the caller asked for, or
      // on a URL that carries a credential (a hosted extractor followed a redirect to a signed URL):
      // the next caller would be handed it.
      const final = URL.canParse(final_url) ? new URL(final_url).hostname : "";
      if (final !== "" && (isLocalLookingHost(final) || hostListMatcher(job.cacheExemptHosts)(final))) return false;
      if (findSecretInUrl(final_url) !== null) return false;
      return content.trim() !== "" && content.length <= job.maxPageChars;
    }
  }
}
