/**
 * What the ledger counts, per tool (docs/stats.md "What is counted"): the counter names are the keys
 * `/v1/stats` answers with. How a web call becomes an entry is `recordWebCall` (./ledger.ts); how an
 * LLM answer's usage does, each token kind under its price tier, is `usageCounters`.
 */
import { MAX_TOKEN_COUNT } from "../llm/llm-provider.types";
import { type ModelRules, promptTokens, tierOf, type UsageTokens } from "../llm/models.table";

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
    "image_blocks_fitted",
    "images_retired",
    "tool_results_retired",
    "tool_result_chars_saved",
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
export const LEDGER_MAX_COUNT = MAX_TOKEN_COUNT;

export const LEDGER_TOOLS = Object.keys(TOOL_COUNTERS) as LedgerTool[];

/**
 * The LLM's cache writes are counted apart by TTL (their prices differ) and answered summed as
 * `cache_write_tokens`, which is never stored itself (a row of it is not read).
 */
export const LLM_WRITE_COUNTERS = ["cache_write_5m_tokens", "cache_write_1h_tokens"] as const;

/**
 * What joins a token counter's name to its price tier in storage: `input_tokens@100000` counts the
 * uncached input of requests billed over 100,000 prompt tokens; a request at the base price keeps
 * the plain name. The tier is named by its line, not its place in the table, so a stored count
 * keeps its meaning if the table gains a tier.
 */
const TIER_MARK = "@";

/** A token counter's stored name under the tier whose line is `abovePromptTokens` (none: the base price). */
export function tieredCounter(counter: string, abovePromptTokens: number | undefined): string {
  return abovePromptTokens === undefined ? counter : `${counter}${TIER_MARK}${abovePromptTokens}`;
}

/**
 * A stored counter's name and the tier line it was counted over (null: the base price, or a name
 * that is not a tiered one).
 */
export function counterTier(stored: string): { counter: string; abovePromptTokens: number | null } {
  const at = stored.lastIndexOf(TIER_MARK);
  const line = at < 0 ? Number.NaN : Number(stored.slice(at + 1));
  if (!Number.isSafeInteger(line) || line < 0) return { counter: stored, abovePromptTokens: null };
  return { counter: stored.slice(0, at), abovePromptTokens: line };
}

/** The usage fields under their counter names (docs/stats.md, tool `llm`), without a prefix or tier. */
export const USAGE_COUNTERS = [
  ["input", "input_tokens"],
  ["cacheWrite5m", "cache_write_5m_tokens"],
  ["cacheWrite1h", "cache_write_1h_tokens"],
  ["cacheRead", "cache_read_tokens"],
  ["output", "output_tokens"],
] as const satisfies readonly (readonly [keyof UsageTokens, string])[];

/**
 * One request's usage as ledger counts, each kind under the request's price tier (chosen from its
 * own prompt, as the provider bills it), so money computed at read time prices each request at its
 * tier. `prefix` names another set of the same kinds (e.g. what the request would have been as sent).
 *
 * @example usageCounters(usage, modelRules("anthropic", "claude-haiku-5-5")) // { "input_tokens@100000": 120000, ... } over the line
 */
export function usageCounters(
  usage: UsageTokens,
  rules: Pick<ModelRules, "tiers">,
  prefix = "",
): Record<string, number> {
  const tier = tierOf(rules, promptTokens(usage));
  const line = tier === 0 ? undefined : rules.tiers[tier - 1]!.abovePromptTokens;
  const counts: Record<string, number> = {};
  for (const [field, name] of USAGE_COUNTERS) counts[tieredCounter(`${prefix}${name}`, line)] = usage[field];
  return counts;
}

/**
 * The prompt tokens the provider would have billed for the requests as the agent sent them
 * (docs/stats.md, "The service's own saving"), stored like the billed kinds; `/v1/stats` answers
 * them as money (`cost_as_sent_usd`) and in the breakdowns.
 */
export const LLM_AS_SENT_COUNTERS = [
  "as_sent_input_tokens",
  "as_sent_cache_write_5m_tokens",
  "as_sent_cache_write_1h_tokens",
  "as_sent_cache_read_tokens",
  // Output is as billed, counted again under the as-sent prompt's tier, which may differ.
  "as_sent_output_tokens",
] as const;

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
