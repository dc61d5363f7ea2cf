/**
 * CacheStore on Workers KV, the global read tier. KV's quirks stay here: its 60 s minimum
 * `expirationTtl` (the logical expiry lives in the value, so a rounded-up TTL never serves stale
 * data) and JSON encoding.
 */
import type { CacheEntry, CacheStore } from "../shared/ports";

/** KV refuses an `expirationTtl` below 60 seconds. */
export const KV_MIN_TTL_SECONDS = 60;

export class KvStore implements CacheStore {
  constructor(private readonly kv: KVNamespace) {}

  async get<T>(key: string): Promise<CacheEntry<T> | null> {
    const entry = await this.kv.get<CacheEntry<T>>(key, "json");
    return entry && typeof entry.expiresAt === "number" ? entry : null;
  }

  async put<T>(key: string, entry: CacheEntry<T>, ttlMs: number): Promise<void> {
    const expirationTtl = Math.max(KV_MIN_TTL_SECONDS, Math.ceil(ttlMs / 1000));
    await this.kv.put(key, JSON.stringify(entry), { expirationTtl });
  }

  /** KV does not say whether a deleted key existed: it is read first. */
  async delete(key: string): Promise<boolean> {
    const existed = (await this.kv.get(key)) !== null;
    await this.kv.delete(key);
    return existed;
  }
}
