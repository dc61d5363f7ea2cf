/**
 * The one single-flight coordinator (docs/storage.md): for one cache key, join the call already in
 * flight in this process, else let the leader election decide (an answer someone else stored or
 * paid for, or this caller leads), pay the provider once, store, and give every waiter the same
 * answer cut to its `char_limit`. Only the election differs between runtimes: the authoritative
 * copy of one process or one Durable Object (`CopyElection`, whose input gate or single process
 * makes it the only one), or Deno KV leases across processes (deno/flight.kv.ts).
 */
import { AppError, providerError } from "../http/errors";
import type { CacheEntry, CacheStore, FetchFn, FlightError, FlightOptions, FlightOutcome, Logger, SingleFlight } from "../ports";
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
  /** Called only for calls that may be stored; after the caller's read tier missed. */
  elect(key: string, options: FlightOptions): Promise<Turn>;
}

export interface CoordinatorDeps {
  election: LeaderElection;
  fetch: FetchFn;
  log: Logger;
}

export class FlightCoordinator implements SingleFlight {
  /** The calls in flight in this process (or Durable Object), by key. */
  private readonly inflight = new Map<string, Promise<FlightOutcome>>();

  constructor(private readonly deps: CoordinatorDeps) {}

  run(key: string, job: Job, options: FlightOptions): Promise<FlightOutcome> {
    return this.share(key, job, options).then((outcome) => forCaller(outcome, options.charLimit));
  }

  /** One call per key in this process; registered before the first await, so later callers join it. */
  private share(key: string, job: Job, options: FlightOptions): Promise<FlightOutcome> {
    const joined = this.inflight.get(key);
    if (joined) return joined.then(coalesced);
    const mine = this.settle(key, job, options);
    this.inflight.set(key, mine);
    return mine.finally(() => this.inflight.delete(key));
  }

  private async settle(key: string, job: Job, options: FlightOptions): Promise<FlightOutcome> {
    const turn: Turn = options.store ? await this.deps.election.elect(key, options) : { lead: true };
    return turn.lead ? this.pay(key, job, options, turn.lease) : turn.outcome;
  }

  /** Runs the job once, stores what may be stored, and leaves the lease's waiters the outcome. */
  private async pay(key: string, job: Job, options: FlightOptions, lease: Lease | undefined): Promise<FlightOutcome> {
    let value: JobValue;
    try {
      value = oversizeChecked(job, await runJob(job, this.deps.fetch), options.charLimit);
    } catch (error) {
      const failed = failedOutcome(this.deps.log, job, error);
      await lease?.release(failed);
      return failed;
    }
    if (lease && options.store && isStorable(job, value)) {
      try {
        await lease.store({ value, expiresAt: options.now + options.ttlMs }, options.ttlMs);
        return { ok: true, value, cache: "miss", stored: true };
      } catch (error) {
        // A storage failure loses the cache entry, not the answer.
        this.deps.log.warn("cache_store_failed", { key, error: String(error) });
      }
    }
    const outcome: FlightOutcome = { ok: true, value, cache: "miss", stored: false };
    await lease?.release(forCaller(outcome, options.charLimit));
    return outcome;
  }
}

/**
 * The most JSON characters an answer may have as callers receive it (after the cut): at most
 * 16 MiB as V8 serialises it (two bytes a character) for a Durable Object's RPC (32 MiB), and
 * at most 24 MiB of UTF-8 for a KV value (25 MiB). A longer one is a provider failure for every
 * waiter, paid once, never stored, and never retried around the single flight.
 */
export const ANSWER_MAX_CHARS = 8 * 1024 * 1024;

/** The value, or a `provider_error` when the answer callers would receive is over ANSWER_MAX_CHARS. */
function oversizeChecked(job: Job, value: JobValue, charLimit: number | undefined): JobValue {
  const chars = JSON.stringify(cutForCaller(value, charLimit)).length;
  if (chars <= ANSWER_MAX_CHARS) return value;
  throw providerError(job.settings.name, `its answer was too large (${chars} characters of JSON; the most the service passes on is ${ANSWER_MAX_CHARS})`);
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
    const own = await this.authority.get<JobValue>(key);
    if (own && own.expiresAt > options.now) return { lead: false, outcome: { ok: true, value: own.value, cache: "hit", stored: true } };
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
}

function toFlightError(error: unknown): FlightError {
  if (error instanceof AppError) return { status: error.status, code: error.code, message: error.message };
  return { status: 500, code: "internal_error", message: "The service failed unexpectedly while calling the provider; try again." };
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
 * single-flight coordinator and is passed through untouched, so every path cuts once: the
 * coordinator for what it answers, paidCall for the paths around it.
 */
export function cutForCaller<V extends JobValue>(value: V, charLimit: number | undefined): V {
  if (charLimit === undefined || !("page" in value) || value.truncated) return value;
  const cut = truncateContent(value.page.content, charLimit);
  if (cut.truncated) return { ...value, page: { ...value.page, content: cut.content }, truncated: true };
  return value.page.truncated ? { ...value, truncated: true } : value;
}

/** A paid call that threw: its error as waiters receive it; a crash (not an AppError) is logged. */
function failedOutcome(log: Logger, job: Job, error: unknown): { ok: false; error: FlightError } {
  if (!(error instanceof AppError)) log.error("provider_call_crashed", { kind: job.kind, provider: job.settings.name, error: String(error) });
  return { ok: false, error: toFlightError(error) };
}

/** The same outcome, as a caller that joined a call in flight receives it. */
export function coalesced(outcome: FlightOutcome): FlightOutcome {
  return outcome.ok ? { ...outcome, cache: "coalesced" } : outcome;
}
