/**
 * The direct extractor's reader: HTML → markdown an agent wants to read. parse.ts builds a
 * bounded tree, select.ts finds the main content and the chrome to drop, markdown.ts writes it.
 */
import { renderBlocks, finishInline, renderInlineChildren, type RenderContext } from "./markdown";
import { findFirst, mainContent } from "./select";
import { parseHtml } from "./parse";

export { decodeHtmlBody } from "./charset";
import { markdownToText } from "./text";

export { markdownToText };

export interface MarkdownPage {
  title: string;
  markdown: string;
  /**
   * The markdown is not the whole page: the tree stopped at its node budget or the output at
   * MAX_MARKDOWN_CHARS. Such a conversion is answered (cut, `truncated: true`) but never stored.
   */
  truncated: boolean;
}

/**
 * Characters of text the reader writes at most: beyond `web.max_page_chars` (2,000,000 by
 * default) an answer is neither cached nor returned whole, so more would only cost memory. An
 * operator's larger `web.max_page_chars` cannot make a conversion cut here cacheable: the cut
 * sets `truncated`.
 */
export const MAX_MARKDOWN_CHARS = 2_500_000;

/**
 * Convert an HTML page to markdown: the page's main content (its <main>, its dominant <article>,
 * else the container holding its prose), without navigation, sidebars, banners, footers and small
 * forms (search, login, sign-up). A form wrapping the whole page (ASP.NET WebForms) is read
 * through like any container; no input's value is ever kept.
 *
 * @example htmlToMarkdown("<title>T</title><h1>Hi</h1><a href='/x'>x</a>", "https://a.example/")
 * // { title: "T", markdown: "# Hi\n\n[x](https://a.example/x)" }
 */
export function htmlToMarkdown(html: string, baseUrl?: string): MarkdownPage {
  // Line ends as the HTML parser's input stream has them: CR LF and a lone CR are LF (a <pre>
  // keeps its lines, nothing keeps a stray CR).
  const doc = parseHtml(html.includes("\r") ? html.replace(/\r\n?/g, "\n") : html);
  const base = resolveBase(doc.baseHref, baseUrl);
  const content = mainContent(doc.root);
  const ctx: RenderContext = {
    base,
    inContent: content.inContent,
    unmarked: content.unmarked,
    inLink: false,
    strong: false,
    emphasis: false,
    budget: { left: MAX_MARKDOWN_CHARS },
  };
  let { budget } = ctx;
  let markdown = renderBlocks(content.el, ctx);
  // Selection left nothing to say (a page that is one link): the whole page is better than nothing.
  if (!markdown) {
    budget = { left: MAX_MARKDOWN_CHARS };
    markdown = renderBlocks(doc.root, { ...ctx, inContent: false, unmarked: false, budget });
  }

  let title = doc.title;
  if (!title) {
    const h1 = findFirst(doc.root, (el) => el.tag === "h1");
    if (h1) title = markdownToText(finishInline(renderInlineChildren(h1, ctx))).replace(/\n+/g, " ");
  }
  return { title, markdown, truncated: doc.truncated || budget.cut === true };
}

function resolveBase(baseHref: string | null, baseUrl: string | undefined): URL | null {
  let base: URL | null = null;
  try {
    if (baseUrl) base = new URL(baseUrl);
  } catch {
    base = null;
  }
  if (baseHref) {
    try {
      return new URL(baseHref, base ?? undefined);
    } catch {
      return base;
    }
  }
  return base;
}
