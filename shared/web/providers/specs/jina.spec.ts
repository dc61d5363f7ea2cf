/** Jina Reader: extract; works without a key (rate limited), billed in tokens with one. */
import { defineProvider } from "../provider.spec";

export const jina = defineProvider({
  name: "jina",
  secret: "JINA_API_KEY",
  baseUrl: "https://r.jina.ai",
  // Billed per token read, not per call: 0 until an operator sets pricing.extract.jina.
  extract: { usdPerCall: 0, keyRequired: false },
});
