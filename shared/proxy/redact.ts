/**
 * Takes the operator's key out of an answer before a caller sees it (docs/proxy.md, "Credentials"):
 * the exact key and its masked forms (a prefix of the key, a run of `*`, `x`, `.`, `…` or `•`, and
 * its last 4 characters), each character also as a JSON `\u` escape or percent-encoded, and the
 * key in base64 (standard or url-safe, wherever it starts in the encoded bytes: `Basic …`, a
 * token's payload). Bodies are scrubbed as they stream, in one linear pass over bytes that are
 * never decoded as UTF-8 (a binary answer passes byte for byte), holding back only a tail that
 * could still begin a key (an event's closing newline never can, so a server-sent event is never held).
 */

const REPLACEMENT = "[redacted]";

/** Characters a masker puts between a key's prefix and its last 4. */
const MASK_CHARACTERS = ["*", "x", "X", ".", "…", "•"];

/**
 * One byte, one character: `windows-1252` decodes every byte to one UTF-16 unit (the Encoding
 * standard), so a match's index is its byte offset. Without it (never seen), a manual latin-1 read.
 */
const singleByte: { decode(bytes: Uint8Array): string } = (() => {
  try {
    const decoder = new TextDecoder("windows-1252");
    if (decoder.decode(new Uint8Array([0x41, 0xe2, 0x80, 0xa6])).length === 4) return decoder;
  } catch {
    // Not offered by this runtime: the loop below.
  }
  return {
    decode(bytes: Uint8Array): string {
      let text = "";
      for (let i = 0; i < bytes.length; i += 0x2000)
        text += String.fromCharCode(...bytes.subarray(i, Math.min(bytes.length, i + 0x2000)));
      return text;
    },
  };
})();

/** The character this module reads for one byte (windows-1252 moves 0x80–0x9F; the rest are latin-1). */
const SINGLE_BYTE_CODES = singleByte.decode(Uint8Array.from({ length: 256 }, (_, i) => i));

const latin1 = (bytes: Uint8Array) => String.fromCharCode(...bytes);
const escapeRegExp = (text: string) => text.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&");

/** Hex digits as a pattern, either case. */
const hexPattern = (hex: string) =>
  [...hex].map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit)).join("");

/** `\uXXXX` of an ASCII or BMP character, either case of hex digit. */
const jsonEscape = (char: string) => `\\\\u${hexPattern(char.charCodeAt(0).toString(16).padStart(4, "0"))}`;

/** `%XX` of each of the character's UTF-8 bytes, either case of hex digit (a URL's spelling). */
const percentEscape = (utf8: Uint8Array) =>
  [...utf8].map((byte) => `%${hexPattern(byte.toString(16).padStart(2, "0"))}`).join("");

/**
 * The spellings of one character the scrubber meets: itself (a header decoded as UTF-8), its UTF-8
 * bytes as this module reads them and as latin-1 (a header value), its JSON escape and its percent
 * encoding.
 */
function spellings(char: string): string {
  const utf8 = new TextEncoder().encode(char);
  const forms = new Set([char, singleByte.decode(utf8), latin1(utf8)]);
  return `(?:${[...forms].map(escapeRegExp).join("|")}|${jsonEscape(char)}|${percentEscape(utf8)})`;
}

/**
 * The key's base64 as it reads wherever it starts in the encoded bytes (after 0, 1 or 2 other
 * bytes): only the characters made of the key's bits alone, the ones at either end also hold a
 * neighbour's. Standard base64 (`base64Spelling` lets each `+` and `/` also be url-safe or escaped).
 */
function base64Cores(key: string): string[] {
  const bytes = latin1(new TextEncoder().encode(key));
  return [0, 1, 2].map((offset) => {
    const encoded = btoa(`${"\0".repeat(offset)}${bytes}\0\0`);
    return encoded.slice(Math.ceil((4 * offset) / 3), Math.floor((4 * (offset + bytes.length)) / 3));
  });
}

/** A base64 character as a pattern: `+` is also url-safe `-` or `%2B`, `/` also `_`, `\/` (JSON) or `%2F`. */
const base64Spelling = (char: string) =>
  char === "+" ? "(?:\\+|-|%2[bB])" : char === "/" ? "(?:/|_|\\\\/|%2[fF])" : char;

/** Longest run of one spelling looked for in each base64 core (see `matchFilter`). */
const BASE64_ANCHOR = 16;

/**
 * A run of characters that every match of each base64 core holds whatever its spelling (no `+` or
 * `/`), all of one length: the first of up to `BASE64_ANCHOR` in each. None when a core has no run
 * of 2 (never seen): the filter then reads every chunk.
 */
function base64Anchors(cores: string[]): Uint8Array[] | null {
  const runs = cores.map((core) => core.match(/[A-Za-z0-9]+/g)?.reduce((a, b) => (b.length > a.length ? b : a)) ?? "");
  const length = Math.min(BASE64_ANCHOR, ...runs.map((run) => run.length));
  if (length < 2) return null;
  return runs.map((run) => new TextEncoder().encode(run.slice(0, length)));
}

/**
 * The key as a pattern: exactly (each character possibly escaped), or masked: a prefix of at least
 * 2 of its characters, a run of mask characters, its last 4; or one of its base64 `cores`. The
 * prefix is nested optional groups, so a match attempt costs at most the key's length wherever it
 * starts: linear in the answer.
 */
function keyPattern(key: string, cores: string[]): RegExp {
  const chars = [...key].map(spellings);
  const exact = chars.join("");
  let prefix = "";
  for (let i = chars.length - 5; i >= 2; i--) prefix = `(?:${chars[i]}${prefix})?`;
  const run = `(?:${MASK_CHARACTERS.map(spellings).join("|")})+`;
  const masked = `${chars[0]}${chars[1]}${prefix}${run}${chars.slice(-4).join("")}`;
  const base64 = cores.map((core) => [...core].map(base64Spelling).join(""));
  return new RegExp([exact, masked, ...base64].join("|"), "g");
}

export interface BodyScrubber {
  /** The bytes of `chunk` (after what was held back) that can be sent now, scrubbed. */
  push(chunk: Uint8Array): Uint8Array;
  /** What was held back, scrubbed: the body's end. */
  end(): Uint8Array;
}

export interface KeyRedactor {
  /** A header value (or any text) without the key. */
  text(value: string): string;
  /** A scrubber for one body. */
  body(): BodyScrubber;
  /** The body of a response scrubbed as it streams. */
  stream(): TransformStream<Uint8Array, Uint8Array>;
}

const redactors = new Map<string, KeyRedactor>();

/**
 * The redactor of `key` (kept per key: an isolate has at most one operator key per provider).
 * @example keyRedactor("sk-ant-api03-…").text("key sk-ant-***abcd") // "key [redacted]"
 */
export function keyRedactor(key: string): KeyRedactor {
  let redactor = redactors.get(key);
  if (!redactor) {
    if (redactors.size > 8) redactors.clear();
    redactor = buildRedactor(key);
    redactors.set(key, redactor);
  }
  return redactor;
}

/**
 * Whether `bytes` may hold a match, without decoding them (nearly every chunk of nearly every
 * answer holds none and passes untouched). Every match holds a `\u` escape, or ends with the key's
 * last 4 bytes or one of them as a `%XX` escape, or holds one of the base64 `anchors`. The last 4
 * are looked for 4 bytes at a time (a byte that is none of them cannot be inside them), the
 * anchors (n bytes) n - 1 at a time by the pair of bytes there (an anchor covers n - 1 pairs, so
 * one sits on the stride): an answer of key-like characters (base64) costs a fraction of its
 * length in table reads, not a search at each byte a key holds.
 */
function matchFilter(tail: Uint8Array, anchors: Uint8Array[] | null): (bytes: Uint8Array) => boolean {
  if (anchors === null) return () => true;
  const [t0, t1, t2, t3] = tail as unknown as [number, number, number, number];
  const hex = new Int8Array(256).fill(-1);
  for (let digit = 0; digit < 16; digit++) {
    hex[digit.toString(16).charCodeAt(0)] = digit;
    hex[digit.toString(16).toUpperCase().charCodeAt(0)] = digit;
  }
  const length = anchors[0]!.length;
  const pairs = new Uint8Array(65536);
  for (const anchor of anchors) for (let i = 0; i + 1 < length; i++) pairs[(anchor[i]! << 8) | anchor[i + 1]!] = 1;
  const anchorAt = (bytes: Uint8Array, start: number) =>
    anchors.some((anchor) => {
      for (let i = 0; i < length; i++) if (bytes[start + i] !== anchor[i]) return false;
      return true;
    });
  const tailByte = new Uint8Array(256);
  for (const byte of tail) tailByte[byte] = 1;
  // The bytes a match's last 4 are made of: the tail's own, and `%` with the hex digits of a tail byte.
  const inEnd = tailByte.slice();
  inEnd[0x25] = 1;
  for (const byte of tail)
    for (const digit of byte.toString(16).padStart(2, "0")) {
      inEnd[digit.charCodeAt(0)] = 1;
      inEnd[digit.toUpperCase().charCodeAt(0)] = 1;
    }
  const tailEscapeAt = (bytes: Uint8Array, at: number) =>
    hex[bytes[at + 1] ?? 0]! >= 0 &&
    hex[bytes[at + 2] ?? 0]! >= 0 &&
    tailByte[hex[bytes[at + 1]!]! * 16 + hex[bytes[at + 2]!]!] === 1;
  return (bytes) => {
    for (let i = bytes.indexOf(0x5c); i >= 0; i = bytes.indexOf(0x5c, i + 1)) if (bytes[i + 1] === 0x75) return true;
    // A match ends with the key's last 4 characters, each as itself or `%XX`: its last 4 bytes are
    // all in `inEnd`, and are the tail itself or lie within 6 bytes after a `%XX` of a tail byte.
    // Every 4th byte is read; at one in `inEnd`, every 4 bytes around it that could end a match.
    // Without a `%` (nearly every answer), only the tail's own bytes.
    const escapes = bytes.indexOf(0x25) >= 0;
    const inLast4 = escapes ? inEnd : tailByte;
    for (let i = 3; i < bytes.length; i += 4) {
      if (inLast4[bytes[i]!] === 0) continue;
      for (let start = i - 3; start <= i; start++)
        if (bytes[start] === t0 && bytes[start + 1] === t1 && bytes[start + 2] === t2 && bytes[start + 3] === t3)
          return true;
      if (escapes)
        for (let at = i > 6 ? i - 6 : 0; at <= i + 3; at++)
          if (bytes[at] === 0x25 && tailEscapeAt(bytes, at)) return true;
    }
    for (let i = 0; i + 1 < bytes.length; i += length - 1) {
      if (pairs[(bytes[i]! << 8) | bytes[i + 1]!] === 0) continue;
      for (let start = Math.max(0, i - length + 2); start <= i; start++) if (anchorAt(bytes, start)) return true;
    }
    return false;
  };
}

function buildRedactor(key: string): KeyRedactor {
  if (key.length < 8) throw new Error("an operator key is longer than 8 characters");
  const cores = base64Cores(key);
  const pattern = keyPattern(key, cores);
  const maskBytes = new TextEncoder().encode(MASK_CHARACTERS.join(""));
  // Characters a match can hold: the key's own, a JSON or percent escape's, the masks' in every
  // spelling, base64's in both alphabets.
  const inMatch = new Set<number>();
  const note = (text: string) => {
    for (let i = 0; i < text.length; i++) inMatch.add(text.charCodeAt(i));
  };
  const byteInMatch = new Uint8Array(256);
  note(key);
  note("\\u%0123456789abcdefABCDEF");
  note("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz+/-_");
  note(singleByte.decode(maskBytes));
  for (let byte = 0; byte < 256; byte++) byteInMatch[byte] = inMatch.has(SINGLE_BYTE_CODES.charCodeAt(byte)) ? 1 : 0;
  // The longest match held back across chunks: every character escaped, a long mask run.
  const maxHeld = 8 * key.length + 1024;
  const replacement = new TextEncoder().encode(REPLACEMENT);
  const mayHold = matchFilter(new TextEncoder().encode(key).slice(-4), base64Anchors(cores));

  /** `bytes` with every match that ends by `upTo` replaced; returns the bytes up to `cut` (moved past a match that crosses it). */
  const scrub = (bytes: Uint8Array, cut: number): { out: Uint8Array; cut: number } => {
    if (!mayHold(bytes)) return { out: bytes.subarray(0, cut), cut };
    const text = singleByte.decode(bytes);
    pattern.lastIndex = 0;
    const pieces: Uint8Array[] = [];
    let from = 0;
    for (let match = pattern.exec(text); match !== null && match.index < cut; match = pattern.exec(text)) {
      pieces.push(bytes.subarray(from, match.index), replacement);
      from = match.index + match[0].length;
      if (from > cut) cut = from;
    }
    if (pieces.length === 0) return { out: bytes.subarray(0, cut), cut };
    pieces.push(bytes.subarray(from, cut));
    const out = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.byteLength, 0));
    let at = 0;
    for (const piece of pieces) {
      out.set(piece, at);
      at += piece.byteLength;
    }
    return { out, cut };
  };

  const body = (): BodyScrubber => {
    let held = new Uint8Array(0);
    return {
      push(chunk) {
        let bytes = chunk;
        if (held.byteLength > 0) {
          bytes = new Uint8Array(held.byteLength + chunk.byteLength);
          bytes.set(held);
          bytes.set(chunk, held.byteLength);
        }
        // Hold back the tail that could still begin a match: the run of characters a match can hold.
        let cut = bytes.byteLength;
        const floor = Math.max(0, bytes.byteLength - maxHeld);
        while (cut > floor && byteInMatch[bytes[cut - 1]!] === 1) cut--;
        const done = scrub(bytes, cut);
        held = bytes.slice(done.cut);
        return done.out;
      },
      end() {
        const rest = held;
        held = new Uint8Array(0);
        return scrub(rest, rest.byteLength).out;
      },
    };
  };

  return {
    text: (value) => value.replace(pattern, REPLACEMENT),
    body,
    stream() {
      const scrubber = body();
      return new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          const out = scrubber.push(chunk);
          if (out.byteLength > 0) controller.enqueue(out);
        },
        flush(controller) {
          const out = scrubber.end();
          if (out.byteLength > 0) controller.enqueue(out);
        },
      });
    },
  };
}
