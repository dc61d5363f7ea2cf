/**
 * Which backend answers (docs/web.md, "The order of steps", step 4): the configured provider, or under `auto` the first one
 * with a key or URL. Builds the serialisable settings an adapter needs; 503 when none can answer.
 */
import type { LoadedConfig } from "../../config/config.load";
import type { SecretName } from "../../config/config.schema";
import { AppError } from "../../http/errors";
import { type ExtractProviderName, type ProviderSettings, SEARCH_PROVIDERS, type SearchProviderName } from "./provider.types";

/** The secret each search provider needs; searxng needs a URL instead, keyless nothing. */
const SEARCH_KEYS: Record<SearchProviderName, SecretName | null> = {
  tavily: "TAVILY_API_KEY",
  brave: "BRAVE_API_KEY",
  exa: "EXA_API_KEY",
  firecrawl: "FIRECRAWL_API_KEY",
  searxng: null,
  keyless: null,
};

export interface ResolvedSearchProvider extends ProviderSettings {
  name: SearchProviderName;
}

/** Settings for one named search provider, or the reason it cannot answer. */
function searchSettings(loaded: LoadedConfig, name: SearchProviderName): ResolvedSearchProvider | string {
  const { config, secrets } = loaded;
  const timeoutMs = config.web.search_timeout_seconds * 1000;
  const secretName = SEARCH_KEYS[name];
  if (name === "searxng") {
    const baseUrl = config.providers.searxng_base_url;
    return baseUrl ? { name, baseUrl, timeoutMs } : "providers.searxng_base_url is not set";
  }
  const baseUrl = config.providers[`${name}_base_url`];
  if (!secretName) return { name, baseUrl, timeoutMs };
  const apiKey = secrets[secretName];
  return apiKey ? { name, baseUrl, apiKey, timeoutMs } : `${secretName} is not set`;
}

/**
 * The search provider for this request.
 * @throws 503 `no_provider` when the configured provider lacks its key or URL
 */
export function resolveSearchProvider(loaded: LoadedConfig): ResolvedSearchProvider {
  const wanted = loaded.config.web.search_provider;
  if (wanted !== "auto") {
    const settings = searchSettings(loaded, wanted);
    if (typeof settings === "string") {
      throw new AppError(503, "no_provider", `web.search_provider is ${wanted} but ${settings}; set it or choose another provider.`);
    }
    return settings;
  }
  for (const name of SEARCH_PROVIDERS) {
    const settings = searchSettings(loaded, name);
    if (typeof settings !== "string") return settings;
  }
  throw new AppError(503, "no_provider", "No search provider is available; set a provider key.");
}

/** The keyless provider, for the one-shot rescue after a provider failure. */
export function keylessSearchProvider(loaded: LoadedConfig): ResolvedSearchProvider {
  return searchSettings(loaded, "keyless") as ResolvedSearchProvider;
}

/** The secret each hosted extract provider needs under `auto` (jina also works without one). */
const EXTRACT_KEYS: Record<Exclude<ExtractProviderName, "direct">, SecretName> = {
  firecrawl: "FIRECRAWL_API_KEY",
  tavily: "TAVILY_API_KEY",
  jina: "JINA_API_KEY",
};

export interface ResolvedExtractProvider extends ProviderSettings {
  name: ExtractProviderName;
}

/**
 * The extract provider for this request: the configured one, or under `auto` the first of
 * firecrawl, tavily, jina with a key, else `direct` (the service fetches the page itself).
 * @throws 503 `no_provider` when firecrawl or tavily is configured without its key
 */
export function resolveExtractProvider(loaded: LoadedConfig): ResolvedExtractProvider {
  const { config, secrets } = loaded;
  const timeoutMs = config.web.extract_timeout_seconds * 1000;
  const settingsOf = (name: ExtractProviderName): ResolvedExtractProvider => {
    if (name === "direct") return { name, baseUrl: "", timeoutMs };
    const apiKey = secrets[EXTRACT_KEYS[name]];
    return { name, baseUrl: config.providers[`${name}_base_url`], timeoutMs, ...(apiKey ? { apiKey } : {}) };
  };
  const wanted = config.web.extract_provider;
  if (wanted === "auto") {
    const keyed = (["firecrawl", "tavily", "jina"] as const).find((name) => secrets[EXTRACT_KEYS[name]]);
    return settingsOf(keyed ?? "direct");
  }
  if ((wanted === "firecrawl" || wanted === "tavily") && !secrets[EXTRACT_KEYS[wanted]]) {
    throw new AppError(503, "no_provider", `web.extract_provider is ${wanted} but ${EXTRACT_KEYS[wanted]} is not set; set it or choose another provider.`);
  }
  return settingsOf(wanted);
}
