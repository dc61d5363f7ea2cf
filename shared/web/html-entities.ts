/**
 * HTML character references: the common named set plus every numeric form. Shared by the HTML
 * converter and the adapters whose providers hand back snippets with markup in them.
 */

const LATIN1_NAMES = [
  "nbsp", "iexcl", "cent", "pound", "curren", "yen", "brvbar", "sect", "uml", "copy", "ordf", "laquo", "not", "shy", "reg", "macr",
  "deg", "plusmn", "sup2", "sup3", "acute", "micro", "para", "middot", "cedil", "sup1", "ordm", "raquo", "frac14", "frac12", "frac34", "iquest",
  "Agrave", "Aacute", "Acirc", "Atilde", "Auml", "Aring", "AElig", "Ccedil", "Egrave", "Eacute", "Ecirc", "Euml", "Igrave", "Iacute", "Icirc", "Iuml",
  "ETH", "Ntilde", "Ograve", "Oacute", "Ocirc", "Otilde", "Ouml", "times", "Oslash", "Ugrave", "Uacute", "Ucirc", "Uuml", "Yacute", "THORN", "szlig",
  "agrave", "aacute", "acirc", "atilde", "auml", "aring", "aelig", "ccedil", "egrave", "eacute", "ecirc", "euml", "igrave", "iacute", "icirc", "iuml",
  "eth", "ntilde", "ograve", "oacute", "ocirc", "otilde", "ouml", "divide", "oslash", "ugrave", "uacute", "ucirc", "uuml", "yacute", "thorn", "yuml",
];

const OTHER_NAMES: Record<string, number> = {
  amp: 38, lt: 60, gt: 62, quot: 34, apos: 39,
  OElig: 0x152, oelig: 0x153, Scaron: 0x160, scaron: 0x161, Yuml: 0x178, fnof: 0x192, circ: 0x2c6, tilde: 0x2dc,
  ensp: 0x2002, emsp: 0x2003, thinsp: 0x2009, zwnj: 0x200c, zwj: 0x200d, lrm: 0x200e, rlm: 0x200f,
  ndash: 0x2013, mdash: 0x2014, lsquo: 0x2018, rsquo: 0x2019, sbquo: 0x201a, ldquo: 0x201c, rdquo: 0x201d, bdquo: 0x201e,
  dagger: 0x2020, Dagger: 0x2021, bull: 0x2022, hellip: 0x2026, permil: 0x2030, prime: 0x2032, Prime: 0x2033,
  lsaquo: 0x2039, rsaquo: 0x203a, oline: 0x203e, frasl: 0x2044, euro: 0x20ac, trade: 0x2122,
  larr: 0x2190, uarr: 0x2191, rarr: 0x2192, darr: 0x2193, harr: 0x2194, lArr: 0x21d0, uArr: 0x21d1, rArr: 0x21d2, dArr: 0x21d3, hArr: 0x21d4,
  minus: 0x2212, lowast: 0x2217, radic: 0x221a, infin: 0x221e, ne: 0x2260, equiv: 0x2261, le: 0x2264, ge: 0x2265, asymp: 0x2248,
  sum: 0x2211, prod: 0x220f, part: 0x2202, nabla: 0x2207, isin: 0x2208, sdot: 0x22c5, loz: 0x25ca, check: 0x2713,
  alpha: 0x3b1, beta: 0x3b2, gamma: 0x3b3, delta: 0x3b4, epsilon: 0x3b5, theta: 0x3b8, lambda: 0x3bb, mu: 0x3bc, pi: 0x3c0, sigma: 0x3c3, tau: 0x3c4, phi: 0x3c6, omega: 0x3c9,
  Delta: 0x394, Sigma: 0x3a3, Omega: 0x3a9, Pi: 0x3a0,
};

const NAMED: Map<string, string> = (() => {
  const map = new Map<string, string>();
  LATIN1_NAMES.forEach((name, i) => map.set(name, String.fromCodePoint(160 + i)));
  for (const [name, code] of Object.entries(OTHER_NAMES)) map.set(name, String.fromCodePoint(code));
  return map;
})();

/** Names browsers still accept without the closing semicolon, as old pages rely on that. */
const LEGACY_NO_SEMICOLON = new Set(["amp", "lt", "gt", "quot", "nbsp", "copy", "reg"]);

/** The HTML spec reads numeric references 0x80–0x9F as windows-1252, as pages written on Windows meant. */
export const WINDOWS_1252_C1: Readonly<Record<number, number>> = {
  0x80: 0x20ac, 0x82: 0x201a, 0x83: 0x192, 0x84: 0x201e, 0x85: 0x2026, 0x86: 0x2020, 0x87: 0x2021, 0x88: 0x2c6, 0x89: 0x2030,
  0x8a: 0x160, 0x8b: 0x2039, 0x8c: 0x152, 0x8e: 0x17d, 0x91: 0x2018, 0x92: 0x2019, 0x93: 0x201c, 0x94: 0x201d, 0x95: 0x2022,
  0x96: 0x2013, 0x97: 0x2014, 0x98: 0x2dc, 0x99: 0x2122, 0x9a: 0x161, 0x9b: 0x203a, 0x9c: 0x153, 0x9e: 0x17e, 0x9f: 0x178,
};

const REFERENCE = /&(?:#[xX]([0-9a-fA-F]{1,8});?|#([0-9]{1,9});?|([A-Za-z][A-Za-z0-9]{1,31});?)/g;

/**
 * Decode character references in text. Unknown names are left as written.
 *
 * @example decodeHtmlEntities("caf&eacute; &amp; &#x1F600;") // "café & 😀"
 */
export function decodeHtmlEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(REFERENCE, (whole: string, hex?: string, dec?: string, name?: string) => {
    if (hex !== undefined || dec !== undefined) return fromCodePoint(hex !== undefined ? parseInt(hex, 16) : parseInt(dec!, 10));
    const hasSemicolon = whole.endsWith(";");
    const decoded = NAMED.get(name!);
    if (decoded !== undefined && (hasSemicolon || LEGACY_NO_SEMICOLON.has(name!))) return decoded;
    return whole;
  });
}

function fromCodePoint(code: number): string {
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return "\uFFFD";
  return String.fromCodePoint(WINDOWS_1252_C1[code] ?? code);
}

/** Strip tags and decode references: a provider snippet with `<strong>` highlights becomes plain text. */
export function htmlSnippetToText(snippet: string): string {
  return decodeHtmlEntities(snippet.replace(/<[^>]*>/g, "")).replace(/\s+/g, " ").trim();
}
