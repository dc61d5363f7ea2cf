/**
 * HTML character references: the whole HTML5 named table and every numeric form, decoded as the
 * HTML spec does (the `entities` package keeps that table current). Shared by the reader and the
 * adapters whose providers hand back snippets with markup in them.
 */
import { DecodingMode, decodeHTML, decodeHTMLAttribute, replaceCodePoint } from "entities/decode";

/**
 * Decode character references in text, the way a browser reads them between tags: legacy names
 * such as `&amp` work without their semicolon, unknown names stay as written.
 *
 * @example decodeHtmlEntities("caf&eacute; &amp; &#x1F600; &lsqb;x&rsqb;") // "café & 😀 [x]"
 */
export function decodeHtmlEntities(text: string): string {
  return text.includes("&") ? decodeHTML(text, DecodingMode.Legacy) : text;
}

/** Decode an attribute value: a legacy name before `=` or a letter stays as written (`?a=1&copy=2`). */
export function decodeHtmlAttribute(value: string): string {
  return value.includes("&") ? decodeHTMLAttribute(value) : value;
}

/** The windows-1252 meaning of a C1 control (0x80–0x9F), as the HTML spec reads those numbers. */
export function windows1252CodePoint(code: number): number {
  return code >= 0x80 && code <= 0x9f ? replaceCodePoint(code) : code;
}

/** Strip tags and decode references: a provider snippet with `<strong>` highlights becomes plain text. */
export function htmlSnippetToText(snippet: string): string {
  return decodeHtmlEntities(snippet.replace(/<[^>]*>/g, ""))
    .replace(/\s+/g, " ")
    .trim();
}
