/**
 * The read-through cache of paid calls: global read tier first, then the single-flight owner,
 * which pays at most once per key. Every safety check has run before a caller gets here.
 */
import type { CacheStatus, CacheStore, Clock, FetchFn, Logger, SingleFlight } from "../ports";
import { cutForCaller, fromFlightError } from "./flight";
import { isStorable, runJob } from "./jobs";
import type { Job, JobValue, ValueOf } from "./job.types";

/**
 * The version in each kind's cache keys, the one place it is written. Raised when what may be
 * stored, or what a stored value means, changes: entries older code stored are then never read
 * again and expire with their TTL. v2 (2026-12-01), both kinds: older code stored the empty
 * results of a shapeless provider answer and keyless results with misdecoded URLs (search), and
 * challenge pages, conversions the reader cut short and WebForms pages it read as empty (extract).
 */
const CACHE_KEY_VERSIONS: Readonly<Record<Job["kind"], number>> = { search: 2, extract: 2 };

/**
 * How every cache key of `kind` starts (docs/storage.md lists the whole keys).
 *
 * @example cacheKeyPrefix("extract") // "extract:v2:"
 */
export function cacheKeyPrefix(kind: Job["kind"]): string {
  return `${kind}:v${CACHE_KEY_VERSIONS[kind]}:`;
}

export interface PaidCallDeps {
  cache: CacheStore;
  flight: SingleFlight;
  fetch: FetchFn;
  clock: Clock;
  log: Logger;
}

export interface PaidCallOptions {
  enabled: boolean;
  ttlMs: number;
  /** False when the answer must never be stored (exempt or local hosts). */
  store: boolean;
  /**
   * Most content characters a caller can receive (`web.char_limit`): every answer comes back cut
   * to it and flagged `truncated` (see FlightOptions.charLimit and cutForCaller).
   */
  charLimit?: number;
}

export interface PaidCallResult<V extends JobValue = JobValue> {
  value: V;
  cache: CacheStatus;
}

/**
 * Answers `job` from the cache or pays for it once.
 * @throws AppError from the provider (the failure is not stored)
 */
export async function paidCall<J extends Job>(deps: PaidCallDeps, key: string, job: J, options: PaidCallOptions): Promise<PaidCallResult<ValueOf<J>>> {
  return (await paidCallUntyped(deps, key, job, options)) as PaidCallResult<ValueOf<J>>;
}

async function paidCallUntyped(deps: PaidCallDeps, key: string, job: Job, options: PaidCallOptions): Promise<PaidCallResult> {
  // The single-flight owner cuts what it answers; the paths around it cut here, with the same cut.
  const forCaller = (value: JobValue) => cutForCaller(value, options.charLimit);
  if (!options.enabled) return { value: forCaller(await runJob(job, deps.fetch)), cache: "bypass" };

  const now = deps.clock();
  if (options.store) {
    const entry = await readQuietly(deps, key);
    if (entry && entry.expiresAt > now) return { value: forCaller(entry.value), cache: "hit" };
  }

  let outcome;
  try {
    outcome = await deps.flight.run(key, job, { now, ttlMs: options.ttlMs, store: options.store, charLimit: options.charLimit });
  } catch (error) {
    // The single-flight owner is unreachable: still answer, just without coalescing.
    deps.log.warn("single_flight_unreachable", { key, error: String(error) });
    const value = await runJob(job, deps.fetch);
    if (options.store && isStorable(job, value)) {
      await deps.cache.put(key, { value, expiresAt: now + options.ttlMs }, options.ttlMs).catch(() => {});
    }
    return { value: forCaller(value), cache: "miss" };
  }
  if (!outcome.ok) throw fromFlightError(outcome.error);
  return { value: outcome.value, cache: outcome.cache };
}

async function readQuietly(deps: PaidCallDeps, key: string) {
  try {
    return await deps.cache.get<JobValue>(key);
  } catch (error) {
    deps.log.warn("cache_read_failed", { key, error: String(error) });
    return null;
  }
}

