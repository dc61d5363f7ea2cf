/**
 * Reading request bodies safely: size limit before parsing, content-type check, strict UTF-8,
 * JSON, and well-formed Unicode in every string, so bad input is a clear 4xx and never a crash
 * further down.
 */
import { concatBytes, discardRest, readAtMost, readerOf } from "../bytes";
import { AppError } from "./errors";

export const MiB = 1024 * 1024;

/** Body limits per route (api.md; the provider proxy: proxy.md step 1): 1 MiB by default. */
export const BODY_LIMITS = {
  default: 1 * MiB,
  vision: 34 * MiB,
  evict: 64 * MiB,
  proxy: 64 * MiB,
} as const;

const tooLarge = (limit: number) =>
  new AppError(413, "payload_too_large", `The request body is larger than ${formatBytes(limit)}; send a smaller body.`);

/**
 * What is left of a body over its limit is read and dropped (never held) up to this many more
 * bytes and this long before the 413, then cancelled. A server that answers while the client is
 * still sending makes some front proxies fail the exchange: `wrangler dev`'s proxy reads the
 * upload after the answer and restarts the Worker ("Your worker restarted mid-request").
 */
const DRAIN_BYTES = 128 * MiB;
const DRAIN_MS = 10_000;

/**
 * Reads at most `limit` bytes of the body, counting as they stream (chunked bodies have no
 * declared length); refuses with 413 as soon as the declared length or the bytes read pass it.
 * Nothing past the limit is held: the rest is dropped as it arrives (bounded), then the 413.
 * A body sent with `Content-Encoding: gzip` or `deflate` comes back inflated, `limit` applying to
 * what it inflates to as well (bodyEncoding).
 */
export async function readBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  const format = bodyEncoding(request.headers);
  const bytes = await readRawBodyBytes(request, limit);
  return format ? inflated(bytes, format, limit) : bytes;
}

/** The Content-Encodings a body is read in, by their CompressionFormat. */
const INFLATED: ReadonlyMap<string, CompressionFormat> = new Map([
  ["gzip", "gzip"],
  ["x-gzip", "gzip"],
  ["deflate", "deflate"],
]);

/**
 * The format a body's Content-Encoding needs inflating from, or null (none, or `identity`).
 * @throws AppError 415 for any other coding, or more than one
 */
function bodyEncoding(headers: Headers): CompressionFormat | null {
  const codings = (headers.get("content-encoding") ?? "")
    .toLowerCase()
    .split(",")
    .map((coding) => coding.trim())
    .filter((coding) => coding !== "" && coding !== "identity");
  if (codings.length === 0) return null;
  const format = codings.length === 1 ? INFLATED.get(codings[0]!) : undefined;
  if (format) return format;
  throw new AppError(
    415,
    "unsupported_media_type",
    `A body with Content-Encoding ${codings.join(", ").slice(0, 60)} is not read; send it uncompressed, or with gzip or deflate alone.`,
  );
}

/**
 * Deflate's largest expansion (zlib's technical notes: 1032 to 1): no slice of compressed bytes
 * inflates to more than this many times its size.
 */
const MAX_INFLATE_RATIO = 1032;

/**
 * The compressed bytes handed to the inflater at once under `limit`: at most an eighth of the limit
 * inflated (1 KiB at least, 8 KiB under 64 MiB). Each write costs a round trip through the
 * runtime, so slices are no smaller than that bound needs.
 */
const inflateSlice = (limit: number): number =>
  Math.max(1024, Math.min(64 * 1024, Math.floor(limit / 8 / MAX_INFLATE_RATIO)));

/**
 * A compressed body inflated within `limit` bytes. An inflater takes each chunk written to it
 * whole, and workerd's queues all it inflates without backpressure: one 1 MB chunk of gzip became
 * a gigabyte in memory before a byte of it was counted. So the compressed bytes go in one slice at
 * a time (inflateSlice), each small enough that all it can inflate to fits the read waiting for it,
 * and the next slice only once that read is taken: what is held is the limit and one slice's
 * worth, whatever the compression ratio. A byte stream's read (workerd) lands in one buffer this
 * function reuses; another stream's chunks (Deno's: one per slice) are kept as they come.
 * @throws AppError 413 past the limit, 400 for bytes that are not `format` data
 */
async function inflated(bytes: Uint8Array, format: CompressionFormat, limit: number): Promise<Uint8Array> {
  const inflater = new DecompressionStream(format);
  const writer = inflater.writable.getWriter();
  const { byob, reader } = readerOf(inflater.readable);
  const slice = inflateSlice(limit);
  const parts: Uint8Array[] = [];
  let produced = 0;
  // One byte more than the limit lets a read show it was passed.
  let view = new Uint8Array(byob ? Math.min(limit + 1, MAX_INFLATE_RATIO * slice) : 0);
  /** The read waiting for the inflater's output, and its result once it has one. */
  let reading!: Promise<ReadableStreamReadResult<Uint8Array>>;
  let result: ReadableStreamReadResult<Uint8Array> | null = null;
  const nextRead = () => {
    result = null;
    reading = byob
      ? byob.read(view.subarray(0, Math.min(limit + 1 - produced, view.byteLength)))
      : (reader as ReadableStreamDefaultReader<Uint8Array>).read();
    reading.then(
      (read) => (result = read),
      () => undefined,
    );
  };
  /** Keeps what a read brought; false once the stream has ended. */
  const take = (read: ReadableStreamReadResult<Uint8Array>): boolean => {
    const value = read.value;
    if (value && value.byteLength > 0) {
      produced += value.byteLength;
      if (produced > limit) throw tooLarge(limit);
      if (byob) {
        parts.push(value.slice());
        view = new Uint8Array(value.buffer as ArrayBuffer);
      } else parts.push(value);
    }
    return !read.done;
  };
  try {
    nextRead();
    for (let at = 0; at < bytes.byteLength; ) {
      const end = Math.min(bytes.byteLength, at + slice);
      await writer.ready;
      await writer.write(bytes.subarray(at, end) as Uint8Array<ArrayBuffer>);
      at = end;
      // The read has taken this slice's output (when it had any): keep it, and wait with a new one.
      if (result !== null && take(result)) nextRead();
    }
    const closing = writer.close();
    // Awaited below; a refusal on the way leaves it rejected, and that is no news.
    closing.catch(() => undefined);
    while (take(await reading)) nextRead();
    await closing;
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    if (error instanceof AppError) throw error;
    throw new AppError(400, "invalid_request", `The request body is not valid ${format} data.`);
  } finally {
    reader.releaseLock();
  }
  return concatBytes(parts);
}

async function readRawBodyBytes(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  // A declared length within the limit, with no other framing: the runtime's HTTP parser reads
  // exactly that many bytes, so the body is taken in one native read (the blockwise read below
  // was the proxy's largest share of CPU on a 70 KB request, docs/benchmarks.md). `request.body`
  // is not read first (a request without a body reads as no bytes): on Deno that getter turns a
  // body already received whole into a stream, which the read then drains chunk by chunk
  // (docs/speed.md). `get`, not `has`: Deno answers `get` of one header of the request it serves
  // with one native call, while `has` first builds the whole header list (12 µs of a hit's path
  // on a loaded machine; Deno builds it anyway, but after the response is handed over).
  if (declared !== null && /^\d{1,12}$/.test(declared) && request.headers.get("transfer-encoding") === null) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > limit) throw tooLarge(limit);
    return bytes;
  }
  if (!request.body) return new Uint8Array(0);
  try {
    return await readAtMost(request.body, limit, () => tooLarge(limit), undefined, false);
  } catch (error) {
    // readAtMost has released the stream: what is left of it is drained (bounded) before the 413.
    if (error instanceof AppError && error.code === "payload_too_large")
      await discardRest(request.body, DRAIN_BYTES, DRAIN_MS);
    throw error;
  }
}

/**
 * True when the Content-Type is `application/json` (any parameters, any case), as api.md asks:
 * another type is a 415, JSON-based ones such as `application/merge-patch+json` included (they
 * mean another operation than the one the route performs).
 */
export function isJsonContentType(header: string | null): boolean {
  if (!header) return false;
  return header.split(";")[0]!.trim().toLowerCase() === "application/json";
}

/**
 * Reads a JSON request body within `limit` bytes.
 * @throws 415 for another content type, 413 over the limit, 400 `invalid_json` for bytes that are
 * not UTF-8 or not JSON, 400 `invalid_request` for a string that is not well-formed Unicode.
 */
export async function readJsonBody(request: Request, limit: number = BODY_LIMITS.default): Promise<unknown> {
  return parseJsonText(await readJsonText(request, limit));
}

/**
 * The text of a JSON request body within `limit` bytes, before it is parsed (parseJsonText), for
 * a caller that keeps what it made of a text it has seen before.
 * @throws 415 for another content type, as readBodyBytes and decodeUtf8Body do.
 */
export async function readJsonText(request: Request, limit: number = BODY_LIMITS.default): Promise<string> {
  if (!isJsonContentType(request.headers.get("content-type"))) {
    throw new AppError(
      415,
      "unsupported_media_type",
      "Send the request body as JSON with the header Content-Type: application/json.",
    );
  }
  return decodeUtf8Body(await readBodyBytes(request, limit));
}

/**
 * The JSON value of a body within `limit` bytes, whatever its Content-Type says (the caller has
 * judged that). The bytes are dropped once decoded, so a large body is never held three times
 * (bytes, text and the parsed value) while it is parsed.
 * @throws as readBodyBytes, decodeUtf8Body and parseJsonText do.
 */
export async function readJsonValue(request: Request, limit: number): Promise<unknown> {
  let bytes: Uint8Array | undefined = await readBodyBytes(request, limit);
  const text = decodeUtf8Body(bytes);
  bytes = undefined;
  return parseJsonText(text);
}

/** Containers (objects and arrays) nested deeper than this are refused before anything walks them. */
const MAX_JSON_DEPTH = 256;

/**
 * Bodies up to this many bytes that are all ASCII are made text in JavaScript: the same text the
 * decoder makes (ASCII is UTF-8 as it is, and a byte-order mark is not ASCII), without the native
 * call, which cost a search's short body about 11 µs of its path on Deno under load.
 */
const ASCII_SHORTCUT_BYTES = 1024;

/** `bytes` as text when every byte is ASCII, else null. */
function asciiText(bytes: Uint8Array): string | null {
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! > 0x7f) return null;
  return String.fromCharCode.apply(null, bytes as unknown as number[]);
}

/** One decoder for every body: a whole-buffer decode (no `stream`) starts from a clean state. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The body's text, strictly UTF-8 (a leading byte-order mark dropped, as JSON allows).
 * @throws 400 `invalid_json` for bytes that are not UTF-8.
 */
export function decodeUtf8Body(bytes: Uint8Array): string {
  if (bytes.byteLength <= ASCII_SHORTCUT_BYTES) {
    const ascii = asciiText(bytes);
    if (ascii !== null) return ascii;
  }
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new AppError(400, "invalid_json", "The request body is not valid UTF-8; send UTF-8 encoded JSON.");
  }
}

/**
 * String values at least this long that hold no escape and no control character are not copied by
 * the parse: they stay slices of the text (in V8, a sliced string shares the text's characters),
 * so a body of base64 images is held once, not twice, while it is parsed and transformed.
 */
const SLICE_FROM_CHARS = 64 * 1024;

/**
 * JSON text decoded from bytes (so itself well-formed Unicode) to a value a caller may walk:
 * nesting is bounded first (on the text, so a deep body is refused before it is parsed), then
 * every string and key a `\u` escape could have made ill-formed is checked for lone surrogates.
 * `sliceFrom` is SLICE_FROM_CHARS but in tests; the value is the same as JSON.parse's either way.
 * `plain`, when given, receives each string left as a slice (checked to need no escape), for encodeJson.
 * `known`, when given, answers for a long string with a string equal to it (compared whole) that
 * was already found free of control characters (the proxy's memory's own copy of an image it has
 * seen), or undefined: the value then holds that string in place of the slice, its check is not
 * run again, and the memory finds it later in the request by identity, not by a second full
 * comparison. The value (equal strings) and the refusals are the same either way.
 * @throws 400 `invalid_json` for text that is not JSON, 400 `invalid_request` for nesting deeper
 * than MAX_JSON_DEPTH or a string that is not well-formed Unicode.
 */
export function parseJsonText(
  text: string,
  sliceFrom: number = SLICE_FROM_CHARS,
  plain?: { add(text: string): unknown },
  known?: (text: string) => string | undefined,
): unknown {
  const scan = scanJson(text, MAX_JSON_DEPTH, sliceFrom, known);
  if (scan.depth > MAX_JSON_DEPTH) {
    throw new AppError(
      400,
      "invalid_request",
      `The request body is nested more than ${MAX_JSON_DEPTH} levels deep; send JSON nested at most ${MAX_JSON_DEPTH} levels.`,
      {
        details: [{ path: [], message: `nesting deeper than ${MAX_JSON_DEPTH} levels` }],
      },
    );
  }
  // Each long string is parsed as a short placeholder (a random prefix no body can guess), then
  // put back as a slice of the text.
  const restore = scan.long.length > 0 ? placeholders(text, scan.long, scan.strings, plain) : null;
  let value: unknown;
  try {
    value = JSON.parse(restore ? restore.text : text);
  } catch (cause) {
    const detail = cause instanceof Error ? cause.message.slice(0, 120) : "parse error";
    throw new AppError(400, "invalid_json", `The request body is not valid JSON (${detail}); send a JSON object.`);
  }
  if (restore && typeof value === "string" && value.startsWith(restore.prefix)) return restore.slice(value);
  // Text decoded from UTF-8 is well-formed: a lone surrogate can only come from a \u escape.
  if (!restore && !text.includes("\\u")) return value;
  const badPath = walkStrings(value, restore);
  if (badPath) {
    throw new AppError(
      400,
      "invalid_request",
      `The string at ${badPath.join(".") || "(root)"} is not well-formed Unicode (a lone surrogate); send valid text.`,
      {
        details: [{ path: badPath, message: "lone surrogate" }],
      },
    );
  }
  return value;
}

/**
 * One linear pass over JSON text, counting `[` and `{` outside strings (it stops as soon as `limit`
 * is passed) and listing the string values of at least `sliceFrom` characters with no escape and
 * no control character, as [start, end) pairs of their contents and, in `strings`, each one's
 * string (a slice of the text, or what `known` gave for it). Malformed text gets some answer:
 * JSON.parse judges it. The runtime's own searches (a string's closing quote, the next backslash,
 * the next bracket) do the walking: a body of base64 images is a few strings of megabytes, which a
 * loop over each character in JavaScript took tens of milliseconds to cross (docs/benchmarks.md).
 * @example scanJson('{"a":[1,{"b":"[["}]}', 256, 1e9) // { depth: 3, long: [], strings: [] }
 */
function scanJson(
  text: string,
  limit: number,
  sliceFrom: number,
  known?: (text: string) => string | undefined,
): { depth: number; long: number[]; strings: string[] } {
  let depth = 0;
  let deepest = 0;
  const long: number[] = [];
  const strings: string[] = [];
  // The first backslash at or after the last place looked from (-1: none left in the text).
  let backslash = -2;
  const structure = /["[\]{}]/g;
  for (let i = 0; ; i++) {
    structure.lastIndex = i;
    const found = structure.exec(text);
    if (found === null) break;
    i = found.index;
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      const start = i + 1;
      let plain = true;
      for (let from = start; ; ) {
        const quote = text.indexOf('"', from);
        if (quote < 0) return { depth: deepest, long, strings };
        if (backslash !== -1 && backslash < from) backslash = text.indexOf("\\", from);
        if (backslash !== -1 && backslash < quote) {
          plain = false;
          from = backslash + 2; // the escaped character is skipped, a quote too
          continue;
        }
        i = quote;
        break;
      }
      if (plain && i - start >= sliceFrom && !followedByColon(text, i + 1)) {
        const contents = text.slice(start, i);
        const twin = known?.(contents);
        if (twin !== undefined || !hasControlCharacter(contents)) {
          long.push(start, i);
          strings.push(twin ?? contents);
        }
      }
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > deepest && (deepest = depth) > limit) return { depth: deepest, long, strings };
    } else depth--;
  }
  return { depth: deepest, long, strings };
}

const CONTROL_CHARACTERS = Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code));

/**
 * Whether `text` holds a control character (which JSON writes escaped, and JSON.parse refuses
 * unescaped in a string): one native search per character, several times faster on a long base64
 * string than one regular expression over it.
 */
export const hasControlCharacter = (text: string) => CONTROL_CHARACTERS.some((character) => text.includes(character));

/** Whether the next character after JSON whitespace is `:` (the string before was a key). */
function followedByColon(text: string, from: number): boolean {
  let i = from;
  for (let c = text.charCodeAt(i); c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d; c = text.charCodeAt(++i));
  return text.charCodeAt(i) === 0x3a;
}

interface Restore {
  /** The text with each long string's contents replaced by `\u0000<nonce>:<index>`. */
  text: string;
  /** What every placeholder starts with once parsed. */
  prefix: string;
  /** The string a parsed placeholder stands for (scanJson's `strings`). */
  slice(placeholder: string): string;
}

function placeholders(
  text: string,
  long: readonly number[],
  strings: readonly string[],
  plain?: { add(text: string): unknown },
): Restore {
  const nonce = crypto.randomUUID();
  const pieces: string[] = [];
  let from = 0;
  for (let k = 0; k < long.length; k += 2) {
    pieces.push(text.slice(from, long[k]), `\\u0000${nonce}:${k}`);
    from = long[k + 1]!;
  }
  pieces.push(text.slice(from));
  const prefix = `\u0000${nonce}:`;
  return {
    text: pieces.join(""),
    prefix,
    slice: (placeholder) => {
      const string = strings[Number(placeholder.slice(prefix.length)) / 2]!;
      plain?.add(string);
      return string;
    },
  };
}

/**
 * Puts each placeholder back (`restore`) and finds the path of the first string (value or key)
 * with a lone surrogate, or null. Iterative (an explicit stack), so no input can exhaust the call
 * stack; paths are built only for the one that is bad.
 */
function walkStrings(root: unknown, restore: Restore | null): (string | number)[] | null {
  interface Frame {
    value: unknown;
    parent: Frame | null;
    step: string | number | null;
  }
  const pathOf = (frame: Frame | null, last?: string | number): (string | number)[] => {
    const path: (string | number)[] = last === undefined ? [] : [last];
    for (let f = frame; f && f.step !== null; f = f.parent) path.push(f.step);
    return path.reverse();
  };
  const stack: Frame[] = [{ value: root, parent: null, step: null }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { value } = frame;
    if (typeof value === "string") {
      if (restore && frame.parent && value.startsWith(restore.prefix)) {
        // A slice of the text (or a string equal to one), which is well-formed: nothing to check.
        (frame.parent.value as Record<string | number, unknown>)[frame.step!] = restore.slice(value);
      } else if (!value.isWellFormed()) return pathOf(frame);
    } else if (Array.isArray(value)) {
      // Pushed in reverse so the first bad string in document order is the one reported.
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], parent: frame, step: i });
    } else if (value !== null && typeof value === "object") {
      const entries = Object.entries(value);
      for (const [key] of entries) if (!key.isWellFormed()) return pathOf(frame, key.toWellFormed());
      for (let i = entries.length - 1; i >= 0; i--)
        stack.push({ value: entries[i]![1], parent: frame, step: entries[i]![0] });
    }
  }
  return null;
}

/**
 * `JSON.stringify(value)` as UTF-8 bytes, built without the runtime's serializer crossing the long
 * strings: each string of at least `sliceFrom` characters that JSON writes as it is, in ASCII (no
 * `"`, `\\`, control or non-ASCII character: a base64 image), is held out as a short placeholder
 * and copied into the bytes once. Serializing the text and encoding it each cross every character
 * of every image, which on a body of screenshots was the largest share of a proxied request
 * (docs/benchmarks.md, "A computer-use session"). A string in `plain` (parseJsonText's slices)
 * is known to need no escape and is not checked again.
 */
export function encodeJson(
  value: unknown,
  sliceFrom: number = SLICE_FROM_CHARS,
  plain?: { has(text: string): boolean },
): Uint8Array {
  const held: string[] = [];
  const nonce = crypto.randomUUID();
  const marker = `\u0000${nonce}`;
  const text = JSON.stringify(value, (_key, field: unknown) => {
    if (typeof field !== "string" || field.length < sliceFrom || !(plain?.has(field) || writtenAsIs(field)))
      return field;
    held.push(field);
    return marker;
  });
  const encoder = new TextEncoder();
  if (held.length === 0) return encoder.encode(text);
  // The placeholder as written (a NUL is escaped); no caller's text holds the random nonce.
  const pieces = text.split(`"\\u0000${nonce}"`).map((piece) => encoder.encode(piece));
  let length = 0;
  for (const piece of pieces) length += piece.byteLength;
  for (const string of held) length += string.length + 2;
  const out = new Uint8Array(length);
  let at = 0;
  for (const [k, piece] of pieces.entries()) {
    out.set(piece, at);
    at += piece.byteLength;
    const string = held[k];
    if (string === undefined) break;
    out[at++] = 0x22;
    // A character outside ASCII takes more than its byte: the text is then encoded the plain way.
    if (encoder.encodeInto(string, out.subarray(at, at + string.length)).read !== string.length)
      return encoder.encode(JSON.stringify(value));
    at += string.length;
    out[at++] = 0x22;
  }
  return out;
}

/** Whether JSON writes `text` as it is: no `"`, backslash or control character (lone surrogates aside, which encodeJson's ASCII check catches). */
const writtenAsIs = (text: string) => !text.includes('"') && !text.includes("\\") && !hasControlCharacter(text);

export function formatBytes(bytes: number): string {
  return bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`;
}
