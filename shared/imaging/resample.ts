/**
 * Streaming Lanczos-3 resampler: source rows arrive one at a time (from a row-by-row PNG decode or
 * straight out of a decoder's WASM memory) and only the destination image plus a few filtered rows
 * are ever held, so a 5K screenshot never exists as a full RGB buffer in the JS heap. When the
 * shrink is large, whole k x k boxes of source pixels are averaged first (integer sums, one add per
 * source sample) so the Lanczos filter only ever sees about twice the target size. Given our SIMD
 * module (wasm/vision.simd.wat), both Lanczos passes run there with the same integer arithmetic, so
 * the bytes are identical; box sums (≥ 4x shrinks only) are still summed and filtered in JS, into
 * the ring that lives in the module's memory.
 */
import type { SimdSource } from "./wasm/simd.instances";
import { type FixedTaps, SimdResampleKernels } from "./wasm/vision.simd";

/** A window of the source, in source pixels (fractions allowed: a crop mapped through a DCT scale). */
export interface SourceWindow {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Fixed-point unit of the horizontal weights. */
const H_ONE = 1 << 14;
/** Fixed-point unit of the vertical weights. */
const V_ONE = 1 << 12;
/** Horizontally filtered rows are kept in 1/256 of a level: fine enough, and int32 math stays exact. */
const ROW_SHIFT = 8;
/**
 * Box pre-shrink keeps at least this much of the target's resolution for the Lanczos stage (as
 * libvips does), so the box's own softening stays far above the final Nyquist frequency.
 */
const BOX_GAP = 2;

function lanczos3(x: number): number {
  if (x === 0) return 1;
  if (x <= -3 || x >= 3) return 0;
  const px = Math.PI * x;
  return (3 * Math.sin(px) * Math.sin(px / 3)) / (px * px);
}

/**
 * Filter taps for one axis; the kernel widens with the downscale factor so it also antialiases.
 * Weights are in 1/`unit` units, rounded so each output's taps sum to exactly `unit`; taps whose
 * weight rounds to zero are dropped from both ends, so the passes never multiply by them: 17-20 %
 * of the taps at the fits' usual shrinks, and all but one at exactly 1:1 (an n/8 decode landing on
 * the target, or an image already within it).
 */
function computeTaps(srcSize: number, winStart: number, winSize: number, dstSize: number, unit: number): FixedTaps {
  const ratio = winSize / dstSize;
  const scale = Math.max(1, ratio);
  const support = 3 * scale;
  const maxTaps = Math.ceil(support * 2) + 2;
  const start = new Int32Array(dstSize);
  const count = new Int32Array(dstSize);
  const fixed = new Int32Array(dstSize * maxTaps);
  const weights = new Float64Array(maxTaps);
  let widest = 0;
  for (let i = 0; i < dstSize; i++) {
    const center = winStart + (i + 0.5) * ratio;
    let first = Math.max(0, Math.floor(center - support));
    const last = Math.min(srcSize - 1, Math.ceil(center + support));
    if (last - first + 1 > maxTaps) first = last - maxTaps + 1;
    const n = last - first + 1;
    let sum = 0;
    for (let k = 0; k < n; k++) {
      const w = lanczos3((first + k + 0.5 - center) / scale);
      weights[k] = w;
      sum += w;
    }
    const base = i * maxTaps;
    let fixedSum = 0,
      largest = 0;
    for (let k = 0; k < n; k++) {
      const f = Math.round((sum !== 0 ? weights[k]! / sum : 0) * unit);
      fixed[base + k] = f;
      fixedSum += f;
      if (Math.abs(f) > Math.abs(fixed[base + largest]!)) largest = k;
    }
    fixed[base + largest]! += unit - fixedSum;
    // The largest tap is not zero, so both scans stop.
    let lead = 0,
      end = n;
    while (fixed[base + lead] === 0) lead++;
    while (fixed[base + end - 1] === 0) end--;
    if (lead > 0) fixed.copyWithin(base, base + lead, base + end).fill(0, base + end - lead, base + n);
    start[i] = first + lead;
    count[i] = end - lead;
    widest = Math.max(widest, end - lead);
  }
  return { start, count, fixed, maxTaps, widest };
}

/** Axes whose taps are kept, least recently used dropped first: two renders' worth. */
const KEPT_TAPS = 4;
/**
 * The taps of the last KEPT_TAPS axes, keyed by computeTaps' arguments: a session's screenshots are
 * one size, so every fit after the first resamples the same axes, and computing their taps is about
 * 50,000 `Math.sin` calls (1-1.5 ms of a fit in workerd, whose `sin` is slower than Node's:
 * docs/speed.md). Taps are read-only once built, so fits share them. Under 0.7 MB at the 1568 px
 * cap (an axis: outputs x at most 26 taps x 4 bytes).
 */
const keptTaps = new Map<string, FixedTaps>();

function tapsFor(srcSize: number, winStart: number, winSize: number, dstSize: number, unit: number): FixedTaps {
  // Numbers print as the shortest text that reads back as the same double: the key is exact.
  const key = `${srcSize} ${winStart} ${winSize} ${dstSize} ${unit}`;
  let taps = keptTaps.get(key);
  if (taps) keptTaps.delete(key);
  else taps = computeTaps(srcSize, winStart, winSize, dstSize, unit);
  keptTaps.set(key, taps);
  if (keptTaps.size > KEPT_TAPS) keptTaps.delete(keptTaps.keys().next().value!);
  return taps;
}

/** Integer box factor for an axis shrinking `ratio` times: leaves at least BOX_GAP x the target. */
export function boxFactor(ratio: number): number {
  return Math.max(1, Math.floor(ratio / BOX_GAP));
}

/**
 * Accepts RGB rows of the source in increasing order and produces a `dstWidth`x`dstHeight` RGB image
 * of the window. Rows outside the window's filter support are skipped cheaply (`wantsRow`). Each
 * source row is (box-summed and) filtered horizontally once into a ring of `maxTaps` rows; a
 * destination row is written as soon as its last source row arrives, so the only large buffer is
 * the output. With the SIMD module, a row equal to the one before is not filtered again, and a
 * destination row whose taps all read one such run, as the row above's did, is copied from it
 * (docs/vision-decisions.md, "Repeated rows resampled once").
 */
export class StreamingResampler {
  private readonly boxX: number;
  private readonly boxY: number;
  /** Size of the box-averaged grid the Lanczos stage reads. */
  private readonly gridWidth: number;
  private readonly gridHeight: number;
  private readonly horizontal: FixedTaps;
  private readonly vertical: FixedTaps;
  private readonly wanted: Uint8Array;
  /** Horizontally filtered grid rows, in 1/256 of a level. */
  private readonly ring: Int32Array[];
  private readonly out: Uint8Array;
  private readonly acc: Int32Array;
  /** Sums of boxX x boxY source pixels for the grid row being gathered (box mode only). */
  private readonly boxSums: Int32Array;
  /** Source rows summed into `boxSums` so far. */
  private boxRows = 0;
  /** Next destination row to write. */
  private nextY = 0;
  /** The WASM SIMD passes, when the caller handed in the module; the JS loops otherwise. */
  private readonly simd?: SimdResampleKernels;
  private readonly withSimd: boolean;
  private readonly slots: Int32Array;
  /**
   * Per ring slot, which content its filtered row has: the first grid row of its run of rows the
   * SIMD pass found byte for byte the same (a repeat keeps the number of the row it repeats).
   */
  private readonly contents: Int32Array;
  /** The content of the last row pushed, and of every tap of the last row emitted (-1: mixed). */
  private lastContent = -1;
  private emittedContent = -1;
  /**
   * Where a destination row starts in its source row (in pixels), when every output is one source
   * pixel in place (no box stage, one tap of the whole unit on both axes, columns in a run): rows
   * are copied. The taps then index source rows and columns, not a box grid's.
   */
  private readonly copyFrom?: number;

  constructor(
    readonly srcWidth: number,
    readonly srcHeight: number,
    window: SourceWindow,
    readonly dstWidth: number,
    readonly dstHeight: number,
    simdModule?: SimdSource,
  ) {
    this.boxX = boxFactor(window.width / dstWidth);
    this.boxY = boxFactor(window.height / dstHeight);
    this.gridWidth = Math.ceil(srcWidth / this.boxX);
    this.gridHeight = Math.ceil(srcHeight / this.boxY);
    this.horizontal = tapsFor(this.gridWidth, window.x / this.boxX, window.width / this.boxX, dstWidth, H_ONE);
    this.vertical = tapsFor(this.gridHeight, window.y / this.boxY, window.height / this.boxY, dstHeight, V_ONE);
    this.wanted = new Uint8Array(this.gridHeight);
    for (let y = 0; y < dstHeight; y++) {
      const first = this.vertical.start[y]!;
      this.wanted.fill(1, first, first + this.vertical.count[y]!);
    }
    this.withSimd = simdModule !== undefined;
    this.out = new Uint8Array(dstWidth * dstHeight * 3);
    const h = this.horizontal;
    if (
      h.widest === 1 &&
      this.vertical.widest === 1 &&
      this.boxX === 1 &&
      this.boxY === 1 &&
      h.start[dstWidth - 1] === h.start[0]! + dstWidth - 1
    ) {
      this.copyFrom = h.start[0]!;
      this.ring = [];
      this.slots = new Int32Array(0);
      this.contents = new Int32Array(0);
      this.acc = new Int32Array(0);
      this.boxSums = new Int32Array(0);
      return;
    }
    const ringRows = this.vertical.maxTaps;
    if (simdModule) {
      const simd = new SimdResampleKernels(simdModule, srcWidth, dstWidth, this.horizontal, ringRows);
      this.simd = simd;
      this.ring = Array.from({ length: ringRows }, (_, slot) => simd.ringRow(slot));
    } else {
      this.ring = Array.from({ length: ringRows }, () => new Int32Array(dstWidth * 3));
    }
    this.slots = new Int32Array(ringRows);
    this.contents = new Int32Array(ringRows).fill(-1);
    this.acc = new Int32Array(this.simd ? 0 : dstWidth * 3);
    this.boxSums = new Int32Array(this.boxX > 1 || this.boxY > 1 ? this.gridWidth * 3 : 0);
  }

  /** True when the module was given: its passes run wherever there is filtering to do. */
  get usesSimd(): boolean {
    return this.withSimd;
  }

  /** Bytes of WASM memory the SIMD passes hold (0 on the JS path). */
  get wasmBytes(): number {
    return this.simd?.wasmBytes ?? 0;
  }

  wantsRow(row: number): boolean {
    return row >= 0 && row < this.srcHeight && this.wanted[(row / this.boxY) | 0] === 1;
  }

  /** `rgb` holds the source row at `offset` (3 bytes per pixel, `srcWidth` pixels). */
  pushRow(row: number, rgb: Uint8Array, offset = 0): void {
    if (!this.wantsRow(row)) return;
    if (this.copyFrom !== undefined) {
      const rowLen = this.dstWidth * 3;
      const from = offset + this.copyFrom * 3;
      for (; this.nextY < this.dstHeight && this.vertical.start[this.nextY] === row; this.nextY++)
        this.out.set(rgb.subarray(from, from + rowLen), this.nextY * rowLen);
      return;
    }
    if (this.boxSums.length === 0) {
      const slot = row % this.ring.length;
      if (this.simd) {
        if (!this.simd.filterBytes(rgb, offset, slot, 14 - ROW_SHIFT)) this.lastContent = row;
        this.contents[slot] = this.lastContent;
      } else this.filterRow(rgb, offset, this.ring[row % this.ring.length]!, 14 - ROW_SHIFT, 1);
      this.emitThrough(row);
      return;
    }
    this.addToBox(rgb, offset);
    this.boxRows++;
    const gridRow = (row / this.boxY) | 0;
    if (this.boxRows < this.boxY && row < this.srcHeight - 1) return;
    // Average of each box = sum / (boxX * rows); a short last column or row is scaled up to full.
    const pixels = this.boxX * this.boxRows;
    this.filterRow(this.boxSums, 0, this.ring[gridRow % this.ring.length]!, 0, (H_ONE / (1 << ROW_SHIFT)) * pixels);
    this.boxSums.fill(0);
    this.boxRows = 0;
    this.emitThrough(gridRow);
  }

  /** Adds one source row to the current grid row's box sums. */
  private addToBox(rgb: Uint8Array, offset: number): void {
    const k = this.boxX;
    const sums = this.boxSums;
    const width = this.srcWidth;
    const full = Math.floor(width / k);
    let p = offset;
    if (k === 2) {
      for (let j = 0, o = 0; j < full; j++, o += 3, p += 6) {
        sums[o]! += rgb[p]! + rgb[p + 3]!;
        sums[o + 1]! += rgb[p + 1]! + rgb[p + 4]!;
        sums[o + 2]! += rgb[p + 2]! + rgb[p + 5]!;
      }
    } else {
      for (let j = 0, o = 0; j < full; j++, o += 3) {
        let r = 0,
          g = 0,
          b = 0;
        for (let t = 0; t < k; t++, p += 3) {
          r += rgb[p]!;
          g += rgb[p + 1]!;
          b += rgb[p + 2]!;
        }
        sums[o]! += r;
        sums[o + 1]! += g;
        sums[o + 2]! += b;
      }
    }
    const rest = width - full * k;
    if (rest > 0) {
      let r = 0,
        g = 0,
        b = 0;
      for (let t = 0; t < rest; t++, p += 3) {
        r += rgb[p]!;
        g += rgb[p + 1]!;
        b += rgb[p + 2]!;
      }
      const o = full * 3;
      sums[o]! += Math.round((r * k) / rest);
      sums[o + 1]! += Math.round((g * k) / rest);
      sums[o + 2]! += Math.round((b * k) / rest);
    }
  }

  /**
   * Horizontal Lanczos pass of one grid row into `line` (1/256 of a level): either bytes
   * (`shift` drops the weight unit down to 1/256) or box sums (`divisor` turns sums x weights into
   * averages in 1/256 units).
   */
  private filterRow(
    src: Uint8Array | Int32Array,
    offset: number,
    line: Int32Array,
    shift: number,
    divisor: number,
  ): void {
    const { start, count, fixed, maxTaps } = this.horizontal;
    const dstWidth = this.dstWidth;
    if (divisor === 1) {
      const bytes = src as Uint8Array;
      const round = 1 << (shift - 1);
      for (let x = 0, o = 0; x < dstWidth; x++, o += 3) {
        let r = round,
          g = round,
          b = round;
        let p = offset + start[x]! * 3;
        let w = x * maxTaps;
        const end = w + count[x]!;
        for (; w < end; w++, p += 3) {
          const k = fixed[w]!;
          r += bytes[p]! * k;
          g += bytes[p + 1]! * k;
          b += bytes[p + 2]! * k;
        }
        line[o] = r >> shift;
        line[o + 1] = g >> shift;
        line[o + 2] = b >> shift;
      }
      return;
    }
    const sums = src as Int32Array;
    const scale = 1 / divisor;
    for (let x = 0, o = 0; x < dstWidth; x++, o += 3) {
      // Sums reach boxX*boxY*255, times 2^14: past int32, so these accumulate as doubles.
      let r = 0,
        g = 0,
        b = 0;
      let p = start[x]! * 3;
      let w = x * maxTaps;
      const end = w + count[x]!;
      for (; w < end; w++, p += 3) {
        const k = fixed[w]!;
        r += sums[p]! * k;
        g += sums[p + 1]! * k;
        b += sums[p + 2]! * k;
      }
      line[o] = Math.round(r * scale);
      line[o + 1] = Math.round(g * scale);
      line[o + 2] = Math.round(b * scale);
    }
  }

  /** Writes every destination row whose grid rows all arrived (the last one being `row`). */
  private emitThrough(row: number): void {
    const v = this.vertical;
    const rowLen = this.dstWidth * 3;
    const acc = this.acc;
    const out = this.out;
    const ring = this.ring;
    const shift = ROW_SHIFT + 12;
    const round = 1 << (shift - 1);
    while (this.nextY < this.dstHeight) {
      const y = this.nextY;
      const first = v.start[y]!;
      const n = v.count[y]!;
      if (first + n - 1 > row) return;
      if (this.simd) {
        let content = this.contents[first % ring.length]!;
        for (let t = 0; t < n; t++) {
          const slot = (first + t) % ring.length;
          this.slots[t] = slot;
          if (this.contents[slot] !== content) content = -1;
        }
        if (content >= 0 && content === this.emittedContent) {
          // Every tap reads the same row, as every tap of the row above did: the taps sum to exactly
          // V_ONE, so whatever their weights the output is that row's, the row above's bytes.
          out.copyWithin(y * rowLen, (y - 1) * rowLen, y * rowLen);
          this.nextY++;
          continue;
        }
        this.emittedContent = content;
        this.simd.emitRow(this.slots, v.fixed, y * v.maxTaps, n, shift, out, y * rowLen);
        this.nextY++;
        continue;
      }
      // Rows in 1/256 (|v| < 2^17) times weights in 1/4096 (sum of |w| < 2): stays inside int32.
      // Four taps per sweep over the row: a quarter of the accumulator traffic of one at a time.
      const base = y * v.maxTaps;
      const at = (t: number) => ring[(first + t) % ring.length]!;
      let t = 0;
      for (; t + 4 <= n; t += 4) {
        const r0 = at(t),
          r1 = at(t + 1),
          r2 = at(t + 2),
          r3 = at(t + 3);
        const w0 = v.fixed[base + t]!,
          w1 = v.fixed[base + t + 1]!,
          w2 = v.fixed[base + t + 2]!,
          w3 = v.fixed[base + t + 3]!;
        if (t === 0)
          for (let i = 0; i < rowLen; i++) acc[i] = round + r0[i]! * w0 + r1[i]! * w1 + r2[i]! * w2 + r3[i]! * w3;
        else for (let i = 0; i < rowLen; i++) acc[i]! += r0[i]! * w0 + r1[i]! * w1 + r2[i]! * w2 + r3[i]! * w3;
      }
      if (t === 0) acc.fill(round);
      for (; t < n; t++) {
        const r0 = at(t),
          w0 = v.fixed[base + t]!;
        for (let i = 0; i < rowLen; i++) acc[i]! += r0[i]! * w0;
      }
      let o = y * rowLen;
      for (let i = 0; i < rowLen; i++) {
        const value = acc[i]! >> shift;
        out[o++] = value < 0 ? 0 : Math.min(value, 255);
      }
      this.nextY++;
    }
  }

  /** The finished image. */
  finish(): Uint8Array {
    if (this.nextY < this.dstHeight)
      throw new Error(`resampler finished at row ${this.nextY} of ${this.dstHeight}: source rows missing`);
    return this.out;
  }
}

/** Resizes an in-memory RGB image (the already-fitted image, when the budget forces a smaller one). */
export function resizeRgb(
  rgb: Uint8Array,
  width: number,
  height: number,
  dstWidth: number,
  dstHeight: number,
  simdModule?: SimdSource,
): Uint8Array {
  const resampler = new StreamingResampler(
    width,
    height,
    { x: 0, y: 0, width, height },
    dstWidth,
    dstHeight,
    simdModule,
  );
  const stride = width * 3;
  for (let row = 0; row < height; row++) resampler.pushRow(row, rgb, row * stride);
  return resampler.finish();
}
