/**
 * The read-through cache of paid calls: global read tier first, then the single-flight owner,
 * which pays at most once per key. Every safety check has run before a caller gets here.
 */
import type { CacheStatus, CacheStore, Clock, FetchFn, Logger, SingleFlight } from "../ports";
import { cutForCaller, FlightCoordinator, fromFlightError, type Lease } from "./flight";
import { runJob } from "./jobs";
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
  if (!options.enabled) return { value: cutForCaller(await runJob(job, deps.fetch), options.charLimit), cache: "bypass" };

  const now = deps.clock();
  if (options.store) {
    const entry = await readQuietly(deps, key);
    // The single-flight coordinator cuts what it answers; a hit here is cut with the same cut.
    if (entry && entry.expiresAt > now) return { value: cutForCaller(entry.value, options.charLimit), cache: "hit" };
  }

  const flightOptions = { now, ttlMs: options.ttlMs, store: options.store, charLimit: options.charLimit };
  let outcome;
  try {
    outcome = await deps.flight.run(key, job, flightOptions);
  } catch (error) {
    // The single-flight owner is unreachable: still answer, just without coalescing.
    deps.log.warn("single_flight_unreachable", { key, error: String(error) });
    outcome = await alone(deps, key).run(key, job, flightOptions);
  }
  if (!outcome.ok) throw fromFlightError(outcome.error);
  return { value: outcome.value, cache: outcome.cache };
}

/** A coordinator for one call that joins nobody: it pays, stores in the read tier and cuts as the single flight does. */
function alone(deps: PaidCallDeps, key: string): FlightCoordinator {
  const lease: Lease = { store: (entry, ttlMs) => deps.cache.put(key, entry, ttlMs), release: async () => {} };
  return new FlightCoordinator({ election: { elect: async () => ({ lead: true, lease }) }, fetch: deps.fetch, log: deps.log });
}

async function readQuietly(deps: PaidCallDeps, key: string) {
  try {
    return await deps.cache.get<JobValue>(key);
  } catch (error) {
    deps.log.warn("cache_read_failed", { key, error: String(error) });
    return null;
  }
}

