/**
 * Bounded reads (shared/bytes.ts), which every request body and fetched page goes through: the
 * exact bytes come back from byte streams (read straight into our blocks) and other streams (copied),
 * one byte over the limit refuses and cancels, runtime chunk buffers are never kept, and what is
 * left of an oversized body is dropped within its bounds.
 */
import { describe, expect, it } from "vitest";
import { discardRest, readAtMost } from "../../shared/bytes";

const KiB = 1024;
const MiB = 1024 * KiB;
const tooLarge = () => new Error("too large");

/** `total` bytes (value i % 251) as `chunk`-sized pieces; a byte stream when `bytes` is set. */
function source(
  total: number,
  chunk: number,
  bytes: boolean,
): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean; pulled: () => number } {
  let at = 0;
  let cancelled = false;
  const piece = (n: number) => {
    const out = new Uint8Array(n);
    for (let k = 0; k < n; k++) out[k] = (at + k) % 251;
    return out;
  };
  const stream = bytes
    ? new ReadableStream({
        type: "bytes",
        pull(controller) {
          if (at >= total) {
            // A byte source that closes under a pending BYOB read commits it empty (as runtimes' own do).
            controller.close();
            controller.byobRequest?.respond(0);
            return;
          }
          const n = Math.min(chunk, total - at);
          controller.enqueue(piece(n));
          at += n;
        },
        cancel() {
          cancelled = true;
        },
      })
    : new ReadableStream<Uint8Array>({
        pull(controller) {
          if (at >= total) return controller.close();
          const n = Math.min(chunk, total - at);
          controller.enqueue(piece(n));
          at += n;
        },
        cancel() {
          cancelled = true;
        },
      });
  return { stream: stream as ReadableStream<Uint8Array>, cancelled: () => cancelled, pulled: () => at };
}

/** The bytes `source` produced, checked without a per-element deep comparison. */
function isSourceBytes(body: Uint8Array, total: number): boolean {
  if (body.byteLength !== total) return false;
  for (let k = 0; k < total; k++) if (body[k] !== k % 251) return false;
  return true;
}

describe("readAtMost", () => {
  it.each([
    ["a byte stream (BYOB into our blocks)", true],
    ["a plain stream (copied)", false],
  ])("%s: returns every byte up to the limit exactly", async (_name, bytes) => {
    for (const total of [0, 1, 64 * KiB - 1, 64 * KiB + 1, 300 * KiB + 7]) {
      const { stream } = source(total, 10_000, bytes);
      expect(isSourceBytes(await readAtMost(stream, total, tooLarge), total), `${total} bytes`).toBe(true);
    }
  });

  it.each([
    ["a byte stream", true],
    ["a plain stream", false],
  ])(
    "%s: one byte over the limit refuses, cancels, and reads no further than the chunk that passed it",
    async (_name, bytes) => {
      const src = source(10 * MiB, 16 * KiB, bytes);
      await expect(readAtMost(src.stream, 1 * MiB, tooLarge)).rejects.toThrow("too large");
      expect(src.cancelled()).toBe(true);
      expect(src.pulled()).toBeLessThanOrEqual(1 * MiB + 2 * 16 * KiB);
    },
  );

  it("leaves the stream uncancelled when asked (a request body to drain)", async () => {
    const src = source(2 * MiB, 16 * KiB, true);
    await expect(readAtMost(src.stream, 1 * MiB, tooLarge, undefined, false)).rejects.toThrow("too large");
    expect(src.cancelled()).toBe(false);
    expect(src.stream.locked).toBe(false);
  });

  it("never keeps a runtime's chunk buffers: 64 views of 1 KiB into 1 MiB buffers come back in one 64 KiB buffer", async () => {
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 64 * KiB) return controller.close();
        const big = new Uint8Array(MiB).fill(7);
        controller.enqueue(big.subarray(0, KiB));
        sent += KiB;
      },
    });
    const body = await readAtMost(stream, 34 * MiB, tooLarge);
    expect(body.byteLength).toBe(64 * KiB);
    expect(body.indexOf(0)).toBe(-1);
    expect(body.buffer.byteLength).toBeLessThanOrEqual(64 * KiB);
  });
});

describe("discardRest", () => {
  it("drops what is left of a stream and says it ended", async () => {
    const src = source(5 * MiB, 64 * KiB, true);
    expect(await discardRest(src.stream, 8 * MiB, 5_000)).toBe(true);
    expect(src.pulled()).toBe(5 * MiB);
  });

  it("stops at its byte bound and cancels an endless stream", async () => {
    const src = source(Number.MAX_SAFE_INTEGER, 64 * KiB, false);
    expect(await discardRest(src.stream, 1 * MiB, 5_000)).toBe(false);
    expect(src.cancelled()).toBe(true);
    expect(src.pulled()).toBeLessThanOrEqual(1 * MiB + 3 * 64 * KiB);
  });

  it("stops at its time bound on a stalled stream", async () => {
    let cancelled = false;
    const stalled = new ReadableStream<Uint8Array>({
      pull: () => new Promise(() => undefined),
      cancel() {
        cancelled = true;
      },
    });
    // The stream never yields: only the time bound can end the call.
    expect(await discardRest(stalled, 1 * MiB, 100)).toBe(false);
    expect(cancelled).toBe(true);
  });
});
