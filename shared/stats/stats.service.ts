/**
 * `GET /v1/stats`: reads the window's buckets from the ledger store and sums them into totals,
 * per provider, per model, and per hour, pricing them with the configured table (docs/stats.md).
 * Money is computed here from counts, never stored, so a price change re-prices the past.
 */
import type { Config } from "../config/config.schema";
import { modelRules, type ModelPrices, shownPrices, usageCost } from "../models/models.table";
import type { LedgerRow, LedgerStore, LedgerTool } from "../ports";
import { LEDGER_TOOLS, LLM_WRITE_COUNTERS, TOOL_COUNTERS } from "./counters";
import { HOUR_MS, hourOf } from "./ledger";
import { STATS_WINDOWS, type StatsResponse, type StatsWindow } from "./stats.schema";

type Counts = Record<string, number>;
type Pricing = Config["pricing"];

/** USD to a nano-dollar, so sums of float prices print as the prices do (63 × 0.008 = 0.504). */
const money = (usd: number): number => Math.round(usd * 1e9) / 1e9;

const add = (into: Counts, counter: string, value: number) => {
  into[counter] = (into[counter] ?? 0) + value;
};

/**
 * A counter as answered: the LLM's write TTLs sum into `cache_write_tokens`, which is derived
 * only (null: a stored `cache_write_tokens` of the LLM, written before the TTLs were its only
 * record, would count the same writes twice).
 */
const answeredCounter = (tool: LedgerTool, counter: string): string | null => {
  if (tool !== "llm") return counter;
  if ((LLM_WRITE_COUNTERS as readonly string[]).includes(counter)) return "cache_write_tokens";
  return counter === "cache_write_tokens" ? null : counter;
};

/** What a web tool's avoided calls saved at one provider's price. */
function webSaved(tool: "web_search" | "web_extract", provider: string, counts: Counts, pricing: Pricing): number {
  const table: Record<string, number> = tool === "web_search" ? pricing.search : pricing.extract;
  return ((counts.hits ?? 0) + (counts.coalesced ?? 0)) * (table[provider] ?? 0);
}

/** The LLM money of one model's tokens: real cost and the cost with no cache. */
function llmMoney(raw: Counts, prices: ModelPrices): { costUsd: number; withoutCacheUsd: number } {
  return usageCost(prices, {
    input: raw.input_tokens ?? 0,
    cacheWrite5m: raw.cache_write_5m_tokens ?? 0,
    cacheWrite1h: raw.cache_write_1h_tokens ?? 0,
    cacheRead: raw.cache_read_tokens ?? 0,
    output: raw.output_tokens ?? 0,
  });
}

/** Groups rows by a key, keeping each group's raw counts. */
function groupBy(rows: readonly LedgerRow[], keyOf: (row: LedgerRow) => string): Map<string, Counts> {
  const groups = new Map<string, Counts>();
  for (const row of rows) {
    const key = keyOf(row);
    let counts = groups.get(key);
    if (!counts) groups.set(key, (counts = {}));
    add(counts, row.counter, row.value);
  }
  return groups;
}

/** Raw counts (the LLM's write TTLs apart) → the counts answered. */
function answered(tool: LedgerTool, raw: Counts): Counts {
  const out: Counts = {};
  for (const [counter, value] of Object.entries(raw)) {
    const name = answeredCounter(tool, counter);
    if (name !== null) add(out, name, value);
  }
  return out;
}

/** Money of one tool's rows: web tools per provider, the LLM per model. */
function moneyOf(
  tool: LedgerTool,
  rows: readonly LedgerRow[],
  pricing: Pricing,
  modelPrices: (provider: string, model: string) => ModelPrices,
) {
  let saved = 0;
  let cost = 0;
  let without = 0;
  if (tool === "web_search" || tool === "web_extract") {
    for (const [provider, counts] of groupBy(rows, (r) => r.provider))
      saved += webSaved(tool, provider, counts, pricing);
  } else if (tool === "llm") {
    for (const [key, counts] of groupBy(rows, (r) => `${r.provider}\u0000${r.model}`)) {
      const [provider = "", model = ""] = key.split("\u0000");
      const { costUsd, withoutCacheUsd } = llmMoney(counts, modelPrices(provider, model));
      cost += costUsd;
      without += withoutCacheUsd;
    }
    saved = without - cost;
  }
  return { saved, cost, without };
}

/** The zero-filled totals of one tool, with its money. */
function toolTotals(
  tool: LedgerTool,
  rows: readonly LedgerRow[],
  pricing: Pricing,
  modelPrices: (provider: string, model: string) => ModelPrices,
): Counts {
  const totals: Counts = Object.fromEntries(TOOL_COUNTERS[tool].map((name) => [name, 0]));
  for (const row of rows) {
    const counter = answeredCounter(tool, row.counter);
    if (counter !== null && counter in totals) add(totals, counter, row.value);
  }
  const { saved, cost, without } = moneyOf(tool, rows, pricing, modelPrices);
  if (tool === "web_search" || tool === "web_extract") totals.saved_usd = money(saved);
  if (tool === "llm")
    Object.assign(totals, { cost_usd: money(cost), cost_without_cache_usd: money(without), saved_usd: money(saved) });
  return totals;
}

/** Non-zero counts (and money) of each group of one tool's rows. */
function breakdown(
  tool: LedgerTool,
  rows: readonly LedgerRow[],
  keyOf: (row: LedgerRow) => string,
  pricing: Pricing,
  modelPrices: (provider: string, model: string) => ModelPrices,
): Record<string, Counts> {
  // A row without a name is "unknown", summed with a caller's model of that name.
  const byKey = new Map<string, LedgerRow[]>();
  for (const row of rows) {
    const key = keyOf(row) || "unknown";
    const held = byKey.get(key);
    if (held) held.push(row);
    else byKey.set(key, [row]);
  }
  // Built with fromEntries: a caller's model named "__proto__" is a key like any other.
  return Object.fromEntries(
    [...byKey].map(([key, group]) => {
      const counts = answered(tool, groupBy(group, () => "").get("") ?? {});
      const { saved, cost, without } = moneyOf(tool, group, pricing, modelPrices);
      if (tool === "llm") Object.assign(counts, { cost_usd: money(cost), cost_without_cache_usd: money(without) });
      if (tool !== "vision" && tool !== "evict") counts.saved_usd = money(saved);
      return [key, counts];
    }),
  );
}

/** The window `[from, to)` ending with the current hour. */
export function statsWindow(window: StatsWindow, now: number): { from: number; to: number } {
  const to = hourOf(now) + HOUR_MS;
  return { from: to - STATS_WINDOWS[window] * HOUR_MS, to };
}

/**
 * Builds the `/v1/stats` answer from the window's rows.
 *
 * @example statsReport(await store.read(from, to), "24h", Date.now(), config.pricing)
 */
export function statsReport(
  rows: readonly LedgerRow[],
  window: StatsWindow,
  now: number,
  pricing: Pricing,
): StatsResponse {
  const { from, to } = statsWindow(window, now);
  const inWindow = rows.filter((row) => row.hour >= from && row.hour < to);
  const usedPrices = new Map<string, ModelPrices>();
  const modelPrices = (provider: string, model: string): ModelPrices => {
    const prices = modelRules(provider || undefined, model || undefined, pricing.models).prices;
    usedPrices.set(model || "unknown", prices);
    return prices;
  };
  const ofTool = (tool: LedgerTool) => inWindow.filter((row) => row.tool === tool);
  const totals = Object.fromEntries(
    LEDGER_TOOLS.map((tool) => [tool, toolTotals(tool, ofTool(tool), pricing, modelPrices)]),
  ) as StatsResponse["totals"];

  const byHour = new Map<number, LedgerRow[]>();
  for (const row of inWindow) {
    const held = byHour.get(row.hour);
    if (held) held.push(row);
    else byHour.set(row.hour, [row]);
  }
  const series = [...byHour.keys()]
    .sort((a, b) => a - b)
    .map((hour) => {
      const point: Record<string, unknown> = { t: iso(hour) };
      const hourRows = byHour.get(hour) ?? [];
      for (const tool of LEDGER_TOOLS) {
        const toolRows = hourRows.filter((row) => row.tool === tool);
        if (toolRows.length === 0) continue;
        const counts = answered(tool, groupBy(toolRows, () => "").get("") ?? {});
        if (tool !== "vision" && tool !== "evict")
          counts.saved_usd = money(moneyOf(tool, toolRows, pricing, modelPrices).saved);
        point[tool] = counts;
      }
      return point as StatsResponse["series"][number];
    });

  return {
    success: true,
    from: iso(from),
    to: iso(to),
    bucket: "hour",
    totals,
    by_provider: {
      web_search: breakdown("web_search", ofTool("web_search"), (r) => r.provider, pricing, modelPrices),
      web_extract: breakdown("web_extract", ofTool("web_extract"), (r) => r.provider, pricing, modelPrices),
      llm: breakdown("llm", ofTool("llm"), (r) => r.provider, pricing, modelPrices),
    },
    by_model: {
      llm: breakdown("llm", ofTool("llm"), (r) => r.model, pricing, modelPrices),
      evict: breakdown("evict", ofTool("evict"), (r) => r.model, pricing, modelPrices),
    },
    series,
    saved_usd: money(
      (totals.web_search.saved_usd ?? 0) + (totals.web_extract.saved_usd ?? 0) + (totals.llm.saved_usd ?? 0),
    ),
    prices: {
      search: { ...pricing.search },
      extract: { ...pricing.extract },
      models: Object.fromEntries([...usedPrices].map(([model, prices]) => [model, shownPrices(prices)])),
    },
  };
}

/** Reads the window from the store and answers it. */
export async function stats(
  store: LedgerStore,
  window: StatsWindow,
  now: number,
  pricing: Pricing,
): Promise<StatsResponse> {
  const { from, to } = statsWindow(window, now);
  return statsReport(await store.read(from, to), window, now, pricing);
}

/** `2026-12-01T10:00:00Z` (no milliseconds, as the spec writes times). */
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
