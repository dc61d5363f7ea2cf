/**
 * Takes the operator's key out of an answer before a caller sees it (docs/proxy.md, "Credentials"):
 * the exact key and its masked forms (a prefix of the key, a run of `*`, `x`, `.`, `…` or `•`, and
 * its last 4 characters), each character also as a JSON `\u` escape. Bodies are scrubbed as they
 * stream, in one linear pass over bytes that are never decoded as UTF-8 (a binary answer passes
 * byte for byte), holding back only a tail that could still begin a key (an event's closing
 * newline never can, so a server-sent event is never held).
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

/** `\uXXXX` of an ASCII or BMP character, either case of hex digit. */
const jsonEscape = (char: string) =>
  `\\\\u${[...char.charCodeAt(0).toString(16).padStart(4, "0")]
    .map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit))
    .join("")}`;

/**
 * The spellings of one character the scrubber meets: itself (a header decoded as UTF-8), its UTF-8
 * bytes as this module reads them and as latin-1 (a header value), and its JSON escape.
 */
function spellings(char: string): string {
  const utf8 = new TextEncoder().encode(char);
  const forms = new Set([char, singleByte.decode(utf8), latin1(utf8)]);
  return `(?:${[...forms].map(escapeRegExp).join("|")}|${jsonEscape(char)})`;
}

/**
 * The key as a pattern: exactly (each character possibly escaped), or masked: a prefix of at least
 * 2 of its characters, a run of mask characters, its last 4. The prefix is nested optional groups,
 * so a match attempt costs at most the key's length wherever it starts: linear in the answer.
 */
function keyPattern(key: string): RegExp {
  const chars = [...key].map(spellings);
  const exact = chars.join("");
  let prefix = "";
  for (let i = chars.length - 5; i >= 2; i--) prefix = `(?:${chars[i]}${prefix})?`;
  const run = `(?:${MASK_CHARACTERS.map(spellings).join("|")})+`;
  const masked = `${chars[0]}${chars[1]}${prefix}${run}${chars.slice(-4).join("")}`;
  return new RegExp(`${exact}|${masked}`, "g");
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

function buildRedactor(key: string): KeyRedactor {
  if (key.length < 8) throw new Error("an operator key is longer than 8 characters");
  const pattern = keyPattern(key);
  // Characters a match can hold: the key's own, a JSON escape's, the masks' in every spelling.
  const inMatch = new Set<number>();
  const note = (text: string) => {
    for (let i = 0; i < text.length; i++) inMatch.add(text.charCodeAt(i));
  };
  const byteInMatch = new Uint8Array(256);
  note(key);
  note("\\u0123456789abcdefABCDEF");
  for (const char of MASK_CHARACTERS) note(singleByte.decode(new TextEncoder().encode(char)));
  for (let byte = 0; byte < 256; byte++) byteInMatch[byte] = inMatch.has(SINGLE_BYTE_CODES.charCodeAt(byte)) ? 1 : 0;
  // The longest match held back across chunks: every character escaped, a long mask run.
  const maxHeld = 8 * key.length + 1024;
  const replacement = new TextEncoder().encode(REPLACEMENT);
  // Every match ends with the key's last 4 bytes, or with a `\u` escape: bytes holding neither
  // are passed without being decoded (nearly every chunk of nearly every answer). The tail is
  // looked for 4 bytes at a time (a byte that is none of its 4 cannot be inside it), so an answer
  // of key-like characters (base64) costs a quarter of its length, not a search at each `Z`.
  const [t0, t1, t2, t3] = new TextEncoder().encode(key).slice(-4) as unknown as [number, number, number, number];
  const inTail = new Uint8Array(256);
  for (const byte of [t0, t1, t2, t3]) inTail[byte] = 1;
  const mayHold = (bytes: Uint8Array): boolean => {
    for (let i = bytes.indexOf(0x5c); i >= 0; i = bytes.indexOf(0x5c, i + 1)) if (bytes[i + 1] === 0x75) return true;
    for (let i = 3; i < bytes.length; ) {
      if (inTail[bytes[i]!] === 0) {
        i += 4;
        continue;
      }
      for (let start = i - 3; start <= i; start++)
        if (bytes[start] === t0 && bytes[start + 1] === t1 && bytes[start + 2] === t2 && bytes[start + 3] === t3)
          return true;
      i++;
    }
    return false;
  };

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
