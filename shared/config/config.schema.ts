/**
 * The configuration schema: every key of docs/configuration.md (listed in the README) with its default, clamp and fallback, in one
 * zod schema. Values arrive as TOML/JSON values or as strings from flat env vars, so every field
 * accepts both; `config.load.ts` gathers the layers and calls this.
 */
import * as z from "zod";
import { type ModelPrices, PRICE_FIELDS } from "../llm/models.table";
import { LLM_PROVIDERS, LLM_SECRETS, type LlmProviderName } from "../llm/llm-providers.catalog";
import { FORWARD_HEADER_PATTERN, NEVER_FORWARDED } from "../proxy/request-policy";
import {
  EXTRACT_PROVIDERS,
  EXTRACT_SPECS,
  PROVIDER_SECRETS,
  PROVIDER_SPECS,
  type ProviderBaseName,
  SEARCH_PROVIDERS,
  SEARCH_SPECS,
} from "../web/providers/providers.catalog";

/** Raised by a field that cannot be read; becomes a 500 `config_error` naming the key. */
const unusable = (ctx: z.RefinementCtx, what: string) => {
  ctx.addIssue({ code: "custom", message: what });
  return z.NEVER;
};

const asNumber = (value: unknown): number =>
  typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : Number.NaN;

/** Boolean from a TOML boolean or an env string (`true/false/1/0/yes/no/on/off`). */
const flag = (fallback: boolean) =>
  z.unknown().transform((value, ctx): boolean => {
    if (value === undefined || value === null || value === "") return fallback;
    if (typeof value === "boolean") return value;
    const text = String(value).trim().toLowerCase();
    if (["true", "1", "yes", "on"].includes(text)) return true;
    if (["false", "0", "no", "off"].includes(text)) return false;
    return unusable(ctx, `expected true or false, got "${String(value).slice(0, 40)}"`);
  });

/** Integer clamped into [min, max]; `onNaN` decides between a fallback and a config error. */
const clampedInt = (fallback: number, min: number, max: number, onNaN: "default" | "error" = "error") =>
  z.unknown().transform((value, ctx): number => {
    if (value === undefined || value === null || value === "") return fallback;
    const n = asNumber(value);
    if (!Number.isFinite(n)) {
      if (onNaN === "default") return fallback;
      return unusable(ctx, `expected a number, got "${String(value).slice(0, 40)}"`);
    }
    return Math.min(max, Math.max(min, Math.round(n)));
  });

/**
 * A list from a TOML array or a comma-separated env string: entries trimmed, empty ones dropped,
 * each read by `entry` (which may refuse it through `unusable`; the first refusal stops the list).
 * @param noun what the entries are, for the error message (" of origins")
 */
const listOf = (entry: (text: string, ctx: z.RefinementCtx) => string, noun = "") =>
  z.unknown().transform((value, ctx): string[] => {
    if (value === undefined || value === null || value === "") return [];
    const items = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : null;
    if (!items) return unusable(ctx, `expected a list or a comma-separated string${noun}`);
    const entries: string[] = [];
    for (const item of items) {
      const text = String(item).trim();
      if (text === "") continue;
      const read = entry(text, ctx);
      if (read === z.NEVER) return z.NEVER;
      entries.push(read);
    }
    return entries;
  });

/** Host patterns, lower-cased. */
const hostList = listOf((text) => text.toLowerCase());

/** Browser origins (`https://app.example.com`), each normalised to its origin. */
const originList = listOf((text, ctx) => {
  const origin = URL.canParse(text) ? new URL(text).origin : "null";
  return origin === "null"
    ? unusable(ctx, `expected an origin such as https://app.example.com, got "${text.slice(0, 80)}"`)
    : origin;
}, " of origins");

/** Request header names the proxy forwards besides its own list: lower-cased, `prefix-*` for a family. */
const forwardHeaderList = listOf((text, ctx) => {
  const name = text.toLowerCase();
  if (!FORWARD_HEADER_PATTERN.test(name))
    return unusable(ctx, `expected header names such as cf-aig-metadata or cf-aig-*, got "${text.slice(0, 80)}"`);
  if (NEVER_FORWARDED.has(name))
    return unusable(
      ctx,
      `"${name}" is never forwarded (per-hop, set by the runtime, the caller's cookies, a key or the service's own header)`,
    );
  return name;
}, " of header names");

/** Provider path prefixes (`/v1/files`): a path and anything below it, segment-wise. */
const pathPrefixList = listOf((text, ctx) => {
  const path = text.replace(/\/+$/, "");
  if (!/^(\/[A-Za-z0-9._~:@!$&'()+,;=-]+)+$/.test(path) || path.split("/").some((s) => s === "." || s === ".."))
    return unusable(ctx, `expected a provider path such as /v1/files, got "${text.slice(0, 80)}"`);
  return path;
}, " of paths");

const optionalUrl = z.unknown().transform((value, ctx): string | null => {
  if (value === undefined || value === null || value === "") return null;
  const text = String(value).trim();
  if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol)) {
    return unusable(ctx, `expected an http(s) URL, got "${text.slice(0, 80)}"`);
  }
  return text.replace(/\/+$/, "");
});

const urlWithDefault = (fallback: string) => optionalUrl.transform((value) => value ?? fallback);

const choice = <T extends readonly string[]>(names: T, fallback: T[number]) =>
  z.unknown().transform((value, ctx): T[number] => {
    if (value === undefined || value === null || value === "") return fallback;
    const text = String(value).trim().toLowerCase();
    if ((names as readonly string[]).includes(text)) return text as T[number];
    return unusable(ctx, `expected one of ${names.join(", ")}, got "${String(value).slice(0, 40)}"`);
  });

/** `vision.embed_target_bytes`: clamped; a non-integer or a boolean gives the default. */
const embedTargetBytes = z.unknown().transform((value): number => {
  const fallback = 262_144;
  if (typeof value === "boolean" || value === undefined || value === null || value === "") return fallback;
  const n = asNumber(value);
  if (!Number.isInteger(n)) return fallback;
  return Math.min(4_194_304, Math.max(65_536, n));
});

/** `vision.max_calls_per_image`: unset (null) or an integer N ≥ 0 (0 = unlimited). */
const maxCallsPerImage = z.unknown().transform((value, ctx): number | null => {
  if (value === undefined || value === null || value === "") return null;
  const n = asNumber(value);
  if (!Number.isInteger(n) || n < 0)
    return unusable(ctx, `expected an integer ≥ 0 or unset, got "${String(value).slice(0, 40)}"`);
  return n;
});

/** Measured default for `vision.max_input_pixels` (see docs/benchmarks.md, "Vision fit"). */
export const DEFAULT_MAX_INPUT_PIXELS = 14_745_600;

/** `providers.<name>_base_url` for every provider reached at a base URL, default from its spec. */
function baseUrlFields() {
  const fields = PROVIDER_SPECS.flatMap((spec) => {
    if (spec.baseUrl === undefined) return [];
    const field =
      spec.baseUrl === null
        ? optionalUrl.describe(`${spec.name} has no public default; set it to enable ${spec.name}`)
        : urlWithDefault(spec.baseUrl).describe(`Where ${spec.name} is reached`);
    return [[`${spec.name}_base_url`, field]];
  });
  return Object.fromEntries(fields) as {
    [N in ProviderBaseName as `${N}_base_url`]: N extends "searxng"
      ? typeof optionalUrl
      : ReturnType<typeof urlWithDefault>;
  };
}

/** `providers.<name>_base_url` for every LLM provider the proxy serves, default from its spec. */
function llmBaseUrlFields() {
  const fields = LLM_PROVIDERS.map((spec) => [
    `${spec.name}_base_url`,
    urlWithDefault(spec.defaultBaseUrl).describe(`Upstream of /${spec.name}/* (the provider proxy)`),
  ]);
  return Object.fromEntries(fields) as { [N in LlmProviderName as `${N}_base_url`]: ReturnType<typeof urlWithDefault> };
}

/** A price in USD, ≥ 0; a number, or a string from an env variable. */
const usd = (fallback: number) =>
  z.unknown().transform((value, ctx): number => {
    if (value === undefined || value === null || value === "") return fallback;
    const n = asNumber(value);
    if (!Number.isFinite(n) || n < 0)
      return unusable(ctx, `expected a price in USD (a number ≥ 0), got "${String(value).slice(0, 40)}"`);
    return n;
  });

/** `pricing.<kind>.<name>` for every provider of the kind, default from its spec. */
function priceFields<S extends { name: string; search?: { usdPerCall: number }; extract?: { usdPerCall: number } }>(
  specs: readonly S[],
  kind: "search" | "extract",
) {
  return Object.fromEntries(
    specs.map((spec) => [spec.name, usd(spec[kind]?.usdPerCall ?? 0).describe(`USD per ${kind} call to ${spec.name}`)]),
  ) as Record<S["name"], ReturnType<typeof usd>>;
}

type ModelPriceRow = Partial<Record<keyof ModelPrices, number>>;
/** A price's name in `pricing.models`: its snake_case name, or the camelCase one it had before. */
const PRICE_KEY_OF: ReadonlyMap<string, keyof ModelPrices> = new Map(
  PRICE_FIELDS.flatMap(([shown, key]) => [
    [shown, key],
    [key, key],
  ]),
);

/** `pricing.models`: a table (or its JSON text) of model name → token prices, each ≥ 0. */
const modelPriceOverrides = z.unknown().transform((value, ctx): Record<string, ModelPriceRow> => {
  if (value === undefined || value === null || value === "") return {};
  let table = value;
  if (typeof table === "string") {
    try {
      table = JSON.parse(table);
    } catch (error) {
      // The parser's position only: its message may quote the text.
      const at = /position (\d+)/.exec(error instanceof Error ? error.message : "")?.[1];
      return unusable(
        ctx,
        `expected a table of model name → prices, or its JSON text${at === undefined ? "" : ` (not JSON from character ${Number(at) + 1})`}`,
      );
    }
  }
  if (typeof table !== "object" || table === null || Array.isArray(table))
    return unusable(ctx, "expected a table of model name → prices");
  // Gathered as entries: a model named "__proto__" is a key like any other, never a prototype.
  const out: [string, ModelPriceRow][] = [];
  for (const [model, prices] of Object.entries(table)) {
    if (typeof prices !== "object" || prices === null)
      return unusable(ctx, `prices of ${model.slice(0, 60)} are not a table`);
    const row: ModelPriceRow = {};
    for (const [key, price] of Object.entries(prices)) {
      const field = PRICE_KEY_OF.get(key);
      if (field === undefined)
        return unusable(
          ctx,
          `${model.slice(0, 60)}.${key.slice(0, 40)} is not one of ${PRICE_FIELDS.map(([shown]) => shown).join(", ")}`,
        );
      const n = asNumber(price);
      if (!Number.isFinite(n) || n < 0) return unusable(ctx, `${model.slice(0, 60)}.${key} must be a number ≥ 0`);
      row[field] = n;
    }
    out.push([model, row]);
  }
  return Object.fromEntries(out);
});

export const Config = z.object({
  web: z.object({
    cache_enabled: flag(true).describe("false turns off the search and extract caches (every call pays)"),
    cache_ttl_minutes: clampedInt(20, 1, 1440, "default").describe("Cache TTL in minutes, 1..1440"),
    cache_exempt_hosts: hostList.describe("Hosts never cached: exact, *.example.com, or a bare suffix"),
    search_provider: choice([...SEARCH_PROVIDERS, "auto"] as const, "auto").describe("Search backend or auto"),
    extract_provider: choice([...EXTRACT_PROVIDERS, "auto"] as const, "auto").describe("Extract backend or auto"),
    keyless_fallback: flag(true).describe("One keyless search attempt after a provider failure; never cached"),
    search_timeout_seconds: clampedInt(20, 1, 120).describe("Timeout of one search provider call"),
    extract_timeout_seconds: clampedInt(60, 1, 300).describe("Timeout of one extract provider call"),
    max_page_chars: clampedInt(2_000_000, 1, 100_000_000).describe("Pages longer than this are never cached"),
    char_limit: clampedInt(15_000, 2_000, 500_000).describe("Content over this is cut, head and tail kept"),
  }),
  vision: z.object({
    embed_target_bytes: embedTargetBytes.describe("Embed budget: data-URL length, 64 KiB..4 MiB"),
    max_calls_per_image: maxCallsPerImage.describe(
      "Repeat cap per image and session; unset: subagents 3, main unlimited; 0 = unlimited",
    ),
    max_long_edge: clampedInt(1568, 256, 8192).describe("Long edge of an embedded image"),
    max_input_pixels: clampedInt(DEFAULT_MAX_INPUT_PIXELS, 1_000_000, 100_000_000).describe(
      "Larger images are refused before decoding",
    ),
  }),
  security: z.object({
    website_blocklist: hostList.describe("Domains refused by web_extract and vision URL fetches"),
    allow_private_urls: flag(false).describe("Allow private hosts (metadata stays blocked)"),
    dns_resolver_url: urlWithDefault("https://cloudflare-dns.com/dns-query").describe("DNS-over-HTTPS JSON endpoint"),
    allow_anonymous: flag(false).describe("Serve /v1 without API_TOKENS (local dev only)"),
    allowed_origins: originList.describe(
      "Browser origins /mcp accepts besides its own, and /v1/* and the proxy while anonymous calls are taken; any other page is a 403",
    ),
  }),
  providers: z.object({
    ...baseUrlFields(),
    ...llmBaseUrlFields(),
  }),
  proxy: z.object({
    enabled: flag(true).describe("false: /anthropic/* and /openai/* are 404"),
    timeout_seconds: clampedInt(600, 10, 3600).describe(
      "Timeout of one forwarded LLM request until the provider's answer starts, 10..3600",
    ),
    fit_user_images: flag(false).describe(
      "true: user uploads over the embed budget are fitted too (else only those the provider would refuse)",
    ),
    strategy: choice(["cost", "hermes", "off"] as const, "cost").describe(
      "Tool-image retirement on proxied requests: cost, hermes (20/8/3), or off (images fitted only)",
    ),
    retire_tool_results: flag(false).describe(
      "true: old text tool results over tool_result_min_chars are retired like tool images (strategy cost); a request's X-Edge-Retire-Tool-Results: on|off overrides, off winning",
    ),
    tool_result_min_chars: clampedInt(8_192, 1_024, 1_000_000).describe(
      "A text tool result over this many characters may be retired (retire_tool_results), 1024..1000000",
    ),
    forward_headers: forwardHeaderList.describe(
      "Request headers forwarded upstream besides the provider API's own (an AI gateway's cf-aig-*, say); a trailing * takes a family",
    ),
    allowed_paths: pathPrefixList.describe(
      "Provider paths forwarded with the operator's key besides the conversation routes, count_tokens and the model list (/v1/files, /v1/messages/batches)",
    ),
  }),
  pricing: z.object({
    search: z
      .object(priceFields(SEARCH_SPECS, "search"))
      .describe("USD per search call, per provider: what a hit or a joined call saves"),
    extract: z.object(priceFields(EXTRACT_SPECS, "extract")).describe("USD per extract call (one URL), per provider"),
    models: modelPriceOverrides.describe(
      "Token prices per model name, USD per million tokens ({input, cache_write_5m, cache_write_1h, cache_read, output}, any subset); the rest from the model table",
    ),
  }),
  auxiliary: z.object({
    vision: z.object({
      base_url: optionalUrl.describe("OpenAI-compatible endpoint for the descriptor path"),
      model: z.unknown().transform((v) => (v === undefined || v === null || v === "" ? null : String(v))),
    }),
  }),
});
export type Config = z.infer<typeof Config>;

/** Secrets: read from the environment only, never from wrangler.toml, never shown. */
export const SECRET_NAMES = ["API_TOKENS", ...PROVIDER_SECRETS, "AUXILIARY_VISION_API_KEY", ...LLM_SECRETS] as const;
export type SecretName = (typeof SECRET_NAMES)[number];
export type Secrets = Partial<Record<SecretName, string>>;
