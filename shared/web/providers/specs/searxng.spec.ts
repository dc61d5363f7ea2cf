/** SearXNG: search on an instance the operator runs; no key, no public endpoint, no bill. */
import { defineProvider } from "../provider.spec";

export const searxng = defineProvider({
  name: "searxng",
  secret: null,
  baseUrl: null,
  search: { usdPerCall: 0, keyRequired: false },
});
