/**
 * Ports: the small interfaces domain code needs from a runtime. Each runtime entry (Workers, Deno)
 * supplies adapters; domain code never touches bindings or globals.
 */

/** Milliseconds since the epoch. Injected so TTL behaviour is testable. */
export type Clock = () => number;

/** The web-standard fetch signature, injected so outbound calls are explicit. */
export type FetchFn = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

/** A stored cache value: the payload plus the absolute time it stops being valid. */
export interface CacheEntry<T = unknown> {
  value: T;
  /** Epoch ms after which the entry is a miss, whatever the storage still holds. */
  expiresAt: number;
}

/** Global read tier (KV on Workers, Deno KV on Deno). TTL quirks live in the adapter. */
export interface CacheStore {
  get<T>(key: string): Promise<CacheEntry<T> | null>;
  /** `ttlMs` is the logical TTL; adapters round up to their storage minimum. */
  put<T>(key: string, entry: CacheEntry<T>, ttlMs: number): Promise<void>;
}
