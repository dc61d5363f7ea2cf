/**
 * What the ledger counts, per tool (docs/stats.md "What is counted"), and how a tool's outcome
 * becomes an entry. The counter names are the keys `/v1/stats` answers with.
 */
import type { CacheStatus, Ledger, LedgerTool } from "../ports";

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
} as const satisfies Record<LedgerTool, readonly string[]>;

export const LEDGER_TOOLS = Object.keys(TOOL_COUNTERS) as LedgerTool[];

/**
 * The LLM's cache writes are counted apart by TTL (their prices differ) and answered summed as
 * `cache_write_tokens`, which is never stored itself (a row of it is not read).
 */
export const LLM_WRITE_COUNTERS = ["cache_write_5m_tokens", "cache_write_1h_tokens"] as const;

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
