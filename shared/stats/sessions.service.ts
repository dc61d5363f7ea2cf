/**
 * `GET /v1/stats/sessions`: the window's proxied sessions (docs/stats.md "Sessions"), summed from
 * the session rows the ledger keeps beside the LLM's own (`LedgerRow.session`), where the store
 * keeps them (`SessionsFold`). Money is computed from counts at read time, as for `/v1/stats`.
 */
import type { Config } from "../config/config.schema";
import type { LedgerRow, StatsRequest } from "../ports";
import { combineCounter, counterTier } from "./counters";
import { LEDGER_OTHER_NAME } from "./ledger";
import { ANSWER_SESSIONS, type SessionRow, type SessionsResponse, type StatsWindow } from "./stats.schema";
import { iso, money, RowPrices, statsWindow, UnpairedBuckets } from "./stats.service";

/** One session as it is summed. */
interface Session {
  counts: Record<string, number>;
  cost: number;
  /** As sent; a bucket without an as-sent count is taken as billed when the fold settles (UnpairedBuckets). */
  asSent: number;
  /** Requests per "provider\0model", for the one it is shown with. */
  models: Map<string, number>;
}

const newSession = (): Session => ({ counts: {}, cost: 0, asSent: 0, models: new Map() });

/**
 * The sessions answer built one stored counter at a time. A store hands it each session's rows
 * hour by hour, as both keep them (not summed over the window: an hour that holds no as-sent count
 * is taken as sent as billed, so a sum over hours of both kinds would answer another figure;
 * docs/stats.md, "Sessions"), and in the order of their hours, as both list them: the fold then
 * settles an hour's buckets when the next hour begins, and holds one hour's, not the window's.
 *
 * @example const fold = new SessionsFold(request); for (const row of rows) fold.add(row); fold.answer()
 */
export class SessionsFold {
  private readonly from: number;
  private readonly to: number;
  private readonly sessions = new Map<string, Session>();
  private readonly prices: RowPrices;
  /** Per session, provider and model of the hour being read: the billed money, and whether an as-sent count came with it. */
  private readonly unpaired = new UnpairedBuckets<Session>();
  /** The hour being read: rows come in the order of their hours. */
  private hour = Number.NEGATIVE_INFINITY;

  constructor(request: StatsRequest) {
    ({ from: this.from, to: this.to } = statsWindow(request.window, request.now));
    this.prices = new RowPrices(request.pricing);
  }

  /** Adds one stored counter: a session's row within the window (any other is left out). */
  add(row: LedgerRow): void {
    if (row.session === undefined || row.hour < this.from || row.hour >= this.to) return;
    if (row.hour !== this.hour) {
      // A store bug, not an input: an hour read again after its buckets were settled would be settled twice.
      if (row.hour < this.hour) throw new Error("SessionsFold: a store handed rows out of the order of their hours");
      this.settle();
      this.hour = row.hour;
    }
    let session = this.sessions.get(row.session);
    if (session === undefined) this.sessions.set(row.session, (session = newSession()));
    // The LLM's write TTLs are answered summed, as /v1/stats answers them.
    const stored = counterTier(row.counter).counter;
    const counter = stored.startsWith("cache_write_") ? "cache_write_tokens" : stored;
    const held = session.counts[counter];
    session.counts[counter] = held === undefined ? row.value : combineCounter(counter, held, row.value);
    if (row.counter === "requests") {
      const key = `${row.provider}\u0000${row.model}`;
      session.models.set(key, (session.models.get(key) ?? 0) + row.value);
    }
    const priced = this.prices.price(row);
    if (priced === null) return;
    if (priced.asSent) session.asSent += priced.costUsd;
    else session.cost += priced.costUsd;
    const bucket = `${row.session}\u0000${row.provider}\u0000${row.model}`;
    this.unpaired.note(bucket, priced.asSent, priced.costUsd, () => session);
  }

  /** The hour read so far: its buckets without an as-sent count are taken as sent as billed. */
  private settle(): void {
    for (const [session, billed] of this.unpaired.settle()) session.asSent += billed;
  }

  /** The answer: the most saved first, at most ANSWER_SESSIONS, the rest summed as "(other)" (last). */
  answer(): SessionsResponse {
    this.settle();
    const rows = [...this.sessions].map(([name, session]) => ({ name, session, shown: shown(name, session) }));
    const ranked = rows
      .filter(({ name }) => name !== LEDGER_OTHER_NAME)
      .sort(
        (a, b) => b.shown.saved_usd - a.shown.saved_usd || b.shown.cost_usd - a.shown.cost_usd || order(a.name, b.name),
      );
    const stored = this.sessions.get(LEDGER_OTHER_NAME);
    const room = ranked.length + (stored ? 1 : 0) > ANSWER_SESSIONS ? ANSWER_SESSIONS - 1 : ranked.length;
    const rest = ranked.slice(room).map(({ session }) => session);
    if (stored) rest.push(stored);
    const sessions: SessionRow[] = ranked.slice(0, room).map(({ shown }) => shown);
    if (rest.length > 0) sessions.push(shown(LEDGER_OTHER_NAME, rest.reduce(merged)));
    return { success: true, from: iso(this.from), to: iso(this.to), sessions };
  }
}

const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Two sessions summed into one (for "(other)"). */
function merged(into: Session, session: Session): Session {
  const counts = { ...into.counts };
  for (const [counter, value] of Object.entries(session.counts))
    counts[counter] = counts[counter] === undefined ? value : combineCounter(counter, counts[counter]!, value);
  const models = new Map(into.models);
  for (const [key, requests] of session.models) models.set(key, (models.get(key) ?? 0) + requests);
  return {
    counts,
    cost: into.cost + session.cost,
    asSent: into.asSent + session.asSent,
    models,
  };
}

/** One session as answered. */
function shown(name: string, session: Session): SessionRow {
  let busiest: [string, number] | undefined;
  for (const entry of session.models)
    if (!busiest || entry[1] > busiest[1] || (entry[1] === busiest[1] && entry[0] < busiest[0])) busiest = entry;
  const [provider = "", model = ""] = (busiest?.[0] ?? "\u0000").split("\u0000");
  const count = (counter: string) => session.counts[counter] ?? 0;
  const cost = money(session.cost);
  return {
    session: name,
    provider,
    model,
    requests: count("requests"),
    first_at: iso(count("first_at")),
    last_at: iso(count("last_at")),
    input_tokens: count("input_tokens"),
    cache_write_tokens: count("cache_write_tokens"),
    cache_read_tokens: count("cache_read_tokens"),
    output_tokens: count("output_tokens"),
    images_fitted: count("images_fitted"),
    images_retired: count("images_retired"),
    cost_usd: cost,
    cost_as_sent_usd: money(session.asSent),
    saved_usd: money(session.asSent - session.cost),
  };
}

/**
 * Builds the sessions answer from rows in memory, in any order (folded in the order of their hours).
 *
 * @example sessionsReport(rows, "24h", Date.now(), config.pricing)
 */
export function sessionsReport(
  rows: readonly LedgerRow[],
  window: StatsWindow,
  now: number,
  pricing: Config["pricing"],
): SessionsResponse {
  const fold = new SessionsFold({ window, now, pricing });
  for (const row of [...rows].sort((a, b) => a.hour - b.hour)) fold.add(row);
  return fold.answer();
}
