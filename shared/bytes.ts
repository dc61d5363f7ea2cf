/** Byte helpers shared by request bodies and fetched pages: bounded reads and concatenation. */
import { Deadline } from "./deadline";

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

/** The first block a bounded read fills; each next one is as large as all before it, up to MAX_BLOCK. */
const FIRST_BLOCK = 64 * 1024;
const MAX_BLOCK = 4 * 1024 * 1024;

/** A BYOB reader for a byte stream (runtimes' bodies), else the default reader (a constructed stream). */
export function readerOf(stream: ReadableStream<Uint8Array>): {
  byob: ReadableStreamBYOBReader | null;
  reader: ReadableStreamBYOBReader | ReadableStreamDefaultReader<Uint8Array>;
} {
  try {
    const byob = stream.getReader({ mode: "byob" });
    return { byob, reader: byob };
  } catch {
    return { byob: null, reader: stream.getReader() };
  }
}

/** The next block for a read that holds `held` bytes: one byte past `maxBytes` fits, so going over is seen. */
function blockSize(held: number, maxBytes: number): number {
  return Math.min(MAX_BLOCK, Math.max(FIRST_BLOCK, held), maxBytes + 1 - held);
}

/**
 * Reads a stream to the end, but never more than `maxBytes`: one byte more cancels the stream and
 * throws `tooLarge()`, so an oversized body is refused without being buffered past the limit.
 *
 * The bytes land in blocks this function allocates, never in the runtime's chunks: a byte stream
 * (a request or response body in workerd, Deno and Node) is read with a BYOB reader straight into
 * them; another stream's chunks are copied and dropped. A chunked upload arrives in many small
 * pieces, each possibly a view of a larger buffer: keeping those views, or leaving them for the
 * garbage collector while the next big body arrives, held several times the limit and took a
 * Worker's isolate down. The memory held is the bytes read, rounded up to a block.
 * @param wait wraps each read (e.g. to race it against a deadline)
 */
export async function readAtMost(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  tooLarge: () => Error,
  wait: <T>(read: Promise<T>) => Promise<T> = (read) => read,
  cancelOnLimit = true,
): Promise<Uint8Array> {
  const { byob, reader } = readerOf(stream);
  const blocks: Uint8Array[] = [];
  let block = new Uint8Array(0);
  let used = 0;
  let total = 0;
  const nextBlock = () => {
    if (block.byteLength > 0) blocks.push(block);
    block = new Uint8Array(blockSize(total, maxBytes));
    used = 0;
  };
  try {
    for (;;) {
      if (byob) {
        if (used === block.byteLength) nextBlock();
        // The block's buffer moves into the read and comes back (with what was read) as `value.buffer`.
        const { done, value } = await wait(byob.read(block.subarray(used)));
        if (value) {
          block = new Uint8Array(value.buffer);
          used += value.byteLength;
          total += value.byteLength;
        }
        if (total > maxBytes) break;
        if (done) break;
        continue;
      }
      const { done, value } = await wait((reader as ReadableStreamDefaultReader<Uint8Array>).read());
      if (done) break;
      if (total + value.byteLength > maxBytes) {
        total += value.byteLength;
        break;
      }
      for (let offset = 0; offset < value.byteLength; ) {
        if (used === block.byteLength) nextBlock();
        const n = Math.min(block.byteLength - used, value.byteLength - offset);
        block.set(value.subarray(offset, offset + n), used);
        used += n;
        offset += n;
        total += n;
      }
    }
    if (total > maxBytes) {
      if (cancelOnLimit) await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
  } finally {
    reader.releaseLock();
  }
  if (total === 0) return new Uint8Array(0);
  blocks.push(block.subarray(0, used));
  return concatBytes(blocks);
}

/**
 * Reads and drops what is left of a stream, holding one 64 KiB buffer, for at most `maxBytes` and
 * `maxMs`; past either bound the stream is cancelled. True when the stream ended within them.
 */
export async function discardRest(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  maxMs: number,
): Promise<boolean> {
  const { byob, reader } = readerOf(stream);
  const deadline = new Deadline(maxMs);
  let buffer: Uint8Array<ArrayBuffer> = new Uint8Array(64 * 1024);
  let dropped = 0;
  try {
    while (dropped <= maxBytes) {
      const read = byob ? byob.read(buffer) : (reader as ReadableStreamDefaultReader<Uint8Array>).read();
      const result = await deadline.orLate(read, "late" as const);
      if (result === "late") break;
      if (result.done) return true;
      dropped += result.value.byteLength;
      if (byob) buffer = new Uint8Array(result.value.buffer as ArrayBuffer);
    }
    await reader.cancel().catch(() => undefined);
    return false;
  } catch {
    return false;
  } finally {
    deadline.clear();
    reader.releaseLock();
  }
}
