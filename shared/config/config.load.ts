/**
 * Builds the effective configuration from its layers (docs/configuration.md): defaults, then per-section
 * tables (`[vars.web]` in wrangler.toml, config.json on Deno), then flat `SECTION_KEY` variables.
 * Runtime-agnostic: the caller hands in a plain record of its environment.
 */
import * as z from "zod";
import { AppError } from "../http/errors";
import { apiTokens } from "../http/auth";
import { shownPrices } from "../llm/models.table";
import { capRule } from "./repeat-cap.rule";
import { findSecretInUrl } from "../safety/secrets";
import { nearest } from "../nearest";
import { Config, SECRET_NAMES, type Secrets } from "./config.schema";

export interface LoadedConfig {
  config: Config;
  secrets: Secrets;
}

/** Old or friendlier names accepted for a key, flat form → dotted key. */
const FLAT_ALIASES: Record<string, string> = {
  PROVIDERS_DUCKDUCKGO_BASE_URL: "providers.keyless_base_url",
};

/** Every leaf key of the schema as a dotted path (`web.cache_ttl_minutes`, `auxiliary.vision.model`). */
export const CONFIG_KEYS: readonly string[] = (function leaves(schema: z.ZodObject, prefix: string): string[] {
  return Object.entries(schema.shape).flatMap(([name, field]) =>
    field instanceof z.ZodObject ? leaves(field, `${prefix}${name}.`) : [`${prefix}${name}`],
  );
})(Config, "");

/** `web.cache_ttl_minutes` → `WEB_CACHE_TTL_MINUTES`. */
export const flatName = (key: string): string => key.replaceAll(".", "_").toUpperCase();

/**
 * Where a setting is fixed, as each runtime reads its configuration: the config_error names it.
 * `{flat}` stands for the key's flat variable name.
 */
export const CONFIG_PLACES = {
  workers:
    "wrangler.toml ([vars.<section>] of your environment) or the {flat} variable (.dev.vars locally: restart npm run dev after editing it; wrangler secret put when deployed)",
  deno: "config.json (or CONFIG_PATH), .dev.vars or the {flat} environment variable, then restart the process",
} as const;

/** One thing wrong with the configuration: the sentence that says it, and the flat variable that fixes it. */
interface Mistake {
  says: string;
  flat: string;
}

/**
 * Reads the configuration out of a runtime environment record.
 * @param places where this runtime reads its settings (CONFIG_PLACES), for the error message
 * @throws AppError 500 `config_error` naming every unusable or misspelled key at once, its value,
 *   and where to fix it (`details` lists them one by one).
 * @example loadConfig({ web: { cache_ttl_minutes: 60 }, WEB_CACHE_ENABLED: "false" }, CONFIG_PLACES.deno)
 */
export function loadConfig(env: Record<string, unknown>, places: string = CONFIG_PLACES.workers): LoadedConfig {
  const mistakes: Mistake[] = misspelledKeys(env).map(({ given, meant, flat }) => ({
    says: `Configuration key ${given} is not a setting${meant ? ` (did you mean ${meant}?)` : ""}, so it would be ignored.`,
    flat,
  }));
  const raw: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) setPath(raw, key, tableValue(env, key));
  for (const [flat, key] of Object.entries(FLAT_ALIASES)) {
    if (env[flat] !== undefined) setPath(raw, key, env[flat]);
  }
  for (const key of CONFIG_KEYS) {
    const value = env[flatName(key)];
    if (value !== undefined) setPath(raw, key, value);
  }
  const parsed = Config.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const key = issue.path.join(".") || "config";
      mistakes.push({ says: `Configuration key ${key} is unusable: ${issue.message}.`, flat: flatName(key) });
    }
  }
  const secrets: Secrets = {};
  for (const name of SECRET_NAMES) {
    const value = env[name];
    if (typeof value === "string" && value.trim() !== "") secrets[name] = value.trim();
  }
  // Set, yet no token in it (only commas or spaces): refused, never read as "no tokens, anonymous".
  if (secrets.API_TOKENS !== undefined && apiTokens(secrets.API_TOKENS).length === 0)
    mistakes.push({
      says: "API_TOKENS is set but holds no token (only commas or spaces); set comma-separated tokens, or remove it.",
      flat: "API_TOKENS",
    });
  if (mistakes.length > 0 || !parsed.success) throw configError(mistakes, places);
  return { config: parsed.data, secrets };
}

/**
 * The one config_error for every mistake found: each sentence, then where to fix them all.
 * @example configError([{ says: "Configuration key web.x is not a setting.", flat: "WEB_X" }], CONFIG_PLACES.deno)
 */
function configError(mistakes: Mistake[], places: string): AppError {
  const flats = [...new Set(mistakes.map((mistake) => mistake.flat))];
  const where = places.replace(
    /\{flat\}((?: environment)? variable)/,
    (_, noun: string) => `${flats.join(", ")}${noun}${flats.length > 1 ? "s" : ""}`,
  );
  const sentences = mistakes.map((mistake) => mistake.says);
  const message =
    mistakes.length === 1
      ? `${sentences[0]} Fix it in ${where}.`
      : `The configuration has ${mistakes.length} mistakes. ${sentences.join(" ")} Fix them in ${where}.`;
  return new AppError(500, "config_error", message, {
    details: mistakes.length > 1 ? sentences.map((says) => ({ message: says })) : undefined,
  });
}

/**
 * The configuration as `GET /v1/config` shows it: effective values, every secret as `"set"` or
 * null, and no credential an operator put inside a URL (a base URL's user-info, a key in its query).
 */
export function publicConfig(loaded: LoadedConfig): Record<string, unknown> {
  const secrets = Object.fromEntries(SECRET_NAMES.map((name) => [name, loaded.secrets[name] ? "set" : null]));
  const vision = {
    ...loaded.config.vision,
    max_calls_per_image_rule: capRule(loaded.config.vision.max_calls_per_image),
  };
  // Prices under the names pricing.models takes (snake_case, as every field of the API).
  const models = Object.fromEntries(
    Object.entries(loaded.config.pricing.models).map(([model, prices]) => [model, shownPrices(prices)]),
  );
  const pricing = { ...loaded.config.pricing, models };
  return { ...(withoutUrlCredentials(loaded.config) as Record<string, unknown>), vision, pricing, secrets };
}

/** `value` with every http(s) URL string's user-info, and a query that carries a secret, shown as `[redacted]`. */
function withoutUrlCredentials(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUrlCredentials);
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, withoutUrlCredentials(inner)]));
  if (typeof value !== "string" || !/^https?:\/\//i.test(value) || !URL.canParse(value)) return value;
  const url = new URL(value);
  const userInfo = url.username !== "" || url.password !== "";
  const secretQuery = url.search !== "" && findSecretInUrl(value) !== null;
  if (!userInfo && !secretQuery) return value;
  const origin = `${url.protocol}//${userInfo ? "[redacted]@" : ""}${url.host}`;
  return `${origin}${url.pathname}${secretQuery ? "?[redacted]" : url.search}`;
}

/** The top-level sections of the configuration (`web`, `vision`, ...) and their flat prefixes (`WEB_`). */
const SECTIONS = Object.keys(Config.shape);
const SECTION_PREFIXES = SECTIONS.map((section) => `${flatName(section)}_`);
const FLAT_NAMES = [...CONFIG_KEYS.map(flatName), ...Object.keys(FLAT_ALIASES), ...SECRET_NAMES];
const KNOWN_FLAT_NAMES = new Set(FLAT_NAMES);

/**
 * Every key an operator meant as a setting that names none: a key inside a section table that is not
 * one of its settings (`[vars.web] cache_tll_minutes`), a table named one letter off a section
 * (`[vars.webb]`), or a flat variable with a section's prefix one or two letters off a setting's
 * name (`WEB_SERCH_PROVIDER`). Flat variables far from every setting are left alone: on Deno they
 * are the whole process environment (`WEB_CONCURRENCY` is a host's, not ours).
 */
function misspelledKeys(env: Record<string, unknown>): { given: string; meant: string | null; flat: string }[] {
  const found: { given: string; meant: string | null; flat: string }[] = [];
  for (const [name, value] of Object.entries(env)) {
    const table = typeof value === "string" && value.trim().startsWith("{") ? safeJson(value) : value;
    if (table === null || typeof table !== "object" || Array.isArray(table)) continue;
    if (SECTIONS.includes(name)) {
      const unknown = unknownInTable(
        table as Record<string, unknown>,
        Config.shape[name as keyof typeof Config.shape],
        name,
      );
      for (const given of unknown) found.push({ given, meant: nearest(given, CONFIG_KEYS, 3), flat: flatName(given) });
    } else {
      const meant = nearest(name, SECTIONS, 1);
      if (meant && name.length > 2) found.push({ given: name, meant, flat: flatName(name) });
    }
  }
  for (const name of Object.keys(env)) {
    if (KNOWN_FLAT_NAMES.has(name) || !SECTION_PREFIXES.some((prefix) => name.startsWith(prefix))) continue;
    const meant = nearest(name, FLAT_NAMES, 2);
    if (meant) found.push({ given: name, meant, flat: name });
  }
  return found;
}

/** The keys of `table` (dotted from `prefix`) that `schema` has no setting for, looking inside nested sections. */
function unknownInTable(table: Record<string, unknown>, schema: unknown, prefix: string): string[] {
  if (!(schema instanceof z.ZodObject)) return []; // a record (pricing.models) checks its own keys
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(table)) {
    // A note in a config.json ("_comment") or a schema reference ("$schema") is no setting, and no mistake.
    if (key.startsWith("_") || key.startsWith("$")) continue;
    if (!Object.hasOwn(schema.shape, key)) unknown.push(`${prefix}.${key}`);
    else if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const field = (schema.shape as Record<string, unknown>)[key];
      unknown.push(...unknownInTable(value as Record<string, unknown>, field, `${prefix}.${key}`));
    }
  }
  return unknown;
}

/** Value of a dotted key inside the section tables (`env.web.cache_ttl_minutes`). */
function tableValue(env: Record<string, unknown>, key: string): unknown {
  let node: unknown = env;
  for (const part of key.split(".")) {
    if (typeof node === "string" && node.trim().startsWith("{")) node = safeJson(node);
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function setPath(target: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split(".");
  let node = target;
  for (const part of parts.slice(0, -1)) {
    node[part] ??= {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]!] = value;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
