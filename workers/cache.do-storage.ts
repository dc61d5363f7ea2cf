/**
 * CacheStore on a Durable Object's own storage: the authoritative copy of one cache key. Values
 * are JSON split into chunks under the per-value size limit of DO storage, and an alarm clears
 * the object once its entries have expired, so storage does not grow without bound.
 */
import type { CacheEntry, CacheStore } from "../shared/ports";

/** Stay well under the Durable Object per-value limit (UTF-16 strings count double). */
const CHUNK_CHARS = 256 * 1024;

export class DurableObjectStore implements CacheStore {
  constructor(private readonly storage: DurableObjectStorage) {}

  async get<T>(key: string): Promise<CacheEntry<T> | null> {
    const count = await this.storage.get<number>(`${key}#chunks`);
    if (!count) return null;
    const names = Array.from({ length: count }, (_, i) => `${key}#${i}`);
    const parts = await this.storage.get<string>(names);
    const text = names.map((name) => parts.get(name) ?? "").join("");
    try {
      return JSON.parse(text) as CacheEntry<T>;
    } catch {
      return null;
    }
  }

  async delete(key: string): Promise<boolean> {
    const count = await this.storage.get<number>(`${key}#chunks`);
    if (!count) return false;
    const names = [`${key}#chunks`, ...Array.from({ length: count }, (_, i) => `${key}#${i}`)];
    // storage.delete(keys) takes at most 128 keys per call; the count goes first, so no reader sees a partial entry.
    for (let i = 0; i < names.length; i += 128) await this.storage.delete(names.slice(i, i + 128));
    return true;
  }

  async put<T>(key: string, entry: CacheEntry<T>, _ttlMs: number): Promise<void> {
    const text = JSON.stringify(entry);
    const chunks: Record<string, unknown> = {};
    let count = 0;
    for (let offset = 0; offset < text.length || count === 0; offset += CHUNK_CHARS) {
      chunks[`${key}#${count++}`] = text.slice(offset, offset + CHUNK_CHARS);
    }
    chunks[`${key}#chunks`] = count;
    // storage.put(record) takes at most 128 keys per call.
    const names = Object.keys(chunks);
    for (let i = 0; i < names.length; i += 128) {
      await this.storage.put(Object.fromEntries(names.slice(i, i + 128).map((n) => [n, chunks[n]])));
    }
    const alarm = await this.storage.getAlarm();
    if (alarm === null || alarm < entry.expiresAt) await this.storage.setAlarm(entry.expiresAt + 1000);
  }
}
