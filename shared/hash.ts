/** SHA-256 hex digest with Web Crypto: cache keys and Durable Object names are hashes. */
const encoder = new TextEncoder();
/** Each byte's two hex digits. */
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

export async function sha256Hex(input: string | Uint8Array<ArrayBuffer>): Promise<string> {
  const bytes = typeof input === "string" ? encoder.encode(input) : input;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  let hex = "";
  for (const byte of digest) hex += HEX[byte];
  return hex;
}

/** Longest text whose digest is remembered (a search's query and provider fit; an image does not). */
const REMEMBERED_CHARS = 4096;
/** Digests remembered per isolate (or process), the oldest dropped first. */
const REMEMBERED_DIGESTS = 1024;
const remembered = new Map<string, string>();

/**
 * sha256Hex of a short text, computed once per isolate (or process) for the texts it sees again:
 * a repeated search's cache key costs a map lookup, not a digest (on Deno an asynchronous op).
 *
 * @example await rememberedSha256Hex("tavily\nweather in vegas") // same as sha256Hex, from memory the second time
 */
export async function rememberedSha256Hex(text: string): Promise<string> {
  const known = remembered.get(text);
  if (known !== undefined) return known;
  const digest = await sha256Hex(text);
  if (text.length <= REMEMBERED_CHARS) {
    remembered.set(text, digest);
    if (remembered.size > REMEMBERED_DIGESTS) remembered.delete(remembered.keys().next().value as string);
  }
  return digest;
}
