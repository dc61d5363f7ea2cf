/**
 * The reader's quality floor on our own pages shaped like the kinds it meets (the same set
 * `npm run bench -- extract` reports on): on every page at least 95 % of the expected words come
 * back (recall), at least 97 % of what comes back is expected (precision), and every code block
 * and table row comes back whole.
 */
import { describe, expect, it } from "vitest";
import { htmlToMarkdown, markdownToText } from "../../shared/web/reader/html-to-markdown";
import { READER_PAGES, scoreReader, words } from "../fixtures/reader-pages";

describe("reader quality on every kind of page", () => {
  it("has fixtures whose chrome phrases never occur in their expected text", () => {
    for (const page of READER_PAGES) {
      expect(words(page.expected).length, page.name).toBeGreaterThan(150);
      for (const phrase of page.chrome) expect(page.expected, `${page.name}: ${phrase}`).not.toContain(phrase);
    }
  });

  for (const page of READER_PAGES) {
    it(`${page.name}: recall ≥ 95 %, precision ≥ 97 %, every code block and table row intact`, () => {
      const { markdown } = htmlToMarkdown(page.html, page.url);
      const score = scoreReader(page, markdown, markdownToText);
      expect(score.recall, `recall on ${page.name}`).toBeGreaterThanOrEqual(0.95);
      expect(
        score.precision,
        `precision on ${page.name} (chrome kept: ${score.chromeKept.join(", ")})`,
      ).toBeGreaterThanOrEqual(0.97);
      expect(score.codeIntact, `code blocks on ${page.name}`).toBe(page.code.length);
      expect(score.tableRows, `table rows on ${page.name}`).toBe(page.tableRows);
    });
  }
});
