/**
 * Cache entries' JSON kept in an isolate's (or process's) memory, so a repeated hit is not a
 * storage read: each kept until the time it is given (its expiry, or sooner), the least recently
 * used dropped first past a total size. The stores that keep them (deno/cache.kv.ts,
 * workers/cache.kv.ts) say how long a copy may answer for them.
 */

/** Most characters of one entry kept, and of all together, by default (16 MiB as UTF-16). */
export const HOT_ENTRY_CHARS = 256 * 1024;
export const HOT_TOTAL_CHARS = 8 * 1024 * 1024;

export class HotEntries {
  private readonly entries = new Map<string, { text: string; expiresAt: number }>();
  private chars = 0;

  constructor(private readonly totalChars: number = HOT_TOTAL_CHARS) {}

  /** The text kept for `key`, unless its time is up at `now`. */
  get(key: string, now: number): string | undefined {
    const hot = this.entries.get(key);
    if (!hot) return undefined;
    this.forget(key);
    if (hot.expiresAt <= now) return undefined;
    this.entries.set(key, hot); // most recently used last
    this.chars += hot.text.length;
    return hot.text;
  }

  /** Keeps `text` for `key` until `expiresAt` (not when over HOT_ENTRY_CHARS, or already due). */
  set(key: string, text: string, expiresAt: number, now: number): void {
    this.forget(key);
    if (text.length > HOT_ENTRY_CHARS || expiresAt <= now) return;
    this.entries.set(key, { text, expiresAt });
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
  }

  clear(): void {
    this.entries.clear();
    this.chars = 0;
  }
}
