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
import type { FetchFn, FlightError, FlightOptions, FlightOutcome, Logger, SingleFlight } from "../shared/ports";
import { coalesced, cutForCaller, failedOutcome, forCaller } from "../shared/web/flight";
import { isStorable, runJob } from "../shared/web/jobs";
import type { Job, JobValue } from "../shared/web/job.types";
import { whenUnlocked } from "./kv-busy";
import { cacheHeadKey, type DenoKvStore, type EntryHead, kvExpireIn } from "./deno-kv.store";

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
  | { ok: true; value: JobValue }
  | { ok: false; error: FlightError }
  /** The answer was not stored and is too long to hand over: each waiter pays for itself. */
  | { ok: true; unshared: true };

interface Lease {
  id: string;
  /** Epoch ms; a local KV file returns expired keys, so this decides. */
  expiresAt: number;
}

/** An answer handed over through a lease outcome stays a single Deno KV value. */
const OUTCOME_MAX_CHARS = 16 * 1024;
/** How long a lease's outcome is kept for its waiters to read. */
const OUTCOME_MS = 60_000;

/** The lease this process holds, as last committed. */
interface HeldLease {
  versionstamp: string;
  renewing: Promise<void>;
}

const leaseKey = (key: string): Deno.KvKey => ["flight-lease", key];
const outcomeKey = (key: string, leaseId: string): Deno.KvKey => ["flight-outcome", key, leaseId];

/** What one look at a key saw, with the versionstamps a check-and-set needs. */
interface Sighting {
  lease: Deno.KvEntryMaybe<Lease>;
  head: Deno.KvEntryMaybe<EntryHead>;
  outcome: Deno.KvEntryMaybe<LeaseOutcome> | null;
}

const absent = <T>(key: Deno.KvKey): Deno.KvEntryMaybe<T> => ({ key, value: null, versionstamp: null });

export class DenoKvFlight implements SingleFlight {
  private readonly local = new Map<string, Promise<FlightOutcome>>();

  constructor(
    private readonly kv: Deno.Kv,
    private readonly store: DenoKvStore,
    private readonly deps: { fetch: FetchFn; log: Logger; clock: () => number },
    private readonly timing: KvFlightTiming = DEFAULT_FLIGHT_TIMING,
  ) {}

  run(key: string, job: Job, options: FlightOptions): Promise<FlightOutcome> {
    return this.share(key, job, options).then((outcome) => forCaller(outcome, options.charLimit));
  }

  /** One call per key in this process; across processes, the lease decides who pays. */
  private share(key: string, job: Job, options: FlightOptions): Promise<FlightOutcome> {
    const joined = this.local.get(key);
    if (joined) return joined.then(coalesced);
    // Registered before the first await, so every caller in this process after this one joins.
    const mine = options.store ? this.acrossProcesses(key, job, options) : this.pay(job);
    this.local.set(key, mine);
    return mine.finally(() => this.local.delete(key));
  }

  /**
   * Called right after the read tier missed (paidCall reads the head first), so the first attempt
   * assumes no head and no lease and reads nothing: the check-and-set proves it or fails.
   */
  private async acrossProcesses(key: string, job: Job, options: FlightOptions): Promise<FlightOutcome> {
    const pause = new Pause(this.kv, [leaseKey(key), cacheHeadKey(key)], this.timing);
    try {
      return await this.leadOrWait(key, job, options, pause);
    } finally {
      pause.close();
    }
  }

  private async leadOrWait(key: string, job: Job, options: FlightOptions, pause: Pause): Promise<FlightOutcome> {
    let seen: Sighting = { lease: absent(leaseKey(key)), head: absent(cacheHeadKey(key)), outcome: null };
    let waitedOn: Lease | null = null;
    for (let look = 0; ; look++) {
      const now = this.deps.clock();
      const head = seen.head.value;
      if (head && (head.expiresAt ?? Number.POSITIVE_INFINITY) > now) {
        const entry = await this.store.entryOf<JobValue>(key, head);
        if (entry && entry.expiresAt > now) return { ok: true, value: entry.value, cache: waitedOn ? "coalesced" : "hit", stored: true };
      }
      const handed = seen.outcome?.value;
      if (handed) {
        if ("unshared" in handed) return this.pay(job);
        return handed.ok ? { ok: true, value: handed.value, cache: "coalesced", stored: false } : handed;
      }
      const lease = seen.lease.value;
      if (!lease || lease.expiresAt <= now) {
        const mine: Lease = { id: crypto.randomUUID(), expiresAt: now + this.timing.leaseMs };
        const taken = await whenUnlocked(() =>
          this.kv
            .atomic()
            .check(seen.lease)
            .check(seen.head)
            .set(leaseKey(key), mine, { expireIn: kvExpireIn(this.timing.leaseMs) })
            .commit(),
        );
        if (taken.ok) return this.lead(key, job, options, mine, taken.versionstamp);
      } else {
        waitedOn = lease;
        await pause.next(look);
      }
      seen = await this.look(key, waitedOn);
    }
  }

  private async look(key: string, waitedOn: Lease | null): Promise<Sighting> {
    if (!waitedOn) {
      const [lease, head] = await whenUnlocked(() => this.kv.getMany<[Lease, EntryHead]>([leaseKey(key), cacheHeadKey(key)]));
      return { lease, head, outcome: null };
    }
    const [lease, head, outcome] = await whenUnlocked(() => this.kv.getMany<[Lease, EntryHead, LeaseOutcome]>([leaseKey(key), cacheHeadKey(key), outcomeKey(key, waitedOn.id)]));
    return { lease, head, outcome };
  }

  private async lead(key: string, job: Job, options: FlightOptions, lease: Lease, versionstamp: string): Promise<FlightOutcome> {
    const held: HeldLease = { versionstamp, renewing: Promise.resolve() };
    const renewal = setInterval(() => (held.renewing = this.renew(key, lease, held)), Math.max(1, Math.floor(this.timing.leaseMs / 3)));
    const stopRenewing = async () => {
      clearInterval(renewal);
      await held.renewing; // a renewal still committing would change the versionstamp under us
    };
    let value: JobValue;
    try {
      value = await runJob(job, this.deps.fetch);
    } catch (error) {
      const outcome = failedOutcome(this.deps.log, job, error);
      await stopRenewing();
      await this.release(key, lease, held, outcome);
      return outcome;
    }
    await stopRenewing();

    if (options.store && isStorable(job, value)) {
      const entry = { value, expiresAt: options.now + options.ttlMs };
      try {
        const releaseWithHead = (op: Deno.AtomicOperation) => op.check({ key: leaseKey(key), versionstamp: held.versionstamp }).delete(leaseKey(key));
        const committed = await this.store.commitEntry(key, entry, options.ttlMs, releaseWithHead);
        // The lease was lost (this process stalled past its expiry): the answer is still good.
        if (!committed.ok) await this.store.put(key, entry, options.ttlMs);
        return { ok: true, value, cache: "miss", stored: true };
      } catch (error) {
        // A storage failure loses the cache entry, not the answer.
        this.deps.log.warn("cache_store_failed", { key, error: String(error) });
      }
    }
    // Waiters get what a caller gets (cut to char_limit), so a long page not stored still fits the handover.
    const shared = cutForCaller(value, options.charLimit);
    const handOver: LeaseOutcome = JSON.stringify(shared).length <= OUTCOME_MAX_CHARS ? { ok: true, value: shared } : { ok: true, unshared: true };
    await this.release(key, lease, held, handOver);
    return { ok: true, value, cache: "miss", stored: false };
  }

  /** Releases the lease and leaves its waiters the outcome, in one atomic operation. */
  private async release(key: string, lease: Lease, held: HeldLease, outcome: LeaseOutcome): Promise<void> {
    try {
      await whenUnlocked(() =>
        this.kv
          .atomic()
          .check({ key: leaseKey(key), versionstamp: held.versionstamp })
          .delete(leaseKey(key))
          .set(outcomeKey(key, lease.id), outcome, { expireIn: OUTCOME_MS })
          .commit(),
      );
    } catch (error) {
      // The lease then expires by itself; its waiters take over.
      this.deps.log.warn("flight_lease_release_failed", { key, error: String(error) });
    }
  }

  private async renew(key: string, lease: Lease, held: HeldLease): Promise<void> {
    const renewed = { ...lease, expiresAt: this.deps.clock() + this.timing.leaseMs };
    try {
      const result = await whenUnlocked(() =>
        this.kv
          .atomic()
          .check({ key: leaseKey(key), versionstamp: held.versionstamp })
          .set(leaseKey(key), renewed, { expireIn: kvExpireIn(this.timing.leaseMs) })
          .commit(),
      );
      if (result.ok) held.versionstamp = result.versionstamp;
    } catch (error) {
      this.deps.log.warn("flight_lease_renew_failed", { key, error: String(error) });
    }
  }

  /** No coordination: a value that must never be stored is only coalesced inside this process. */
  private async pay(job: Job): Promise<FlightOutcome> {
    try {
      return { ok: true, value: await runJob(job, this.deps.fetch), cache: "miss", stored: false };
    } catch (error) {
      return failedOutcome(this.deps.log, job, error);
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
      this.change = this.reader.read().then(() => this.reader?.read(), () => undefined);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<"bound">((resolve) => (timer = setTimeout(() => resolve("bound"), max)));
    const woke = await Promise.race([this.change!.then(() => "change" as const, () => "change" as const), bound]);
    clearTimeout(timer);
    if (woke === "change") this.change = this.reader.read().catch(() => undefined);
  }

  close(): void {
    void this.reader?.cancel().catch(() => undefined);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
