/**
 * The reader's tokenizer and tree builder: small and tolerant (no DOM, no HTMLRewriter), so the
 * same code runs on workerd and Deno. Its memory is bounded by construction: it keeps only the
 * attributes the reader looks at, never builds what is always dropped (scripts, styles, SVG, MathML,
 * templates), and stops at a node budget, so a huge page costs at most a fixed tree.
 */
import { decodeHtmlAttribute, decodeHtmlEntities } from "../html-entities";

export interface ElementNode {
  tag: string;
  attrs: Attributes;
  children: HtmlNode[];
  /** Cached answer of the reader's keep rules: computed once, asked for on every render pass. */
  drop: number;
  /** Cached amount of readable text below this element (content selection); -1 until asked. */
  weight: number;
}

/** A run of text is the string itself: no wrapper object per run. */
export type HtmlNode = ElementNode | string;

const VOID = new Set([
  "area",
  "base",
  "br",
  "col",
  "embed",
  "hr",
  "img",
  "input",
  "link",
  "meta",
  "param",
  "source",
  "track",
  "wbr",
  "keygen",
]);
/** Elements whose content is not markup; their bodies run to the matching end tag. */
const RAW_TEXT = new Set(["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript"]);
/** Never read, so never built: the parser skips to their end tag as it does for raw text. */
const SKIPPED = new Set(["svg", "math", "template"]);
const ESCAPABLE_RAW_TEXT = new Set(["textarea", "title"]);
/** Starting one of these closes an open <p>, as browsers do. */
const CLOSES_P = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "details",
  "div",
  "dl",
  "fieldset",
  "figcaption",
  "figure",
  "footer",
  "form",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "header",
  "hgroup",
  "hr",
  "main",
  "menu",
  "nav",
  "ol",
  "p",
  "pre",
  "section",
  "table",
  "ul",
]);
export const HEADINGS = new Set(["h1", "h2", "h3", "h4", "h5", "h6"]);
/** Deeper nesting is flattened: keeps rendering recursion bounded on pathological input. */
const MAX_DEPTH = 256;

/** Attributes the reader reads; the rest are never stored (a page can carry kilobytes per tag). */
const KEPT_ATTRIBUTES = new Map(
  [
    "href",
    "src",
    "data-src",
    "srcset",
    "alt",
    "class",
    "id",
    "role",
    "hidden",
    "aria-hidden",
    "style",
    "start",
    "colspan",
    "data-lang",
  ].map((name) => [name, name]),
);

/** Block-level elements: text between two of them that is only whitespace renders as nothing. */
export const BLOCK_LEVEL = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "body",
  "caption",
  "center",
  "dd",
  "details",
  "dialog",
  "dir",
  "div",
  "dl",
  "dt",
  "fieldset",
  "figcaption",
  "figure",
  "footer",
  "form",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "header",
  "hgroup",
  "hr",
  "html",
  "legend",
  "li",
  "main",
  "menu",
  "nav",
  "ol",
  "p",
  "pre",
  "search",
  "section",
  "summary",
  "table",
  "tbody",
  "td",
  "tfoot",
  "th",
  "thead",
  "tr",
  "ul",
  "#root",
]);

/**
 * Elements and text runs the tree may hold: the reader's memory bound, whatever the page (the
 * memory per input byte is measured in docs/benchmarks.md, "Peak memory per input byte"). Real
 * documentation reaches it when its text already fills MAX_MARKDOWN_CHARS.
 */
export const MAX_NODES = 200_000;

export interface ParsedDocument {
  root: ElementNode;
  title: string;
  baseHref: string | null;
  /** The node budget ran out: the tree holds the page up to `parsedChars`. */
  truncated: boolean;
  parsedChars: number;
}

export function parseHtml(html: string, maxNodes = MAX_NODES): ParsedDocument {
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
      // A growing array keeps room for 16 or more children; a closed element needs exactly its own.
      if (el.children.length > 0) el.children = el.children.slice();
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
  let nodes = 0;
  const current = () => stack[stack.length - 1]!;
  const addText = (text: string) => {
    if (!text) return;
    const children = current().children;
    const last = children[children.length - 1];
    // Indentation between blocks renders as nothing: not storing it saves a node per line of markup.
    if (
      (last === undefined || (typeof last !== "string" && BLOCK_LEVEL.has(last.tag))) &&
      isBlank(text) &&
      !isOpen("pre")
    )
      return;
    if (typeof last === "string") children[children.length - 1] = last + text;
    else {
      children.push(text);
      nodes++;
    }
  };
  const addElement = (el: ElementNode) => {
    current().children.push(el);
    nodes++;
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
    if (nodes >= maxNodes) return { root, title, baseHref, truncated: true, parsedChars: i };
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
      if (tag === "br") addElement(element("br", NO_ATTRIBUTES));
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

    if (SKIPPED.has(name)) {
      if (!VOID.has(name) && !tag.selfClosing) i = findSkippedEnd(html, name, i);
      continue;
    }
    if (RAW_TEXT.has(name)) {
      const close = findRawTextEnd(html, name, i);
      const raw = html.slice(i, close.start);
      i = close.end;
      if (name === "title") {
        if (!title) title = collapse(decodeHtmlEntities(raw));
        continue;
      }
      const el = element(name, tag.attrs);
      if (ESCAPABLE_RAW_TEXT.has(name)) el.children.push(decodeHtmlEntities(raw));
      addElement(el);
      continue;
    }

    closeImplied(name);
    const el = element(name, tag.attrs);
    addElement(el);
    // A form opened between a table and its rows stays empty, as in browsers: the rows are the table's.
    if (name === "form" && (current().tag === "tr" || TABLE_SECTION_SCOPE.has(current().tag))) continue;
    if (!VOID.has(name) && !tag.selfClosing && stack.length < MAX_DEPTH) push(el);
  }
  return { root, title, baseHref, truncated: false, parsedChars: n };
}

const END_TAG = /<\/([A-Za-z][A-Za-z0-9:-]*)/y;
const NO_STOPS: ReadonlySet<string> = new Set();
const P_SCOPE = new Set(["td", "th", "table", "caption", "button", "object", "template", "marquee"]);
const LIST_SCOPE = new Set(["ul", "ol", "menu", "table", "td", "th"]);
const DEFINITION = new Set(["dt", "dd"]);
const DL_SCOPE = new Set(["dl", "table", "td", "th"]);
const CELLS = new Set(["td", "th"]);
const ROW_SCOPE = new Set(["tr", "table"]);
export const TABLE_SECTIONS = new Set(["thead", "tbody", "tfoot"]);
const TABLE_SECTION_SCOPE = new Set(["thead", "tbody", "tfoot", "table"]);
const TABLE_SCOPE = new Set(["table"]);
const SELECT_SCOPE = new Set(["select", "datalist"]);

/**
 * An element's kept attributes as name, value pairs in one array: a few times smaller than a Map,
 * and an element keeps two or three at most.
 */
export class Attributes {
  constructor(private readonly pairs: readonly string[]) {}

  get size(): number {
    return this.pairs.length / 2;
  }

  get(name: string): string | undefined {
    for (let i = 0; i < this.pairs.length; i += 2) if (this.pairs[i] === name) return this.pairs[i + 1];
    return undefined;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }
}

/** Shared by every attribute-less element; never written to. */
export const NO_ATTRIBUTES: Attributes = new Attributes([]);

export function element(tag: string, attrs: Attributes): ElementNode {
  return { tag, attrs, children: [], drop: -1, weight: -1 };
}

interface StartTag {
  name: string;
  attrs: Attributes;
  selfClosing: boolean;
  end: number;
}

/** Reads `<name attr=value ...>` by hand: quoted values may hold `>`, and no regex can backtrack badly. */
function readStartTag(html: string, lt: number): StartTag | null {
  const n = html.length;
  let j = lt + 1;
  while (j < n && !isTagBreak(html.charCodeAt(j))) j++;
  const tagName = html.slice(lt + 1, j).toLowerCase();
  // One shared string per known tag name instead of one copy per element.
  const name = TAG_NAMES.get(tagName) ?? tagName;
  // Most tags have no attributes; they share one empty set instead of allocating their own.
  let pairs: string[] | null = null;
  while (j < n) {
    while (j < n && isSpace(html.charCodeAt(j))) j++;
    const c = html[j];
    if (c === undefined) return null;
    if (c === ">") return { name, attrs: attributesOf(pairs), selfClosing: false, end: j + 1 };
    if (c === "/") {
      if (html[j + 1] === ">") return { name, attrs: attributesOf(pairs), selfClosing: true, end: j + 2 };
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
    const kept = KEPT_ATTRIBUTES.get(attrName);
    if (kept === undefined) continue;
    pairs ??= [];
    if (!pairs.some((existing, index) => index % 2 === 0 && existing === kept))
      pairs.push(kept, decodeHtmlAttribute(value));
  }
  return null;
}

const TAG_NAMES = new Map(
  [
    ...BLOCK_LEVEL,
    ...VOID,
    ...RAW_TEXT,
    "a",
    "b",
    "i",
    "em",
    "strong",
    "code",
    "span",
    "small",
    "sup",
    "sub",
    "kbd",
    "samp",
    "tt",
    "cite",
    "dfn",
    "del",
    "s",
    "strike",
    "u",
    "mark",
    "time",
    "abbr",
    "label",
    "font",
    "bdi",
    "bdo",
    "q",
    "var",
    "ins",
    "picture",
    "option",
    "select",
    "button",
    "nav",
    "noscript",
  ].map((tag) => [tag, tag]),
);

/** Sliced to its length: a pushed-to array keeps room for 16 or more entries. */
function attributesOf(pairs: string[] | null): Attributes {
  return pairs ? new Attributes(pairs.slice()) : NO_ATTRIBUTES;
}

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (!isSpace(text.charCodeAt(i))) return false;
  return true;
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

const skippedTagCache = new Map<string, RegExp>();

/**
 * Where a skipped element (svg, math, template) ends: after the end tag that closes it, counting
 * the same elements nested inside (an <svg> in an <svg> does not end the outer one). One pass.
 */
function findSkippedEnd(html: string, tag: string, from: number): number {
  let pattern = skippedTagCache.get(tag);
  if (!pattern) {
    pattern = new RegExp(`<(/?)${tag}(?=[\\s/>])[^>]*>?`, "gi");
    skippedTagCache.set(tag, pattern);
  }
  pattern.lastIndex = from;
  let depth = 1;
  for (let match = pattern.exec(html); match; match = pattern.exec(html)) {
    if (match[1]) depth -= 1;
    else if (!match[0].endsWith("/>")) depth += 1;
    if (depth === 0) return match.index + match[0].length;
  }
  return html.length;
}

/** Collapse every whitespace run (no-break spaces included) to one space and trim. */
export function collapse(text: string): string {
  return text.replace(/[\s\u00A0]+/g, " ").trim();
}
