/**
 * Which backend answers (web.md step 4): the configured provider, or under `auto` the first one
 * with a key or URL. Builds the serialisable settings an adapter needs; 503 when none can answer.
 */
import type { LoadedConfig } from "../../config/config.load";
import type { SecretName } from "../../config/config.schema";
import { AppError } from "../../http/errors";
import { SEARCH_PROVIDERS, type ProviderSettings, type SearchProviderName } from "./provider.types";

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
