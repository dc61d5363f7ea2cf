/**
 * The one single-flight coordinator (docs/storage.md): for one cache key, join the call already in
 * flight in this process, else let the leader election decide (an answer someone else stored or
 * paid for, or this caller leads), pay the provider once, store, and give every waiter the same
 * answer cut to its `char_limit`. Only the election differs between runtimes: the authoritative
 * copy of one process or one Durable Object (`CopyElection`, whose input gate or single process
 * makes it the only one), or Deno KV leases across processes (deno/flight.kv.ts).
 */
import { AppError, providerError } from "../http/errors";
import type {
  CacheEntry,
  CacheStore,
  Clock,
  FetchFn,
  FlightError,
  FlightOptions,
  FlightOutcome,
  Logger,
  SingleFlight,
} from "../ports";
import { isStorable, runJob } from "./jobs";
import type { Job, JobValue } from "./job.types";
import { truncateContent } from "./truncate";

/** What the election decided for one caller. */
export type Turn =
  /** Answered without paying here: a stored entry, or the outcome of another process's lead. */
  | { lead: false; outcome: FlightOutcome }
  /** This caller pays. Without a lease it must neither store nor share (nobody waits on it). */
  | { lead: true; lease?: Lease };

/** The right to pay for one key, held until it stores an entry or releases. */
export interface Lease {
  /** Stores the entry and ends the lease (in one step where the storage allows). */
  store(entry: CacheEntry<JobValue>, ttlMs: number): Promise<void>;
  /** Ends the lease without an entry, leaving its waiters `outcome` (already cut for callers). */
  release(outcome: FlightOutcome): Promise<void>;
}

/** How one runtime decides who pays for a key: the only part of single-flight that differs. */
export interface LeaderElection {
  /**
   * Called after the caller's read tier missed. An unstored call (`options.store` false) comes
   * with a key of its own, which no entry is ever stored under, and its lease is only released.
   */
  elect(key: string, options: FlightOptions): Promise<Turn>;
  /** Drops the authoritative copy of `key` (a purge); true when there was one. */
  forget(key: string): Promise<boolean>;
  /** How many callers of this flight key wait in the election on a lead held elsewhere (none when absent). */
  waiting?(key: string): number;
}

export interface CoordinatorDeps {
  election: LeaderElection;
  fetch: FetchFn;
  /** AppPorts' `untrustedFetch`, for the direct extractor's page; default `fetch`. */
  untrustedFetch?: FetchFn;
  log: Logger;
  /** Measures how long a provider call took (an entry's `fetchedAt` is on the caller's clock); default Date.now. */
  clock?: Clock;
}

/** Adds `step` to the count of callers waiting on `key`, dropping the key at none. */
export function tally(counts: Map<string, number>, key: string, step: 1 | -1): void {
  const count = (counts.get(key) ?? 0) + step;
  if (count > 0) counts.set(key, count);
  else counts.delete(key);
}

/** The flight key of `key`'s unstored calls, which join only each other. */
const unstoredKey = (key: string) => `${key}\nunstored`;

/** A settled call: the uncut outcome its joiners cut to their own `char_limit`, and its own caller's, cut once. */
interface Settled {
  shared: FlightOutcome;
  caller: FlightOutcome;
}

export class FlightCoordinator implements SingleFlight {
  /** The calls in flight in this process (or Durable Object), by key. */
  private readonly inflight = new Map<string, Promise<Settled>>();
  /** How many callers joined each call in flight and still wait on it, by key. */
  private readonly joined = new Map<string, number>();

  constructor(private readonly deps: CoordinatorDeps) {}

  /**
   * One call per key in this process; registered before the first await, so later callers join it
   * whatever their `max_age` (an answer being fetched is fresh). Unstored calls join only each other.
   * Every caller's answer is cut once to its own `char_limit`.
   */
  run(key: string, job: Job, options: FlightOptions): Promise<FlightOutcome> {
    const flightKey = options.store ? key : unstoredKey(key);
    const joined = this.inflight.get(flightKey);
    if (joined) {
      tally(this.joined, flightKey, 1);
      return joined
        .then(({ shared }) => forCaller(coalesced(shared), options.charLimit))
        .finally(() => tally(this.joined, flightKey, -1));
    }
    const mine = this.settle(flightKey, job, options);
    this.inflight.set(flightKey, mine);
    return mine.then(({ caller }) => caller).finally(() => this.inflight.delete(flightKey));
  }

  forget(key: string): Promise<boolean> {
    return this.deps.election.forget(key);
  }

  /** Callers of `key` that joined a call in flight here, or wait in the election on a lead elsewhere. */
  async joiners(key: string): Promise<number> {
    let count = 0;
    for (const flightKey of [key, unstoredKey(key)])
      count += (this.joined.get(flightKey) ?? 0) + (this.deps.election.waiting?.(flightKey) ?? 0);
    return count;
  }

  private async settle(key: string, job: Job, options: FlightOptions): Promise<Settled> {
    const turn = await this.deps.election.elect(key, options);
    if (turn.lead) return this.pay(key, job, options, turn.lease);
    return { shared: turn.outcome, caller: forCaller(turn.outcome, options.charLimit) };
  }

  /**
   * Runs the job once, cuts its answer once (measured against ANSWER_MAX_CHARS, handed to the
   * caller and to the lease's waiters), stores the uncut answer where it may be stored.
   */
  private async pay(key: string, job: Job, options: FlightOptions, lease: Lease | undefined): Promise<Settled> {
    const clock = this.deps.clock ?? Date.now;
    const started = clock();
    let value: JobValue;
    let cut: JobValue;
    try {
      value = await runJob(job, this.deps.fetch, this.deps.untrustedFetch);
      cut = cutForCaller(value, options.charLimit);
      assertAnswerSize(job, cut);
    } catch (error) {
      const failed = failedOutcome(this.deps.log, job, error);
      await lease?.release(failed);
      return { shared: failed, caller: failed };
    }
    // On the caller's clock, like the expiry: its `now` plus how long the provider took here.
    const fetchedAt = options.now + (clock() - started);
    let stored = false;
    if (lease && options.store && isStorable(job, value)) {
      try {
        await lease.store({ value, expiresAt: options.now + options.ttlMs, fetchedAt }, options.ttlMs);
        stored = true;
      } catch (error) {
        // A storage failure loses the cache entry, not the answer.
        this.deps.log.warn("cache_store_failed", { key, error: String(error) });
      }
    }
    const shared: FlightOutcome = { ok: true, value, cache: "miss", stored, fetchedAt };
    const caller = cut === value ? shared : { ...shared, value: cut };
    // A stored entry ended the lease; otherwise its waiters take the answer as cut here.
    if (!stored) await lease?.release(caller);
    return { shared, caller };
  }
}

/**
 * The most JSON characters an answer may have as callers receive it (after the cut): at most
 * 16 MiB as V8 serialises it (two bytes a character) for a Durable Object's RPC (32 MiB), and
 * at most 24 MiB of UTF-8 for a KV value (25 MiB). A longer one is a provider failure for every
 * waiter, paid once, never stored, and never retried around the single flight.
 */
export const ANSWER_MAX_CHARS = 8 * 1024 * 1024;

/** Throws a `provider_error` when the answer as callers receive it (`cut`) is over ANSWER_MAX_CHARS. */
function assertAnswerSize(job: Job, cut: JobValue): void {
  const chars = JSON.stringify(cut).length;
  if (chars <= ANSWER_MAX_CHARS) return;
  throw providerError(
    job.settings.name,
    `its answer was too large (${chars} characters of JSON; the most the service passes on is ${ANSWER_MAX_CHARS})`,
  );
}

/**
 * The election of one process or one Durable Object: this coordinator is the only one for its
 * keys, so its authoritative copy decides (a fresh entry is a hit, else this caller leads), and a
 * lead stores there and publishes to the global read tier. On a Durable Object, storage awaits do
 * not let other requests in (input gates); in one process, callers of a key already joined.
 */
export class CopyElection implements LeaderElection {
  constructor(
    /** The authoritative copy (Durable Object storage; the Deno store's process copy). */
    private readonly authority: CacheStore,
    /** The global read tier to publish to (KV), if it is not the authority itself. */
    private readonly publish?: CacheStore,
  ) {}

  async elect(key: string, options: FlightOptions): Promise<Turn> {
    // Its unstored calls have joined in the coordinator already; nobody else waits on them.
    if (!options.store) return { lead: true };
    const own = await this.authority.get<JobValue>(key);
    if (isServable(own, options.now, options)) return { lead: false, outcome: storedOutcome(own, "hit", options) };
    return {
      lead: true,
      lease: {
        store: async (entry, ttlMs) => {
          await this.authority.put(key, entry, ttlMs);
          await this.publish?.put(key, entry, ttlMs);
        },
        // Nobody outside this coordinator waits on the lead: its joiners have the outcome.
        release: async () => {},
      },
    };
  }

  forget(key: string): Promise<boolean> {
    return this.authority.delete(key);
  }
}

/** When an entry was fetched: kept in it, or (older entries) its expiry less the TTL. */
export function fetchedAtOf(entry: CacheEntry, ttlMs: number): number {
  return entry.fetchedAt ?? entry.expiresAt - ttlMs;
}

/**
 * Whether a stored entry may answer a call: not expired at `now`, and fetched less than the
 * call's `maxAgeMs` before the call began (`call.now`), so `max_age: 0` takes only an answer
 * fetched after the call began (one it waited for).
 */
export function isServable(
  entry: CacheEntry | null,
  now: number,
  call: { now: number; ttlMs: number; maxAgeMs?: number },
): entry is CacheEntry {
  if (!entry || entry.expiresAt <= now) return false;
  return call.maxAgeMs === undefined || fetchedAtOf(entry, call.ttlMs) > call.now - call.maxAgeMs;
}

/** A stored entry as a flight outcome. */
export function storedOutcome(
  entry: CacheEntry<JobValue>,
  cache: "hit" | "coalesced",
  options: { ttlMs: number },
): FlightOutcome {
  return { ok: true, value: entry.value, cache, stored: true, fetchedAt: fetchedAtOf(entry, options.ttlMs) };
}

function toFlightError(error: unknown): FlightError {
  if (error instanceof AppError) return { status: error.status, code: error.code, message: error.message };
  return {
    status: 500,
    code: "internal_error",
    message: "The service failed unexpectedly while calling the provider; try again.",
  };
}

export function fromFlightError(error: FlightError): AppError {
  return new AppError(error.status, error.code as AppError["code"], error.message);
}

/** The outcome as the caller may receive it: page content cut to `charLimit` (see cutForCaller). */
export function forCaller(outcome: FlightOutcome, charLimit: number | undefined): FlightOutcome {
  if (!outcome.ok) return outcome;
  const value = cutForCaller(outcome.value, charLimit);
  return value === outcome.value ? outcome : { ...outcome, value };
}

/**
 * The one cut of page content to `charLimit` (head and tail kept), flagged `truncated: true`; a
 * page the reader already stopped short is flagged too. A value already flagged was cut by the
 * single-flight coordinator and is passed through untouched: the coordinator cuts what it answers
 * (once per caller; a paid answer once for its caller and its lease's waiters), and paidCall
 * cuts once what it answers itself (a bypass, a read-tier hit), passing a flagged answer through.
 */
export function cutForCaller<V extends JobValue>(value: V, charLimit: number | undefined): V {
  if (charLimit === undefined || !("page" in value) || value.truncated) return value;
  const cut = truncateContent(value.page.content, charLimit);
  if (cut.truncated) return { ...value, page: { ...value.page, content: cut.content }, truncated: true };
  return value.page.truncated ? { ...value, truncated: true } : value;
}

/** A paid call that threw: its error as waiters receive it; a crash (not an AppError) is logged. */
function failedOutcome(log: Logger, job: Job, error: unknown): { ok: false; error: FlightError } {
  if (!(error instanceof AppError))
    log.error("provider_call_crashed", { kind: job.kind, provider: job.settings.name, error: String(error) });
  return { ok: false, error: toFlightError(error) };
}

/** The same outcome, as a caller that joined a call in flight receives it. */
export function coalesced(outcome: FlightOutcome): FlightOutcome {
  return outcome.ok ? { ...outcome, cache: "coalesced" } : outcome;
}
