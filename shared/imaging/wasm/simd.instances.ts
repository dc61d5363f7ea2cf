/**
 * Where our SIMD kernels (vision.simd.ts, jpeg.simd.ts) get their instance of vision.simd.wasm: fresh from the
 * module, or leased from one fit's SimdPool.
 */
export interface SimdExports {
  memory: WebAssembly.Memory;
  unfilter(filter: number, cur: number, prev: number, n: number, bpp: number): void;
  flattenRgba(src: number, dst: number, pixels: number): void;
  hfilter(src: number, dst: number, weights: number, starts: number, width: number, quads: number, shift: number): void;
  vfilter(rows: number, taps: number, n: number, dst: number, chunks: number, shift: number): void;
  sameBytes(a: number, b: number, n: number): number;
  rgbToYcc(
    rgb: number,
    stride: number,
    groups: number,
    rows: number,
    y: number,
    cb: number,
    cr: number,
    full: number,
  ): void;
  dctMcuRow(
    y: number,
    cb: number,
    cr: number,
    mcus: number,
    blk: number,
    table: number,
    out: number,
    full: number,
  ): void;
  scanStart(): void;
  quantCount(
    coeffs: number,
    recip: number,
    hist: number,
    mcus: number,
    scratch: number,
    luma: number,
    steps: number,
    errors: number,
  ): number;
  writeScan(
    coeffs: number,
    recip: number,
    scratch: number,
    mcus: number,
    codes: number,
    out: number,
    luma: number,
  ): number;
  scanFlush(out: number): number;
}

const PAGE = 65536;

/** `n` rounded up to a multiple of 16: where a kernel's next area starts (vectors load 16 bytes). */
export const align16 = (n: number) => (n + 15) & ~15;

/** Grows `exports`' memory to at least `bytes` (one `memory.grow`). */
export function reserve(exports: SimdExports, bytes: number): SimdExports {
  const have = exports.memory.buffer.byteLength;
  if (bytes > have) exports.memory.grow(Math.ceil((bytes - have) / PAGE));
  return exports;
}

/** A kernel set's instance; `live()` turns false once its pool has leased the instance again. */
export interface Lease {
  k: SimdExports;
  live(): boolean;
}

type PoolRole = "png" | "resample" | "jpeg";

/**
 * Largest coefficient array kept between fits: a 4:2:0 image at the default long-edge cap, up to
 * 1568x1568 (7.4 MB). A larger one (4:4:4, a larger cap) is dropped with its fit.
 */
const SPARE_COEFFICIENT_BYTES = 8 << 20;
/** Largest instance memory kept between fits. */
const SPARE_INSTANCE_BYTES = 4 << 20;
/** The isolate's spare instance per role (SimdPool.release), taken by the next fit's pool that leases the role. */
const spareInstances = new Map<PoolRole, { module: WebAssembly.Module; k: SimdExports }>();
/** As a fresh instance would be: the kernels rely on zeroed memory (e.g. the resampler's padded taps). */
function zeroed(k: SimdExports, bytes: number): void {
  new Uint8Array(k.memory.buffer, 0, Math.min(bytes, k.memory.buffer.byteLength)).fill(0);
}
/** The isolate's spare coefficient array (SimdPool.release), taken by the next fit's pool that needs one. */
let spareCoefficients: Int16Array | undefined;

/**
 * One fit's SIMD instances, one per role (the PNG decoder's lines, the resampler's, the encoder's): each new kernel set of a
 * role gets the instance the previous one used, zeroed and grown if it must be, so a fit's second
 * resample or encode writes to pages the first one touched instead of fresh ones (on a VM, first
 * touch costs about 15 µs a 4 KB page: docs/benchmarks.md). A new lease ends the role's earlier
 * one, whose kernels then refuse to run. The pool belongs to one fit and is released with it.
 *
 * The encoder's coefficients (3 bytes a pixel at 4:2:0, in the JS heap: jpeg.simd.ts) are held
 * the same way: the pool hands a fit's later encoder the array its earlier one filled. At the fit's
 * end `release()` keeps the array (up to SPARE_COEFFICIENT_BYTES) and each role's instance (up to
 * SPARE_INSTANCE_BYTES) as the isolate's spares, which the next fit's pool takes: workerd hands
 * every fresh array and instance new pages, and first touch faulted them in, about 1,150 of the
 * ~1,370 page faults of a 1920x1080 screenshot's fit (docs/vision-decisions.md, "The coefficient
 * array kept for the next fit"). What stays between fits is bounded: about 5 MB at 1568x882.
 * @example
 * const pool = new SimdPool(wasm.simd);
 * const a = prepareJpeg(rgb, 1568, 1176, pool); // encodes, searches
 * const b = prepareJpeg(smaller, 1200, 900, pool); // same instance; `a` is spent
 */
export class SimdPool {
  private readonly leased = new Map<PoolRole, { k: SimdExports; generation: number }>();
  /** The encoder's coefficient array: its earlier kernels' (spent once a later one leases the role), or the spare. */
  private coefficients: Int16Array | undefined;

  constructor(readonly module: WebAssembly.Module) {}

  /**
   * `cells` i16 for the encoder kernels the pool has just leased the "jpeg" role to: the array the
   * role's earlier kernels used, else the isolate's spare, each if large enough, else a new one.
   * Not zeroed: the transform writes every cell before a pass reads one.
   */
  coefficientStore(cells: number): Int16Array {
    let store = this.coefficients ?? spareCoefficients;
    if (store === spareCoefficients) spareCoefficients = undefined;
    if (!store || store.length < cells) store = new Int16Array(cells);
    this.coefficients = store;
    return store.subarray(0, cells);
  }

  /**
   * Ends the fit: every kernel set leased from the pool refuses to run from now on; each role's
   * instance becomes the isolate's spare for that role if its memory is not over
   * SPARE_INSTANCE_BYTES, and the coefficient array if it is not over SPARE_COEFFICIENT_BYTES and
   * larger than the spare there is (another fit may have returned one meanwhile).
   */
  release(): void {
    for (const [role, held] of this.leased) {
      held.generation++;
      if (held.k.memory.buffer.byteLength <= SPARE_INSTANCE_BYTES)
        spareInstances.set(role, { module: this.module, k: held.k });
    }
    this.leased.clear();
    const store = this.coefficients;
    this.coefficients = undefined;
    if (store && store.byteLength <= SPARE_COEFFICIENT_BYTES && store.length > (spareCoefficients?.length ?? 0))
      spareCoefficients = store;
  }

  lease(role: PoolRole, bytes: number): Lease {
    const held = this.leased.get(role);
    if (!held) {
      const spare = spareInstances.get(role);
      const reused = spare?.module === this.module ? spare.k : undefined;
      if (reused) {
        spareInstances.delete(role);
        zeroed(reused, bytes);
      }
      const entry = { k: reserve(reused ?? newInstance(this.module), bytes), generation: 0 };
      this.leased.set(role, entry);
      return { k: entry.k, live: () => entry.generation === 0 };
    }
    const generation = ++held.generation;
    zeroed(held.k, bytes);
    reserve(held.k, bytes);
    return { k: held.k, live: () => held.generation === generation };
  }
}

/** Where kernels get their instance: the module (a fresh one each time) or a fit's pool. */
export type SimdSource = WebAssembly.Module | SimdPool;

export const newInstance = (module: WebAssembly.Module) =>
  new WebAssembly.Instance(module, {}).exports as unknown as SimdExports;

/** An instance for a kernel set whose layout takes `bytes`: fresh from the module, or leased from the fit's pool. */
export function instantiate(source: SimdSource, bytes: number, role: PoolRole): Lease {
  if (source instanceof SimdPool) return source.lease(role, bytes);
  const k = reserve(newInstance(source), bytes);
  return { k, live: () => true };
}

export function spent(): Error {
  return new Error("SIMD kernels used after their pool leased the instance to a later fit step");
}
