/**
 * `GET /v1/stats`: sums the window's buckets into totals, per provider, per model, and per hour,
 * pricing them with the configured table (docs/stats.md). The store runs the sum where its buckets
 * are kept (`StatsFold`), so only the answer crosses to the route. Money is computed from counts,
 * never stored, so a price change re-prices the past.
 */
import type { Config } from "../config/config.schema";
import {
  billedCost,
  modelRules,
  type ModelRules,
  shownModelPrices,
  tierOf,
  type UsageTokens,
} from "../llm/models.table";
import type { LedgerRow, LedgerStore, LedgerTool, StatsRequest } from "../ports";
import { counterTier, LEDGER_TOOLS, type LLM_AS_SENT_COUNTERS, LLM_WRITE_COUNTERS, TOOL_COUNTERS } from "./counters";
import { HOUR_MS, hourOf, LEDGER_FAILED_NAME, LEDGER_OTHER_NAME } from "./ledger";
import { STATS_WINDOWS, type StatsResponse, type StatsWindow } from "./stats.schema";

type Counts = Record<string, number>;
type Pricing = Config["pricing"];

/** USD to a nano-dollar, so sums of float prices print as the prices do (63 × 0.008 = 0.504). */
export const money = (usd: number): number => Math.round(usd * 1e9) / 1e9;

const add = (into: Counts, counter: string, value: number) => {
  into[counter] = (into[counter] ?? 0) + value;
};

/**
 * A counter as answered: the LLM's price tiers sum into one name (`input_tokens@100000` is
 * answered as `input_tokens`), and its write TTLs into `cache_write_tokens`, which is derived
 * only (null: a stored `cache_write_tokens` of the LLM, written before the TTLs were its only
 * record, would count the same writes twice).
 */
const answeredCounter = (tool: LedgerTool, stored: string): string | null => {
  if (tool !== "llm") return stored;
  const { counter } = counterTier(stored);
  if ((LLM_WRITE_COUNTERS as readonly string[]).includes(counter)) return "cache_write_tokens";
  return counter === "cache_write_tokens" ? null : counter;
};

/** Token counters priced, and the usage field each one is. */
export const PRICED_TOKENS: Readonly<Record<string, keyof UsageTokens>> = {
  input_tokens: "input",
  cache_write_5m_tokens: "cacheWrite5m",
  cache_write_1h_tokens: "cacheWrite1h",
  cache_read_tokens: "cacheRead",
  output_tokens: "output",
};
/** The as-sent token counters (docs/stats.md, "The service's own saving"), and the usage field each prices as. */
const AS_SENT_TOKENS: Record<string, keyof UsageTokens> &
  Record<(typeof LLM_AS_SENT_COUNTERS)[number], keyof UsageTokens> = {
  as_sent_input_tokens: "input",
  as_sent_cache_write_5m_tokens: "cacheWrite5m",
  as_sent_cache_write_1h_tokens: "cacheWrite1h",
  as_sent_cache_read_tokens: "cacheRead",
  as_sent_output_tokens: "output",
};
const NO_TOKENS: UsageTokens = { input: 0, cacheWrite5m: 0, cacheWrite1h: 0, cacheRead: 0, output: 0 };

/**
 * The money of a group of counters: what the web tools saved and, for the LLM, what was paid,
 * what the same tokens cost with no cache, and what the requests as the agent sent them would have
 * cost (the LLM's saving is that less what was paid).
 */
interface Money {
  saved: number;
  cost: number;
  without: number;
  asSent: number;
}

/** One group's counts (as answered) and money. */
interface Group {
  counts: Counts;
  money: Money;
}

const NO_MONEY: Readonly<Money> = Object.freeze({ saved: 0, cost: 0, without: 0, asSent: 0 });
const newGroup = (): Group => ({ counts: {}, money: { ...NO_MONEY } });

/** The value of `key` in `map`, made and set first if missing. */
function held<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}

/**
 * Most model names (or strategies) one tool's breakdown tells apart in an answer: the ones with the
 * most requests in the window; the rest are summed under LEDGER_OTHER_NAME. A name is the caller's
 * string.
 */
export const ANSWER_NAMES = 200;
/**
 * Prices kept per (provider, model) while a fold reads. The stores read in key order, so a model's
 * rows come together and the last lookup answers nearly every row; the map is for rows in any other
 * order, and bounded (100,000 entries of 200-character names held 45 MB).
 */
const PRICES_HELD = 1_000;

/** One stored LLM token count priced: billed or as the agent sent it, and its money. */
export interface PricedRow {
  readonly asSent: boolean;
  readonly costUsd: number;
  readonly withoutCacheUsd: number;
}

/**
 * A (provider, model)'s prices and tiers as a fold reads its rows: each looked up once
 * (PRICES_HELD), and the last one looked up answered again without a lookup.
 *
 * @example const prices = new RowPrices(pricing); prices.price(row)?.costUsd
 */
export class RowPrices {
  private readonly held = new Map<string, ModelRules>();
  private last: { key: string; rules: ModelRules } | undefined;

  constructor(private readonly pricing: Pricing) {}

  private rulesOf(row: Pick<LedgerRow, "provider" | "model">): ModelRules {
    const key = `${row.provider}\u0000${row.model}`;
    let rules = this.last?.key === key ? this.last.rules : this.held.get(key);
    if (!rules) {
      rules = modelRules(row.provider || undefined, row.model || undefined, this.pricing.models);
      if (this.held.size < PRICES_HELD) this.held.set(key, rules);
    }
    this.last = { key, rules };
    return rules;
  }

  /**
   * A token counter's money at its model's rates and its tier (`input_tokens@100000`: counted over
   * that line, priced at the model's highest tier at or under it); null for any other counter.
   */
  price(row: Pick<LedgerRow, "provider" | "model" | "counter" | "value">): PricedRow | null {
    const { counter, abovePromptTokens } = counterTier(row.counter);
    const billed = PRICED_TOKENS[counter];
    const field = billed ?? AS_SENT_TOKENS[counter];
    if (field === undefined) return null;
    const rules = this.rulesOf(row);
    const tier = abovePromptTokens === null ? 0 : tierOf(rules, abovePromptTokens + 1);
    const { costUsd, withoutCacheUsd } = billedCost(rules, { ...NO_TOKENS, [field]: row.value }, tier);
    return { asSent: billed === undefined, costUsd, withoutCacheUsd };
  }
}

/** The tools broken down by model name (or strategy). */
const NAMED_TOOLS = ["llm", "evict"] as const;
type NamedTool = (typeof NAMED_TOOLS)[number];
/** The names each named tool's breakdown keeps apart. */
export type KeptNames = Record<NamedTool, ReadonlySet<string>>;

/** The name a row is answered under (a row without one is "unknown"). */
const nameOf = (row: Pick<LedgerRow, "model">): string => row.model || "unknown";

/**
 * A fold's first pass: requests per name, to keep the ANSWER_NAMES most requested apart whatever
 * order the store reads its rows in (by hour first: names met first are not favoured). A store may
 * hand it rows already summed per name (the LedgerDO's SQL does).
 *
 * @example const ranking = new NameRanking(request); for (const row of rows) ranking.add(row); new StatsFold(request, ranking.kept())
 */
export class NameRanking {
  private readonly from: number;
  private readonly to: number;
  private readonly requests: Record<NamedTool, Map<string, number>> = { llm: new Map(), evict: new Map() };

  constructor(request: StatsRequest) {
    ({ from: this.from, to: this.to } = statsWindow(request.window, request.now));
  }

  /** Counts a row's requests for its name (a row of another counter names it with none). */
  add(row: LedgerRow): void {
    if (row.hour < this.from || row.hour >= this.to || row.session !== undefined) return;
    if (row.tool !== "llm" && row.tool !== "evict") return;
    const names = this.requests[row.tool];
    names.set(nameOf(row), (names.get(nameOf(row)) ?? 0) + (row.counter === "requests" ? row.value : 0));
  }

  /** The ANSWER_NAMES names with the most requests per tool, ties by name. */
  kept(): KeptNames {
    const top = (names: Map<string, number>) =>
      new Set(
        [...names]
          .filter(([name]) => name !== LEDGER_OTHER_NAME)
          .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
          .slice(0, ANSWER_NAMES)
          .map(([name]) => name),
      );
    return { llm: top(this.requests.llm), evict: top(this.requests.evict) };
  }
}

/**
 * The as-sent rule for counts written before the as-sent counters existed (docs/stats.md, "The
 * service's own saving"): a bucket (an hour, provider and model; for `/v1/stats/sessions`, of one
 * session) that holds no as-sent count is taken as sent as billed, prompt and output: no saving
 * claimed, none lost. `/v1/stats` and `/v1/stats/sessions` both settle through it, so they agree.
 *
 * @example buckets.note(key, false, billedUsd, () => group); for (const [group, usd] of buckets.settle()) ...
 */
export class UnpairedBuckets<T> {
  private readonly buckets = new Map<string, { tag: T; billed: number; asSent: boolean }>();

  /** Notes one priced LLM token count in bucket `key`: an as-sent one, or `billedUsd` billed; `tag` names the bucket (made once). */
  note(key: string, asSent: boolean, billedUsd: number, tag: () => T): void {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) this.buckets.set(key, (bucket = { tag: tag(), billed: 0, asSent: false }));
    if (asSent) bucket.asSent = true;
    else bucket.billed += billedUsd;
  }

  /** The buckets that held no as-sent count, each with its billed money (to count as sent); then forgets them all. */
  settle(): Array<[T, number]> {
    const unpaired: Array<[T, number]> = [];
    for (const bucket of this.buckets.values())
      if (!bucket.asSent && bucket.billed !== 0) unpaired.push([bucket.tag, bucket.billed]);
    this.buckets.clear();
    return unpaired;
  }
}

/**
 * The `/v1/stats` answer built one stored counter at a time, so a store can sum its buckets where
 * they are kept (the LedgerDO, the Deno process) and hand over the answer, whose size is bounded,
 * rather than every counter of the window. Money is linear in each counter (a count times a price),
 * so each row is priced as it is read.
 *
 * @example const fold = new StatsFold(request, ranking.kept()); for (const row of rows) fold.add(row); fold.answer()
 */
export class StatsFold {
  private readonly from: number;
  private readonly to: number;
  private readonly totals = new Map<LedgerTool, Group>();
  private readonly byProvider = new Map<string, Map<string, Group>>();
  private readonly byModel = new Map<string, Map<string, Group>>();
  private readonly series = new Map<number, Map<LedgerTool, Group>>();
  private readonly prices: RowPrices;

  /** Per hour, provider and model: the billed money, and whether an as-sent count came with it. */
  private readonly asSentPairs = new UnpairedBuckets<{ hour: number; provider: string; name: string }>();

  /** Requests per provider of each kept LLM name: its prices shown are its busiest provider's. */
  private readonly providers = new Map<string, Map<string, number>>();

  /** `kept`: the names the breakdowns keep apart (NameRanking); any other is summed under LEDGER_OTHER_NAME. */
  constructor(
    private readonly request: StatsRequest,
    private readonly kept: KeptNames,
  ) {
    ({ from: this.from, to: this.to } = statsWindow(request.window, request.now));
    this.prices = new RowPrices(request.pricing);
  }

  /** Adds one stored counter (outside the window, or a session's, it is left out). */
  add(row: LedgerRow): void {
    if (row.hour < this.from || row.hour >= this.to || row.session !== undefined) return;
    const counter = answeredCounter(row.tool, row.counter);
    if (counter === null) return;
    const money = this.moneyOf(row);
    if (row.tool === "llm") this.pairAsSent(row, money);
    const into = (group: Group) => {
      add(group.counts, counter, row.value);
      group.money.saved += money.saved;
      group.money.cost += money.cost;
      group.money.without += money.without;
      group.money.asSent += money.asSent;
    };
    into(held(this.totals, row.tool, newGroup));
    into(
      held(
        held(this.series, row.hour, () => new Map()),
        row.tool,
        newGroup,
      ),
    );
    if (row.tool === "web_search" || row.tool === "web_extract" || row.tool === "llm")
      into(
        held(
          held(this.byProvider, row.tool, () => new Map()),
          row.provider || "unknown",
          newGroup,
        ),
      );
    if (row.tool === "llm" || row.tool === "evict") {
      const name = this.kept[row.tool].has(nameOf(row)) ? nameOf(row) : LEDGER_OTHER_NAME;
      into(
        held(
          held(this.byModel, row.tool, () => new Map()),
          name,
          newGroup,
        ),
      );
      if (row.tool === "llm" && row.counter === "requests" && name !== LEDGER_OTHER_NAME) {
        const providers = held(this.providers, name, () => new Map<string, number>());
        providers.set(row.provider, (providers.get(row.provider) ?? 0) + row.value);
      }
    }
  }

  /**
   * Notes, per hour, provider and model, the billed money (prompt and output) and whether any
   * as-sent count was stored beside it: a bucket counted before the as-sent counters existed has none.
   */
  private pairAsSent(row: LedgerRow, money: Readonly<Money>): void {
    // A count is paired by its kind whatever tier it was stored under (`as_sent_input_tokens@100000`).
    const { counter } = counterTier(row.counter);
    const asSent = AS_SENT_TOKENS[counter] !== undefined;
    if (!asSent && PRICED_TOKENS[counter] === undefined) return;
    this.asSentPairs.note(`${row.hour}\u0000${row.provider}\u0000${row.model}`, asSent, money.cost, () => ({
      hour: row.hour,
      provider: row.provider || "unknown",
      name: this.kept.llm.has(nameOf(row)) ? nameOf(row) : LEDGER_OTHER_NAME,
    }));
  }

  /**
   * A bucket with no as-sent count (written before they existed) is taken as sent as billed, output
   * included (as sent, output is `as_sent_output_tokens`): no saving claimed, none lost.
   */
  private settleUnpaired(): void {
    for (const [bucket, billed] of this.asSentPairs.settle()) {
      const groups = [
        this.totals.get("llm"),
        this.series.get(bucket.hour)?.get("llm"),
        this.byProvider.get("llm")?.get(bucket.provider),
        this.byModel.get("llm")?.get(bucket.name),
      ];
      for (const group of groups) if (group) group.money.asSent += billed;
    }
  }

  /** The answer (docs/stats.md). */
  answer(): StatsResponse {
    this.settleUnpaired();
    const { pricing } = this.request;
    const totals = Object.fromEntries(
      LEDGER_TOOLS.map((tool) => {
        const group = this.totals.get(tool) ?? newGroup();
        const counts: Counts = Object.fromEntries(TOOL_COUNTERS[tool].map((name) => [name, group.counts[name] ?? 0]));
        return [tool, withMoney(tool, counts, group.money)];
      }),
    ) as StatsResponse["totals"];
    const breakdown = (groups: Map<string, Map<string, Group>>, tool: LedgerTool) =>
      Object.fromEntries(
        [...(groups.get(tool) ?? [])].map(([key, group]) => [key, withMoney(tool, { ...group.counts }, group.money)]),
      );
    const byModelLlm = breakdown(this.byModel, "llm");
    const series = [...this.series.keys()]
      .sort((a, b) => a - b)
      .map((hour) => {
        const point: Record<string, unknown> = { t: iso(hour) };
        const tools = this.series.get(hour);
        for (const tool of LEDGER_TOOLS) {
          const group = tools?.get(tool);
          if (!group) continue;
          const counts: Counts = { ...group.counts };
          if (savesMoney(tool)) counts.saved_usd = money(savedOf(tool, group.money));
          point[tool] = counts;
        }
        return point as StatsResponse["series"][number];
      });
    return {
      success: true,
      from: iso(this.from),
      to: iso(this.to),
      bucket: "hour",
      totals,
      by_provider: {
        web_search: breakdown(this.byProvider, "web_search"),
        web_extract: breakdown(this.byProvider, "web_extract"),
        llm: breakdown(this.byProvider, "llm"),
      },
      by_model: { llm: byModelLlm, evict: breakdown(this.byModel, "evict") },
      series,
      saved_usd: money(
        (totals.web_search.saved_usd ?? 0) + (totals.web_extract.saved_usd ?? 0) + (totals.llm.saved_usd ?? 0),
      ),
      prices: {
        search: { ...pricing.search },
        extract: { ...pricing.extract },
        // "(other)" and "(failed)" sum names priced apart: they have no one price to show.
        models: Object.fromEntries(
          Object.keys(byModelLlm).flatMap((name) => {
            const provider = busiest(this.providers.get(name));
            if (name === LEDGER_OTHER_NAME || name === LEDGER_FAILED_NAME || provider === undefined) return [];
            const model = name === "unknown" ? undefined : name;
            return [[name, shownModelPrices(modelRules(provider || undefined, model, pricing.models))]];
          }),
        ),
      },
    };
  }

  /** One row's money: a web tool's avoided calls at its provider's price, the LLM's tokens at the model's. */
  private moneyOf(row: LedgerRow): Readonly<Money> {
    const { pricing } = this.request;
    if (row.tool === "web_search" || row.tool === "web_extract") {
      if (row.counter !== "hits" && row.counter !== "coalesced") return NO_MONEY;
      const table: Record<string, number> = row.tool === "web_search" ? pricing.search : pricing.extract;
      return { saved: row.value * (table[row.provider] ?? 0), cost: 0, without: 0, asSent: 0 };
    }
    if (row.tool !== "llm") return NO_MONEY;
    const priced = this.prices.price(row);
    if (priced === null) return NO_MONEY;
    return priced.asSent
      ? { saved: 0, cost: 0, without: 0, asSent: priced.costUsd }
      : { saved: 0, cost: priced.costUsd, without: priced.withoutCacheUsd, asSent: 0 };
  }
}

/**
 * A group's counts with the money its tool answers: web tools what was saved; the LLM what was
 * paid, what the requests as the agent sent them would have cost, the difference (the service's
 * saving, signed), and the provider's own caching apart (`cache_saved_usd`).
 */
function withMoney(tool: LedgerTool, counts: Counts, sums: Money): Counts {
  if (tool === "llm")
    Object.assign(counts, {
      cost_usd: money(sums.cost),
      cost_as_sent_usd: money(sums.asSent),
      cost_without_cache_usd: money(sums.without),
      cache_saved_usd: money(sums.without - sums.cost),
    });
  if (savesMoney(tool)) counts.saved_usd = money(savedOf(tool, sums));
  return counts;
}

/** What a tool saved: a web tool its avoided calls; the LLM its requests as sent less as billed (signed). */
const savedOf = (tool: LedgerTool, sums: Money): number => (tool === "llm" ? sums.asSent - sums.cost : sums.saved);

/** The tools whose counts answer a `saved_usd`: the web tools and the LLM. */
const savesMoney = (tool: LedgerTool): boolean => tool !== "vision" && tool !== "evict";

/** The provider with the most requests in `requests` (ties by name), or undefined. */
function busiest(requests: Map<string, number> | undefined): string | undefined {
  let best: [string, number] | undefined;
  for (const entry of requests ?? [])
    if (!best || entry[1] > best[1] || (entry[1] === best[1] && entry[0] < best[0])) best = entry;
  return best?.[0];
}

/** The window `[from, to)` ending with the current hour. */
export function statsWindow(window: StatsWindow, now: number): { from: number; to: number } {
  const to = hourOf(now) + HOUR_MS;
  return { from: to - STATS_WINDOWS[window] * HOUR_MS, to };
}

/**
 * Builds the `/v1/stats` answer from rows in memory.
 *
 * @example statsReport(rows, "24h", Date.now(), config.pricing)
 */
export function statsReport(
  rows: readonly LedgerRow[],
  window: StatsWindow,
  now: number,
  pricing: Pricing,
): StatsResponse {
  const request = { window, now, pricing };
  const ranking = new NameRanking(request);
  for (const row of rows) ranking.add(row);
  const fold = new StatsFold(request, ranking.kept());
  for (const row of rows) fold.add(row);
  return fold.answer();
}

/** Asks the store for the window's answer: it sums where its buckets are kept. */
export function stats(store: LedgerStore, window: StatsWindow, now: number, pricing: Pricing): Promise<StatsResponse> {
  return store.report({ window, now, pricing });
}

/** `2026-12-01T10:00:00Z` (no milliseconds, as the spec writes times). */
export const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
