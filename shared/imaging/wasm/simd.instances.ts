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

type PoolRole = "resample" | "jpeg";

/**
 * One fit's SIMD instances, one per role (the resampler's, the encoder's): each new kernel set of a
 * role gets the instance the previous one used, zeroed and grown if it must be, so a fit's second
 * resample or encode writes to pages the first one touched instead of fresh ones (on a VM, first
 * touch costs about 15 µs a 4 KB page: docs/benchmarks.md). A new lease ends the role's earlier
 * one, whose kernels then refuse to run. The pool belongs to one fit and is dropped with it.
 * @example
 * const pool = new SimdPool(wasm.simd);
 * const a = prepareJpeg(rgb, 1568, 1176, pool); // encodes, searches
 * const b = prepareJpeg(smaller, 1200, 900, pool); // same instance; `a` is spent
 */
export class SimdPool {
  private readonly leased = new Map<PoolRole, { k: SimdExports; generation: number }>();

  constructor(readonly module: WebAssembly.Module) {}

  lease(role: PoolRole, bytes: number): Lease {
    const held = this.leased.get(role);
    if (!held) {
      const entry = { k: reserve(newInstance(this.module), bytes), generation: 0 };
      this.leased.set(role, entry);
      return { k: entry.k, live: () => entry.generation === 0 };
    }
    const generation = ++held.generation;
    // As a fresh instance would be: the kernels rely on zeroed memory (e.g. the resampler's padded taps).
    new Uint8Array(held.k.memory.buffer, 0, Math.min(bytes, held.k.memory.buffer.byteLength)).fill(0);
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
