/** Exa: search. */
import { defineProvider } from "../provider.spec";

export const exa = defineProvider({
  name: "exa",
  secret: "EXA_API_KEY",
  baseUrl: "https://api.exa.ai",
  // Search with up to 10 results: $7 per 1,000 requests.
  search: { usdPerCall: 0.007, keyRequired: true },
});
