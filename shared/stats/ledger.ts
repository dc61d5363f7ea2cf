/**
 * The ledger's write side: `record` adds a request's counts to an in-memory table of hourly
 * buckets (no I/O, never throws), and `flush` hands the gathered increments to the store in one
 * batch, off the request path (the runtime entry calls it from `waitUntil`, or after the
 * response). A failed write is logged and never reaches a request.
 */
import type { Ledger, LedgerEntry, LedgerRow, LedgerStore, Logger } from "../ports";

export const HOUR_MS = 3_600_000;
/** How long a bucket is kept (docs/storage.md). */
export const LEDGER_RETENTION_MS = 35 * 24 * HOUR_MS;

/** The start of the hour `at` falls in (epoch ms). */
export const hourOf = (at: number): number => Math.floor(at / HOUR_MS) * HOUR_MS;

/**
 * Most characters of a provider or model name kept in a row's key. A proxied request's `model` is
 * the caller's string: unbounded, one long name would make every row of a batch unwritable (Deno KV
 * refuses keys over 2 KiB) and swell the store and /v1/stats. The eviction route's `model` has the
 * same bound.
 */
export const LEDGER_NAME_CHARS = 200;

/** `name` cut to LEDGER_NAME_CHARS, never through a surrogate pair. */
function boundedName(name: string): string {
  if (name.length <= LEDGER_NAME_CHARS) return name;
  const end = /[\uD800-\uDBFF]/.test(name[LEDGER_NAME_CHARS - 1]!) ? LEDGER_NAME_CHARS - 1 : LEDGER_NAME_CHARS;
  return name.slice(0, end);
}

/** The key of one counter of one bucket, in the order of LedgerRow's fields. */
const rowKey = (row: Omit<LedgerRow, "value">): string =>
  `${row.hour}\u0000${row.tool}\u0000${row.provider}\u0000${row.model}\u0000${row.counter}`;

export class LedgerBuffer implements Ledger {
  private pending = new Map<string, LedgerRow>();
  private writing: Promise<void> = Promise.resolve();
  private scheduled = false;

  constructor(
    private readonly store: LedgerStore,
    private readonly log: Logger,
  ) {}

  record(entry: LedgerEntry): void {
    const hour = hourOf(entry.at);
    const provider = boundedName(entry.provider ?? "");
    const model = boundedName(entry.model ?? "");
    for (const [counter, raw] of Object.entries(entry.counts)) {
      // Counts are whole and never negative (Deno KV sums unsigned 64-bit integers).
      const value = Number.isFinite(raw) ? Math.round(raw) : 0;
      if (value <= 0) continue;
      const row = { hour, tool: entry.tool, provider, model, counter, value };
      const key = rowKey(row);
      const held = this.pending.get(key);
      if (held) held.value += value;
      else this.pending.set(key, row);
    }
  }

  /** Increments gathered and not yet handed to the store. */
  get pendingRows(): number {
    return this.pending.size;
  }

  /**
   * Writes what was gathered, in one batch. Flushes run one after another, so two never race
   * on the same rows; resolves when this one is written or has failed (never rejects).
   */
  flush(): Promise<void> {
    this.writing = this.writing.then(() => this.writeBatch());
    return this.writing;
  }

  /**
   * Schedules one flush `delayMs` from now unless one is already waiting or nothing was gathered,
   * so a busy isolate writes once per `delayMs`, not once per request. Returns the scheduled flush
   * (for `waitUntil`), or null when there is nothing to write or the waiting one will take this
   * request's counts too.
   */
  flushAfter(delayMs: number): Promise<void> | null {
    if (this.scheduled || this.pending.size === 0) return null;
    this.scheduled = true;
    return new Promise<void>((resolve) => setTimeout(resolve, delayMs)).then(() => {
      // Cleared before the batch is taken: a count recorded after this point schedules anew.
      this.scheduled = false;
      return this.flush();
    });
  }

  private async writeBatch(): Promise<void> {
    if (this.pending.size === 0) return;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    try {
      await this.store.add(rows);
    } catch (error) {
      this.log.warn("ledger_write_failed", { rows: rows.length, error: String(error) });
    }
  }
}

/**
 * How long the ledger gathers before a write, from the runtime variable `LEDGER_FLUSH_MS`
 * (docs/stats.md): 0 to 10,000 ms, 1,000 when unset or not a number.
 */
export function ledgerFlushDelay(raw: unknown): number {
  const ms = raw === undefined || raw === "" ? Number.NaN : Number(raw);
  return Number.isFinite(ms) && ms >= 0 ? Math.min(ms, 10_000) : 1000;
}
