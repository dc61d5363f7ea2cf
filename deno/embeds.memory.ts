/**
 * The repeat-cap counters on Deno: one process holds every session, so a per-session lock gives
 * the same atomic reserve/release a Durable Object gives on Workers. Sessions idle for a day are
 * dropped.
 */
import { type CounterStore, releaseSlot, reserveSlot, SESSION_IDLE_MS } from "../shared/vision/repeat-cap";
import type { Clock, EmbedCounter, Reservation } from "../shared/ports";
import { KeyedQueue } from "./keyed-queue";

interface Session {
  counters: Map<string, number>;
  lastSeen: number;
}

export class MemoryEmbedCounter implements EmbedCounter {
  private readonly sessions = new Map<string, Session>();
  private readonly queue = new KeyedQueue();

  constructor(private readonly clock: Clock) {}

  reserve(sessionId: string, imageKey: string, cap: number | null): Promise<Reservation> {
    return this.exclusive(sessionId, (store) => reserveSlot(store, imageKey, cap));
  }

  release(sessionId: string, imageKey: string): Promise<void> {
    return this.exclusive(sessionId, (store) => releaseSlot(store, imageKey));
  }

  private exclusive<T>(sessionId: string, work: (store: CounterStore) => Promise<T>): Promise<T> {
    this.sweep();
    let session = this.sessions.get(sessionId);
    if (!session) {
      session = { counters: new Map(), lastSeen: this.clock() };
      this.sessions.set(sessionId, session);
    }
    session.lastSeen = this.clock();
    const { counters } = session;
    const store: CounterStore = {
      get: async (key) => counters.get(key),
      put: async (key, value) => void counters.set(key, value),
    };
    return this.queue.run(sessionId, () => work(store));
  }

  private sweep(): void {
    const cutoff = this.clock() - SESSION_IDLE_MS;
    for (const [id, session] of this.sessions) if (session.lastSeen < cutoff) this.sessions.delete(id);
  }
}
