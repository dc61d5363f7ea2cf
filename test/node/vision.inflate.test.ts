/**
 * The PNG inflater (zlib-ng in WASM, png.inflate.ts) against Node's zlib: the same bytes for any
 * split of the compressed data into IDAT pieces, its memory fixed whatever the output's size, and a
 * 400 (never a hang or a crash) for a stream that is corrupt, cut, or wants a preset dictionary.
 */
import { deflateSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { inflateBounded, ZlibInflater } from "../../shared/imaging/codecs/png/png.inflate";
import { concatBytes } from "../../shared/bytes";
import { loadVisionWasmNode } from "../../bench/vision-wasm-node";
import { prng, screenshotPixels } from "../fixtures/images";
import { appErrorOf } from "../support/app-error";

const { zlib } = loadVisionWasmNode();

/** Everything the inflater gives, copied out (each view is valid only until the next call). */
function inflateAll(pieces: Uint8Array[]): { bytes: Uint8Array; wasmBytes: number } {
  const inflater = new ZlibInflater(zlib, pieces);
  const parts: Uint8Array[] = [];
  for (let bytes = inflater.next(); bytes; bytes = inflater.next()) parts.push(bytes.slice());
  return { bytes: concatBytes(parts), wasmBytes: inflater.wasmBytes };
}

/** Byte equality through Buffer: vitest's toEqual walks typed arrays element by element (seconds per MB). */
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);

/** `data` cut at the given offsets (sorted, repeats make empty pieces, as a zero-length IDAT does). */
function split(data: Uint8Array, cuts: number[]): Uint8Array[] {
  const at = [0, ...cuts.map((c) => c % (data.length + 1)).sort((a, b) => a - b), data.length];
  return at.slice(1).map((end, i) => data.subarray(at[i]!, end));
}

const CORRUPT =
  "The PNG image could not be decoded: its compressed image data (zlib) is corrupt or ends early. Re-save or re-export it and send the complete file.";

describe("ZlibInflater", () => {
  it("gives Node's bytes for any data, level and split into pieces (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 400_000 }),
        fc.integer({ min: 0, max: 9 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (length, level, seed, cuts) => {
          // Half noise, half runs: stored, fixed-Huffman and dynamic blocks, short and long matches.
          const random = prng(seed);
          const data = new Uint8Array(length).map((_, i) =>
            (i >> 12) & 1 ? Math.floor(random() * 256) : (i >> 7) & 0xff,
          );
          const z = new Uint8Array(deflateSync(data, { level }));
          expect(same(inflateAll(split(z, cuts)).bytes, data)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("inflates a 5K screenshot's 44 MB of rows in its 1 MiB of WASM memory", () => {
    const rows = screenshotPixels(5120, 2880);
    const z = new Uint8Array(deflateSync(rows, { level: 6 }));
    const { bytes, wasmBytes } = inflateAll([z]);
    expect(bytes.length).toBe(44_236_800);
    expect(same(bytes, rows)).toBe(true);
    expect(wasmBytes).toBe(1 << 20);
  });

  it("a stream cut short, a wrong Adler-32, a flipped byte, an empty input and a preset dictionary are each a 400", async () => {
    const data = screenshotPixels(300, 200);
    const z = new Uint8Array(deflateSync(data));
    const wrongCheck = z.slice();
    wrongCheck[wrongCheck.length - 1]! ^= 1;
    const flipped = z.slice();
    flipped[z.length >> 1]! ^= 0x55;
    // FDICT set in the header (the check bits kept valid): PNG never uses a preset dictionary.
    const dictionary = Uint8Array.of(0x78, 0xbb, 0, 0, 0, 1, ...z.subarray(2));
    for (const pieces of [
      [z.subarray(0, z.length - 10)],
      [wrongCheck],
      [flipped],
      [],
      [new Uint8Array(0)],
      [dictionary],
    ]) {
      const error = await appErrorOf(Promise.resolve().then(() => inflateAll(pieces)));
      expect(error.status).toBe(400);
      expect(error.message).toBe(CORRUPT);
    }
  });

  it("ignores bytes after the stream's end, as libpng and the old DecompressionStream did", () => {
    const data = screenshotPixels(64, 48);
    const z = new Uint8Array(deflateSync(data));
    expect(inflateAll([z, Uint8Array.of(1, 2, 3)]).bytes).toEqual(data);
  });
});

describe("inflateBounded (an iCCP profile)", () => {
  const profile = new Uint8Array(5000).map((_, i) => (i * 7) & 0xff);
  const z = new Uint8Array(deflateSync(profile));

  it("gives the whole stream up to its limit, nothing past it", () => {
    expect(inflateBounded(zlib, z, 5000)).toEqual(profile);
    expect(inflateBounded(zlib, z, 4999)).toBeUndefined();
  });

  it("gives nothing for a corrupt or cut stream", () => {
    expect(inflateBounded(zlib, z.subarray(0, 20), 1 << 22)).toBeUndefined();
    expect(inflateBounded(zlib, Uint8Array.of(0x78, 0x9c, 0xff, 0xff), 1 << 22)).toBeUndefined();
  });
});
