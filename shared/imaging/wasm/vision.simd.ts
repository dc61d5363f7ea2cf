/**
 * JS side of our SIMD kernels (vision.simd.wat) for the PNG decode and the resampler (the JPEG
 * encoder's are in jpeg.simd.ts): lays out one instance's memory for one PNG decode or one
 * resampler and grows it once to what the rows need. A PNG decode's or a resampler's instance comes
 * fresh from the module, or from one fit's SimdPool (a role each), which hands the fit's later
 * decodes and resamplers the instance its earlier ones used and at the fit's end keeps it, within
 * a bound, as the isolate's spare for the next fit (SimdPool.release).
 */
import { align16, instantiate, type Lease, type SimdExports, type SimdSource, spent } from "./simd.instances";

/**
 * PNG scanline kernels: two lines (current and previous, swapped by address) and one RGB row live
 * in the instance's memory; the decoder writes inflated bytes straight into `line`, unfilters in
 * place and reads the row back as a view, so nothing is copied but the inflated bytes themselves.
 */
export class SimdPngKernels {
  private readonly k: SimdExports;
  private readonly lease: Lease;
  private cur: number;
  private prev: number;
  private readonly rgbAt: number;
  /** The whole memory as bytes; rows are addressed by offset into it (no `memory.grow` after construction). */
  readonly bytes: Uint8Array;

  constructor(
    source: SimdSource,
    private readonly stride: number,
    private readonly width: number,
  ) {
    let at = 0;
    const take = (n: number) => {
      const start = at;
      at = align16(at + n);
      return start;
    };
    // 16 bytes of slack per area: the kernels load and store whole vectors past a row's end.
    this.cur = take(stride + 16);
    this.prev = take(stride + 16);
    this.rgbAt = take(width * 3 + 16);
    // From the fit's pool, the instance is the isolate's spare from fit to fit: a fresh one's
    // exports object has a map of its own, which deoptimised the decoder's calls into it every fit.
    this.lease = instantiate(source, at, "png");
    this.k = this.lease.k;
    this.bytes = new Uint8Array(this.k.memory.buffer);
  }

  get wasmBytes(): number {
    return this.k.memory.buffer.byteLength;
  }

  /** Offset in `bytes` of the line being filled (and, once `unfilter` ran, read). */
  get line(): number {
    return this.cur;
  }

  /** Offset in `bytes` of the RGB row `flattenRgba` writes. */
  get rgb(): number {
    return this.rgbAt;
  }

  /** Unfilters the current line against the previous one (filter type 0..4, checked by the caller). */
  unfilter(filter: number, bpp: number): void {
    if (!this.lease.live()) throw spent();
    this.k.unfilter(filter, this.cur, this.prev, this.stride, bpp);
  }

  /** The current line (8-bit RGBA) flattened on white into the RGB row. */
  flattenRgba(): void {
    this.k.flattenRgba(this.cur, this.rgbAt, this.width);
  }

  /** The current line becomes the previous one; the next line is filled where the old previous was. */
  nextLine(): void {
    [this.cur, this.prev] = [this.prev, this.cur];
  }
}

/** Filter taps as the resampler computes them (shared/imaging/resample.ts computeTaps). */
export interface FixedTaps {
  /** First source sample of each output. */
  start: Int32Array;
  /** Taps of each output (none of them zero at either end). */
  count: Int32Array;
  /** Weights in fixed point, `maxTaps` slots per output: an output's taps sum to the unit. */
  fixed: Int32Array;
  /** Slots per output: the most source samples an output's support can span. */
  maxTaps: number;
  /** The most taps any output has (at most maxTaps). */
  widest: number;
}

/**
 * The resampler's two hot loops in WASM SIMD: the horizontal pass of byte rows and the vertical
 * pass into output bytes. Filtered rows (the ring) live in the instance's memory; box-mode rows,
 * filtered in JS, are written straight into `ringRow(slot)`.
 */
export class SimdResampleKernels {
  private readonly k: SimdExports;
  private readonly lease: Lease;
  private readonly bytes: Uint8Array;
  private readonly words: Int32Array;
  private readonly weights: number;
  private readonly starts: number;
  /** Two source row areas, taken in turn, so a row can be compared with the one before it. */
  private readonly src: [number, number];
  /** Which of `src` holds the last row filtered (-1: none yet), its ring slot and its shift. */
  private last = -1;
  private lastSlot = -1;
  private lastShift = -1;
  /**
   * Which row area of the ring each slot reads (its own, unless it repeats a row another slot
   * holds): a repeat shares the area instead of copying it, and a new row is filtered into an area
   * no other slot reads.
   */
  private readonly areaOf: Int32Array;
  private readonly ring: number;
  private readonly ringStride: number;
  private readonly rowPtrs: number;
  private readonly rowTaps: number;
  private readonly outRow: number;
  private readonly quads: number;
  private readonly chunks: number;
  private readonly rowLen: number;

  constructor(
    source: SimdSource,
    private readonly srcWidth: number,
    private readonly dstWidth: number,
    horizontal: FixedTaps,
    ringRows: number,
  ) {
    this.rowLen = dstWidth * 3;
    this.chunks = Math.ceil(this.rowLen / 16);
    this.quads = Math.ceil(horizontal.widest / 4);
    let at = 0;
    const take = (n: number) => {
      const start = at;
      at = align16(at + n);
      return start;
    };
    this.weights = take(dstWidth * this.quads * 8);
    this.starts = take(dstWidth * 4);
    // Padded taps read up to a quad of pixels (plus the 16-byte load) past the row's end.
    this.src = [take(srcWidth * 3 + this.quads * 12 + 16), take(srcWidth * 3 + this.quads * 12 + 16)];
    this.ringStride = this.chunks * 64 + 16;
    this.ring = take(ringRows * this.ringStride);
    this.areaOf = Int32Array.from({ length: ringRows }, (_, slot) => slot);
    this.rowPtrs = take(ringRows * 4);
    this.rowTaps = take(ringRows * 4);
    this.outRow = take(this.chunks * 16);
    this.lease = instantiate(source, at, "resample");
    this.k = this.lease.k;
    this.bytes = new Uint8Array(this.k.memory.buffer);
    this.words = new Int32Array(this.k.memory.buffer);
    const weights = new Int16Array(this.k.memory.buffer, this.weights, dstWidth * this.quads * 4);
    const starts = this.words.subarray(this.starts >> 2, (this.starts >> 2) + dstWidth);
    const { start, count, fixed, maxTaps } = horizontal;
    for (let x = 0; x < dstWidth; x++) {
      starts[x] = start[x]! * 3;
      const n = count[x]!;
      // Per quad: w0 w1 w2 w3 (hfilter spreads them); taps past `n` stay zero.
      weights.set(fixed.subarray(x * maxTaps, x * maxTaps + n), x * this.quads * 4);
    }
  }

  /** Bytes of WASM memory this instance holds. */
  get wasmBytes(): number {
    return this.k.memory.buffer.byteLength;
  }

  /** The ring slot's row as i32 values (R G B per output pixel); rows filtered in JS are written there. */
  ringRow(slot: number): Int32Array {
    if (!this.lease.live()) throw spent();
    const at = (this.ring + this.areaOf[slot]! * this.ringStride) >> 2;
    return this.words.subarray(at, at + this.rowLen);
  }

  /**
   * Horizontal pass of the RGB byte row at `rgb[offset]` into ring `slot`, in 1/2^(14-shift) units.
   * A row byte for byte the same as the last one filtered (at the same `shift`) is not filtered
   * again: that row's filtered copy goes into `slot`, and the answer is true.
   */
  filterBytes(rgb: Uint8Array, offset: number, slot: number, shift: number): boolean {
    if (!this.lease.live()) throw spent();
    const n = this.srcWidth * 3;
    const into = this.last === 0 ? 1 : 0;
    const at = this.src[into];
    this.bytes.set(rgb.subarray(offset, offset + n), at);
    if (this.last >= 0 && shift === this.lastShift && this.k.sameBytes(at, this.src[this.last]!, n) === 1) {
      this.areaOf[slot] = this.areaOf[this.lastSlot]!;
      this.lastSlot = slot;
      return true;
    }
    this.last = into;
    this.lastSlot = slot;
    this.lastShift = shift;
    const area = this.freeArea(slot);
    this.areaOf[slot] = area;
    this.k.hfilter(at, this.ring + area * this.ringStride, this.weights, this.starts, this.dstWidth, this.quads, shift);
    return false;
  }

  /** A row area no slot but `slot` reads: its own if unshared (the ring has an area per slot, so one is always free). */
  private freeArea(slot: number): number {
    const areas = this.areaOf;
    for (let i = -1; i < areas.length; i++) {
      const area = i < 0 ? areas[slot]! : i;
      let read = false;
      for (let t = 0; t < areas.length && !read; t++) read = t !== slot && areas[t] === area;
      if (!read) return area;
    }
    throw new Error("resampler ring: no free row area");
  }

  /** Vertical pass: `n` ring slots with weights `taps[first..]` into `out[outAt..]`, clamped bytes. */
  emitRow(
    slots: ArrayLike<number>,
    taps: Int32Array,
    first: number,
    n: number,
    shift: number,
    out: Uint8Array,
    outAt: number,
  ): void {
    if (!this.lease.live()) throw spent();
    const ptrs = this.rowPtrs >> 2,
      weights = this.rowTaps >> 2;
    for (let t = 0; t < n; t++) {
      this.words[ptrs + t] = this.ring + this.areaOf[slots[t]!]! * this.ringStride;
      this.words[weights + t] = taps[first + t]!;
    }
    this.k.vfilter(this.rowPtrs, this.rowTaps, n, this.outRow, this.chunks, shift);
    out.set(this.bytes.subarray(this.outRow, this.outRow + this.rowLen), outAt);
  }
}
