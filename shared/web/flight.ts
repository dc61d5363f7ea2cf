/**
 * Single-flight with an authoritative copy (web.md, "Storage and single-flight"): for one cache
 * key, answer from the owner's own copy, else join the call already in flight, else pay the
 * provider once, store, publish to the global read tier, and give every waiter the same answer.
 * Runtime-agnostic: the Workers Durable Object and the Deno process both host one of these.
 */
import { AppError } from "../http/errors";
import type { CacheStatus, CacheStore, FetchFn, FlightError, FlightOptions, FlightOutcome, Logger, SingleFlight } from "../ports";
import { isStorable, runJob } from "./jobs";
import type { Job, JobValue } from "./job.types";
import { truncateContent } from "./truncate";

function toFlightError(error: unknown): FlightError {
  if (error instanceof AppError) return { status: error.status, code: error.code, message: error.message };
  return { status: 500, code: "internal_error", message: "The service failed unexpectedly while calling the provider; try again." };
}

export function fromFlightError(error: FlightError): AppError {
  return new AppError(error.status, error.code as AppError["code"], error.message);
}

export class FlightCoordinator implements SingleFlight {
  private readonly inflight = new Map<string, Promise<FlightOutcome>>();

  constructor(
    private readonly deps: {
      /** The authoritative copy (Durable Object storage; Deno KV on Deno). */
      authority: CacheStore;
      /** The global read tier to publish to (KV), if it is not the authority itself. */
      publish?: CacheStore;
      fetch: FetchFn;
      log: Logger;
    },
  ) {}

  async run(key: string, job: Job, options: FlightOptions): Promise<FlightOutcome> {
    return forCaller(await this.answer(key, job, options), options.charLimit);
  }

  private async answer(key: string, job: Job, options: FlightOptions): Promise<FlightOutcome> {
    const joined = this.inflight.get(key);
    if (joined) return coalesced(await joined);

    const own = await this.deps.authority.get<JobValue>(key);
    // Storage awaits do not let other requests in on Durable Objects (input gates), but they do
    // elsewhere: look again before becoming the leader.
    const joinedLate = this.inflight.get(key);
    if (joinedLate) return coalesced(await joinedLate);
    if (own && own.expiresAt > options.now) {
      return { ok: true, value: own.value, cache: "hit", stored: true };
    }

    const leader = this.pay(key, job, options);
    this.inflight.set(key, leader);
    try {
      return await leader;
    } finally {
      this.inflight.delete(key);
    }
  }

  private async pay(key: string, job: Job, options: FlightOptions): Promise<FlightOutcome> {
    let value: JobValue;
    try {
      value = await runJob(job, this.deps.fetch);
    } catch (error) {
      return failedOutcome(this.deps.log, job, error);
    }
    const stored = options.store && isStorable(job, value);
    if (stored) {
      const entry = { value, expiresAt: options.now + options.ttlMs };
      try {
        await this.deps.authority.put(key, entry, options.ttlMs);
        await this.deps.publish?.put(key, entry, options.ttlMs);
      } catch (error) {
        // A storage failure loses the cache entry, not the answer.
        this.deps.log.warn("cache_store_failed", { key, error: String(error) });
      }
    }
    return { ok: true, value, cache: "miss", stored };
  }
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
 * single-flight owner and is passed through untouched, so every path cuts once: the owner for
 * what crosses its boundary, paidCall for the paths around it.
 */
export function cutForCaller<V extends JobValue>(value: V, charLimit: number | undefined): V {
  if (charLimit === undefined || !("page" in value) || value.truncated) return value;
  const cut = truncateContent(value.page.content, charLimit);
  if (cut.truncated) return { ...value, page: { ...value.page, content: cut.content }, truncated: true };
  return value.page.truncated ? { ...value, truncated: true } : value;
}

/** A paid call that threw: its error as waiters receive it; a crash (not an AppError) is logged. */
export function failedOutcome(log: Logger, job: Job, error: unknown): { ok: false; error: FlightError } {
  if (!(error instanceof AppError)) log.error("provider_call_crashed", { kind: job.kind, provider: job.settings.name, error: String(error) });
  return { ok: false, error: toFlightError(error) };
}

/** The same outcome, as a caller that joined a call in flight receives it. */
export function coalesced(outcome: FlightOutcome): FlightOutcome {
  return outcome.ok ? { ...outcome, cache: "coalesced" } : outcome;
}
