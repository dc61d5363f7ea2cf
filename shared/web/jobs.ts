/**
 * A job is a serialisable description of one paid provider call: everything needed to make it,
 * so the single-flight owner (a Durable Object on Workers, the process on Deno) can run it for all
 * waiters. `runJob` is the only place a job becomes a provider call.
 */
import type { FetchFn } from "../ports";
import type { ProviderSettings, SearchHit, SearchProviderName, SearchRequest } from "./providers/provider.types";
import { searchAdapters } from "./providers/search";

export interface SearchJob {
  kind: "search";
  provider: SearchProviderName;
  settings: ProviderSettings;
  request: SearchRequest;
}

export type Job = SearchJob;

export interface SearchValue {
  provider: SearchProviderName;
  results: SearchHit[];
}

export type JobValue = SearchValue;

/** Pays the provider once. Throws AppError on provider failure. */
export async function runJob(job: Job, fetch: FetchFn): Promise<JobValue> {
  switch (job.kind) {
    case "search": {
      const results = await searchAdapters[job.provider](job.settings, job.request, fetch);
      return { provider: job.provider, results };
    }
  }
}

/** Whether a successful value may be stored (e.g. empty or oversized pages are not). */
export function isStorable(job: Job, value: JobValue): boolean {
  switch (job.kind) {
    case "search":
      return Array.isArray(value.results);
  }
}
