/** Tavily: search and extract (docs/stats.md "Prices" gives the page and the date of each price). */
import { defineProvider } from "../provider.spec";

export const tavily = defineProvider({
  name: "tavily",
  secret: "TAVILY_API_KEY",
  baseUrl: "https://api.tavily.com",
  // 1 credit a basic search; pay-as-you-go credit $0.008.
  search: { usdPerCall: 0.008, keyRequired: true },
  // 1 credit per 5 URLs of a basic extract; we send one URL a call.
  extract: { usdPerCall: 0.0016, keyRequired: true },
});
