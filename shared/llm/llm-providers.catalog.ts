/**
 * The LLM providers the proxy serves, each at `/<name>/...`. The routes, the secrets holding the
 * operator's keys and the `providers.<name>_base_url` configuration keys derive from this list, so
 * an LLM provider is added by its file (`<name>.provider.ts`), its tests and its line here.
 */
import { ANTHROPIC } from "./anthropic.provider";
import type { LlmProviderSpec } from "./llm-provider.types";
import { OPENAI } from "./openai.provider";

export const LLM_PROVIDERS = [ANTHROPIC, OPENAI] as const satisfies readonly LlmProviderSpec[];

type LlmProvider = (typeof LLM_PROVIDERS)[number];
export type LlmProviderName = LlmProvider["name"];

/** The secrets that hold the operator's keys, one per provider. */
export const LLM_SECRETS = LLM_PROVIDERS.map((spec) => spec.secretName) as LlmProvider["secretName"][];
