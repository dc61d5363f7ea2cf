/**
 * Cache entries' JSON kept in an isolate's (or process's) memory, so a repeated hit is not a
 * storage read: each kept until the time it is given (its expiry, or sooner), the least recently
 * used dropped first past a total size. The stores that keep them (deno/cache.kv.ts,
 * workers/cache.kv.ts) say how long a copy may answer for them.
 */
import { deepFreeze } from "../frozen";

/** Most characters of one entry kept, and of all together, by default (16 MiB as UTF-16). */
export const HOT_ENTRY_CHARS = 256 * 1024;
export const HOT_TOTAL_CHARS = 8 * 1024 * 1024;

/** One kept entry: its JSON, and the value parsed from it once a shared read asked for it. */
interface HotEntry {
  text: string;
  expiresAt: number;
  /** Deep-frozen, so no reader can change what the next one reads. */
  parsed?: unknown;
}

export class HotEntries {
  private readonly entries = new Map<string, HotEntry>();
  private chars = 0;
  /** The key last in `entries` (the most recently used), when known. */
  private newest: string | undefined;

  constructor(private readonly totalChars: number = HOT_TOTAL_CHARS) {}

  /** The text kept for `key`, unless its time is up at `now`. */
  get(key: string, now: number): string | undefined {
    return this.touch(key, now)?.text;
  }

  /**
   * The value parsed from the text kept for `key`, unless its time is up at `now`: parsed once
   * and deep-frozen, then the same object for every later read (it cannot be changed: a reader
   * shapes its own copy of what it needs). The text is JSON the store wrote.
   */
  getParsed(key: string, now: number): unknown {
    const hot = this.touch(key, now);
    if (!hot) return undefined;
    if (hot.parsed === undefined) hot.parsed = deepFreeze(JSON.parse(hot.text));
    return hot.parsed;
  }

  /** The entry kept for `key`, made the most recently used, unless its time is up at `now`. */
  private touch(key: string, now: number): HotEntry | undefined {
    const hot = this.entries.get(key);
    if (!hot) return undefined;
    if (hot.expiresAt <= now) {
      this.forget(key);
      return undefined;
    }
    if (key === this.newest) return hot; // the most recently used already: a run of hits on one key
    this.entries.delete(key);
    this.entries.set(key, hot); // most recently used last
    this.newest = key;
    return hot;
  }

  /** Keeps `text` for `key` until `expiresAt` (not when over HOT_ENTRY_CHARS, or already due). */
  set(key: string, text: string, expiresAt: number, now: number): void {
    this.forget(key);
    if (text.length > HOT_ENTRY_CHARS || expiresAt <= now) return;
    this.entries.set(key, { text, expiresAt });
    this.newest = key;
    this.chars += text.length;
    for (const oldest of this.entries.keys()) {
      if (this.chars <= this.totalChars) break;
      this.forget(oldest);
    }
  }

  forget(key: string): void {
    const hot = this.entries.get(key);
    if (!hot) return;
    this.entries.delete(key);
    this.chars -= hot.text.length;
    if (key === this.newest) this.newest = undefined;
  }

  clear(): void {
    this.entries.clear();
    this.newest = undefined;
    this.chars = 0;
  }
}
