/**
 * Main-content selection: which elements are never content (scripts, navigation, hidden helpers,
 * small forms), which are chrome only outside the main content (site header, footer, sidebars,
 * asides), where the main content is (<main>, the dominant <article>, else the container that
 * holds the page's prose, through a page-level form and layout tables), and which short lines are
 * chrome on a page that marks none of that up.
 */
import type { ElementNode } from "./parse";

/**
 * Never content: code, styling, widgets, embedded documents and site navigation. A <form> is not
 * here: it is a control region or the page itself (see settleForms).
 */
export const DROPPED = new Set([
  "script",
  "style",
  "noscript",
  "template",
  "svg",
  "math",
  "nav",
  "iframe",
  "object",
  "embed",
  "canvas",
  "button",
  "select",
  "input",
  "textarea",
  "dialog",
  "head",
  "link",
  "meta",
  "base",
  "audio",
  "video",
  "map",
  "frameset",
  "noembed",
  "noframes",
]);
/** Site chrome when outside the main content; an article's own header, footer or aside is kept. */
const CHROME = new Set(["header", "footer", "aside"]);
const CHROME_ROLES = new Set(["banner", "contentinfo"]);
const DROPPED_ROLES = new Set([
  "navigation",
  "complementary",
  "search",
  "dialog",
  "alertdialog",
  "menu",
  "menubar",
  "toolbar",
]);
/** Class or id tokens that name navigation or hidden helpers on most sites. */
const NOISE_TOKENS = new Set([
  "navbar",
  "nav",
  "navigation",
  "menu",
  "breadcrumb",
  "breadcrumbs",
  "skip-link",
  "skip-to-content",
  "tagline",
  "cookie-banner",
  "cookie-consent",
  "sr-only",
  "visually-hidden",
  "screen-reader-text",
]);
/**
 * Parts of class tokens (`share-tools`, `related_stories`, `comments-section`), never of ids (ids are
 * section slugs on docs sites: a chapter may well be `#comments`): sharing widgets, related and
 * recommended links, reader comments, newsletter sign-ups, promotions.
 */
const NOISE_CLASS_PARTS = new Set([
  "share",
  "sharing",
  "social",
  "related",
  "comments",
  "newsletter",
  "promo",
  "advert",
  "ads",
  "suggested",
  "recommendations",
  "recommended",
]);
/** Whole class tokens: rustdoc's version and source links beside each signature. */
const NOISE_CLASSES = new Set(["rightside", "since"]);
/** Class or id tokens of a page's header and footer drawn with plain <div>s (YUI grids call them hd and ft). */
const CHROME_TOKENS = new Set([
  "header",
  "footer",
  "page-header",
  "page-footer",
  "site-header",
  "site-footer",
  "masthead",
  "hd",
  "ft",
]);
/** Class or id tokens for a box beside the text: site chrome outside the content, a TIP or note box inside it. */
const SIDEBAR_TOKENS = new Set(["sidebar", "side-bar"]);

export enum DropClass {
  Keep,
  Always,
  /** Dropped outside the main content only. */
  Chrome,
}

export function isDroppedIn(el: ElementNode, inContent: boolean): boolean {
  if (el.drop < 0) el.drop = dropClass(el);
  return el.drop === DropClass.Always || (el.drop === DropClass.Chrome && !inContent);
}

function dropClass(el: ElementNode): DropClass {
  if (DROPPED.has(el.tag)) return DropClass.Always;
  const attrs = el.attrs;
  if (attrs.size === 0)
    return el.tag === "aside" ? boxBesideText(el) : CHROME.has(el.tag) ? DropClass.Chrome : DropClass.Keep;
  if (attrs.has("hidden") || attrs.get("aria-hidden") === "true") return DropClass.Always;
  const role = (attrs.get("role") ?? "").toLowerCase();
  if (DROPPED_ROLES.has(role)) return DropClass.Always;
  const style = attrs.get("style");
  if (style && /display\s*:\s*none|visibility\s*:\s*hidden/i.test(style)) return DropClass.Always;
  let sidebar = false;
  let chrome = CHROME.has(el.tag) || CHROME_ROLES.has(role);
  const classes = attrs.get("class");
  if (classes) {
    for (const token of classes.toLowerCase().split(/\s+/)) {
      if (NOISE_TOKENS.has(token) || NOISE_CLASSES.has(token) || isNoiseClass(token)) return DropClass.Always;
      if (token === "src" && el.tag === "a") return DropClass.Always;
      if (SIDEBAR_TOKENS.has(token)) sidebar = true;
      if (CHROME_TOKENS.has(token)) chrome = true;
    }
  }
  const id = attrs.get("id")?.toLowerCase();
  if (id && NOISE_TOKENS.has(id)) return DropClass.Always;
  if (id && SIDEBAR_TOKENS.has(id)) sidebar = true;
  if (id && CHROME_TOKENS.has(id)) chrome = true;
  if (sidebar || el.tag === "aside") return boxBesideText(el);
  return chrome ? DropClass.Chrome : DropClass.Keep;
}

function isNoiseClass(token: string): boolean {
  if (!/[-_]/.test(token)) return NOISE_CLASS_PARTS.has(token);
  for (const part of token.split(/[-_]+/)) if (NOISE_CLASS_PARTS.has(part)) return true;
  return false;
}

/** A box beside the text is content (a footnote, a TIP) unless it is mostly links or a form (a menu, "related", a sign-up). */
function boxBesideText(el: ElementNode): DropClass {
  const text = { all: 0, linked: 0 };
  measureText(el, false, text);
  return text.all === 0 || text.linked > text.all * 0.5 ? DropClass.Always : DropClass.Chrome;
}

// ---------------------------------------------------------------------------------------------
// Where the main content is

export interface MainContent {
  el: ElementNode;
  /** Headers, footers and asides inside belong to the content. */
  inContent: boolean;
  /** Nothing marks the content up: short chrome lines (breadcrumbs, copyright) are dropped too. */
  unmarked: boolean;
}

/**
 * The page's main content: its <main> (or role=main), else its one dominant <article>, else the
 * container holding nearly all the page's prose (at least 90 % of the text outside links, and its
 * title heading), else the whole page.
 */
export function mainContent(root: ElementNode): MainContent {
  settleForms(root);
  const main = findFirst(root, (el) => el.tag === "main" || el.attrs.get("role") === "main");
  if (main && contentWeight(main) > 0) {
    // A story inside <main> with related links and comments around it: the story is the content.
    const story = dominantArticle(findAll(main, (el) => el.tag === "article"));
    const el = story && contentWeight(story) >= contentWeight(main) * 0.5 ? story : main;
    return { el, inContent: true, unmarked: false };
  }
  const article = dominantArticle(findAll(root, (el) => el.tag === "article"));
  if (article) return { el: article, inContent: true, unmarked: false };
  const container = proseContainer(root);
  return { el: container, inContent: container !== root, unmarked: true };
}

/**
 * A <form> holding at least this share of the page's prose is the page itself (ASP.NET WebForms
 * and its kin wrap everything from header to footer in one form); a smaller one is a control
 * region: a search box, a login, a newsletter sign-up.
 */
const PAGE_FORM_SHARE = 0.5;

/**
 * Decide every form once, before selection weighs anything: a page-level form is a plain
 * container, any other form (and so everything in it) is dropped. Its inputs are dropped either
 * way, and their values (a `__VIEWSTATE`) are never even kept by the parser.
 */
function settleForms(root: ElementNode): void {
  // Weighed only once a form is met: most pages have none, and a lookup for <main> weighs less.
  let total = -1;
  let dropped = false;
  const visit = (el: ElementNode) => {
    for (const child of el.children) {
      if (typeof child === "string" || isDroppedIn(child, true)) continue;
      if (child.tag === "form") {
        if (total < 0) total = contentWeight(root);
        if (contentWeight(child) < total * PAGE_FORM_SHARE) {
          child.drop = DropClass.Always;
          dropped = true;
          continue;
        }
      }
      visit(child);
    }
  };
  visit(root);
  // The weights were taken with every form counted as prose: weigh again without the dropped ones.
  if (dropped) forgetWeights(root);
}

function forgetWeights(el: ElementNode): void {
  el.weight = -1;
  for (const child of el.children) if (typeof child !== "string") forgetWeights(child);
}

/** One article, or one holding at least twice the text of any other (a story above its comments). */
function dominantArticle(articles: ElementNode[]): ElementNode | null {
  if (articles.length === 1) return contentWeight(articles[0]!) > 0 ? articles[0]! : null;
  const weights = articles.map(contentWeight).sort((a, b) => b - a);
  if (weights.length < 2 || weights[0]! === 0 || weights[0]! < 2 * weights[1]!) return null;
  return articles.find((article) => contentWeight(article) === weights[0])!;
}

/**
 * Containers the descent may enter; it never splits a paragraph, list, data table or code block.
 * A layout table's rows are entered on the way to the cell that holds the text.
 */
const CONTAINERS = new Set([
  "div",
  "section",
  "center",
  "span",
  "td",
  "font",
  "article",
  "main",
  "body",
  "html",
  "form",
]);
const LAYOUT_TABLE_PARTS = new Set(["tbody", "thead", "tfoot", "tr"]);
const PROSE_SHARE = 0.9;

function proseContainer(root: ElementNode): ElementNode {
  let node = root;
  for (;;) {
    const total = contentWeight(node);
    if (total === 0) return node;
    let best: ElementNode | null = null;
    let bestWeight = 0;
    for (const child of node.children) {
      if (typeof child === "string" || isDroppedIn(child, false)) continue;
      const weight = contentWeight(child);
      if (weight > bestWeight) {
        best = child;
        bestWeight = weight;
      }
    }
    if (!best || !mayEnter(node, best) || bestWeight < total * PROSE_SHARE) return node;
    // The page's title heading sits beside the body text: keep both.
    if (titleHeading(node) && !titleHeading(best)) return node;
    node = best;
  }
}

function mayEnter(parent: ElementNode, child: ElementNode): boolean {
  if (CONTAINERS.has(child.tag)) return true;
  if (child.tag === "table") return isLayoutTable(child);
  // Only a layout table is ever entered, so its sections and rows are layout too.
  return LAYOUT_TABLE_PARTS.has(child.tag) && (parent.tag === "table" || LAYOUT_TABLE_PARTS.has(parent.tag));
}

/**
 * A table used to lay the page out (WebForms and older sites: header row, menu cell, content
 * cell) rather than to hold data: marked presentational, or with no header cells or caption and
 * a cell holding a heading or another table. Its cells are read as blocks, not a grid.
 */
export function isLayoutTable(table: ElementNode): boolean {
  const role = table.attrs.get("role")?.toLowerCase();
  if (role === "presentation" || role === "none") return true;
  let layout = false;
  const visitRows = (section: ElementNode): boolean => {
    for (const child of section.children) {
      if (typeof child === "string") continue;
      if (child.tag === "caption" || child.tag === "thead") return false;
      if (LAYOUT_TABLE_PARTS.has(child.tag) && child.tag !== "tr") {
        if (!visitRows(child)) return false;
      } else if (child.tag === "tr") {
        for (const cell of child.children) {
          if (typeof cell === "string") continue;
          if (cell.tag === "th") return false;
          if (!layout && cell.tag === "td") layout = findFirst(cell, (el) => LAYOUT_SIGNS.has(el.tag)) !== null;
        }
      }
    }
    return true;
  };
  return visitRows(table) && layout;
}

/** What a data cell does not hold but a page's layout cell does. */
const LAYOUT_SIGNS = new Set(["h1", "h2", "h3", "table"]);

function titleHeading(el: ElementNode): ElementNode | null {
  return findFirst(el, (child) => child.tag === "h1" && contentWeight(child) > 0);
}

/**
 * Characters of text outside links below `el`, whitespace not counted, chrome outside the
 * content not counted: how much of the page's prose it holds. Cached on the element.
 */
function contentWeight(el: ElementNode): number {
  if (el.weight < 0) el.weight = el.tag === "a" ? 0 : weigh(el);
  return el.weight;
}

function weigh(el: ElementNode): number {
  let sum = 0;
  for (const child of el.children) {
    if (typeof child === "string") sum += visibleLength(child);
    else if (!isDroppedIn(child, false)) sum += contentWeight(child);
  }
  return sum;
}

/** All visible text below `el`, and how much of it is link text. */
function measureText(el: ElementNode, inLink: boolean, into: { all: number; linked: number }): void {
  for (const child of el.children) {
    if (typeof child === "string") {
      const length = visibleLength(child);
      into.all += length;
      if (inLink) into.linked += length;
    } else if (!DROPPED.has(child.tag) || (inLink && child.tag === "button")) {
      // A form's words, its buttons' too, count as links do: a sign-up box is not prose.
      measureText(child, inLink || child.tag === "a" || child.tag === "form", into);
    }
  }
}

function visibleLength(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 32) count++;
  return count;
}

export function findFirst(root: ElementNode, test: (el: ElementNode) => boolean): ElementNode | null {
  for (const child of root.children) {
    if (typeof child === "string" || isDroppedIn(child, true)) continue;
    if (test(child)) return child;
    const found = findFirst(child, test);
    if (found) return found;
  }
  return null;
}

function findAll(root: ElementNode, test: (el: ElementNode) => boolean, into: ElementNode[] = []): ElementNode[] {
  for (const child of root.children) {
    if (typeof child === "string" || isDroppedIn(child, true)) continue;
    if (test(child)) into.push(child);
    else findAll(child, test, into);
  }
  return into;
}

// ---------------------------------------------------------------------------------------------
// Chrome lines on pages that mark nothing up

const LINK = /(?<!!)\[((?:\\.|[^\]\\])*)\]\((?:[^()\s]|\([^()]*\))*\)/g;
const SEPARATORS = /[|>›»«‹<·•/\\,:;()[\]\-–—~*\s]+/g;
const COPYRIGHT = /^(?:copyright\b|©|\(c\)\s*\d{4})/i;

/**
 * A rendered paragraph or heading that is site chrome: a copyright line, or nothing but links and
 * separators ("[Home] | [Index]", a breadcrumb trail ending in the current page, "Available
 * Languages: [en] | [es]", a lone "[Download the ebook]").
 *
 * @example isChromeLine("[Apache](/) > [Docs](/docs/) > mod_ssl") // true
 */
export function isChromeLine(markdown: string): boolean {
  const line = markdown.replace(/^#{1,6} /, "");
  if (line.length > 400) return false;
  if (COPYRIGHT.test(line)) return true;
  const links = line.match(LINK)?.length ?? 0;
  if (links === 0) return false;
  const rest = line.replace(LINK, " ").replace(/^[^:\n[]{1,40}:/, " ");
  const words = rest.replace(SEPARATORS, "");
  if (words === "") return true;
  // A breadcrumb trail: links joined by arrows, then the current page as plain text.
  return links >= 2 && /[>›»/]/.test(rest) && words.length <= 40 && !/[.!?]\s*$/.test(line);
}
