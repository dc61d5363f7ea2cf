/**
 * CacheStore on Deno KV, the Deno runtime's cache and authoritative copy. Deno KV's quirks stay
 * here: values are limited to 64 KiB (entries are split into chunks under a fresh version, the
 * head that names them written last, so a reader never sees half an entry), an atomic operation
 * carries at most 800 KiB, `getMany` reads at most 10 keys, `expireIn` is in milliseconds and only
 * a housekeeping hint (a local KV file still returns expired keys: the `expiresAt` inside the value
 * decides). An entry that fits one chunk lives inside its head, so a hit is one read; a process
 * also keeps the entries it read or wrote lately in memory until their `expiresAt` (an entry is
 * only ever replaced once it has expired, so that copy answers as Deno KV would). A purge is the
 * exception: every delete adds one to a purge count in Deno KV, and a process that answers from
 * memory reads that count at most once every PURGE_CHECK_MS, dropping all its memory copies when
 * it moved, so a purge reaches every process sharing the file within that time.
 */
import type { CacheEntry, CacheStore } from "../shared/ports";
import { HotEntries } from "../shared/web/hot-entries";
import { whenUnlocked } from "./kv-busy";

/** At most 32 KiB as a V8-serialised (UTF-16) string: under the 65,536-byte value limit. */
const CHUNK_CHARS = 16 * 1024;
/** Chunks per atomic operation: 20 × 32 KiB stays under its 819,200-byte limit. */
const CHUNKS_PER_COMMIT = 20;
/** `getMany` takes at most 10 keys. */
const KEYS_PER_READ = 10;

/** The head of an entry: where its chunks are, or the entry itself when it fits one chunk. */
export interface EntryHead {
  version: string;
  chunks: number;
  /** The entry's logical expiry (absent in heads written before it was kept here). */
  expiresAt?: number;
  /** The whole entry's JSON when it fits one chunk. */
  text?: string;
}

export const cacheHeadKey = (key: string): Deno.KvKey => ["cache", key];
const chunkKey = (key: string, version: string, i: number): Deno.KvKey => ["cache-chunk", key, version, i];

/** Deno KV never accepts an `expireIn` of zero or less. */
export const kvExpireIn = (ttlMs: number): number => Math.max(1000, Math.ceil(ttlMs));

/** Purges by any process sharing the Deno KV, counted (a `Deno.KvU64`). */
const purgeCountKey: Deno.KvKey = ["cache-purges"];
/** Longest a process answers from its memory copies without reading the purge count. */
export const PURGE_CHECK_MS = 1000;

export class DenoKvStore implements CacheStore {
  private readonly hot = new HotEntries();
  /** The purge count when this process last read it (null: not read yet), and when that was. */
  private purgesSeen: bigint | null = null;
  private purgesReadAt = Number.NEGATIVE_INFINITY;

  /** `shared`: other processes use this Deno KV too, so purges are counted and checked. */
  constructor(
    private readonly kv: Deno.Kv,
    private readonly clock: () => number = Date.now,
    private readonly shared = true,
  ) {}

  async get<T>(key: string): Promise<CacheEntry<T> | null> {
    const hot = await this.peek<T>(key);
    if (hot) return hot;
    if (!this.shared) {
      const head = await whenUnlocked(() => this.kv.get<EntryHead>(cacheHeadKey(key)));
      return head.value ? this.entryOf<T>(key, head.value) : null;
    }
    // The purge count comes with the head, in one snapshot: the copy kept of this entry is as new as it.
    const [head, purges] = await whenUnlocked(() =>
      this.kv.getMany<[EntryHead, Deno.KvU64]>([cacheHeadKey(key), purgeCountKey]),
    );
    this.notePurges(purges.value);
    return head.value ? this.entryOf<T>(key, head.value) : null;
  }

  /** As `get`, but a memory copy answers with the one parsed, deep-frozen entry every shared read gets. */
  async getShared<T>(key: string): Promise<Readonly<CacheEntry<T>> | null> {
    return (await this.peek<T>(key, true)) ?? this.get<T>(key);
  }

  /**
   * This process's memory copy of `key`, unless a purge by any process may have dropped it since:
   * parsed for this caller, or (`shared`) the one frozen parse every shared read gets.
   */
  private async peek<T>(key: string, shared = false): Promise<CacheEntry<T> | null> {
    const read = (): CacheEntry<T> | undefined => {
      if (shared) return this.hot.getParsed(key, this.clock()) as CacheEntry<T> | undefined;
      const text = this.hot.get(key, this.clock());
      return text === undefined ? undefined : (JSON.parse(text) as CacheEntry<T>);
    };
    let entry = read();
    if (entry === undefined) return null;
    // The purge count is read again only when due (a second since), and the copy looked up again after.
    if (this.shared && this.clock() - this.purgesReadAt >= PURGE_CHECK_MS) {
      await this.checkPurges();
      entry = read();
    }
    return entry ?? null;
  }

  /**
   * Reads the purge count when the last read is over PURGE_CHECK_MS old; `notePurges` drops every
   * memory copy when it moved (or on the first read: copies made before it may predate a purge).
   */
  private async checkPurges(): Promise<void> {
    if (this.clock() - this.purgesReadAt < PURGE_CHECK_MS) return;
    this.notePurges((await whenUnlocked(() => this.kv.get<Deno.KvU64>(purgeCountKey))).value);
  }

  private notePurges(read: Deno.KvU64 | null): void {
    const count = read?.value ?? 0n;
    if (count !== this.purgesSeen) this.hot.clear();
    this.purgesSeen = count;
    this.purgesReadAt = this.clock();
  }

  /**
   * This store (made with `shared` false) as the authority of an in-process single-flight (the
   * single-process mode): reads
   * answer from this process's memory copy only, because what was stored since the read tier
   * missed was stored by this process; writes go to Deno KV. So a miss reads Deno KV once.
   * (An entry over 256 Ki characters is not kept in memory: a caller whose read raced its
   * store pays again.)
   */
  processCopy(): CacheStore {
    return {
      get: async (key) => this.peek(key),
      put: (key, entry, ttlMs) => this.put(key, entry, ttlMs),
      delete: (key) => this.delete(key),
    };
  }

  /** The entry a head points at (one more read only for entries over one chunk). */
  async entryOf<T>(key: string, head: EntryHead): Promise<CacheEntry<T> | null> {
    let text = head.text;
    if (text === undefined) {
      const reads = [];
      for (let first = 0; first < head.chunks; first += KEYS_PER_READ) {
        const keys = Array.from({ length: Math.min(KEYS_PER_READ, head.chunks - first) }, (_, i) =>
          chunkKey(key, head.version, first + i),
        );
        reads.push(whenUnlocked(() => this.kv.getMany<string[]>(keys)));
      }
      const parts = (await Promise.all(reads)).flat().map((part) => part.value);
      if (parts.some((part) => typeof part !== "string")) return null;
      text = parts.join("");
    }
    let entry: CacheEntry<T>;
    try {
      entry = JSON.parse(text) as CacheEntry<T>;
    } catch {
      return null;
    }
    if (typeof entry.expiresAt === "number") this.hot.set(key, text, entry.expiresAt, this.clock());
    return entry;
  }

  /**
   * Deletes the head (chunks of its version are never read again and expire with it) and this
   * process's memory copy, and adds one to the purge count, which drops other processes' memory
   * copies within PURGE_CHECK_MS (docs/storage.md).
   */
  async delete(key: string): Promise<boolean> {
    this.hot.forget(key);
    const head = await whenUnlocked(() => this.kv.get<EntryHead>(cacheHeadKey(key)));
    if (!head.value) return false;
    await whenUnlocked(() => {
      const op = this.kv.atomic().delete(cacheHeadKey(key));
      if (this.shared) op.sum(purgeCountKey, 1n);
      return op.commit();
    });
    return true;
  }

  async put<T>(key: string, entry: CacheEntry<T>, ttlMs: number): Promise<void> {
    const result = await this.commitEntry(key, entry, ttlMs);
    if (!result.ok) throw new Error("Deno KV refused the cache entry's head");
  }

  /**
   * Writes `entry`; `alsoInHead` adds checks and mutations to the atomic operation that writes the
   * head (a lease's release), so both happen together or not at all. Entries of up to 20 chunks
   * are one atomic operation; longer ones write their chunks first.
   */
  async commitEntry<T>(
    key: string,
    entry: CacheEntry<T>,
    ttlMs: number,
    alsoInHead?: (op: Deno.AtomicOperation) => void,
  ): Promise<Deno.KvCommitResult | Deno.KvCommitError> {
    const text = JSON.stringify(entry);
    this.hot.forget(key); // whatever happens to the write, the old copy is not the answer now
    const version = crypto.randomUUID();
    const expireIn = kvExpireIn(ttlMs);
    const chunks = Math.max(1, Math.ceil(text.length / CHUNK_CHARS));
    const head: EntryHead =
      chunks === 1
        ? { version, chunks, expiresAt: entry.expiresAt, text }
        : { version, chunks, expiresAt: entry.expiresAt };
    const batches: number[][] = [];
    for (let first = 0; chunks > 1 && first < chunks; first += CHUNKS_PER_COMMIT) {
      batches.push(Array.from({ length: Math.min(CHUNKS_PER_COMMIT, chunks - first) }, (_, i) => first + i));
    }
    const setChunks = (op: Deno.AtomicOperation, batch: number[]) => {
      for (const i of batch)
        op.set(chunkKey(key, version, i), text.slice(i * CHUNK_CHARS, (i + 1) * CHUNK_CHARS), { expireIn });
    };
    // Every batch but the last goes first, under the fresh version no head names yet.
    const last = batches.pop() ?? [];
    for (const batch of batches) {
      await whenUnlocked(() => {
        const op = this.kv.atomic();
        setChunks(op, batch);
        return op.commit();
      });
    }
    return whenUnlocked(() => {
      const op = this.kv.atomic();
      setChunks(op, last);
      op.set(cacheHeadKey(key), head, { expireIn });
      alsoInHead?.(op);
      return op.commit();
    }).then((result) => {
      if (result.ok) this.hot.set(key, text, entry.expiresAt, this.clock());
      return result;
    });
  }
}
