/** Markdown → plain text for `format: "text"`, shared by every extract adapter. */

/**
 * Plain text for `format: "text"`: markup markers go, words, list bullets, code and table cells
 * stay (cells tab-separated).
 *
 * @example markdownToText("# Hi\n\nSee [docs](https://x.example) and **this**.") // "Hi\n\nSee docs and this."
 */
export function markdownToText(markdown: string): string {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of markdown.split(/\r?\n/)) {
    const fenceMatch = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (fenceMatch && fenceMatch[1]!.startsWith(fence)) fence = null;
      else out.push(line);
      continue;
    }
    if (fenceMatch) {
      fence = fenceMatch[1]!;
      continue;
    }
    // Rules and table separators are matched on the trimmed line: a leading run of spaces before
    // two optional parts would be tried at every split (quadratic on a long run).
    const bare = line.trim();
    if (
      bare.includes("-") &&
      /^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$/.test(bare) &&
      (bare.includes("|") || /^-{3,}$/.test(bare))
    ) {
      if (/^-{3,}$/.test(bare)) out.push("");
      continue;
    }
    if (/^([*_])(\s*\1){2,}$/.test(bare)) {
      out.push("");
      continue;
    }
    let text = withoutClosingHashes(line.replace(/^(\s*>)+\s?/, "").replace(/^\s{0,3}#{1,6}\s+/, ""));
    if (/^\s*\|.*\|\s*$/.test(text)) {
      text = text
        .trim()
        .replace(/^\||\|$/g, "")
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim())
        .join("\t");
    }
    out.push(stripInlineMarkdown(text));
  }
  return out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** `line` without a heading's closing run of `#` (after a space), found from the end: linear on any line. */
function withoutClosingHashes(line: string): string {
  const end = line.trimEnd();
  let start = end.length;
  while (start > 0 && end[start - 1] === "#") start--;
  if (start === end.length || start === 0 || !/\s/.test(end[start - 1]!)) return line;
  return end.slice(0, start).trimEnd();
}

/** A code span's place while the other rules run: NUL, its index, NUL (NULs of the text are dropped first). */
const SPAN = /\u0000(\d+)\u0000/g;

/**
 * Inline markers out, words kept. Code spans are set aside first, so nothing inside one is read as
 * markup (`__init__.py` stays), then backslash escapes, so an escaped character is text (`2\*3\*4`
 * reads `2*3*4`). Every rule scans only up to the next delimiter of its own kind
 * (link text stops at the next bracket, emphasis at the next marker like its own), so each
 * character is read a bounded number of times: linear on any line, hostile ones included.
 */
function stripInlineMarkdown(line: string): string {
  const spans: string[] = [];
  const text = escapesAside(codeSpansAside(line.replace(/\u0000/g, ""), spans), spans)
    .replace(/!\[((?:\\.|[^\][\\])*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, "$1")
    .replace(/\[((?:\\.|[^\][\\])*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, "$1")
    .replace(/\*\*(?=\S)((?:(?!\*\*)[\s\S])*?\S)\*\*/g, "$1")
    .replace(/(^|\W)__(?=\S)((?:(?!__)[\s\S])*?\S)__(?=\W|$)/g, "$1$2")
    .replace(/\*([^\s*](?:[^*]*?[^\s*])?)\*/g, "$1")
    .replace(/(^|\W)_([^\s_](?:[^_]*?[^\s_])?)_(?=\W|$)/g, "$1$2")
    .replace(/~~(?=\S)((?:(?!~~)[\s\S])*?\S)~~/g, "$1");
  return text.replace(SPAN, (_, index: string) => spans[Number(index)] ?? "");
}

/** Whether the character at `index` follows an odd run of backslashes (is escaped). */
function escapedAt(line: string, index: number): boolean {
  let slashes = 0;
  while (line[index - slashes - 1] === "\\") slashes++;
  return slashes % 2 === 1;
}

/** `line` with each backslash escape (a backslash before ASCII punctuation) set aside in `spans` as the character it stands for. */
function escapesAside(line: string, spans: string[]): string {
  return line.replace(/\\([!-/:-@[-`{-~])/g, (_, char: string) => `\u0000${spans.push(char) - 1}\u0000`);
}

/**
 * `line` with each code span (a run of backticks up to the next run of the same length) replaced
 * by its place in `spans`, which receives its content (one space stripped from each side when both
 * are there, as CommonMark does). A run with no closing run is literal text. Linear: each run is
 * looked at once, and its closing run is found from a table built in one backward pass.
 */
function codeSpansAside(line: string, spans: string[]): string {
  const runs = [...line.matchAll(/`+/g)].map((m) => ({ start: m.index, length: m[0].length }));
  if (runs.length < 2) return line;
  const nextSame = new Array<number>(runs.length).fill(-1);
  const lastOfLength = new Map<number, number>();
  for (let i = runs.length - 1; i >= 0; i--) {
    nextSame[i] = lastOfLength.get(runs[i]!.length) ?? -1;
    lastOfLength.set(runs[i]!.length, i);
  }
  let out = "";
  let at = 0; // the first character of `line` not yet in `out`
  for (let i = 0; i < runs.length; i++) {
    const open = runs[i]!;
    if (open.start < at || escapedAt(line, open.start)) continue; // inside a span set aside, or text
    const close = nextSame[i]! >= 0 ? runs[nextSame[i]!]! : null;
    if (!close) continue;
    let content = line.slice(open.start + open.length, close.start);
    if (content.length > 2 && content.startsWith(" ") && content.endsWith(" ") && content.trim() !== "")
      content = content.slice(1, -1);
    out += `${line.slice(at, open.start)}\u0000${spans.length}\u0000`;
    spans.push(content);
    at = close.start + close.length;
  }
  return out + line.slice(at);
}
