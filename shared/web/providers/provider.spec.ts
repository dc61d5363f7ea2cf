/**
 * What a provider is, as data: its name, the secret holding its key, its public endpoint, and
 * what one call of each kind costs (the ledger's price, docs/stats.md "Prices"). Plain data with
 * no imports, so the configuration schema can derive its keys from the specs without reaching an
 * adapter (which imports the ports, which import the configuration: a loop).
 */

/** One kind of work a provider does, and what a call of it costs. */
export interface ProviderKindSpec {
  /** USD one call costs on the provider's public price page (the `pricing.<kind>.<name>` default). */
  readonly usdPerCall: number;
  /** The key is required to call it (false: optional, e.g. Jina reads without one, rate limited). */
  readonly keyRequired: boolean;
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
  readonly search?: ProviderKindSpec;
  readonly extract?: ProviderKindSpec;
}

/** Keeps a spec's literal types (its name, secret and base URL) for the derived tables. */
export const defineProvider = <const S extends ProviderSpec>(spec: S): S => spec;
