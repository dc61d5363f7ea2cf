/**
 * One memory measurement for bench/extract.bench.ts, in a fresh process: builds the page, resets
 * the peak-RSS mark, converts, and prints the growth of peak RSS (everything the conversion
 * allocated, garbage not yet collected included: an upper bound on its live peak).
 * Args: <reader module path> <docs|dense> <chars> [skip]; `skip` builds the page but does not
 * convert it (the baseline of a capped-heap run).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { bigReaderPage } from "../test/fixtures/reader-pages";

const [modulePath, kind, chars, skip] = process.argv.slice(2);
const reader = (await import(modulePath!)) as { htmlToMarkdown: (html: string, url?: string) => { markdown: string } };
const html = bigReaderPage(kind as "docs" | "dense", Number(chars));
const status = () => readFileSync("/proc/self/status", "utf8");
const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status())![1]) * 1024;

reader.htmlToMarkdown("<p>warm-up</p>");
(globalThis as { gc?: () => void }).gc?.();
writeFileSync("/proc/self/clear_refs", "5"); // resets VmHWM to the current RSS
const before = kib("VmRSS");
const started = performance.now();
const { markdown } = skip ? { markdown: "" } : reader.htmlToMarkdown(html, "https://bench.example/docs/");
const ms = performance.now() - started;
console.log(
  JSON.stringify({
    inputBytes: new TextEncoder().encode(html).length,
    peakGrowthBytes: kib("VmHWM") - before,
    ms,
    markdownChars: markdown.length,
  }),
);
