/** Direct extract: the service fetches the page itself (SSRF-safe fetch); no key, no bill. */
import { defineProvider } from "./provider.spec";

export const direct = defineProvider({
  name: "direct",
  secret: null,
  extract: { usdPerCall: 0, keyRequired: false },
});
