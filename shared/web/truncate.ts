/**
 * Cutting page content to what a caller may receive (`web.char_limit`). Applied once per answer
 * by `cutForCaller` (flight.ts): inside the single-flight owner, whose answers must stay within
 * what its RPC can carry, and by paidCall on the paths that do not go through the owner.
 */

/**
 * Cuts content over `limit` characters, keeping the head and the tail with a marker between.
 * @example truncateContent("a".repeat(30000), 15000).content.length // 15000
 */
export function truncateContent(content: string, limit: number): { content: string; truncated: boolean } {
  if (content.length <= limit) return { content, truncated: false };
  const marker = (omitted: number) => `\n\n[... ${omitted} characters omitted ...]\n\n`;
  const room = limit - marker(content.length).length;
  let headEnd = Math.floor(room * 0.7);
  let tailStart = content.length - (room - headEnd);
  // Never split a surrogate pair.
  if (isHighSurrogate(content.charCodeAt(headEnd - 1))) headEnd--;
  if (isLowSurrogate(content.charCodeAt(tailStart))) tailStart++;
  return {
    content: content.slice(0, headEnd) + marker(tailStart - headEnd) + content.slice(tailStart),
    truncated: true,
  };
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;
