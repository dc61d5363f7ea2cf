/**
 * Which backend answers (docs/web.md, "The order of steps", step 4): the configured provider, or under `auto` the first one
 * with a key or URL. Builds the serialisable settings an adapter needs; 503 when none can answer.
 */
import type { LoadedConfig } from "../../config/config.load";
import { AppError } from "../../http/errors";
import type { ProviderSettings } from "./provider.types";
import {
  EXTRACT_SPECS,
  type ExtractProviderName,
  type ProviderBaseName,
  providerSpec,
  SEARCH_SPECS,
  type SearchProviderName,
} from "./providers.catalog";

export interface ResolvedSearchProvider extends ProviderSettings {
  name: SearchProviderName;
}

/** Where a provider key is set, on either runtime (docs/configuration.md, "Secrets"). */
const WHERE_SECRETS_GO =
  " (a secret: .dev.vars locally, then restart; wrangler secret put when deployed; the environment on Deno)";

/** The configured key of a provider, if it takes one and it is set. */
function keyOf(loaded: LoadedConfig, secret: keyof LoadedConfig["secrets"] | null): string | undefined {
  return secret ? loaded.secrets[secret] : undefined;
}

const baseUrlOf = (loaded: LoadedConfig, name: ProviderBaseName): string | null =>
  loaded.config.providers[`${name}_base_url`];

/** Settings for one named search provider, or the reason it cannot answer. */
function searchSettings(loaded: LoadedConfig, name: SearchProviderName): ResolvedSearchProvider | string {
  const spec = providerSpec("search", name);
  const timeoutMs = loaded.config.web.search_timeout_seconds * 1000;
  const baseUrl = baseUrlOf(loaded, name);
  if (!baseUrl) return `providers.${name}_base_url is not set`;
  const apiKey = keyOf(loaded, spec.secret);
  if (spec.secret && spec.search.keyRequired && !apiKey) return `${spec.secret} is not set${WHERE_SECRETS_GO}`;
  return { name, baseUrl, timeoutMs, ...(apiKey ? { apiKey } : {}) };
}

/**
 * The search provider for this request.
 * @throws 503 `no_provider` when the configured provider lacks its key or URL
 */
export function resolveSearchProvider(loaded: LoadedConfig): ResolvedSearchProvider {
  return remembered(resolvedSearch, loaded, resolveSearchProviderOnce);
}

/**
 * What `resolve` made of a configuration, kept per configuration object and its secrets (both
 * loaded once per isolate or process): a provider is chosen once, not on every request. Only an
 * answer is kept; a configuration that cannot answer throws each time.
 */
function remembered<T>(
  memory: WeakMap<object, { secrets: object; value: T }>,
  loaded: LoadedConfig,
  resolve: (loaded: LoadedConfig) => T,
): T {
  const known = memory.get(loaded.config);
  if (known?.secrets === loaded.secrets) return known.value;
  const value = resolve(loaded);
  memory.set(loaded.config, { secrets: loaded.secrets, value });
  return value;
}

const resolvedSearch = new WeakMap<object, { secrets: object; value: ResolvedSearchProvider }>();
const resolvedKeyless = new WeakMap<object, { secrets: object; value: ResolvedSearchProvider }>();

function resolveSearchProviderOnce(loaded: LoadedConfig): ResolvedSearchProvider {
  const wanted = loaded.config.web.search_provider;
  if (wanted !== "auto") {
    const settings = searchSettings(loaded, wanted);
    if (typeof settings === "string") {
      throw new AppError(
        503,
        "no_provider",
        `web.search_provider is ${wanted} but ${settings}; set it or choose another provider.`,
      );
    }
    return settings;
  }
  for (const { name } of SEARCH_SPECS) {
    const settings = searchSettings(loaded, name);
    if (typeof settings !== "string") return settings;
  }
  throw new AppError(503, "no_provider", "No search provider is available; set a provider key.");
}

/** The keyless provider, for the one-shot rescue after a provider failure. */
export function keylessSearchProvider(loaded: LoadedConfig): ResolvedSearchProvider {
  return remembered(resolvedKeyless, loaded, (it) => searchSettings(it, "keyless") as ResolvedSearchProvider);
}

export interface ResolvedExtractProvider extends ProviderSettings {
  name: ExtractProviderName;
}

/**
 * The extract provider for this request: the configured one, or under `auto` the first of the
 * table's order (firecrawl, tavily, jina) whose key is set, else `direct` (the service fetches
 * the page itself).
 * @throws 503 `no_provider` when a provider that requires a key is configured without it
 */
export function resolveExtractProvider(loaded: LoadedConfig): ResolvedExtractProvider {
  const timeoutMs = loaded.config.web.extract_timeout_seconds * 1000;
  const settingsOf = (name: ExtractProviderName): ResolvedExtractProvider => {
    if (name === "direct") return { name, baseUrl: "", timeoutMs };
    const apiKey = keyOf(loaded, providerSpec("extract", name).secret);
    return { name, baseUrl: baseUrlOf(loaded, name) ?? "", timeoutMs, ...(apiKey ? { apiKey } : {}) };
  };
  const wanted = loaded.config.web.extract_provider;
  if (wanted === "auto") {
    const keyed = EXTRACT_SPECS.find((spec) => keyOf(loaded, spec.secret));
    return settingsOf(keyed?.name ?? "direct");
  }
  const spec = providerSpec("extract", wanted);
  if (spec.secret && spec.extract.keyRequired && !keyOf(loaded, spec.secret)) {
    throw new AppError(
      503,
      "no_provider",
      `web.extract_provider is ${wanted} but ${spec.secret} is not set${WHERE_SECRETS_GO}; set it or choose another provider.`,
    );
  }
  return settingsOf(wanted);
}
