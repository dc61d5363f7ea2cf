/**
 * What every extract adapter shares: the adapter signature, and turning a provider's markdown
 * into the page we return in the requested format.
 */
import type { FetchFn } from "../../../ports";
import { markdownToText } from "../../reader/html-to-markdown";
import type { ExtractedPage, ExtractRequest, ProviderSettings } from "../provider.types";

export type ExtractAdapter = (settings: ProviderSettings, request: ExtractRequest, fetch: FetchFn) => Promise<ExtractedPage>;

export interface ProviderMarkdown {
  finalUrl?: unknown;
  title?: unknown;
  markdown: string;
}

export function toExtractedPage(request: ExtractRequest, found: ProviderMarkdown): ExtractedPage {
  const markdown = found.markdown.trim();
  const title = typeof found.title === "string" && found.title.trim() ? found.title.trim() : firstHeading(markdown);
  return {
    url: request.url,
    final_url: typeof found.finalUrl === "string" && /^https?:\/\//i.test(found.finalUrl) ? found.finalUrl : request.url,
    title,
    content: request.format === "text" ? markdownToText(markdown) : markdown,
  };
}

function firstHeading(markdown: string): string {
  const match = /^#{1,6}\s+(.+?)\s*#*\s*$/m.exec(markdown);
  return match?.[1] ?? "";
}
