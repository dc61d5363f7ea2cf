/**
 * CacheStore on Deno KV, the Deno runtime's cache and authoritative copy. Deno KV's quirks stay
 * here: values are limited to 64 KiB (entries are split into chunks, the head written last),
 * `getMany` reads at most 10 keys, and
 * `expireIn` is in milliseconds (a housekeeping hint; the `expiresAt` inside the value decides).
 */
import type { CacheEntry, CacheStore } from "../shared/ports";

/** Stay under Deno KV's 65,536-byte value limit with UTF-8 of any content. */
const CHUNK_CHARS = 16 * 1024;

export class DenoKvStore implements CacheStore {
  constructor(private readonly kv: Deno.Kv) {}

  async get<T>(key: string): Promise<CacheEntry<T> | null> {
    const head = await this.kv.get<{ chunks: number; version: string }>(["cache", key]);
    if (!head.value) return null;
    const { chunks, version } = head.value;
    const parts: string[] = [];
    // getMany takes at most 10 keys per call.
    for (let first = 0; first < chunks; first += 10) {
      const keys = Array.from({ length: Math.min(10, chunks - first) }, (_, i) => ["cache-chunk", key, version, first + i]);
      for (const part of await this.kv.getMany<string[]>(keys)) {
        if (typeof part.value !== "string") return null;
        parts.push(part.value);
      }
    }
    try {
      return JSON.parse(parts.join("")) as CacheEntry<T>;
    } catch {
      return null;
    }
  }

  async put<T>(key: string, entry: CacheEntry<T>, ttlMs: number): Promise<void> {
    const text = JSON.stringify(entry);
    const version = crypto.randomUUID();
    const expireIn = Math.max(1000, ttlMs);
    const chunks = Math.max(1, Math.ceil(text.length / CHUNK_CHARS));
    // Chunks first (under a fresh version), then the head that points at them: a reader never
    // sees a head without its chunks.
    for (let first = 0; first < chunks; first += 10) {
      const op = this.kv.atomic();
      for (let i = first; i < Math.min(chunks, first + 10); i++) {
        op.set(["cache-chunk", key, version, i], text.slice(i * CHUNK_CHARS, (i + 1) * CHUNK_CHARS), { expireIn });
      }
      await op.commit();
    }
    await this.kv.set(["cache", key], { chunks, version }, { expireIn });
  }
}
