/** Byte helpers shared by request bodies and fetched pages: bounded reads and concatenation. */

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

/**
 * Reads a stream to the end, but never more than `maxBytes`: one byte more cancels the stream and
 * throws `tooLarge()`, so an oversized body is refused without being buffered.
 * @param wait wraps each read (e.g. to race it against a deadline)
 */
export async function readAtMost(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  tooLarge: () => Error,
  wait: <T>(read: Promise<T>) => Promise<T> = (read) => read,
): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await wait(reader.read());
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return chunks.length === 0 ? new Uint8Array(0) : concatBytes(chunks);
}
