/** The LLM providers the proxy serves, each at `/<name>/...`; derived from their specs. */
import { ANTHROPIC } from "./anthropic.provider";
import type { LlmProviderSpec } from "./llm-provider.types";
import { OPENAI } from "./openai.provider";

export const LLM_PROVIDERS: readonly LlmProviderSpec[] = [ANTHROPIC, OPENAI];
