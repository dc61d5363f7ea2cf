/** Firecrawl: search and scrape (extract). */
import { defineProvider } from "../provider.spec";

export const firecrawl = defineProvider({
  name: "firecrawl",
  secret: "FIRECRAWL_API_KEY",
  baseUrl: "https://api.firecrawl.dev",
  // 2 credits per 10 results; a credit at the Standard plan's $83 / 100,000.
  search: { usdPerCall: 0.00166, keyRequired: true },
  // 1 credit a page.
  extract: { usdPerCall: 0.00083, keyRequired: true },
});
