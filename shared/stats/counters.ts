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

/**
 * One entry's count of anything (a request's tokens, bytes, images) is below this; a figure that
 * is not a whole number from 0 to below it is not counted (docs/stats.md, "Usage is bounded").
 */
export const LEDGER_MAX_COUNT = 1_000_000_000;

export const LEDGER_TOOLS = Object.keys(TOOL_COUNTERS) as LedgerTool[];

/**
 * The LLM's cache writes are counted apart by TTL (their prices differ) and answered summed as
 * `cache_write_tokens`, which is never stored itself (a row of it is not read).
 */
export const LLM_WRITE_COUNTERS = ["cache_write_5m_tokens", "cache_write_1h_tokens"] as const;
