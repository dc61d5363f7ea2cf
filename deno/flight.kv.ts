/**
 * Single-flight across every Deno process that shares one Deno KV (several `deno serve` processes
 * on one KV file, or Deno Deploy's isolates): the first caller of a key takes a lease with an
 * atomic check-and-set, pays the provider, and commits the entry and the lease's release in one
 * atomic operation; the others wait for the lease or the entry's head to change. They poll, with
 * a bounded pause: a local KV file's `watch` does not see other processes' writes
 * (denoland/deno#21640). Where `watch` does (Deno Deploy's KV), `timing.watch` wakes them on the
 * change and the poll stays as the bound. Inside one process, callers of a key join one promise
 * first, so a process has at most one caller at the lease.
 */
import type { CacheEntry, FetchFn, FlightError, FlightOptions, FlightOutcome, Logger } from "../shared/ports";
import {
  FlightCoordinator,
  isServable,
  type LeaderElection,
  type Lease,
  storedOutcome,
  tally,
  type Turn,
} from "../shared/web/flight";
import type { JobValue } from "../shared/web/job.types";
import { whenUnlocked } from "./kv-busy";
import { cacheHeadKey, type DenoKvStore, type EntryHead, kvExpireIn } from "./cache.kv";

export interface KvFlightTiming {
  /**
   * How long a lease holds a key without being renewed: the bound on how long a crashed leader
   * keeps others waiting. A live leader renews it every third of this.
   */
  leaseMs: number;
  /** First and longest pause between two looks at a key someone else is paying for. */
  pollMs: { first: number; max: number };
  /** Also wake on `kv.watch` (only where it sees every writer's changes). */
  watch?: boolean;
}

export const DEFAULT_FLIGHT_TIMING: KvFlightTiming = { leaseMs: 10_000, pollMs: { first: 10, max: 100 } };

/** What a leader leaves for the waiters of its lease when it stores no entry. */
type LeaseOutcome =
  | { ok: true; value: JobValue; fetchedAt: number }
  | { ok: false; error: FlightError }
  /** The answer was not stored and is too long to hand over: each waiter pays for itself. */
  | { ok: true; unshared: true };

interface LeaseRecord {
  id: string;
  /** Epoch ms; a local KV file returns expired keys, so this decides. */
  expiresAt: number;
}

/** An answer handed over through a lease outcome stays a single Deno KV value. */
const OUTCOME_MAX_CHARS = 16 * 1024;
/** How long a lease's outcome is kept for its waiters to read. */
const OUTCOME_MS = 60_000;

const leaseKey = (key: string): Deno.KvKey => ["flight-lease", key];
const outcomeKey = (key: string, leaseId: string): Deno.KvKey => ["flight-outcome", key, leaseId];

/** What one look at a key saw, with the versionstamps a check-and-set needs. */
interface Sighting {
  lease: Deno.KvEntryMaybe<LeaseRecord>;
  head: Deno.KvEntryMaybe<EntryHead>;
  outcome: Deno.KvEntryMaybe<LeaseOutcome> | null;
}

const absent = <T>(key: Deno.KvKey): Deno.KvEntryMaybe<T> => ({ key, value: null, versionstamp: null });

/**
 * Single-flight across processes: the one coordinator (shared/web/flight.ts), which joins the
 * callers of a key inside this process and pays, with the Deno KV lease as its leader election.
 */
export class DenoKvFlight extends FlightCoordinator {
  constructor(
    kv: Deno.Kv,
    store: DenoKvStore,
    deps: { fetch: FetchFn; untrustedFetch?: FetchFn; log: Logger; clock: () => number },
    timing: KvFlightTiming = DEFAULT_FLIGHT_TIMING,
  ) {
    super({ election: new KvLeaseElection(kv, store, deps, timing), ...deps });
  }
}

/** The Deno KV lease as a leader election: who takes the lease pays; the others wait for its entry or outcome. */
class KvLeaseElection implements LeaderElection {
  constructor(
    private readonly kv: Deno.Kv,
    private readonly store: DenoKvStore,
    private readonly deps: { log: Logger; clock: () => number },
    private readonly timing: KvFlightTiming,
  ) {}

  /**
   * Called right after the read tier missed (paidCall reads the head first), so the first attempt
   * assumes no head and no lease and reads nothing: the check-and-set proves it or fails.
   */
  /** Callers of this process waiting on another process's lease, by key. */
  private readonly waiters = new Map<string, number>();

  async elect(key: string, options: FlightOptions): Promise<Turn> {
    const pause = new Pause(this.kv, [leaseKey(key), cacheHeadKey(key)], this.timing);
    const wait = { counted: false };
    try {
      return await this.leadOrWait(key, options, pause, wait);
    } finally {
      pause.close();
      if (wait.counted) tally(this.waiters, key, -1);
    }
  }

  waiting(key: string): number {
    return this.waiters.get(key) ?? 0;
  }

  private async leadOrWait(
    key: string,
    options: FlightOptions,
    pause: Pause,
    wait: { counted: boolean },
  ): Promise<Turn> {
    let seen: Sighting = { lease: absent(leaseKey(key)), head: absent(cacheHeadKey(key)), outcome: null };
    let waitedOn: LeaseRecord | null = null;
    for (let look = 0; ; look++) {
      const now = this.deps.clock();
      const head = seen.head.value;
      if (head && (head.expiresAt ?? Number.POSITIVE_INFINITY) > now) {
        // A waiter's `max_age` is met by the answer it waited for: that was fetched after its call began.
        const entry = await this.store.entryOf<JobValue>(key, head);
        if (isServable(entry, now, options))
          return {
            lead: false,
            outcome: storedOutcome(entry as CacheEntry<JobValue>, waitedOn ? "coalesced" : "hit", options),
          };
      }
      const handed = seen.outcome?.value;
      if (handed) {
        // Too long to hand over: this caller pays for itself, alone.
        if ("unshared" in handed) return { lead: true };
        return {
          lead: false,
          outcome: handed.ok
            ? { ok: true, value: handed.value, cache: "coalesced", stored: false, fetchedAt: handed.fetchedAt }
            : handed,
        };
      }
      const lease = seen.lease.value;
      if (!lease || lease.expiresAt <= now) {
        const mine: LeaseRecord = { id: crypto.randomUUID(), expiresAt: now + this.timing.leaseMs };
        const taken = await whenUnlocked(() =>
          this.kv
            .atomic()
            .check(seen.lease)
            .check(seen.head)
            .set(leaseKey(key), mine, { expireIn: kvExpireIn(this.timing.leaseMs) })
            .commit(),
        );
        if (taken.ok)
          return {
            lead: true,
            lease: new HeldLease(this.kv, this.store, this.deps, this.timing, key, mine, taken.versionstamp),
          };
      } else {
        waitedOn = lease;
        if (!wait.counted) {
          wait.counted = true;
          tally(this.waiters, key, 1);
        }
        await pause.next(look);
      }
      seen = await this.look(key, waitedOn);
    }
  }

  /** Deletes the entry's head; a lease in flight is left alone, and its leader still stores. */
  forget(key: string): Promise<boolean> {
    return this.store.delete(key);
  }

  private async look(key: string, waitedOn: LeaseRecord | null): Promise<Sighting> {
    if (!waitedOn) {
      const [lease, head] = await whenUnlocked(() =>
        this.kv.getMany<[LeaseRecord, EntryHead]>([leaseKey(key), cacheHeadKey(key)]),
      );
      return { lease, head, outcome: null };
    }
    const [lease, head, outcome] = await whenUnlocked(() =>
      this.kv.getMany<[LeaseRecord, EntryHead, LeaseOutcome]>([
        leaseKey(key),
        cacheHeadKey(key),
        outcomeKey(key, waitedOn.id),
      ]),
    );
    return { lease, head, outcome };
  }
}

/** The lease this process holds: renewed every third of its time until it stores or releases. */
class HeldLease implements Lease {
  private renewing: Promise<void> = Promise.resolve();
  private readonly renewal: ReturnType<typeof setInterval>;

  constructor(
    private readonly kv: Deno.Kv,
    private readonly cache: DenoKvStore,
    private readonly deps: { log: Logger; clock: () => number },
    private readonly timing: KvFlightTiming,
    private readonly key: string,
    private readonly lease: LeaseRecord,
    /** The lease's versionstamp as last committed. */
    private versionstamp: string,
  ) {
    this.renewal = setInterval(() => (this.renewing = this.renew()), Math.max(1, Math.floor(timing.leaseMs / 3)));
  }

  /** Writes the entry's head and deletes the lease in one atomic operation. */
  async store(entry: CacheEntry<JobValue>, ttlMs: number): Promise<void> {
    await this.stopRenewing();
    const releaseWithHead = (op: Deno.AtomicOperation) =>
      op.check({ key: leaseKey(this.key), versionstamp: this.versionstamp }).delete(leaseKey(this.key));
    const committed = await this.cache.commitEntry(this.key, entry, ttlMs, releaseWithHead);
    // The lease was lost (this process stalled past its expiry): the answer is still good.
    if (!committed.ok) await this.cache.put(this.key, entry, ttlMs);
  }

  /** Releases the lease and leaves its waiters the outcome, in one atomic operation. */
  async release(outcome: FlightOutcome): Promise<void> {
    await this.stopRenewing();
    // Waiters get what a caller gets (already cut to char_limit), so a long page not stored still fits the handover.
    const handOver: LeaseOutcome = !outcome.ok
      ? outcome
      : JSON.stringify(outcome.value).length <= OUTCOME_MAX_CHARS
        ? { ok: true, value: outcome.value, fetchedAt: outcome.fetchedAt }
        : { ok: true, unshared: true };
    try {
      await whenUnlocked(() =>
        this.kv
          .atomic()
          .check({ key: leaseKey(this.key), versionstamp: this.versionstamp })
          .delete(leaseKey(this.key))
          .set(outcomeKey(this.key, this.lease.id), handOver, { expireIn: OUTCOME_MS })
          .commit(),
      );
    } catch (error) {
      // The lease then expires by itself; its waiters take over.
      this.deps.log.warn("flight_lease_release_failed", { key: this.key, error: String(error) });
    }
  }

  private async stopRenewing(): Promise<void> {
    clearInterval(this.renewal);
    await this.renewing; // a renewal still committing would change the versionstamp under us
  }

  private async renew(): Promise<void> {
    const renewed = { ...this.lease, expiresAt: this.deps.clock() + this.timing.leaseMs };
    try {
      const result = await whenUnlocked(() =>
        this.kv
          .atomic()
          .check({ key: leaseKey(this.key), versionstamp: this.versionstamp })
          .set(leaseKey(this.key), renewed, { expireIn: kvExpireIn(this.timing.leaseMs) })
          .commit(),
      );
      if (result.ok) this.versionstamp = result.versionstamp;
    } catch (error) {
      this.deps.log.warn("flight_lease_renew_failed", { key: this.key, error: String(error) });
    }
  }
}

/**
 * How a waiter waits between two looks: a poll whose pause grows from `pollMs.first` to
 * `pollMs.max`, or with `watch` the next change of the keys, bounded by `pollMs.max`.
 */
class Pause {
  private reader: ReadableStreamDefaultReader<unknown> | null = null;
  /** At most one read is pending: a change resolves it, whichever pause is waiting then. */
  private change: Promise<unknown> | null = null;

  constructor(
    private readonly kv: Deno.Kv,
    private readonly keys: Deno.KvKey[],
    private readonly timing: KvFlightTiming,
  ) {}

  async next(look: number): Promise<void> {
    const { first, max } = this.timing.pollMs;
    if (!this.timing.watch) return sleep(Math.min(max, first * 1.5 ** look));
    if (!this.reader) {
      this.reader = this.kv.watch(this.keys).getReader();
      // Its first event is the keys' current values, which the caller has just read.
      this.change = this.reader.read().then(
        () => this.reader?.read(),
        () => undefined,
      );
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<"bound">((resolve) => (timer = setTimeout(() => resolve("bound"), max)));
    const woke = await Promise.race([
      this.change!.then(
        () => "change" as const,
        () => "change" as const,
      ),
      bound,
    ]);
    clearTimeout(timer);
    if (woke === "change") this.change = this.reader.read().catch(() => undefined);
  }

  close(): void {
    void this.reader?.cancel().catch(() => undefined);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
