/**
 * The read-through cache of paid calls: global read tier first, then the single-flight owner,
 * which pays at most once per key. Every safety check has run before a caller gets here.
 */
import type { AppPorts, CacheEntry, CacheStatus, FlightOutcome } from "../ports";
import { cutForCaller, fetchedAtOf, FlightCoordinator, fromFlightError, isServable, type Lease } from "./flight";
import { runJob } from "./jobs";
import type { Job, JobValue, ValueOf } from "./job.types";

/**
 * The version in each kind's cache keys, the one place it is written. Raised when what may be
 * stored, or what a stored value means, changes: entries older code stored are then never read
 * again and expire with their TTL. v2 (2026-12-01), both kinds: older code stored the empty
 * results of a shapeless provider answer and keyless results with misdecoded URLs (search), and
 * challenge pages, conversions the reader cut short and WebForms pages it read as empty (extract).
 * Extract v3 (2026-12-03): older code stored pages that ended on a local or cache-exempt host after
 * a redirect, and pages of names that resolved to private addresses under
 * `security.allow_private_urls`, and final URLs that carry a credential, and kept the first
 * caller's URL fragment in `final_url`.
 * Not raised for the entry's `fetchedAt` (added 2026-12-01): an entry without it is read as
 * fetched at its expiry less the TTL (fetchedAtOf), exact unless the TTL changed since.
 */
const CACHE_KEY_VERSIONS: Readonly<Record<Job["kind"], number>> = { search: 2, extract: 3 };

/**
 * How every cache key of `kind` starts (docs/storage.md lists the whole keys).
 *
 * @example cacheKeyPrefix("extract") // "extract:v3:"
 */
export function cacheKeyPrefix(kind: Job["kind"]): string {
  return `${kind}:v${CACHE_KEY_VERSIONS[kind]}:`;
}

/** The ports a paid call uses (`untrustedFetch` reaches the direct extractor's page). */
export type PaidCallDeps = Pick<AppPorts, "cache" | "flight" | "fetch" | "untrustedFetch" | "clock" | "log">;

export interface PaidCallOptions {
  enabled: boolean;
  ttlMs: number;
  /** False when the answer must never be stored (exempt or local hosts, a caller's `store: false`): nothing is read or written. */
  store: boolean;
  /** The caller's `max_age` in seconds: a stored answer fetched longer ago is not served (0: always pay, or join a call paying now). */
  maxAge?: number;
  /**
   * Most content characters a caller can receive (`web.char_limit`): every answer comes back cut
   * to it and flagged `truncated` (see FlightOptions.charLimit and cutForCaller).
   */
  charLimit?: number;
}

export interface PaidCallResult<V extends JobValue = JobValue> {
  value: V;
  cache: CacheStatus;
  /** Whole seconds since the provider answered (0 on a miss). */
  age: number;
  /** When the provider answered, as an ISO time. */
  cachedAt: string;
}

/**
 * Answers `job` from the cache or pays for it once.
 * @throws AppError from the provider (the failure is not stored)
 */
export async function paidCall<J extends Job>(
  deps: PaidCallDeps,
  key: string,
  job: J,
  options: PaidCallOptions,
): Promise<PaidCallResult<ValueOf<J>>> {
  return (await paidCallUntyped(deps, key, job, options)) as PaidCallResult<ValueOf<J>>;
}

async function paidCallUntyped(
  deps: PaidCallDeps,
  key: string,
  job: Job,
  options: PaidCallOptions,
): Promise<PaidCallResult> {
  const now = deps.clock();
  // The one cut on paidCall's side: a bypass and a read-tier hit are cut here; what the single
  // flight answers it has cut already (flagged, so passed through; unflagged, it fits).
  const answered = (value: JobValue, cache: CacheStatus, fetchedAt: number): PaidCallResult => {
    const age = cache === "miss" || cache === "bypass" ? 0 : Math.max(0, Math.floor((now - fetchedAt) / 1000));
    return { value: cutForCaller(value, options.charLimit), cache, age, cachedAt: isoTime(fetchedAt) };
  };
  if (!options.enabled) return answered(await runJob(job, deps.fetch, deps.untrustedFetch), "bypass", deps.clock());

  const flightOptions = {
    now,
    ttlMs: options.ttlMs,
    store: options.store,
    charLimit: options.charLimit,
    maxAgeMs: options.maxAge === undefined ? undefined : options.maxAge * 1000,
  };
  if (options.store && options.maxAge !== 0) {
    const entry = await readQuietly(deps, key);
    if (isServable(entry, now, flightOptions))
      return answered(entry.value as JobValue, "hit", fetchedAtOf(entry, options.ttlMs));
  }

  let outcome: FlightOutcome;
  try {
    outcome = await deps.flight.run(key, job, flightOptions);
  } catch (error) {
    // The single-flight owner is unreachable: still answer, just without coalescing.
    deps.log.warn("single_flight_unreachable", { key, error: String(error) });
    outcome = await alone(deps, key).run(key, job, flightOptions);
  }
  // What the owner stored replaces any copy of the key this isolate read before.
  deps.cache.forgetCopy?.(key);
  if (!outcome.ok) throw fromFlightError(outcome.error);
  return answered(outcome.value, outcome.cache, outcome.fetchedAt);
}

/** The last time isoTime wrote, and how: hits on one entry ask for the same time again and again. */
let lastIso = { at: Number.NaN, iso: "" };

/** `at` (ms since the epoch) as an ISO time, as `new Date(at).toISOString()` writes it. */
function isoTime(at: number): string {
  if (at !== lastIso.at) lastIso = { at, iso: new Date(at).toISOString() };
  return lastIso.iso;
}

/**
 * Drops `key` everywhere it is kept: the read tier and the single-flight owner's copy. A call in
 * flight for it is not stopped, and stores its answer as usual. True when either held it.
 */
export async function purgeCached(deps: Pick<PaidCallDeps, "cache" | "flight">, key: string): Promise<boolean> {
  const [read, owner] = await Promise.all([deps.cache.delete(key), deps.flight.forget(key)]);
  return read || owner;
}

/** A coordinator for one call that joins nobody: it pays, stores in the read tier and cuts as the single flight does. */
function alone(deps: PaidCallDeps, key: string): FlightCoordinator {
  const lease: Lease = { store: (entry, ttlMs) => deps.cache.put(key, entry, ttlMs), release: async () => {} };
  return new FlightCoordinator({
    election: { elect: async () => ({ lead: true, lease }), forget: async () => false },
    fetch: deps.fetch,
    untrustedFetch: deps.untrustedFetch,
    log: deps.log,
    clock: deps.clock,
  });
}

/** The stored entry, shared and frozen where the store keeps one (paidCall only reads it and shapes copies). */
async function readQuietly(deps: PaidCallDeps, key: string): Promise<Readonly<CacheEntry<JobValue>> | null> {
  try {
    return await (deps.cache.getShared ? deps.cache.getShared<JobValue>(key) : deps.cache.get<JobValue>(key));
  } catch (error) {
    deps.log.warn("cache_read_failed", { key, error: String(error) });
    return null;
  }
}
