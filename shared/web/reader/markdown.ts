/**
 * Markdown writing: renders the selected content as CommonMark/GFM blocks (headings, lists,
 * fenced code, tables) and inline markup, dropping what the keep rules in select.ts say is chrome.
 */
import { BLOCK_LEVEL, collapse, element, type ElementNode, HEADINGS, NO_ATTRIBUTES, TABLE_SECTIONS } from "./parse";
import { DROPPED, isChromeLine, isDroppedIn, isLayoutTable } from "./select";

const BLOCKS = BLOCK_LEVEL;

export interface RenderContext {
  base: URL | null;
  /** Inside the main content: headers, footers and asides there belong to it. */
  inContent: boolean;
  /** The page marks no main content up: short chrome lines are dropped as well. */
  unmarked: boolean;
  inLink: boolean;
  strong: boolean;
  emphasis: boolean;
  /**
   * Characters of text still to write; shared by the whole render, so output stays bounded.
   * `cut` is set when content was left out because it ran out.
   */
  budget: { left: number; cut?: boolean };
}

function isDropped(el: ElementNode, ctx: RenderContext): boolean {
  return isDroppedIn(el, ctx.inContent);
}

interface Block {
  md: string;
  list: boolean;
}

/** Line breaks inside a paragraph survive whitespace collapsing as this private-use marker. */
const HARD_BREAK = "\uE000";

/** The blocks of `el` as markdown, blank-line separated. */
export function renderBlocks(el: ElementNode, ctx: RenderContext): string {
  return joinBlocks(childBlocks(el, ctx), "\n\n");
}

function joinBlocks(blocks: Block[], separator: string): string {
  let out = "";
  for (let i = 0; i < blocks.length; i++) out += i > 0 ? separator + blocks[i]!.md : blocks[i]!.md;
  return out;
}

/** The children of a container as blocks: runs of inline content become paragraphs. */
function childBlocks(el: ElementNode, ctx: RenderContext): Block[] {
  const blocks: Block[] = [];
  let inline = "";
  for (const child of el.children) {
    if (ctx.budget.left <= 0) {
      ctx.budget.cut = true;
      break;
    }
    if (typeof child === "string") {
      inline += textRun(child);
      continue;
    }
    if (isDropped(child, ctx)) continue;
    if (BLOCKS.has(child.tag)) {
      pushParagraph(blocks, inline, ctx);
      inline = "";
      const block = renderBlock(child, ctx);
      if (block?.md.trim()) blocks.push(block);
    } else {
      inline += renderInline(child, ctx);
    }
  }
  pushParagraph(blocks, inline, ctx);
  return blocks;
}

function pushParagraph(blocks: Block[], inline: string, ctx: RenderContext): void {
  if (!inline) return;
  const paragraph = finishInline(inline);
  if (!paragraph || (ctx.unmarked && isChromeLine(paragraph))) return;
  ctx.budget.left -= paragraph.length;
  blocks.push({ md: paragraph, list: false });
}

function renderBlock(el: ElementNode, ctx: RenderContext): Block | null {
  const tag = el.tag;
  if (HEADINGS.has(tag)) return renderHeading(el, ctx, Number(tag[1]));
  switch (tag) {
    // A list of links or a table cell holding one is content (a contents page, a property table),
    // so the chrome-line test stays out of lists and tables.
    case "ul":
    case "ol":
    case "menu":
    case "dir":
      return { md: renderList(el, { ...ctx, unmarked: false }, tag === "ol"), list: true };
    case "li":
      return { md: renderListItem(el, { ...ctx, unmarked: false }, "-"), list: true };
    case "pre":
      return { md: renderPre(el, ctx), list: false };
    case "blockquote": {
      const inner = renderBlocks(el, ctx);
      return {
        md: inner
          .split("\n")
          .map((line) => (line ? `> ${line}` : ">"))
          .join("\n"),
        list: false,
      };
    }
    case "table":
      return { md: renderTable(el, { ...ctx, unmarked: false }), list: false };
    case "hr":
      return { md: "---", list: false };
    case "summary":
      // rustdoc and others put a whole heading (a signature) in the summary: keep it a heading.
      if (el.children.some((child) => typeof child !== "string" && BLOCKS.has(child.tag) && !isDropped(child, ctx))) {
        return { md: renderBlocks(el, ctx), list: false };
      }
    // falls through: a plain summary line reads as a bold term
    case "dt": {
      const text = finishInline(renderInlineChildren(el, { ...ctx, strong: true }));
      return text ? { md: `**${text}**`, list: false } : null;
    }
    case "article":
    case "main":
      return { md: renderBlocks(el, { ...ctx, inContent: true }), list: false };
    default:
      return { md: renderBlocks(el, ctx), list: false };
  }
}

function renderHeading(el: ElementNode, ctx: RenderContext, level: number): Block | null {
  const text = finishInline(renderInlineChildren(el, ctx)).replace(/\n+/g, " ");
  // A site title in the page header ("# [Project 3.2 documentation](/)") is chrome, not the page's heading.
  if (!text || (ctx.unmarked && level === 1 && isChromeLine(text))) return null;
  ctx.budget.left -= text.length;
  return { md: `${"#".repeat(level)} ${text}`, list: false };
}

function renderList(el: ElementNode, ctx: RenderContext, ordered: boolean): string {
  let number = ordered ? Number.parseInt(el.attrs.get("start") ?? "1", 10) : 0;
  if (!Number.isFinite(number)) number = 1;
  const items: string[] = [];
  let loose: ElementNode | null = null;
  const flushLoose = () => {
    if (loose) {
      const md = renderListItem(loose, ctx, ordered ? `${number++}.` : "-");
      if (md) items.push(md);
      loose = null;
    }
  };
  for (const child of el.children) {
    if (typeof child === "string" && !child.trim()) continue;
    if (typeof child !== "string" && isDropped(child, ctx)) continue;
    if (typeof child !== "string" && child.tag === "li") {
      flushLoose();
      const md = renderListItem(child, ctx, ordered ? `${number++}.` : "-");
      if (md) items.push(md);
    } else if (typeof child !== "string" && (child.tag === "ul" || child.tag === "ol") && items.length > 0 && !loose) {
      // A list nested directly in a list (invalid but common) belongs to the item before it.
      const nested = renderList(child, ctx, child.tag === "ol");
      if (nested) items[items.length - 1] += `\n${indent(nested, 2)}`;
    } else {
      // Stray content between items becomes an item of its own.
      loose ??= element("li", NO_ATTRIBUTES);
      loose.children.push(child);
    }
  }
  flushLoose();
  return items.join("\n");
}

function renderListItem(el: ElementNode, ctx: RenderContext, marker: string): string {
  const blocks = childBlocks(el, ctx);
  if (blocks.length === 0) return "";
  let body = blocks[0]!.md;
  for (let i = 1; i < blocks.length; i++) {
    // A nested list hugs its item's text; separate paragraphs keep a blank line.
    body += (blocks[i]!.list || blocks[i - 1]!.list ? "\n" : "\n\n") + blocks[i]!.md;
  }
  const pad = " ".repeat(marker.length + 1);
  const [first, ...rest] = body.split("\n");
  return [`${marker} ${first}`, ...rest.map((line) => (line ? pad + line : line))].join("\n");
}

function indent(text: string, width: number): string {
  const pad = " ".repeat(width);
  return text
    .split("\n")
    .map((line) => (line ? pad + line : line))
    .join("\n");
}

function renderPre(el: ElementNode, ctx: RenderContext): string {
  // Several multi-line <code> children in one <pre> are alternatives (Node's ESM and CommonJS
  // flavours of one example): each is a code block of its own.
  const codes = el.children.filter(
    (c): c is ElementNode => typeof c !== "string" && c.tag === "code" && !isDropped(c, ctx),
  );
  if (codes.length > 1 && codes.every((code) => preText(code).trim().includes("\n"))) {
    return codes.map((code) => fencedCode(preText(code), languageOf(code) ?? languageOf(el), ctx)).join("\n\n");
  }
  return fencedCode(preText(el), languageOf(el) ?? languageOf(codes[0]), ctx);
}

function fencedCode(text: string, language: string | null, ctx: RenderContext): string {
  let code = text.replace(/\u00A0/g, " ");
  if (code.startsWith("\n")) code = code.slice(1);
  code = code.replace(/\s+$/, "");
  ctx.budget.left -= code.length;
  const longestRun = Math.max(0, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longestRun + 1));
  return `${fence}${language ?? ""}\n${code}\n${fence}`;
}

function preText(el: ElementNode): string {
  let out = "";
  for (const child of el.children) {
    if (typeof child === "string") out += child;
    else if (child.tag === "br") out += "\n";
    else if (!DROPPED.has(child.tag)) {
      out += preText(child);
      // Some highlighters wrap each line in a block element instead of using newlines.
      if (BLOCKS.has(child.tag) && !out.endsWith("\n")) out += "\n";
    }
  }
  return out;
}

function languageOf(el: ElementNode | undefined): string | null {
  const classes = el?.attrs.get("class") ?? "";
  const match = /(?:^|\s)(?:language|lang|highlight-source)-([\w+#.-]+)/.exec(classes);
  return match?.[1] ?? el?.attrs.get("data-lang") ?? null;
}

function renderTable(el: ElementNode, ctx: RenderContext): string {
  const rows: { cells: ElementNode[]; head: boolean }[] = [];
  const collectRows = (node: ElementNode, head: boolean) => {
    for (const child of node.children) {
      if (typeof child === "string" || isDropped(child, ctx)) continue;
      if (child.tag === "tr") {
        const cells = child.children.filter(
          (c): c is ElementNode => typeof c !== "string" && (c.tag === "td" || c.tag === "th"),
        );
        if (cells.length) rows.push({ cells, head: head || cells.every((c) => c.tag === "th") });
      } else if (TABLE_SECTIONS.has(child.tag)) {
        collectRows(child, child.tag === "thead");
      }
    }
  };
  collectRows(el, false);
  const caption = el.children.find((c): c is ElementNode => typeof c !== "string" && c.tag === "caption");
  const captionText = caption ? finishInline(renderInlineChildren(caption, ctx)) : "";
  if (rows.length === 0) return captionText;

  const width = Math.max(...rows.map((r) => r.cells.reduce((sum, c) => sum + span(c), 0)));
  // One column, or a page laid out in cells: the cells are just content, not data.
  if (width <= 1 || isLayoutTable(el))
    return joinBlocks(
      rows.flatMap((r) => r.cells.flatMap((c) => childBlocks(c, ctx))),
      "\n\n",
    );

  const grid = rows.map((row) => {
    const cells: string[] = [];
    for (const cell of row.cells) {
      cells.push(tableCell(cell, ctx));
      for (let extra = 1; extra < span(cell); extra++) cells.push("");
    }
    while (cells.length < width) cells.push("");
    return cells;
  });
  const headerIndex = Math.max(
    0,
    rows.findIndex((r) => r.head),
  );
  const header = grid[headerIndex]!;
  const body = grid.filter((_, index) => index !== headerIndex);
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  const table = [line(header), line(header.map(() => "---")), ...body.map(line)].join("\n");
  return captionText ? `${captionText}\n\n${table}` : table;
}

function span(cell: ElementNode): number {
  const value = Number.parseInt(cell.attrs.get("colspan") ?? "1", 10);
  return Number.isFinite(value) ? Math.min(Math.max(value, 1), 50) : 1;
}

function tableCell(cell: ElementNode, ctx: RenderContext): string {
  return escapeEach(joinBlocks(childBlocks(cell, ctx), " ").replace(/\n+/g, " "), UNESCAPED_PIPE).trim();
}

// ---------------------------------------------------------------------------------------------
// Inline content

export function renderInlineChildren(el: ElementNode, ctx: RenderContext): string {
  let out = "";
  for (const child of el.children) {
    if (typeof child === "string") out += textRun(child);
    else if (!isDropped(child, ctx)) out += renderInline(child, ctx);
  }
  return out;
}

function renderInline(el: ElementNode, ctx: RenderContext): string {
  switch (el.tag) {
    case "br":
      return HARD_BREAK;
    case "wbr":
      return "";
    case "img":
      return renderImage(el, ctx);
    case "a":
      return renderLink(el, ctx);
    case "code":
    case "kbd":
    case "samp":
    case "tt":
      return renderInlineCode(el);
    case "strong":
    case "b":
      return ctx.strong
        ? renderInlineChildren(el, ctx)
        : wrap("**", renderInlineChildren(el, { ...ctx, strong: true }));
    case "em":
    case "i":
    case "cite":
    case "dfn":
      return ctx.emphasis
        ? renderInlineChildren(el, ctx)
        : wrap("*", renderInlineChildren(el, { ...ctx, emphasis: true }));
    case "del":
    case "s":
    case "strike":
      return wrap("~~", renderInlineChildren(el, ctx));
    case "sup":
      return renderInlineChildren(el, ctx);
    default:
      // Block content inside inline markup (a card wrapped in a link) reads as a run of text.
      return BLOCKS.has(el.tag) ? ` ${renderInlineChildren(el, ctx)} ` : renderInlineChildren(el, ctx);
  }
}

/**
 * `text` as its leading whitespace, its core and its trailing whitespace, found by index: linear
 * on any input (a regex with a lazy core backtracks over a long run of no-break spaces).
 */
function spaced(text: string): { lead: string; core: string; trail: string } {
  const start = text.length - text.trimStart().length;
  const end = text.trimEnd().length;
  if (end <= start) return { lead: text, core: "", trail: "" };
  return { lead: text.slice(0, start), core: text.slice(start, end), trail: text.slice(end) };
}

/** Markers hug the text; surrounding spaces move outside, or the markdown would not parse. */
function wrap(marker: string, inner: string): string {
  const { lead, core, trail } = spaced(inner);
  if (!core || core === HARD_BREAK) return inner;
  return `${lead}${marker}${core}${marker}${trail}`;
}

function renderInlineCode(el: ElementNode): string {
  const code = collapseSpaces(preText(el))
    .replace(/\u00A0/g, " ")
    .trim();
  if (!code) return "";
  const longestRun = Math.max(0, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longestRun + 1);
  const pad = code.startsWith("`") || code.endsWith("`") ? " " : "";
  return `${fence}${pad}${code}${pad}${fence}`;
}

/** The glyphs docs generators put in a heading's permalink (Sphinx ¶, furo #, rustdoc §, 🔗). */
const PERMALINK_GLYPHS = /^[\s¶#§🔗⚓\uFE0E\uFE0F]*$/u;
const PERMALINK_CLASSES = new Set([
  "headerlink",
  "anchor",
  "anchorjs-link",
  "header-anchor",
  "heading-anchor",
  "anchor-link",
  "hash-link",
  "permalink",
]);

/** A link to a spot on this page that only shows a glyph (or is styled as a permalink): not text. */
function isPermalink(el: ElementNode, text: string): boolean {
  const href = el.attrs.get("href")?.trim() ?? "";
  if (href !== "" && !href.startsWith("#")) return false;
  if (PERMALINK_GLYPHS.test(text) && text.trim() !== "") return true;
  const classes = el.attrs.get("class");
  return (
    !!classes &&
    text.trim().length <= 2 &&
    classes
      .toLowerCase()
      .split(/\s+/)
      .some((token) => PERMALINK_CLASSES.has(token))
  );
}

function renderLink(el: ElementNode, ctx: RenderContext): string {
  const text = renderInlineChildren(el, { ...ctx, inLink: true });
  if (isPermalink(el, text)) return "";
  const href = el.attrs.get("href");
  if (ctx.inLink || !href || href.trim().startsWith("#")) return text;
  const url = absoluteUrl(href, ctx.base);
  const label = escapeBrackets(finishInline(text).replace(/\n+/g, " "));
  if (!url) return text;
  if (!label) return "";
  const { lead, trail } = spaced(text);
  return `${lead ? " " : ""}[${label}](${markdownUrl(url)})${trail ? " " : ""}`;
}

function renderImage(el: ElementNode, ctx: RenderContext): string {
  const alt = collapse(el.attrs.get("alt") ?? "");
  // An empty alt marks a decorative image; data: URLs would put whole files into the text.
  if (!alt) return "";
  const src =
    el.attrs.get("src") || el.attrs.get("data-src") || (el.attrs.get("srcset") ?? "").trim().split(/\s+/)[0] || "";
  const url = src && !/^\s*data:/i.test(src) ? absoluteUrl(src, ctx.base) : null;
  return url ? `![${escapeBrackets(escapeText(alt))}](${markdownUrl(url)})` : escapeText(alt);
}

const LINK_PROTOCOLS = new Set(["http:", "https:", "mailto:", "ftp:", "tel:"]);

function absoluteUrl(href: string, base: URL | null): string | null {
  const trimmed = href.trim();
  try {
    const url = new URL(trimmed, base ?? undefined);
    return LINK_PROTOCOLS.has(url.protocol) ? url.href : null;
  } catch {
    // No base to resolve against: a relative link is still better than none.
    return base === null && !/^[a-z][a-z0-9+.-]*:/i.test(trimmed) ? trimmed : null;
  }
}

function markdownUrl(url: string): string {
  return url.replace(/ /g, "%20").replace(/\(/g, "%28").replace(/\)/g, "%29");
}

function collapseSpaces(text: string): string {
  return text.replace(/[ \t\n\r\f]+/g, " ");
}

/** A run of the page's text as markdown: spaces collapsed, markup characters escaped. */
function textRun(text: string): string {
  return escapeText(collapseSpaces(text));
}

/**
 * The page's own characters that markdown would read as markup, backslash-escaped, so the text
 * reads back as written (`2*3*4` is not emphasis, `[a](b)` not a link; `markdownToText` undoes
 * the escapes): `*`, backticks, a `]` before `(`, a `_` at a word's edge (`snake_case` stays), a
 * run of `~`, and a backslash before punctuation (`C:\Users` stays). Other brackets stay as they
 * are: `[1]` is not a link.
 */
function escapeText(text: string): string {
  return text.replace(MARKUP_IN_TEXT, "\\$&");
}

// A backslash ending the run is escaped too: the next character may be markup (`C:\<b>x</b>`).
const MARKUP_IN_TEXT = /\\(?=[!-/:-@[-`{-~]|$)|[*`]|\](?=\()|~(?=~)|(?<=~)~|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu;

/**
 * Each single character `pattern` matches escaped, but for those escaped already: the pattern
 * matches a backslash pair first, which is kept whole.
 */
function escapeEach(text: string, pattern: RegExp): string {
  return text.replace(pattern, (m) => (m.length === 2 ? m : `\\${m}`));
}

const UNESCAPED_BRACKET = /\\[\s\S]|[[\]]/g;
const UNESCAPED_PIPE = /\\[\s\S]|\|/g;

/** Every bracket of a link's or an image's text escaped, but for those escaped already. */
const escapeBrackets = (text: string): string => escapeEach(text, UNESCAPED_BRACKET);

/** Finish a run of inline content as one paragraph: tidy spaces, keep hard line breaks. */
export function finishInline(text: string): string {
  let out = text.replace(NBSP, " ").replace(SPACE_RUN, " ");
  // One <br> is a line break; two or more in a row are how old pages separate paragraphs.
  if (out.includes(HARD_BREAK)) out = out.replace(BREAK_RUN, (m) => (m.trim().length > 1 ? "\n\n" : "\n"));
  // A line of text that starts as a heading, a quote, a table row or a rule would read as one.
  return out.trim().replace(BLOCK_MARKER, "$1\\$2");
}

const BLOCK_MARKER = /^( *)(#{1,6}(?= |$)|>|\||-(?=-{2,} *$))/gm;

const NBSP = /\u00A0/g;
const SPACE_RUN = / {2,}/g;
const BREAK_RUN = new RegExp(` *(?:${HARD_BREAK} *)+`, "g");
