/**
 * HTML → markdown for the direct extractor: a small tolerant tokenizer and tree builder (no DOM,
 * no HTMLRewriter, no dependencies) so the same code runs on workerd and Deno, then a renderer
 * that keeps the content an agent wants and drops page chrome (scripts, navigation, forms).
 */
import { decodeHtmlEntities, WINDOWS_1252_C1 } from "./html-entities";

export interface MarkdownPage {
  title: string;
  markdown: string;
}

// ---------------------------------------------------------------------------------------------
// Charset

/**
 * Decode a fetched HTML body: a byte-order mark wins, then the Content-Type charset, then a
 * `<meta charset>` / `<meta http-equiv>` in the first 1024 bytes, else UTF-8.
 *
 * @example decodeHtmlBody(bytes, response.headers.get("content-type"))
 */
export function decodeHtmlBody(bytes: Uint8Array, contentTypeHeader: string | null): string {
  const label = bomEncoding(bytes) ?? usableCharset(charsetOf(contentTypeHeader ?? "")) ?? metaCharset(bytes) ?? "utf-8";
  const text = new TextDecoder(label).decode(bytes);
  return label === "windows-1252" ? repairWindows1252(text) : text;
}

/**
 * Some runtimes (Node before 22, behind the tests) decode windows-1252 as plain Latin-1, turning
 * curly quotes and € into invisible C1 controls. A correct decoder never yields those for the
 * mapped bytes, so mapping them again is harmless where the runtime is right.
 */
function repairWindows1252(text: string): string {
  return text.replace(/[\u0080-\u009f]/g, (c) => String.fromCharCode(WINDOWS_1252_C1[c.charCodeAt(0)] ?? c.charCodeAt(0)));
}

function bomEncoding(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  return null;
}

function charsetOf(text: string): string | null {
  const match = /charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)/i.exec(text);
  return match?.[1] ?? null;
}

/** A label TextDecoder knows, or null so the next source of truth is tried. */
function usableCharset(label: string | null): string | null {
  if (!label) return null;
  try {
    return new TextDecoder(label).encoding;
  } catch {
    return null;
  }
}

function metaCharset(bytes: Uint8Array): string | null {
  // Pages declare their charset in ASCII, so reading the prefix byte-for-byte is enough to find it.
  const head = String.fromCharCode(...bytes.subarray(0, 1024));
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const encoding = usableCharset(charsetOf(tag));
    // A document that really were UTF-16 could not have spelled this tag in ASCII (HTML spec rule).
    if (encoding) return encoding.startsWith("utf-16") ? "utf-8" : encoding;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Tokenizer and tree

interface ElementNode {
  kind: "element";
  tag: string;
  attrs: ReadonlyMap<string, string>;
  children: HtmlNode[];
  /** Cached answer of dropClass(): computed once, asked for on every render pass. */
  drop?: DropClass;
}

interface TextNode {
  kind: "text";
  text: string;
}

type HtmlNode = ElementNode | TextNode;

const VOID = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr", "keygen"]);
/** Elements whose content is not markup; their bodies run to the matching end tag. */
const RAW_TEXT = new Set(["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript"]);
const ESCAPABLE_RAW_TEXT = new Set(["textarea", "title"]);
/** Starting one of these closes an open <p>, as browsers do. */
const CLOSES_P = new Set([
  "address", "article", "aside", "blockquote", "details", "div", "dl", "fieldset", "figcaption", "figure", "footer", "form",
  "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "main", "menu", "nav", "ol", "p", "pre", "section", "table", "ul",
]);
const HEADINGS = new Set(["h1", "h2", "h3", "h4", "h5", "h6"]);
/** Deeper nesting is flattened: keeps rendering recursion bounded on pathological input. */
const MAX_DEPTH = 256;

interface ParsedDocument {
  root: ElementNode;
  title: string;
  baseHref: string | null;
}

function parseHtml(html: string): ParsedDocument {
  const root = element("#root", NO_ATTRIBUTES);
  const stack: ElementNode[] = [root];
  // How many of each tag are open, so the common "nothing to close" case costs no stack scan.
  const openCount = new Map<string, number>();
  const push = (el: ElementNode) => {
    stack.push(el);
    openCount.set(el.tag, (openCount.get(el.tag) ?? 0) + 1);
  };
  const popTo = (length: number) => {
    while (stack.length > length) {
      const el = stack.pop()!;
      openCount.set(el.tag, openCount.get(el.tag)! - 1);
    }
  };
  const isOpen = (tags: ReadonlySet<string> | string) => {
    if (typeof tags === "string") return (openCount.get(tags) ?? 0) > 0;
    for (const tag of tags) if ((openCount.get(tag) ?? 0) > 0) return true;
    return false;
  };
  let title = "";
  let baseHref: string | null = null;
  const current = () => stack[stack.length - 1]!;
  const addText = (text: string) => {
    if (!text) return;
    const children = current().children;
    const last = children[children.length - 1];
    if (last?.kind === "text") last.text += text;
    else children.push({ kind: "text", text });
  };

  /** Pop back to the nearest open `tags` element, unless a `stops` element comes first. */
  const closeNearest = (tags: ReadonlySet<string> | string, stops: ReadonlySet<string>): boolean => {
    if (!isOpen(tags)) return false;
    for (let i = stack.length - 1; i > 0; i--) {
      const tag = stack[i]!.tag;
      if (typeof tags === "string" ? tag === tags : tags.has(tag)) {
        popTo(i);
        return true;
      }
      if (stops.has(tag)) return false;
    }
    return false;
  };

  const closeImplied = (tag: string) => {
    if (CLOSES_P.has(tag)) closeNearest("p", P_SCOPE);
    if (tag === "li") closeNearest("li", LIST_SCOPE);
    else if (tag === "dt" || tag === "dd") closeNearest(DEFINITION, DL_SCOPE);
    else if (tag === "tr") closeNearest("tr", TABLE_SECTION_SCOPE);
    else if (tag === "td" || tag === "th") closeNearest(CELLS, ROW_SCOPE);
    else if (tag === "thead" || tag === "tbody" || tag === "tfoot") closeNearest(TABLE_SECTIONS, TABLE_SCOPE);
    else if (tag === "option") closeNearest("option", SELECT_SCOPE);
    else if (tag === "a") closeNearest("a", P_SCOPE);
    if (HEADINGS.has(tag) && HEADINGS.has(current().tag)) popTo(stack.length - 1);
  };

  let i = 0;
  const n = html.length;
  while (i < n) {
    const lt = html.indexOf("<", i);
    if (lt < 0) {
      addText(decodeHtmlEntities(html.slice(i)));
      break;
    }
    if (lt > i) addText(decodeHtmlEntities(html.slice(i, lt)));
    const next = html[lt + 1] ?? "";

    if (html.startsWith("<!--", lt)) {
      const end = html.indexOf("-->", lt + 4);
      i = end < 0 ? n : end + 3;
      continue;
    }
    if (next === "!" || next === "?") {
      const end = html.indexOf(">", lt + 2);
      i = end < 0 ? n : end + 1;
      continue;
    }
    if (next === "/") {
      END_TAG.lastIndex = lt;
      const match = END_TAG.exec(html);
      const end = html.indexOf(">", lt + 2);
      i = end < 0 ? n : end + 1;
      if (!match) continue;
      const tag = match[1]!.toLowerCase();
      if (tag === "br") current().children.push(element("br", NO_ATTRIBUTES));
      else if (tag === "li") closeNearest("li", LIST_SCOPE);
      else if (CELLS.has(tag) || tag === "tr") closeNearest(tag, TABLE_SCOPE);
      else if (tag !== "body" && tag !== "html" && tag !== "head") closeNearest(tag, NO_STOPS);
      continue;
    }
    if (!/[A-Za-z]/.test(next)) {
      addText("<");
      i = lt + 1;
      continue;
    }

    const tag = readStartTag(html, lt);
    if (!tag) break; // end of input inside a tag: browsers drop the partial tag
    i = tag.end;
    const name = tag.name;
    if (name === "html" || name === "head" || name === "body") continue;
    if (name === "base" && baseHref === null) baseHref = tag.attrs.get("href") ?? null;

    if (RAW_TEXT.has(name)) {
      const close = findRawTextEnd(html, name, i);
      const raw = html.slice(i, close.start);
      i = close.end;
      if (name === "title") {
        if (!title) title = collapse(decodeHtmlEntities(raw));
        continue;
      }
      const el = element(name, tag.attrs);
      if (ESCAPABLE_RAW_TEXT.has(name)) el.children.push({ kind: "text", text: decodeHtmlEntities(raw) });
      current().children.push(el);
      continue;
    }

    closeImplied(name);
    const el = element(name, tag.attrs);
    current().children.push(el);
    if (!VOID.has(name) && !tag.selfClosing && stack.length < MAX_DEPTH) push(el);
  }
  return { root, title, baseHref };
}

const END_TAG = /<\/([A-Za-z][A-Za-z0-9:-]*)/y;
const NO_STOPS: ReadonlySet<string> = new Set();
const P_SCOPE = new Set(["td", "th", "table", "caption", "button", "object", "template", "marquee"]);
const LIST_SCOPE = new Set(["ul", "ol", "menu", "table", "td", "th"]);
const DEFINITION = new Set(["dt", "dd"]);
const DL_SCOPE = new Set(["dl", "table", "td", "th"]);
const CELLS = new Set(["td", "th"]);
const ROW_SCOPE = new Set(["tr", "table"]);
const TABLE_SECTIONS = new Set(["thead", "tbody", "tfoot"]);
const TABLE_SECTION_SCOPE = new Set(["thead", "tbody", "tfoot", "table"]);
const TABLE_SCOPE = new Set(["table"]);
const SELECT_SCOPE = new Set(["select", "datalist"]);

/** Shared by every attribute-less element; never written to. */
const NO_ATTRIBUTES: ReadonlyMap<string, string> = new Map();

function element(tag: string, attrs: ReadonlyMap<string, string>): ElementNode {
  return { kind: "element", tag, attrs, children: [] };
}

interface StartTag {
  name: string;
  attrs: ReadonlyMap<string, string>;
  selfClosing: boolean;
  end: number;
}

/** Reads `<name attr=value ...>` by hand: quoted values may hold `>`, and no regex can backtrack badly. */
function readStartTag(html: string, lt: number): StartTag | null {
  const n = html.length;
  let j = lt + 1;
  while (j < n && !isTagBreak(html.charCodeAt(j))) j++;
  const name = html.slice(lt + 1, j).toLowerCase();
  // Most tags have no attributes; they share one empty map instead of allocating their own.
  let attrs: Map<string, string> | null = null;
  while (j < n) {
    while (j < n && isSpace(html.charCodeAt(j))) j++;
    const c = html[j];
    if (c === undefined) return null;
    if (c === ">") return { name, attrs: attrs ?? NO_ATTRIBUTES, selfClosing: false, end: j + 1 };
    if (c === "/") {
      if (html[j + 1] === ">") return { name, attrs: attrs ?? NO_ATTRIBUTES, selfClosing: true, end: j + 2 };
      j++;
      continue;
    }
    const nameStart = j;
    j++;
    while (j < n && !isTagBreak(html.charCodeAt(j)) && html[j] !== "=") j++;
    const attrName = html.slice(nameStart, j).toLowerCase();
    while (j < n && isSpace(html.charCodeAt(j))) j++;
    let value = "";
    if (html[j] === "=") {
      j++;
      while (j < n && isSpace(html.charCodeAt(j))) j++;
      const quote = html[j];
      if (quote === '"' || quote === "'") {
        const close = html.indexOf(quote, j + 1);
        if (close < 0) return null;
        value = html.slice(j + 1, close);
        j = close + 1;
      } else {
        const start = j;
        while (j < n && !isSpace(html.charCodeAt(j)) && html[j] !== ">") j++;
        value = html.slice(start, j);
      }
    }
    attrs ??= new Map();
    if (!attrs.has(attrName)) attrs.set(attrName, decodeHtmlEntities(value));
  }
  return null;
}

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 12 || code === 13;
}

function isTagBreak(code: number): boolean {
  return isSpace(code) || code === 47 /* / */ || code === 62 /* > */;
}

const rawTextEndCache = new Map<string, RegExp>();

function findRawTextEnd(html: string, tag: string, from: number): { start: number; end: number } {
  let pattern = rawTextEndCache.get(tag);
  if (!pattern) {
    pattern = new RegExp(`</${tag}(?=[\\s/>])[^>]*>?`, "gi");
    rawTextEndCache.set(tag, pattern);
  }
  pattern.lastIndex = from;
  const match = pattern.exec(html);
  return match ? { start: match.index, end: match.index + match[0].length } : { start: html.length, end: html.length };
}

// ---------------------------------------------------------------------------------------------
// What to keep

/** Never content: code, styling, widgets, embedded documents and site navigation. */
const DROPPED = new Set([
  "script", "style", "noscript", "template", "svg", "math", "nav", "aside", "form", "iframe", "object", "embed", "canvas",
  "button", "select", "input", "textarea", "dialog", "head", "link", "meta", "base", "audio", "video", "map", "frameset", "noembed", "noframes",
]);
/** Site chrome when outside the main content; an article's own header or footer is kept. */
const CHROME = new Set(["header", "footer"]);
const CHROME_ROLES = new Set(["banner", "contentinfo"]);
const DROPPED_ROLES = new Set(["navigation", "complementary", "search", "dialog", "alertdialog", "menu", "menubar", "toolbar"]);
/** Class or id tokens that name navigation or hidden helpers on most sites. */
const NOISE_TOKENS = new Set([
  "sidebar", "side-bar", "navbar", "nav", "navigation", "menu", "breadcrumb", "breadcrumbs", "skip-link", "skip-to-content",
  "cookie-banner", "cookie-consent", "sr-only", "visually-hidden", "screen-reader-text",
]);

const BLOCKS = new Set([
  "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog", "dir", "div", "dl", "dt",
  "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html",
  "legend", "li", "main", "menu", "nav", "ol", "p", "pre", "search", "section", "summary", "table", "tbody", "td", "tfoot", "th",
  "thead", "tr", "ul", "#root",
]);

interface RenderContext {
  base: URL | null;
  /** Inside <main>/<article>: headers and footers there belong to the content. */
  inContent: boolean;
  inLink: boolean;
  strong: boolean;
  emphasis: boolean;
}

const enum DropClass {
  Keep,
  Always,
  /** Dropped outside the main content only. */
  Chrome,
}

function isDropped(el: ElementNode, ctx: RenderContext): boolean {
  return isDroppedIn(el, ctx.inContent);
}

function isDroppedIn(el: ElementNode, inContent: boolean): boolean {
  el.drop ??= dropClass(el);
  return el.drop === DropClass.Always || (el.drop === DropClass.Chrome && !inContent);
}

function dropClass(el: ElementNode): DropClass {
  if (DROPPED.has(el.tag)) return DropClass.Always;
  const attrs = el.attrs;
  if (attrs.size === 0) return CHROME.has(el.tag) ? DropClass.Chrome : DropClass.Keep;
  if (attrs.has("hidden") || attrs.get("aria-hidden") === "true") return DropClass.Always;
  const role = (attrs.get("role") ?? "").toLowerCase();
  if (DROPPED_ROLES.has(role)) return DropClass.Always;
  const style = attrs.get("style");
  if (style && /display\s*:\s*none|visibility\s*:\s*hidden/i.test(style)) return DropClass.Always;
  const names = `${attrs.get("class") ?? ""} ${attrs.get("id") ?? ""}`;
  if (names.trim()) {
    for (const token of names.toLowerCase().split(/\s+/)) {
      if (token && NOISE_TOKENS.has(token)) return DropClass.Always;
    }
  }
  return CHROME.has(el.tag) || CHROME_ROLES.has(role) ? DropClass.Chrome : DropClass.Keep;
}

// ---------------------------------------------------------------------------------------------
// Rendering

interface Block {
  md: string;
  list: boolean;
}

/** Line breaks inside a paragraph survive whitespace collapsing as this private-use marker. */
const HARD_BREAK = "\uE000";

/**
 * Convert an HTML page to markdown. Prefers the page's <main> (or its only <article>) when
 * there is one, so navigation that is not marked up as such still falls away.
 *
 * @example htmlToMarkdown("<title>T</title><h1>Hi</h1><a href='/x'>x</a>", "https://a.example/")
 * // { title: "T", markdown: "# Hi\n\n[x](https://a.example/x)" }
 */
export function htmlToMarkdown(html: string, baseUrl?: string): MarkdownPage {
  const doc = parseHtml(html);
  const base = resolveBase(doc.baseHref, baseUrl);
  const ctx: RenderContext = { base, inContent: false, inLink: false, strong: false, emphasis: false };

  let markdown = "";
  const main = findFirst(doc.root, (el) => el.tag === "main" || el.attrs.get("role") === "main");
  if (main) markdown = renderBlocks(main, { ...ctx, inContent: true });
  if (!markdown) {
    const articles = findAll(doc.root, (el) => el.tag === "article");
    if (articles.length === 1) markdown = renderBlocks(articles[0]!, { ...ctx, inContent: true });
  }
  if (!markdown) markdown = renderBlocks(doc.root, ctx);

  let title = doc.title;
  if (!title) {
    const h1 = findFirst(doc.root, (el) => el.tag === "h1");
    if (h1) title = finishInline(renderInlineChildren(h1, ctx)).replace(/\n/g, " ");
  }
  return { title, markdown };
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

function findFirst(root: ElementNode, test: (el: ElementNode) => boolean): ElementNode | null {
  for (const child of root.children) {
    if (child.kind !== "element" || isDroppedIn(child, true)) continue;
    if (test(child)) return child;
    const found = findFirst(child, test);
    if (found) return found;
  }
  return null;
}

function findAll(root: ElementNode, test: (el: ElementNode) => boolean, into: ElementNode[] = []): ElementNode[] {
  for (const child of root.children) {
    if (child.kind !== "element" || isDroppedIn(child, true)) continue;
    if (test(child)) into.push(child);
    else findAll(child, test, into);
  }
  return into;
}

function renderBlocks(el: ElementNode, ctx: RenderContext): string {
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
    if (child.kind === "text") {
      inline += collapseSpaces(child.text);
      continue;
    }
    if (isDropped(child, ctx)) continue;
    if (BLOCKS.has(child.tag)) {
      pushParagraph(blocks, inline);
      inline = "";
      const block = renderBlock(child, ctx);
      if (block && block.md.trim()) blocks.push(block);
    } else {
      inline += renderInline(child, ctx);
    }
  }
  pushParagraph(blocks, inline);
  return blocks;
}

function pushParagraph(blocks: Block[], inline: string): void {
  if (!inline) return;
  const paragraph = finishInline(inline);
  if (paragraph) blocks.push({ md: paragraph, list: false });
}

function renderBlock(el: ElementNode, ctx: RenderContext): Block | null {
  const tag = el.tag;
  if (HEADINGS.has(tag)) {
    const text = finishInline(renderInlineChildren(el, ctx)).replace(/\n+/g, " ");
    return text ? { md: `${"#".repeat(Number(tag[1]))} ${text}`, list: false } : null;
  }
  switch (tag) {
    case "ul":
    case "ol":
    case "menu":
    case "dir":
      return { md: renderList(el, ctx, tag === "ol"), list: true };
    case "li":
      return { md: renderListItem(el, ctx, "-"), list: true };
    case "pre":
      return { md: renderPre(el), list: false };
    case "blockquote": {
      const inner = renderBlocks(el, ctx);
      return { md: inner.split("\n").map((line) => (line ? `> ${line}` : ">")).join("\n"), list: false };
    }
    case "table":
      return { md: renderTable(el, ctx), list: false };
    case "hr":
      return { md: "---", list: false };
    case "dt":
    case "summary": {
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
    if (child.kind === "text" && !child.text.trim()) continue;
    if (child.kind === "element" && isDropped(child, ctx)) continue;
    if (child.kind === "element" && child.tag === "li") {
      flushLoose();
      const md = renderListItem(child, ctx, ordered ? `${number++}.` : "-");
      if (md) items.push(md);
    } else if (child.kind === "element" && (child.tag === "ul" || child.tag === "ol") && items.length > 0 && !loose) {
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
  return text.split("\n").map((line) => (line ? pad + line : line)).join("\n");
}

function renderPre(el: ElementNode): string {
  let code = preText(el).replace(/\u00A0/g, " ");
  if (code.startsWith("\n")) code = code.slice(1);
  code = code.replace(/\s+$/, "");
  const language = languageOf(el) ?? languageOf(el.children.find((c): c is ElementNode => c.kind === "element" && c.tag === "code"));
  const longestRun = Math.max(0, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longestRun + 1));
  return `${fence}${language ?? ""}\n${code}\n${fence}`;
}

function preText(el: ElementNode): string {
  let out = "";
  for (const child of el.children) {
    if (child.kind === "text") out += child.text;
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
      if (child.kind !== "element" || isDropped(child, ctx)) continue;
      if (child.tag === "tr") {
        const cells = child.children.filter((c): c is ElementNode => c.kind === "element" && (c.tag === "td" || c.tag === "th"));
        if (cells.length) rows.push({ cells, head: head || cells.every((c) => c.tag === "th") });
      } else if (TABLE_SECTIONS.has(child.tag)) {
        collectRows(child, child.tag === "thead");
      }
    }
  };
  collectRows(el, false);
  const caption = el.children.find((c): c is ElementNode => c.kind === "element" && c.tag === "caption");
  const captionText = caption ? finishInline(renderInlineChildren(caption, ctx)) : "";
  if (rows.length === 0) return captionText;

  const width = Math.max(...rows.map((r) => r.cells.reduce((sum, c) => sum + span(c), 0)));
  // One column is a layout table: its cells are just content, not data.
  if (width <= 1) return joinBlocks(rows.flatMap((r) => r.cells.flatMap((c) => childBlocks(c, ctx))), "\n\n");

  const grid = rows.map((row) => {
    const cells: string[] = [];
    for (const cell of row.cells) {
      cells.push(tableCell(cell, ctx));
      for (let extra = 1; extra < span(cell); extra++) cells.push("");
    }
    while (cells.length < width) cells.push("");
    return cells;
  });
  const headerIndex = Math.max(0, rows.findIndex((r) => r.head));
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
  return joinBlocks(childBlocks(cell, ctx), " ")
    .replace(/\n+/g, " ")
    .replace(/\|/g, "\\|")
    .trim();
}

// ---------------------------------------------------------------------------------------------
// Inline content

function renderInlineChildren(el: ElementNode, ctx: RenderContext): string {
  let out = "";
  for (const child of el.children) {
    if (child.kind === "text") out += collapseSpaces(child.text);
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
      return ctx.strong ? renderInlineChildren(el, ctx) : wrap("**", renderInlineChildren(el, { ...ctx, strong: true }));
    case "em":
    case "i":
    case "cite":
    case "dfn":
      return ctx.emphasis ? renderInlineChildren(el, ctx) : wrap("*", renderInlineChildren(el, { ...ctx, emphasis: true }));
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

/** Markers hug the text; surrounding spaces move outside, or the markdown would not parse. */
function wrap(marker: string, inner: string): string {
  const match = /^(\s*)([\s\S]*?)(\s*)$/.exec(inner);
  const core = match?.[2] ?? "";
  if (!core || core === HARD_BREAK) return inner;
  return `${match?.[1] ?? ""}${marker}${core}${marker}${match?.[3] ?? ""}`;
}

function renderInlineCode(el: ElementNode): string {
  const code = collapseSpaces(preText(el)).replace(/\u00A0/g, " ").trim();
  if (!code) return "";
  const longestRun = Math.max(0, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longestRun + 1);
  const pad = code.startsWith("`") || code.endsWith("`") ? " " : "";
  return `${fence}${pad}${code}${pad}${fence}`;
}

function renderLink(el: ElementNode, ctx: RenderContext): string {
  const text = renderInlineChildren(el, { ...ctx, inLink: true });
  const href = el.attrs.get("href");
  if (ctx.inLink || !href || href.trim().startsWith("#")) return text;
  const url = absoluteUrl(href, ctx.base);
  const label = finishInline(text).replace(/\n+/g, " ").replace(/([[\]])/g, "\\$1");
  if (!url) return text;
  if (!label) return "";
  const match = /^(\s*)[\s\S]*?(\s*)$/.exec(text);
  return `${match?.[1] ? " " : ""}[${label}](${markdownUrl(url)})${match?.[2] ? " " : ""}`;
}

function renderImage(el: ElementNode, ctx: RenderContext): string {
  const alt = collapse(el.attrs.get("alt") ?? "");
  // An empty alt marks a decorative image; data: URLs would put whole files into the text.
  if (!alt) return "";
  const src = el.attrs.get("src") || el.attrs.get("data-src") || (el.attrs.get("srcset") ?? "").trim().split(/\s+/)[0] || "";
  const url = src && !/^\s*data:/i.test(src) ? absoluteUrl(src, ctx.base) : null;
  return url ? `![${alt.replace(/([[\]])/g, "\\$1")}](${markdownUrl(url)})` : alt;
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

function collapse(text: string): string {
  return text.replace(/[\s\u00A0]+/g, " ").trim();
}

/** Finish a run of inline content as one paragraph: tidy spaces, keep hard line breaks. */
function finishInline(text: string): string {
  let out = text.replace(NBSP, " ").replace(SPACE_RUN, " ");
  // One <br> is a line break; two or more in a row are how old pages separate paragraphs.
  if (out.includes(HARD_BREAK)) out = out.replace(BREAK_RUN, (m) => (m.trim().length > 1 ? "\n\n" : "\n"));
  return out.trim();
}

const NBSP = /\u00A0/g;
const SPACE_RUN = / {2,}/g;
const BREAK_RUN = new RegExp(` *(?:${HARD_BREAK} *)+`, "g");

// ---------------------------------------------------------------------------------------------
// Markdown → plain text

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
    if (/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/.test(line) && line.includes("-") && (line.includes("|") || /^\s*-{3,}\s*$/.test(line))) {
      if (/^\s*-{3,}\s*$/.test(line)) out.push("");
      continue;
    }
    if (/^\s*([*_])(\s*\1){2,}\s*$/.test(line)) {
      out.push("");
      continue;
    }
    let text = line.replace(/^(\s*>)+\s?/, "").replace(/^\s{0,3}#{1,6}\s+/, "").replace(/\s+#+\s*$/, "");
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
  return out.join("\n").replace(/\n{3,}/g, "\n\n").trim();
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
