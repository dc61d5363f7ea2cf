/**
 * `GET /v1/stats`: the query and the answer (docs/stats.md), one zod schema each, feeding the
 * route's validation and the OpenAPI document.
 */
import * as z from "zod";
import { AppError } from "../http/errors";
import { TOOL_COUNTERS } from "./counters";

export const STATS_WINDOWS = { "1h": 1, "24h": 24, "7d": 168, "30d": 720 } as const;
export type StatsWindow = keyof typeof STATS_WINDOWS;

export const StatsQuery = z.object({
  window: z
    .enum(Object.keys(STATS_WINDOWS) as [StatsWindow, ...StatsWindow[]])
    .default("24h")
    .describe(
      "How far back, in whole clock hours ending with the current one (buckets are hourly): 1h is this hour so far, 24h this hour and the 23 before it, 7d 168 hours, 30d 720",
    ),
});
export type StatsQuery = z.infer<typeof StatsQuery>;

/**
 * The query of `GET /v1/stats` (or of `route`, `GET /v1/stats/sessions`) as StatsQuery reads it. A
 * parameter it does not take (`windows=7d`), or `window` given twice, is a 400 naming it: answering
 * the default 24 hours instead would look like a figure for the window asked.
 */
export function statsQuery(params: URLSearchParams, route = "GET /v1/stats"): { window?: string } {
  const other = [...params.keys()].find((name) => name !== "window");
  if (other !== undefined) {
    // A caller's text, so bounded before it is repeated back.
    const shown = other.length > 64 ? `${other.slice(0, 64)}…` : other;
    throw new AppError(
      400,
      "invalid_request",
      `${route} takes one query parameter, window; ${JSON.stringify(shown)} is not it.`,
      { details: [{ path: [shown], message: "Not a parameter of this route" }] },
    );
  }
  const windows = params.getAll("window");
  if (windows.length > 1)
    throw new AppError(400, "invalid_request", `${route} takes window once; it was given more than once.`, {
      details: [{ path: ["window"], message: "Given more than once" }],
    });
  return windows.length === 0 ? {} : { window: windows[0] };
}

const COUNTER_TEXT: Record<string, string> = {
  requests: "Requests (web_extract: URLs)",
  provider_calls: "Calls this service paid the provider for",
  hits: "Answered from the cache",
  coalesced: "Joined an identical call in flight (paid once for all)",
  bypass: "Paid and not stored (cache off, or an answer that must not be stored)",
  errors: "Failed",
  refused: "URLs refused by the safety gate (never fetched)",
  loads: "Images answered on the native path",
  passed_through: "Images already within the budget, sent as they came",
  fitted: "Images resized or re-encoded to fit the budget",
  bytes_in: "Image bytes received",
  bytes_out: "Image bytes answered",
  cap_refusals: "Loads refused by the repeat cap (embeds avoided)",
  images_retired:
    "evict: image blocks replaced by placeholders; llm: images a request retired that the previous request of its session still carried (each retirement once)",
  input_tokens: "Uncached input tokens",
  cache_write_tokens: "Tokens written to the prompt cache (5 min and 1 h TTL summed)",
  cache_read_tokens: "Tokens read from the prompt cache",
  output_tokens: "Output tokens",
  images_fitted: "Distinct images the proxy fitted (an image's first fit; re-sent, it is not counted again)",
  image_blocks_fitted:
    "Image blocks the proxy sent in their fitted form (an image re-sent in a later request counts again)",
  bytes_saved: "Request bytes the proxy's fitting and eviction removed",
  tool_results_retired:
    "Text tool results a request retired that the previous request of its session still carried whole (retire_tool_results; each retirement once)",
  tool_result_chars_saved: "Characters of retired text tool results not sent, summed per request",
};

const count = (name: string) => z.number().describe(COUNTER_TEXT[name] ?? name);
const usd = (what: string) => z.number().describe(`${what}, USD`);
const counters = <const N extends readonly string[]>(names: N) =>
  Object.fromEntries(names.map((name) => [name, count(name)])) as { [K in N[number]]: z.ZodNumber };

const WebTotals = <const N extends readonly string[]>(names: N) =>
  z.object({
    ...counters(names),
    saved_usd: usd("Provider calls avoided (hits + coalesced) times the provider's price per call"),
  });
const LlmTotals = z.object({
  ...counters(TOOL_COUNTERS.llm),
  cost_usd: usd("The usage as billed, at the model's prices"),
  cost_as_sent_usd: usd(
    "What the provider would have billed for the requests exactly as the agent sent them (before fitting, retirement and breakpoint changes), output as billed",
  ),
  saved_usd: usd(
    "The service's own saving: cost_as_sent_usd − cost_usd (signed: a change that cost money is negative)",
  ),
  cost_without_cache_usd: usd("The billed input tokens priced as uncached input"),
  cache_saved_usd: usd(
    "The provider's own prompt caching (cost_without_cache_usd − cost_usd): the agent gets it with or without this service",
  ),
});

const Totals = z.object({
  web_search: WebTotals(TOOL_COUNTERS.web_search).describe("web_search over the window"),
  web_extract: WebTotals(TOOL_COUNTERS.web_extract).describe("web_extract over the window, per URL"),
  vision: z.object(counters(TOOL_COUNTERS.vision)).describe("vision_analyze over the window"),
  evict: z.object(counters(TOOL_COUNTERS.evict)).describe("context/evict over the window"),
  llm: LlmTotals.describe("The provider proxy over the window"),
});

const Partial = z
  .record(z.string(), z.number())
  .describe("The non-zero counts (and saved_usd) of one provider, model or strategy");

/** One model's prices (USD per million tokens), as pricing.models names them. */
const ModelPricesShown = z.object({
  input: z.number(),
  cache_write_5m: z.number(),
  cache_write_1h: z.number(),
  cache_read: z.number(),
  output: z.number(),
});

const Prices = z.object({
  search: z.record(z.string(), z.number()).describe("USD per search call, per provider (pricing.search.*)"),
  extract: z.record(z.string(), z.number()).describe("USD per extracted URL, per provider (pricing.extract.*)"),
  models: z
    .record(
      z.string(),
      ModelPricesShown.extend({
        tiers: z
          .array(
            ModelPricesShown.extend({
              above_prompt_tokens: z.number().describe("The tier's line: a request whose prompt is over it"),
            }),
          )
          .describe(
            "Higher prices of a request whose prompt (input, writes, reads) is over a line, lowest first; empty for one price",
          ),
      }),
    )
    .describe("USD per million tokens of each model counted in the window (model table, pricing.models overrides)"),
});

export const StatsResponse = z.object({
  success: z.literal(true).describe("Always true on a 200"),
  from: z.string().describe("Start of the window (ISO time, on the hour)"),
  to: z.string().describe("End of the window (ISO time, the end of the current hour)"),
  bucket: z.literal("hour").describe("The series' step"),
  totals: Totals.describe("Every counter of every tool over the window, zeros included"),
  by_provider: z
    .object({
      web_search: z.record(z.string(), Partial),
      web_extract: z.record(z.string(), Partial),
      llm: z.record(z.string(), Partial),
    })
    .describe("Per tool, per provider"),
  by_model: z
    .object({ llm: z.record(z.string(), Partial), evict: z.record(z.string(), Partial) })
    .describe("llm per model; evict per strategy"),
  series: z
    .array(z.object({ t: z.string().describe("Start of the hour (ISO)") }).catchall(z.record(z.string(), z.number())))
    .describe("One point per hour that counted anything, oldest first: per tool, its non-zero counts and saved_usd"),
  saved_usd: usd(
    "The service's own saving over the window: web calls avoided (web_search + web_extract) plus the LLM's as sent − billed; not the provider's caching",
  ),
  prices: Prices.describe("The price table the money figures used"),
});
export type StatsResponse = z.infer<typeof StatsResponse>;

/** Most sessions one GET /v1/stats/sessions answer lists, "(other)" included (docs/stats.md "Sessions"). */
export const ANSWER_SESSIONS = 200;

export const SessionRow = z.object({
  session: z
    .string()
    .describe(
      "The caller's X-Session-Id (cut to 128 characters; the caller's text, never HTML), else the derived X-Edge-Session; \"(other)\" sums the sessions past a bound",
    ),
  provider: z.string().describe("The provider of most of the session's requests"),
  model: z.string().describe("The model of most of the session's requests"),
  requests: count("requests"),
  first_at: z.string().describe("When its first request of the window was answered (ISO time)"),
  last_at: z.string().describe("When its last request of the window was answered (ISO time)"),
  input_tokens: count("input_tokens"),
  cache_write_tokens: count("cache_write_tokens"),
  cache_read_tokens: count("cache_read_tokens"),
  output_tokens: count("output_tokens"),
  images_fitted: count("images_fitted"),
  images_retired: count("images_retired"),
  cost_usd: usd("What the provider billed for the session's requests (the usage at the model's prices)"),
  cost_as_sent_usd: usd(
    "What the provider would have billed for the requests exactly as the agent sent them (hours counted before the ledger kept as-sent counts: as billed, as /v1/stats takes them)",
  ),
  saved_usd: usd("cost_as_sent_usd − cost_usd (signed)"),
});
export type SessionRow = z.infer<typeof SessionRow>;

export const SessionsResponse = z.object({
  success: z.literal(true).describe("Always true on a 200"),
  from: z.string().describe("Start of the window (ISO time, on the hour)"),
  to: z.string().describe("End of the window (ISO time, the end of the current hour)"),
  sessions: z
    .array(SessionRow)
    .describe(
      `The window's proxied sessions, the most saved first, at most ${ANSWER_SESSIONS}: past that the rest are summed as "(other)", listed last`,
    ),
});
export type SessionsResponse = z.infer<typeof SessionsResponse>;
