/**
 * A PNG's zlib streams (the IDAT data, an iCCP profile) inflated by zlib-ng in WASM
 * (shared/imaging/wasm/zlib.wasm, native/zlib/): the compressed pieces are copied in 64 KB
 * at a time and the output comes back 64 KB at a time, so an instance holds about 200 KB whatever
 * the image's size. Synchronous: no stream, no promise, no buffer allocated per chunk.
 */
import { concatBytes } from "../../../bytes";
import { invalidImage } from "../../../media/image-header";
import { decoderOutOfMemory } from "../codec";

/** The exports of shared/imaging/wasm/zlib.wasm (native/zlib/inflater.c). */
interface InflaterExports {
  memory: WebAssembly.Memory;
  zi_open(): number;
  zi_run(inAt: number, inLength: number, outAt: number, outLength: number): number;
  zi_consumed(): number;
  zi_produced(): number;
  malloc(bytes: number): number;
}

/**
 * The memory of a fresh zlib.wasm instance, per module: its bytes at instantiation (data segments,
 * zeroed heap), put back over a spare instance's before it serves again.
 */
const pristine = new WeakMap<WebAssembly.Module, Uint8Array>();
/** Most zlib.wasm instances kept between uses: one for the inflate, one for the PNG attempt's deflate. */
const SPARE_ZLIB_INSTANCES = 2;
/** The isolate's spare zlib.wasm instances (giveBackZlib), each at its initial memory size (1 MiB). */
const spareZlib: Array<{ module: WebAssembly.Module; exports: { memory: WebAssembly.Memory } }> = [];

/**
 * An instance of zlib.wasm `module` in its fresh state: a spare one (giveBackZlib) with its memory
 * put back to a fresh instance's bytes, else a new one. workerd hands every new instance fresh
 * pages, whose first touch faults them in (about 15 µs a 4 KB page on a VM), and zlib.wasm's glue
 * allocates without freeing (one stream per instance): restoring the whole memory (1 MiB, its only
 * mutable global, the stack pointer, is back in place after every call) makes the instance as new.
 */
export function takeZlib<T extends { memory: WebAssembly.Memory }>(module: WebAssembly.Module): T {
  const at = spareZlib.findIndex((s) => s.module === module);
  const image = pristine.get(module);
  if (at >= 0 && image) {
    const [spare] = spareZlib.splice(at, 1);
    new Uint8Array(spare!.exports.memory.buffer).set(image);
    return spare!.exports as T;
  }
  const exports = new WebAssembly.Instance(module, {}).exports as unknown as T;
  if (!image) pristine.set(module, new Uint8Array(exports.memory.buffer).slice());
  return exports;
}

/**
 * Keeps an instance takeZlib gave as a spare for the next use, if its memory has not grown past
 * its initial size and fewer than SPARE_ZLIB_INSTANCES are kept: what stays is bounded (2 MiB of
 * instances and the 1 MiB image). Only for an instance whose last call returned (a trap may leave
 * its stack pointer moved): callers give back on their normal paths only.
 */
export function giveBackZlib(module: WebAssembly.Module, exports: { memory: WebAssembly.Memory }): void {
  if (exports.memory.buffer.byteLength !== pristine.get(module)?.length) return;
  if (spareZlib.length < SPARE_ZLIB_INSTANCES) spareZlib.push({ module, exports });
}

const Z_OK = 0;
const Z_STREAM_END = 1;
const Z_MEM_ERROR = -4;
const Z_BUF_ERROR = -5;
const AREA_BYTES = 1 << 16;

/**
 * One zlib stream, inflated on demand from its compressed `pieces` (the IDAT chunks' data, in order).
 * @example
 * const inflater = new ZlibInflater(wasm.zlib, info.idat);
 * for (let bytes = inflater.next(); bytes; bytes = inflater.next()) consume(bytes);
 */
export class ZlibInflater {
  private readonly z: InflaterExports;
  private readonly inAt: number;
  private readonly outAt: number;
  private piece = 0;
  private pieceAt = 0;
  /** Compressed bytes copied into the input area and not yet taken by zlib: [inStart, inEnd). */
  private inStart = 0;
  private inEnd = 0;
  private ended = false;

  constructor(
    private readonly module: WebAssembly.Module,
    private readonly pieces: readonly Uint8Array[],
  ) {
    this.z = takeZlib<InflaterExports>(module);
    this.inAt = this.z.malloc(AREA_BYTES);
    this.outAt = this.z.malloc(AREA_BYTES);
    if (this.inAt === 0 || this.outAt === 0 || this.z.zi_open() !== Z_OK) throw decoderOutOfMemory("PNG");
  }

  /** Bytes of the instance's WASM memory (its 1 MiB initial memory: zlib's state, window and both areas fit). */
  get wasmBytes(): number {
    return this.z.memory.buffer.byteLength;
  }

  /**
   * The next inflated bytes, a view into WASM memory valid until the next call; undefined once the
   * stream has ended (bytes after its end are ignored, as libpng does). The call that reaches the
   * stream's end returns a copy of its last bytes and gives the instance back to the isolate's
   * spares (giveBackZlib).
   * @throws AppError 400 `invalid_image` for a corrupt stream, a wrong Adler-32, or compressed data
   * that ends before the stream does.
   */
  next(): Uint8Array | undefined {
    while (!this.ended) {
      if (this.inStart === this.inEnd && !this.refill()) throw corrupt();
      const status = this.z.zi_run(this.inAt + this.inStart, this.inEnd - this.inStart, this.outAt, AREA_BYTES);
      const consumed = this.z.zi_consumed(),
        produced = this.z.zi_produced();
      this.inStart += consumed;
      if (status === Z_STREAM_END) this.ended = true;
      else if (status === Z_MEM_ERROR) throw decoderOutOfMemory("PNG");
      else if (status !== Z_OK && status !== Z_BUF_ERROR) throw corrupt();
      else if (consumed === 0 && produced === 0) throw corrupt();
      if (this.ended) {
        // The stream's last bytes are copied out and the instance goes back to the spares now:
        // decoders stop at their last row and never ask past it.
        const last = new Uint8Array(this.z.memory.buffer, this.outAt, produced).slice();
        giveBackZlib(this.module, this.z);
        return produced > 0 ? last : undefined;
      }
      if (produced > 0) return new Uint8Array(this.z.memory.buffer, this.outAt, produced);
    }
    return undefined;
  }

  /** Copies the next compressed bytes into the input area; false when there are none left. */
  private refill(): boolean {
    while (this.piece < this.pieces.length && this.pieceAt === this.pieces[this.piece]!.length) {
      this.piece++;
      this.pieceAt = 0;
    }
    const piece = this.pieces[this.piece];
    if (!piece) return false;
    const take = Math.min(AREA_BYTES, piece.length - this.pieceAt);
    new Uint8Array(this.z.memory.buffer).set(piece.subarray(this.pieceAt, this.pieceAt + take), this.inAt);
    this.pieceAt += take;
    this.inStart = 0;
    this.inEnd = take;
    return true;
  }
}

function corrupt() {
  return invalidImage("PNG", "could not be decoded: its compressed image data (zlib) is corrupt or ends early");
}

/** A whole zlib stream inflated, or undefined when it is corrupt, cut, or inflates past `limit` bytes. */
export function inflateBounded(module: WebAssembly.Module, data: Uint8Array, limit: number): Uint8Array | undefined {
  try {
    const inflater = new ZlibInflater(module, [data]);
    const parts: Uint8Array[] = [];
    let total = 0;
    for (let bytes = inflater.next(); bytes; bytes = inflater.next()) {
      total += bytes.length;
      if (total > limit) return undefined;
      parts.push(bytes.slice());
    }
    return concatBytes(parts);
  } catch {
    return undefined;
  }
}
