/** Keyless search: DuckDuckGo's HTML results page, parsed; no key, no bill. */
import { defineProvider } from "../provider.spec";

export const keyless = defineProvider({
  name: "keyless",
  secret: null,
  baseUrl: "https://html.duckduckgo.com",
  search: { usdPerCall: 0, keyRequired: false },
});
