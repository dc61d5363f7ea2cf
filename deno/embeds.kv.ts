/**
 * The repeat-cap counters on Deno KV, shared by every process on one KV: each reserve or release
 * is a check-and-set on the counter's versionstamp, retried on conflict, so 64 parallel loads
 * spread over several processes take exactly `cap` slots. Inside one process the calls on one
 * counter queue up first, so only processes contend at the check-and-set. Each write pushes the
 * counter's expiry a day ahead (`expireIn`); a local KV file still returns expired keys, so the
 * idle time is also checked from the value.
 */
import { type CounterStore, releaseSlot, reserveSlot, SESSION_IDLE_MS } from "../shared/vision/repeat-cap";
import type { Clock, EmbedCounter, Reservation } from "../shared/ports";
import { sha256Hex } from "../shared/hash";
import { KeyedQueue } from "./keyed-queue";
import { whenUnlocked } from "./kv-busy";
import { retryJittered } from "./retry";

interface Counter {
  count: number;
  /** Epoch ms of the last reserve or release. */
  touchedAt: number;
}

/** Retries of one operation lost to other processes' writes; each round one of them wins. */
const MAX_ATTEMPTS = 200;

class Conflict extends Error {}

export class DenoKvEmbedCounter implements EmbedCounter {
  private readonly queue = new KeyedQueue();

  constructor(
    private readonly kv: Deno.Kv,
    private readonly clock: Clock,
  ) {}

  reserve(sessionId: string, imageKey: string, cap: number | null): Promise<Reservation> {
    return this.update(sessionId, imageKey, (store) => reserveSlot(store, imageKey, cap));
  }

  release(sessionId: string, imageKey: string): Promise<void> {
    return this.update(sessionId, imageKey, (store) => releaseSlot(store, imageKey));
  }

  private update<T>(sessionId: string, imageKey: string, ledger: (store: CounterStore) => Promise<T>): Promise<T> {
    return this.queue.run(`${sessionId}\n${imageKey}`, () => this.checkAndSet(sessionId, imageKey, ledger));
  }

  /** Runs the shared ledger on one counter read, committing its write only if nobody wrote since. */
  private async checkAndSet<T>(
    sessionId: string,
    imageKey: string,
    ledger: (store: CounterStore) => Promise<T>,
  ): Promise<T> {
    const key = ["embed", await sha256Hex(sessionId), imageKey];
    const attempt = async () => {
      const read = await whenUnlocked(() => this.kv.get<Counter>(key));
      const now = this.clock();
      const live = read.value && now - read.value.touchedAt < SESSION_IDLE_MS ? read.value.count : undefined;
      let written = false;
      const write = async (count: number) => {
        const committed = await whenUnlocked(() =>
          this.kv.atomic().check(read).set(key, { count, touchedAt: now }, { expireIn: SESSION_IDLE_MS }).commit(),
        );
        if (!committed.ok) throw new Conflict();
        written = true;
      };
      const store: CounterStore = { get: async () => live, put: async (_, count) => write(count) };
      const result = await ledger(store);
      // A refused reserve writes nothing, yet it is the session's use: the counter's 24 h start again
      // (as the Workers object's alarm and the in-process counter do), or an agent still asking for
      // a capped image would have its cap lifted a day after its last granted load.
      if (!written && live !== undefined) await write(live);
      return result;
    };
    return retryJittered(attempt, {
      retryable: (error) => error instanceof Conflict,
      maxPauseMs: (n) => Math.min(20, n),
      maxAttempts: MAX_ATTEMPTS,
    });
  }
}
