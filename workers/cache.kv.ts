/**
 * CacheStore on Workers KV, the global read tier. KV's quirks stay here: its 60 s minimum
 * `expirationTtl` (the logical expiry lives in the value, so a rounded-up TTL never serves stale
 * data) and JSON encoding. An isolate keeps what it read in memory for KV_COPY_MS, so a key read
 * again at once (an agent's fan-out, a retried turn) is not another KV read.
 */
import type { CacheEntry, CacheStore } from "../shared/ports";
import { HotEntries } from "../shared/web/hot-entries";

/** KV refuses an `expirationTtl` below 60 seconds. */
export const KV_MIN_TTL_SECONDS = 60;

/**
 * Longest an isolate's memory copy of a KV read answers for KV (never past the entry's expiry):
 * an entry purged or replaced by another isolate or by the single-flight owner reaches this
 * isolate within it (a purge or put through this store drops its own copy at once). The bound a
 * Deno process's copies have (deno/cache.kv.ts, PURGE_CHECK_MS).
 */
export const KV_COPY_MS = 1000;
/** All memory copies together, at most (4 MiB as UTF-16): a small share of an isolate's 128 MB. */
const COPY_TOTAL_CHARS = 2 * 1024 * 1024;

export class KvStore implements CacheStore {
  private readonly copies = new HotEntries(COPY_TOTAL_CHARS);

  constructor(
    private readonly kv: KVNamespace,
    private readonly clock: () => number = Date.now,
  ) {}

  async get<T>(key: string): Promise<CacheEntry<T> | null> {
    const now = this.clock();
    const copy = this.copies.get(key, now);
    const text = copy ?? (await this.kv.get(key, "text"));
    if (text === null) return null;
    // Parsed on every read, from memory too: callers get their own copy to shape.
    const entry = JSON.parse(text) as CacheEntry<T> | null;
    if (!entry || typeof entry.expiresAt !== "number") return null;
    if (copy === undefined) this.copies.set(key, text, Math.min(entry.expiresAt, now + KV_COPY_MS), now);
    return entry;
  }

  async getShared<T>(key: string): Promise<Readonly<CacheEntry<T>> | null> {
    const copy = this.copies.getParsed(key, this.clock()) as CacheEntry<T> | undefined;
    return copy ?? this.get<T>(key);
  }

  async put<T>(key: string, entry: CacheEntry<T>, ttlMs: number): Promise<void> {
    this.copies.forget(key);
    const expirationTtl = Math.max(KV_MIN_TTL_SECONDS, Math.ceil(ttlMs / 1000));
    await this.kv.put(key, JSON.stringify(entry), { expirationTtl });
  }

  /** KV does not say whether a deleted key existed: it is read first. */
  async delete(key: string): Promise<boolean> {
    this.copies.forget(key);
    const existed = (await this.kv.get(key)) !== null;
    await this.kv.delete(key);
    return existed;
  }

  forgetCopy(key: string): void {
    this.copies.forget(key);
  }
}
