/**
 * The zlib.wasm instances kept between uses (takeZlib / giveBackZlib, png.inflate.ts): an inflate
 * that reaches its stream's end hands its instance to the next inflate or PNG encode, restored to
 * a fresh instance's memory, so every use gives the bytes it gives alone; at most two are kept.
 */
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { concatBytes } from "../../shared/bytes";
import { encodePng } from "../../shared/imaging/codecs/png/png.encode";
import { giveBackZlib, takeZlib, ZlibInflater } from "../../shared/imaging/codecs/png/png.inflate";
import { loadVisionWasmNode } from "../../bench/vision-wasm-node";
import { photoPixels, screenshotPixels } from "../fixtures/images";

const { zlib } = loadVisionWasmNode();
type Zlib = { memory: WebAssembly.Memory };

function inflateAll(pieces: Uint8Array[]): Uint8Array {
  const inflater = new ZlibInflater(zlib, pieces);
  const parts: Uint8Array[] = [];
  for (let bytes = inflater.next(); bytes; bytes = inflater.next()) parts.push(bytes.slice());
  return concatBytes(parts);
}
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.length).equals(b);

describe("zlib.wasm instances kept between uses", () => {
  it("hands an ended inflate's instance to the next use, its memory as a fresh instance's", () => {
    const fresh = new Uint8Array((new WebAssembly.Instance(zlib, {}).exports as unknown as Zlib).memory.buffer);
    const raw = screenshotPixels(300, 200, 1);
    expect(same(inflateAll([deflateSync(raw)]), raw)).toBe(true);
    const next = takeZlib<Zlib>(zlib);
    expect(same(new Uint8Array(next.memory.buffer), fresh)).toBe(true);
    // Taken: a use beside it gets an instance of its own.
    expect(takeZlib<Zlib>(zlib)).not.toBe(next);
  });

  it("keeps at most two", () => {
    const given = [takeZlib<Zlib>(zlib), takeZlib<Zlib>(zlib), takeZlib<Zlib>(zlib)];
    for (const z of given) giveBackZlib(zlib, z);
    const taken = [takeZlib<Zlib>(zlib), takeZlib<Zlib>(zlib), takeZlib<Zlib>(zlib)];
    expect(taken.filter((z) => given.includes(z))).toHaveLength(2);
  });

  it("gives every inflate and encode its own bytes, after corrupt, cut and unfinished streams too", () => {
    const raw = photoPixels(400, 300, 3);
    const stream = deflateSync(raw);
    const pixels = screenshotPixels(320, 240, 2);
    const alone = encodePng(pixels, 320, 240, 1 << 20, zlib)!;
    const corrupt = new Uint8Array(stream); // a copy (Buffer.slice would be a view)
    corrupt.fill(0xff, 40, 80);
    for (let round = 0; round < 3; round++) {
      expect(() => inflateAll([corrupt])).toThrow(/corrupt or ends early/);
      expect(() => inflateAll([stream.subarray(0, stream.length >> 1)])).toThrow(/corrupt or ends early/);
      new ZlibInflater(zlib, [stream]).next(); // left unfinished
      expect(same(inflateAll([stream]), raw)).toBe(true);
      expect(encodePng(photoPixels(320, 240, 9), 320, 240, 2000, zlib)).toBeUndefined(); // stopped over its limit
      expect(same(encodePng(pixels, 320, 240, 1 << 20, zlib)!, alone)).toBe(true);
      expect(same(inflateAll([stream]), raw)).toBe(true);
    }
  });
});
