/**
 * What every hosted extract adapter shares: turning a provider's markdown into the page we return
 * in the requested format.
 */
import { assertNotChallenge } from "../challenge";
import { markdownToText } from "../reader/html-to-markdown";
import type { ExtractedPage, ExtractRequest } from "./provider.types";

export interface ProviderMarkdown {
  finalUrl?: unknown;
  title?: unknown;
  markdown: string;
  /** The page's own HTTP status, when the provider reports it. */
  status?: number;
}

/**
 * A hosted provider's answer as our page. A bot wall the provider read instead of the page is a
 * `challenge_page` error here, so no hosted provider can hand one to a caller or the cache.
 */
export function toExtractedPage(request: ExtractRequest, found: ProviderMarkdown): ExtractedPage {
  const markdown = found.markdown.trim();
  const title = typeof found.title === "string" && found.title.trim() ? found.title.trim() : firstHeading(markdown);
  assertNotChallenge(request.url, { status: found.status, title, text: markdown });
  return {
    url: request.url,
    final_url:
      typeof found.finalUrl === "string" && /^https?:\/\//i.test(found.finalUrl) ? found.finalUrl : request.url,
    title,
    content: request.format === "text" ? markdownToText(markdown) : markdown,
  };
}

function firstHeading(markdown: string): string {
  const match = /^#{1,6}\s+(.+?)\s*#*\s*$/m.exec(markdown);
  return match?.[1] ?? "";
}
