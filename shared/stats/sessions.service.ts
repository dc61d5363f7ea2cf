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

/** The counters a session is answered with: the only ones its entry keeps. */
const SHOWN_COUNTERS = [
  "requests",
  "first_at",
  "last_at",
  "input_tokens",
  "cache_write_tokens",
  "cache_read_tokens",
  "output_tokens",
  "images_fitted",
  "images_retired",
] as const;
type ShownCounter = (typeof SHOWN_COUNTERS)[number];
const SHOWN_AT = new Map<string, number>(SHOWN_COUNTERS.map((counter, at) => [counter, at]));

/** One session as it is summed. A window can hold 144,000 of them (docs/stats.md, "Reading"): kept small. */
interface Session {
  /** SHOWN_COUNTERS' values in that order, NaN for one never counted. */
  counts: number[];
  cost: number;
  /** As sent; a bucket without an as-sent count is taken as billed when the fold settles (UnpairedBuckets). */
  asSent: number;
  /**
   * Its requests' "provider\0model", for the one it is shown with: the model itself while they are
   * all of one (most sessions; a Map apiece costs more than the rest of the entry), then requests
   * per model (`requestsPerModel`).
   */
  models: string | Map<string, number> | undefined;
}

const newSession = (): Session => ({
  counts: SHOWN_COUNTERS.map(() => Number.NaN),
  cost: 0,
  asSent: 0,
  models: undefined,
});

const REQUESTS_AT = SHOWN_AT.get("requests")!;

/** Adds `value` to a session's counter as the counter combines (a sum, or the least or the most). */
function addCount(session: Session, counter: ShownCounter, at: number, value: number): void {
  const held = session.counts[at]!;
  session.counts[at] = Number.isNaN(held) ? value : combineCounter(counter, held, value);
}

/** A session's requests per "provider\0model". */
function requestsPerModel(session: Session): Map<string, number> {
  const { models } = session;
  if (models instanceof Map) return models;
  // One model: every request counted is of it.
  const requests = session.counts[REQUESTS_AT]!;
  return new Map(models === undefined ? [] : [[models, Number.isNaN(requests) ? 0 : requests]]);
}

/** Notes `requests` of model `key`: called before they are added to the session's requests. */
function addModelRequests(session: Session, key: string, requests: number): void {
  if (session.models === undefined || session.models === key) {
    session.models = key;
    return;
  }
  const perModel = requestsPerModel(session);
  perModel.set(key, (perModel.get(key) ?? 0) + requests);
  session.models = perModel;
}

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
    if (row.counter === "requests") addModelRequests(session, `${row.provider}\u0000${row.model}`, row.value);
    const at = SHOWN_AT.get(counter);
    if (at !== undefined) addCount(session, counter as ShownCounter, at, row.value);
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
    // Ranked on the figures as answered, and answered only for the sessions listed: a window's
    // sessions are many, its answer 200.
    const saved = (session: Session) => money(session.asSent - session.cost);
    const ranked = [...this.sessions]
      .filter(([name]) => name !== LEDGER_OTHER_NAME)
      .sort(([a, x], [b, y]) => saved(y) - saved(x) || money(y.cost) - money(x.cost) || order(a, b));
    const stored = this.sessions.get(LEDGER_OTHER_NAME);
    const room = ranked.length + (stored ? 1 : 0) > ANSWER_SESSIONS ? ANSWER_SESSIONS - 1 : ranked.length;
    const sessions: SessionRow[] = ranked.slice(0, room).map(([name, session]) => shown(name, session));
    if (ranked.length > room || stored) {
      const other = newSession();
      for (const [, session] of ranked.slice(room)) addInto(other, session);
      if (stored) addInto(other, stored);
      sessions.push(shown(LEDGER_OTHER_NAME, other));
    }
    return { success: true, from: iso(this.from), to: iso(this.to), sessions };
  }
}

const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Adds a session into another (for "(other)"). */
function addInto(into: Session, session: Session): void {
  SHOWN_COUNTERS.forEach((counter, at) => {
    if (!Number.isNaN(session.counts[at]!)) addCount(into, counter, at, session.counts[at]!);
  });
  const perModel = requestsPerModel(into);
  for (const [key, requests] of requestsPerModel(session)) perModel.set(key, (perModel.get(key) ?? 0) + requests);
  into.models = perModel;
  into.cost += session.cost;
  into.asSent += session.asSent;
}

/** One session as answered. */
function shown(name: string, session: Session): SessionRow {
  let busiest: [string, number] | undefined;
  for (const entry of requestsPerModel(session))
    if (!busiest || entry[1] > busiest[1] || (entry[1] === busiest[1] && entry[0] < busiest[0])) busiest = entry;
  const [provider = "", model = ""] = (busiest?.[0] ?? "\u0000").split("\u0000");
  const count = (counter: ShownCounter) => {
    const value = session.counts[SHOWN_AT.get(counter)!]!;
    return Number.isNaN(value) ? 0 : value;
  };
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
