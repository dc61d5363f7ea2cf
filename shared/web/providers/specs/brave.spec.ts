/** Brave Search API: search. */
import { defineProvider } from "../provider.spec";

export const brave = defineProvider({
  name: "brave",
  secret: "BRAVE_API_KEY",
  baseUrl: "https://api.search.brave.com",
  // The Search plan: $5 per 1,000 requests.
  search: { usdPerCall: 0.005, keyRequired: true },
});
