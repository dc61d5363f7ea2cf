/**
 * The provider table, derived from the specs (one file each, `<name>.provider.ts`, the spec next
 * to its adapters): the name lists in `auto` order, the base URL defaults, the secret names, the
 * prices per call and the adapter registries. The configuration keys (`providers.<name>_base_url`,
 * `pricing.<kind>.<name>`), the jobs, the emulator's variables and the local stack read these, so
 * a provider is added by its file (and its test) and its name in a list below.
 */
import type { ExtractAdapter, SearchAdapter } from "./adapter.types";
import { brave } from "./brave.provider";
import { direct } from "./direct.provider";
import { exa } from "./exa.provider";
import { firecrawl } from "./firecrawl.provider";
import { jina } from "./jina.provider";
import { keyless } from "./keyless.provider";
import type { ProviderSpec } from "./provider.spec";
import { searxng } from "./searxng.provider";
import { tavily } from "./tavily.provider";

/** Search providers in `auto` order: the first with its key (or, for SearXNG, its URL) answers. */
export const SEARCH_SPECS = [tavily, brave, exa, firecrawl, searxng, keyless] as const satisfies readonly {
  search: { adapter: SearchAdapter };
}[];

/** Extract providers in `auto` order: the first whose key is set, else the last, `direct`. */
export const EXTRACT_SPECS = [firecrawl, tavily, jina, direct] as const;

type Names<T extends readonly ProviderSpec[]> = { -readonly [K in keyof T]: T[K]["name"] };
const namesOf = <T extends readonly ProviderSpec[]>(specs: T) => specs.map((spec) => spec.name) as Names<T>;

export const SEARCH_PROVIDERS = namesOf(SEARCH_SPECS);
export type SearchProviderName = (typeof SEARCH_PROVIDERS)[number];

export const EXTRACT_PROVIDERS = namesOf(EXTRACT_SPECS);
export type ExtractProviderName = (typeof EXTRACT_PROVIDERS)[number];

/** Every provider once, search order first. */
export const PROVIDER_SPECS: readonly ProviderSpec[] = [...new Set<ProviderSpec>([...SEARCH_SPECS, ...EXTRACT_SPECS])];
type AnySpec = (typeof SEARCH_SPECS)[number] | (typeof EXTRACT_SPECS)[number];

/** The providers reached at a base URL (all but `direct`): each has a `providers.<name>_base_url`. */
type Reached = Extract<AnySpec, { baseUrl: string | null }>;
export type ProviderBaseName = Reached["name"];

/**
 * Public endpoints per provider name (search and extract share one table; the config's
 * `providers.<name>_base_url` defaults come from here). null: usable only once configured.
 */
export const DEFAULT_BASE_URLS = Object.fromEntries(
  PROVIDER_SPECS.flatMap((spec) => (spec.baseUrl === undefined ? [] : [[spec.name, spec.baseUrl]])),
) as { readonly [S in Reached as S["name"]]: S["baseUrl"] };

/** The secrets holding provider keys, each once, in table order. */
export const PROVIDER_SECRETS = [
  ...new Set(PROVIDER_SPECS.flatMap((spec) => (spec.secret ? [spec.secret] : []))),
] as Exclude<AnySpec["secret"], null>[];
export type ProviderSecretName = (typeof PROVIDER_SECRETS)[number];

/** The spec of a search or extract provider by name. */
export function providerSpec(kind: "search", name: SearchProviderName): (typeof SEARCH_SPECS)[number];
export function providerSpec(kind: "extract", name: ExtractProviderName): (typeof EXTRACT_SPECS)[number];
export function providerSpec(kind: "search" | "extract", name: string): AnySpec {
  const spec = (kind === "search" ? SEARCH_SPECS : EXTRACT_SPECS).find((s) => s.name === name);
  if (!spec) throw new Error(`no ${kind} provider ${name}`);
  return spec;
}

/** Every search provider's adapter, by name (each search spec has one). */
export const searchAdapters = Object.fromEntries(
  SEARCH_SPECS.map((spec) => [spec.name, spec.search.adapter]),
) as Record<SearchProviderName, SearchAdapter>;

/** Every extract provider's adapter but `direct`'s, which the service runs itself (direct.extract.ts). */
export const extractAdapters = Object.fromEntries(
  EXTRACT_SPECS.flatMap((spec) => ("adapter" in spec.extract ? [[spec.name, spec.extract.adapter]] : [])),
) as Record<Exclude<ExtractProviderName, "direct">, ExtractAdapter>;
