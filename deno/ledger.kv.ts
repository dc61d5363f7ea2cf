/**
 * The savings ledger's buckets on Deno: one Deno KV counter per bucket and counter, added to with
 * atomic `sum` (exact however many processes share the KV), each set to expire 35 days after its
 * hour. Expiry in Deno KV is lazy, so buckets past their 35 days are also deleted as batches
 * arrive, at most once an hour per process (docs/storage.md).
 *
 * Keys: ["ledger", hour, tool, provider, model, counter] → Deno.KvU64; a session's rows
 * (`LedgerRow.session`, read by /v1/stats/sessions only) under ["ledger_session", hour, session,
 * provider, model, counter], their times kept with atomic `min` and `max`.
 */
import type { LedgerRow, LedgerStore, StatsRequest } from "../shared/ports";
import { counterCombine } from "../shared/stats/counters";
import { BucketNames, HOUR_MS, hourOf, LEDGER_RETENTION_MS } from "../shared/stats/ledger";
import { SessionsFold } from "../shared/stats/sessions.service";
import type { SessionsResponse, StatsResponse } from "../shared/stats/stats.schema";
import { NameRanking, StatsFold, statsWindow } from "../shared/stats/stats.service";

const PREFIX = "ledger";
const SESSION_PREFIX = "ledger_session";
/** Mutations per atomic commit, well under Deno KV's limit (1,000). */
const BATCH = 500;
/**
 * Key bytes per atomic commit, under Deno KV's limit on a commit's keys together (81,920 bytes):
 * 500 rows of 200-character model names are over it, and the commit is refused whole.
 */
const BATCH_KEY_BYTES = 64 * 1024;
const utf8 = new TextEncoder();
/** A row's key: a session's rows under their own prefix. */
const keyOf = (row: LedgerRow): Deno.KvKey =>
  row.session === undefined
    ? [PREFIX, row.hour, row.tool, row.provider, row.model, row.counter]
    : [SESSION_PREFIX, row.hour, row.session, row.provider, row.model, row.counter];
/** Upper bound of a row key's encoded size: each string part's UTF-8 and its framing, the hour's 9 bytes. */
const keyBytes = (row: LedgerRow): number =>
  16 + keyOf(row).reduce<number>((n, part) => n + (typeof part === "string" ? 2 + utf8.encode(part).length : 0), 0);

/** `rows` in order, cut into commits of at most BATCH rows and BATCH_KEY_BYTES of keys. */
function* batches(rows: readonly LedgerRow[]): Generator<LedgerRow[]> {
  let batch: LedgerRow[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = keyBytes(row);
    if (batch.length === BATCH || (batch.length > 0 && bytes + size > BATCH_KEY_BYTES)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(row);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}

export class DenoKvLedgerStore implements LedgerStore {
  private sweptHour = 0;
  /**
   * The names of the buckets this process writes. Other processes may share the KV, so a bucket's
   * names are read again before a name this process has not seen takes a place (`shared`); only
   * processes writing new names at the same moment can each take the last places.
   */
  private readonly names = new BucketNames({ shared: true });
  /** The sessions of each hour, bounded the same way (LEDGER_SESSIONS_PER_HOUR). */
  private readonly sessionNames = new BucketNames({ shared: true, dimension: "session" });
  /** Batches are written one after another: each one's names are read and taken as one step. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly kv: Deno.Kv,
    private readonly clock: () => number = Date.now,
  ) {}

  add(batch: readonly LedgerRow[]): Promise<void> {
    const written = this.writing.then(() => this.write(batch));
    this.writing = written.catch(() => undefined);
    return written;
  }

  private async write(batch: readonly LedgerRow[]): Promise<void> {
    const now = this.clock();
    for (const { hour, tool } of this.names.unloaded(batch)) {
      const stored: string[] = [];
      for await (const entry of this.kv.list({ prefix: [PREFIX, hour, tool] })) stored.push(entry.key[4] as string);
      this.names.load(hour, tool, stored);
    }
    for (const { hour } of this.sessionNames.unloaded(batch)) {
      const stored: string[] = [];
      for await (const entry of this.kv.list({ prefix: [SESSION_PREFIX, hour] })) stored.push(entry.key[2] as string);
      this.sessionNames.load(hour, "llm", stored);
    }
    const rows = this.sessionNames.cap(this.names.cap(batch));
    for (const batch of batches(rows)) {
      const op = this.kv.atomic();
      for (const row of batch) {
        const expireIn = Math.max(HOUR_MS, row.hour + LEDGER_RETENTION_MS + HOUR_MS - now);
        op.mutate({
          type: counterCombine(row.counter),
          key: keyOf(row),
          value: new Deno.KvU64(BigInt(row.value)),
          expireIn,
        } as Deno.KvMutation);
      }
      const result = await op.commit();
      if (!result.ok) throw new Error("Deno KV refused the ledger's batch");
    }
    await this.sweep(now);
  }

  async report(request: StatsRequest): Promise<StatsResponse> {
    // Two passes over the listing: the names to keep apart first, then the sums.
    const window = statsWindow(request.window, request.now);
    const ranking = new NameRanking(request);
    for await (const row of this.rows(window)) ranking.add(row);
    const fold = new StatsFold(request, ranking.kept());
    for await (const row of this.rows(window)) fold.add(row);
    return fold.answer();
  }

  async sessions(request: StatsRequest): Promise<SessionsResponse> {
    const { from, to } = statsWindow(request.window, request.now);
    const fold = new SessionsFold(request);
    // In key order, so hour by hour, as the fold takes them.
    for await (const entry of this.kv.list<Deno.KvU64>({ start: [SESSION_PREFIX, from], end: [SESSION_PREFIX, to] })) {
      const [, hour, session, provider, model, counter] = entry.key as [string, number, string, string, string, string];
      fold.add({ hour, tool: "llm", provider, model, counter, value: Number(entry.value.value), session });
    }
    return fold.answer();
  }

  /** The stored counters of the buckets with `from <= hour < to`, one at a time. */
  private async *rows({ from, to }: { from: number; to: number }): AsyncGenerator<LedgerRow> {
    for await (const entry of this.kv.list<Deno.KvU64>({ start: [PREFIX, from], end: [PREFIX, to] })) {
      const [, hour, tool, provider, model, counter] = entry.key as [
        string,
        number,
        LedgerRow["tool"],
        string,
        string,
        string,
      ];
      yield { hour, tool, provider, model, counter, value: Number(entry.value.value) };
    }
  }

  /** Deletes the buckets past their 35 days, once per hour at most. */
  private async sweep(now: number): Promise<void> {
    const hour = hourOf(now);
    if (hour === this.sweptHour) return;
    this.sweptHour = hour;
    const cutoff = hourOf(now - LEDGER_RETENTION_MS);
    for (const prefix of [PREFIX, SESSION_PREFIX])
      for await (const entry of this.kv.list({ start: [prefix, 0], end: [prefix, cutoff] }))
        await this.kv.delete(entry.key);
  }
}
