/**
 * What a provider is: its name, the secret holding its key, its public endpoint, what one call of
 * each kind costs (the ledger's price, docs/stats.md "Prices") and the adapter that makes it. Each
 * provider's file (`<name>.provider.ts`) defines its spec next to its adapters. The configuration
 * schema derives its keys from the specs, so a provider's file imports only leaves (the adapter
 * types, the provider HTTP helpers, `shared/http/fetch.types.ts`), never the ports, which import
 * the configuration: the architecture test holds that there is no loop.
 */
import type { ExtractAdapter, SearchAdapter } from "./adapter.types";

/** One kind of work a provider does, what a call of it costs, and how it is made. */
export interface ProviderKindSpec<Adapter> {
  /** USD one call costs on the provider's public price page (the `pricing.<kind>.<name>` default). */
  readonly usdPerCall: number;
  /** The key is required to call it (false: optional, e.g. Jina reads without one, rate limited). */
  readonly keyRequired: boolean;
  /** Absent only for `direct`, which the service runs itself (direct.extract.ts), through the gate. */
  readonly adapter?: Adapter;
}

export interface ProviderSpec {
  readonly name: string;
  /** The secret that holds its key; null when it takes none. */
  readonly secret: string | null;
  /**
   * Its public endpoint, the `providers.<name>_base_url` default; null when it has none and must
   * be configured (SearXNG, always self-hosted); absent when it is reached at no base URL at all
   * (`direct` fetches the page itself).
   */
  readonly baseUrl?: string | null;
  readonly search?: ProviderKindSpec<SearchAdapter>;
  readonly extract?: ProviderKindSpec<ExtractAdapter>;
}

/** Keeps a spec's literal types (its name, secret and base URL) for the derived tables. */
export const defineProvider = <const S extends ProviderSpec>(spec: S): S => spec;
