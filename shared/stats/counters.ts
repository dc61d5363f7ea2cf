/**
 * What the ledger counts, per tool (docs/stats.md "What is counted"): the counter names are the keys
 * `/v1/stats` answers with. How a web call becomes an entry is `recordWebCall` (./ledger.ts).
 */
export const TOOL_COUNTERS = {
  web_search: ["requests", "provider_calls", "hits", "coalesced", "bypass", "errors"],
  web_extract: ["requests", "provider_calls", "hits", "coalesced", "bypass", "errors", "refused"],
  vision: ["loads", "passed_through", "fitted", "bytes_in", "bytes_out", "cap_refusals"],
  evict: ["requests", "images_retired"],
  llm: [
    "requests",
    "input_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "output_tokens",
    "images_fitted",
    "images_retired",
    "bytes_saved",
    "errors",
  ],
} as const;

/** The tools the ledger counts. */
export type LedgerTool = keyof typeof TOOL_COUNTERS;

export const LEDGER_TOOLS = Object.keys(TOOL_COUNTERS) as LedgerTool[];

/**
 * The LLM's cache writes are counted apart by TTL (their prices differ) and answered summed as
 * `cache_write_tokens`, which is never stored itself (a row of it is not read).
 */
export const LLM_WRITE_COUNTERS = ["cache_write_5m_tokens", "cache_write_1h_tokens"] as const;

/**
 * A session's times (GET /v1/stats/sessions): counters of a session's rows that keep the earliest
 * and the latest request (epoch ms) rather than a sum. Every other counter adds up.
 */
export const SESSION_TIME_COUNTERS = { first_at: "min", last_at: "max" } as const;

/** How a stored counter takes a new value: most add, a session's times keep the least or the most. */
export function counterCombine(counter: string): "sum" | "min" | "max" {
  return (SESSION_TIME_COUNTERS as Record<string, "min" | "max">)[counter] ?? "sum";
}

/** `held` and `value` of one counter, combined as it is stored (counterCombine). */
export function combineCounter(counter: string, held: number, value: number): number {
  const how = counterCombine(counter);
  return how === "min" ? Math.min(held, value) : how === "max" ? Math.max(held, value) : held + value;
}
