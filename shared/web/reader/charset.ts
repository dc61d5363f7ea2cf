/**
 * The reader's first step: bytes to text. A byte-order mark, the Content-Type header or a
 * `<meta>` in the first 1024 bytes names the charset, as browsers read it.
 */
import { windows1252CodePoint } from "../html-entities";

/**
 * Decode a fetched HTML body: a byte-order mark wins, then the Content-Type charset, then (HTML
 * only) a `<meta charset>` / `<meta http-equiv>` in the first 1024 bytes, else UTF-8.
 *
 * @example decodeHtmlBody(bytes, response.headers.get("content-type"))
 */
export function decodeHtmlBody(bytes: Uint8Array, contentTypeHeader: string | null): string {
  // A <meta> declares the charset of HTML only: a text file may show one as its text.
  const html = !contentTypeHeader || /html/i.test(contentTypeHeader);
  const label =
    bomEncoding(bytes) ??
    usableCharset(charsetOf(contentTypeHeader ?? "")) ??
    (html ? metaCharset(bytes) : null) ??
    "utf-8";
  const text = new TextDecoder(label).decode(bytes);
  return label === "windows-1252" ? repairWindows1252(text) : text;
}

/**
 * Some runtimes (Node before 22, behind the tests) decode windows-1252 as plain Latin-1, turning
 * curly quotes and € into invisible C1 controls. A correct decoder never yields those for the
 * mapped bytes, so mapping them again is harmless where the runtime is right.
 */
function repairWindows1252(text: string): string {
  return text.replace(/[\u0080-\u009f]/g, (c) => String.fromCharCode(windows1252CodePoint(c.charCodeAt(0))));
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

/**
 * The charset a `<meta>` in the first 1024 bytes declares, read as the HTML prescan reads it:
 * comments skipped, and a `charset` attribute, or a `content` only beside
 * `http-equiv="content-type"` (a description that mentions "charset=" declares nothing).
 */
function metaCharset(bytes: Uint8Array): string | null {
  // Pages declare their charset in ASCII, so reading the prefix byte-for-byte is enough to find it.
  const head = String.fromCharCode(...bytes.subarray(0, 1024)).replace(/<!--[\s\S]*?(?:-->|$)/g, "");
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const attrs = attributesOf(tag.slice(5));
    const declared =
      attrs.get("charset") ??
      (attrs.get("http-equiv")?.trim().toLowerCase() === "content-type" ? charsetOf(attrs.get("content") ?? "") : null);
    const encoding = usableCharset(declared?.trim() ?? null);
    // A document that really were UTF-16 could not have spelled this tag in ASCII (HTML spec rule).
    if (encoding) return encoding.startsWith("utf-16") ? "utf-8" : encoding;
  }
  return null;
}

/** A tag's attributes by lower-case name (the first of a name wins), from the text after its name. */
function attributesOf(text: string): Map<string, string> {
  const attrs = new Map<string, string>();
  for (const match of text.matchAll(/([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
    const name = match[1]!.toLowerCase();
    if (!attrs.has(name)) attrs.set(name, match[2] ?? match[3] ?? match[4] ?? "");
  }
  return attrs;
}
