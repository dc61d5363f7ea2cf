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
    if (
      /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line) &&
      line.includes("-") &&
      (line.includes("|") || /^\s*-{3,}\s*$/.test(line))
    ) {
      if (/^\s*-{3,}\s*$/.test(line)) out.push("");
      continue;
    }
    if (/^\s*([*_])(\s*\1){2,}\s*$/.test(line)) {
      out.push("");
      continue;
    }
    let text = line
      .replace(/^(\s*>)+\s?/, "")
      .replace(/^\s{0,3}#{1,6}\s+/, "")
      .replace(/\s+#+\s*$/, "");
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

function stripInlineMarkdown(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, "$1")
    .replace(/\[((?:\\\]|[^\]])*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, "$1")
    .replace(/(`+)\s?([\s\S]*?)\s?\1/g, "$2")
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "$1")
    .replace(/(^|\W)__(?=\S)([\s\S]*?\S)__(?=\W|$)/g, "$1$2")
    .replace(/\*([^\s*](?:[^*]*?[^\s*])?)\*/g, "$1")
    .replace(/(^|\W)_([^\s_](?:[^_]*?[^\s_])?)_(?=\W|$)/g, "$1$2")
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, "$1")
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, "$1");
}
