/**
 * Jina Reader: extract; works without a key (rate limited), billed in tokens with one.
 *
 * Jina Reader (`GET /{url}`, JSON answer). The key is optional: Jina serves keyless callers at a
 * lower rate limit, so one is sent only when configured.
 */
import * as z from "zod";
import { callProvider, parseAnswer, providerUrl } from "./http";
import type { ExtractAdapter } from "./adapter.types";
import { toExtractedPage } from "./page";
import { defineProvider } from "./provider.spec";

/** Jina Reader's documented JSON answer (the fields we read). */
export const JinaReadResponse = z.object({
  data: z.object({ url: z.string().nullish(), title: z.string().nullish(), content: z.string() }),
});
export type JinaReadResponse = z.infer<typeof JinaReadResponse>;

export const jinaExtract: ExtractAdapter = async (settings, request, fetch) => {
  const headers: Record<string, string> = { accept: "application/json" };
  if (settings.apiKey) headers.authorization = `Bearer ${settings.apiKey}`;
  // The target goes in as written: Jina reads everything after the first slash as the URL.
  const body = parseAnswer(
    settings,
    JinaReadResponse,
    await callProvider(settings, fetch, providerUrl(settings.baseUrl, request.url), { method: "GET", headers }),
  );
  return toExtractedPage(request, {
    finalUrl: body.data.url,
    title: body.data.title,
    markdown: body.data.content,
  });
};

export const jina = defineProvider({
  name: "jina",
  secret: "JINA_API_KEY",
  baseUrl: "https://r.jina.ai",
  // Billed per token read, not per call: 0 until an operator sets pricing.extract.jina.
  extract: { usdPerCall: 0, keyRequired: false, adapter: jinaExtract },
});
