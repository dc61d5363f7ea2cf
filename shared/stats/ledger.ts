/**
 * The ledger's write side: `record` adds a request's counts to an in-memory table of hourly
 * buckets (no I/O, never throws), and `flush` hands the gathered increments to the store in one
 * batch, off the request path (the runtime entry calls it from `waitUntil`, or after the
 * response). A failed write is logged and never reaches a request.
 */
import type { CacheStatus, Ledger, LedgerEntry, LedgerRow, LedgerStore, LedgerTool, Logger } from "../ports";
import { combineCounter, LEDGER_MAX_COUNT } from "./counters";

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

/** `name` cut to `chars` (LEDGER_NAME_CHARS), never through a surrogate pair. */
function boundedName(name: string, chars = LEDGER_NAME_CHARS): string {
  if (name.length <= chars) return name;
  const end = /[\uD800-\uDBFF]/.test(name[chars - 1]!) ? chars - 1 : chars;
  return name.slice(0, end);
}

/**
 * Most characters of a session's name kept (docs/stats.md "Sessions"): the caller's `X-Session-Id`
 * is its own text, shown back as it came, cut here.
 */
export const LEDGER_SESSION_CHARS = 128;

/**
 * The name a proxied request's session is counted under: the caller's `X-Session-Id` (trimmed, cut
 * to LEDGER_SESSION_CHARS) when it sent one, else `derived` (the `X-Edge-Session` it is answered).
 *
 * @example sessionName(" checkout-flow-17 ", "9f2c…") // "checkout-flow-17"
 */
export function sessionName(given: string | null | undefined, derived: string): string {
  const trimmed = given?.trim() ?? "";
  return trimmed === "" ? derived : boundedName(trimmed, LEDGER_SESSION_CHARS);
}

/**
 * Most model names one hourly bucket keeps apart per tool. A proxied request's `model` is the
 * caller's string: unbounded, requests naming a new model each would grow the store without end
 * (250,000 names, once counted even when refused, made `/v1/stats` a lasting 503). A refused request
 * is counted under LEDGER_FAILED_NAME; this bounds the names the providers accepted too. Past the
 * bound a name's counts are kept under LEDGER_OTHER_NAME, priced at its provider's default prices.
 */
export const LEDGER_NAMES_PER_HOUR = 100;
/**
 * Most sessions one hourly bucket keeps apart (GET /v1/stats/sessions). A session id is the caller's
 * text, so a caller naming a new session per request would grow the store without end; past the
 * bound a session's counts are kept under LEDGER_OTHER_NAME.
 */
export const LEDGER_SESSIONS_PER_HOUR = 200;
/** Where the counts of names past a bound go: in a bucket (LEDGER_NAMES_PER_HOUR), and in an answer's breakdown. */
export const LEDGER_OTHER_NAME = "(other)";
/**
 * The name a proxied request is counted under when the provider did not accept it (a status of 400
 * or more, or no answer) and no earlier answer had confirmed its `model`: such a request is free to
 * send, and its name the caller's.
 */
export const LEDGER_FAILED_NAME = "(failed)";
/**
 * Model names an answer confirmed, remembered per isolate (or process) so that a model's later
 * refusals (a 429, an overload) are counted under it: the most recently confirmed this many.
 */
const CONFIRMED_NAMES = 1_000;
/** Names kept whatever a bucket holds, and not counted in its bound. */
const FIXED_NAMES = new Set(["", LEDGER_OTHER_NAME, LEDGER_FAILED_NAME]);
/** Buckets whose names a BucketNames holds: the newest, as batches carry the current hour and the last. */
const BUCKETS_HELD = 48;

/** One bucket's key among a BucketNames' buckets. */
const bucketKey = (hour: number, tool: LedgerTool): string => `${hour}\u0000${tool}`;

/**
 * The model names of each (hour, tool) bucket, for a store to cap them as it writes: it loads a
 * bucket's stored names when a batch needs them (`unloaded`, `load`), then `cap` gives the batch
 * with each name past LEDGER_NAMES_PER_HOUR as LEDGER_OTHER_NAME. The fixed names (none, "(other)",
 * "(failed)") are always kept and not counted. A store that is its bucket's only writer (the
 * LedgerDO) loads a bucket once; one sharing its store with other writers (Deno KV) is `shared`,
 * and loads a bucket again before a name it has not seen takes a place. With `dimension: "session"`
 * it bounds the session rows' sessions the same way (LEDGER_SESSIONS_PER_HOUR), leaving other rows be.
 *
 * @example for (const b of names.unloaded(rows)) names.load(b.hour, b.tool, storedNames(b)); store(names.cap(rows))
 */
export class BucketNames {
  private readonly held = new Map<string, Set<string>>();
  private readonly shared: boolean;
  private readonly limit: number;
  private readonly dimension: "model" | "session";

  constructor(options: { shared?: boolean; limit?: number; dimension?: "model" | "session" } = {}) {
    this.shared = options.shared ?? false;
    this.dimension = options.dimension ?? "model";
    this.limit = options.limit ?? (this.dimension === "session" ? LEDGER_SESSIONS_PER_HOUR : LEDGER_NAMES_PER_HOUR);
  }

  /** The name a row is bounded by, or undefined for a row this dimension leaves be. */
  private nameOf(row: LedgerRow): string | undefined {
    return this.dimension === "model" ? row.model : row.session;
  }

  /** The buckets of `rows` whose stored names are needed before `cap`. */
  unloaded(rows: readonly LedgerRow[]): { hour: number; tool: LedgerTool }[] {
    const missing = new Map<string, { hour: number; tool: LedgerTool }>();
    for (const row of rows) {
      const { hour, tool } = row;
      const model = this.nameOf(row);
      if (model === undefined || FIXED_NAMES.has(model)) continue;
      const key = bucketKey(hour, tool);
      const names = this.held.get(key);
      // Shared: a name not seen here may have taken a place elsewhere since (a full bucket stays full).
      if (!names || (this.shared && !names.has(model) && names.size < this.limit)) missing.set(key, { hour, tool });
    }
    return [...missing.values()];
  }

  /** Adds what one bucket's stored rows are named to what is known of it. */
  load(hour: number, tool: LedgerTool, names: Iterable<string>): void {
    const known = this.held.get(bucketKey(hour, tool)) ?? new Set<string>();
    for (const name of names) if (!FIXED_NAMES.has(name)) known.add(name);
    this.held.set(bucketKey(hour, tool), known);
  }

  /** `rows` with the names their buckets cannot take any more as LEDGER_OTHER_NAME (their buckets loaded). */
  cap(rows: readonly LedgerRow[]): LedgerRow[] {
    const capped = rows.map((row) => {
      const name = this.nameOf(row);
      if (name === undefined || FIXED_NAMES.has(name)) return row;
      const names = this.held.get(bucketKey(row.hour, row.tool));
      if (!names) throw new Error("BucketNames.cap: a bucket's names were not loaded");
      if (names.has(name)) return row;
      if (names.size >= this.limit) return { ...row, [this.dimension]: LEDGER_OTHER_NAME };
      names.add(name);
      return row;
    });
    // Oldest first (the order they were loaded in): a batch's own buckets are the newest.
    for (const key of this.held.keys()) {
      if (this.held.size <= BUCKETS_HELD) break;
      this.held.delete(key);
    }
    return capped;
  }
}

/**
 * The name an entry is counted under: an unconfirmed one only if an answer confirmed it before
 * (`confirmed` holds `kind`-prefixed names, CONFIRMED_NAMES of them, most recent last), else
 * LEDGER_FAILED_NAME; a confirmed one is remembered.
 */
function confirmedName(confirmed: Set<string>, kind: string, name: string, unconfirmed: boolean): string {
  if (name === "") return name;
  const key = `${kind}\u0000${name}`;
  if (unconfirmed) return confirmed.has(key) ? name : LEDGER_FAILED_NAME;
  confirmed.delete(key);
  confirmed.add(key);
  if (confirmed.size > CONFIRMED_NAMES) confirmed.delete(confirmed.values().next().value as string);
  return name;
}

/** The key of one counter of one bucket, in the order of LedgerRow's fields (a session's rows apart). */
const rowKey = (row: Omit<LedgerRow, "value">): string =>
  `${row.hour}\u0000${row.tool}\u0000${row.provider}\u0000${row.model}\u0000${row.counter}` +
  (row.session === undefined ? "" : `\u0000session\u0000${row.session}`);

export class LedgerBuffer implements Ledger {
  private pending = new Map<string, LedgerRow>();
  /** Names an answer confirmed (CONFIRMED_NAMES, most recent last). */
  private readonly confirmed = new Set<string>();
  /** Sessions an answer confirmed, the same way. */
  private readonly confirmedSessions = new Set<string>();
  private writing: Promise<void> = Promise.resolve();
  private scheduled = false;

  constructor(
    private readonly store: LedgerStore,
    private readonly log: Logger,
  ) {}

  record(entry: LedgerEntry): void {
    const hour = hourOf(entry.at);
    const provider = boundedName(entry.provider ?? "");
    const unconfirmed = entry.unconfirmed === true;
    const model = confirmedName(this.confirmed, entry.tool, boundedName(entry.model ?? ""), unconfirmed);
    // A session is the caller's text too: a refused request names one only if an answer did.
    const session =
      entry.tool === "llm" && entry.session !== undefined
        ? confirmedName(this.confirmedSessions, "", boundedName(entry.session, LEDGER_SESSION_CHARS), unconfirmed)
        : undefined;
    const gather = (counter: string, value: number, session?: string) => {
      const row: LedgerRow = { hour, tool: entry.tool, provider, model, counter, value };
      if (session !== undefined) row.session = session;
      const key = rowKey(row);
      const held = this.pending.get(key);
      if (held) held.value = combineCounter(counter, held.value, value);
      else this.pending.set(key, row);
    };
    for (const [counter, value] of Object.entries(entry.counts)) {
      if (value === 0) continue;
      // Counts are whole and never negative (Deno KV sums unsigned 64-bit integers), and no one
      // request makes a billion of anything: a figure that is not such a count (a provider's usage
      // it could not vouch for, docs/stats.md) is left out, and said.
      if (!Number.isInteger(value) || value < 0 || value >= LEDGER_MAX_COUNT) {
        this.log.warn("ledger_count_refused", {
          tool: entry.tool,
          provider: provider || undefined,
          counter,
          value: Number.isFinite(value) ? value : "not a count",
        });
        continue;
      }
      gather(counter, value);
      if (session !== undefined) gather(counter, value, session);
    }
    if (session !== undefined) {
      const at = Math.max(0, Math.round(entry.at));
      gather("first_at", at, session);
      gather("last_at", at, session);
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

/** How one web call (a search, or one URL of an extract) ended. */
export type WebOutcome = CacheStatus | "error" | "refused";

/**
 * Counts one web call. Every call counts once among `provider_calls` (this request paid),
 * `hits`, `coalesced` (joined a call in flight), `errors` or `refused`, so those add up to
 * `requests`; `bypass` (cache off, or an answer that must not be stored) is paid, so it also
 * counts a provider call.
 *
 * @example recordWebCall(ports.ledger, "web_search", "tavily", "coalesced", ports.clock())
 */
export function recordWebCall(
  ledger: Ledger,
  tool: "web_search" | "web_extract",
  provider: string | undefined,
  outcome: WebOutcome,
  at: number,
  extra: Record<string, number> = {},
): void {
  const counts: Record<string, number> = { requests: 1, ...extra };
  if (outcome === "miss") counts.provider_calls = 1;
  else if (outcome === "hit") counts.hits = 1;
  else if (outcome === "coalesced") counts.coalesced = 1;
  else if (outcome === "bypass") counts.provider_calls = counts.bypass = 1;
  else if (outcome === "error") counts.errors = 1;
  else counts.refused = 1;
  ledger.record({ tool, provider, counts, at });
}
