/**
 * Streaming Lanczos-3 resampler: source rows arrive one at a time (from a row-by-row PNG decode or
 * straight out of a decoder's WASM memory) and only the destination image plus a few filtered rows
 * are ever held, so a 5K screenshot never exists as a full RGB buffer in the JS heap.
 */

/** A window of the source, in source pixels (fractions allowed: a crop mapped through a DCT scale). */
export interface SourceWindow {
  x: number;
  y: number;
  width: number;
  height: number;
}

interface Taps {
  start: Int32Array;
  count: Int32Array;
  weights: Float32Array;
  /** The same weights in 1/16384 units (rounded so each row of taps sums to exactly 16384). */
  fixed: Int32Array;
  maxTaps: number;
}

/** Fixed-point unit of the horizontal pass: integer multiply-adds are cheaper than float ones in JS. */
const ONE = 1 << 14;

function lanczos3(x: number): number {
  if (x === 0) return 1;
  if (x <= -3 || x >= 3) return 0;
  const px = Math.PI * x;
  return (3 * Math.sin(px) * Math.sin(px / 3)) / (px * px);
}

/** Filter taps for one axis; the kernel widens with the downscale factor so it also antialiases. */
function computeTaps(srcSize: number, winStart: number, winSize: number, dstSize: number): Taps {
  const ratio = winSize / dstSize;
  const scale = Math.max(1, ratio);
  const support = 3 * scale;
  const maxTaps = Math.ceil(support * 2) + 2;
  const start = new Int32Array(dstSize);
  const count = new Int32Array(dstSize);
  const weights = new Float32Array(dstSize * maxTaps);
  const fixed = new Int32Array(dstSize * maxTaps);
  for (let i = 0; i < dstSize; i++) {
    const center = winStart + (i + 0.5) * ratio;
    let first = Math.max(0, Math.floor(center - support));
    const last = Math.min(srcSize - 1, Math.ceil(center + support));
    if (last - first + 1 > maxTaps) first = last - maxTaps + 1;
    let sum = 0;
    const base = i * maxTaps;
    for (let s = first; s <= last; s++) {
      const w = lanczos3((s + 0.5 - center) / scale);
      weights[base + s - first] = w;
      sum += w;
    }
    const n = last - first + 1;
    if (sum !== 0) for (let k = 0; k < n; k++) weights[base + k]! /= sum;
    start[i] = first;
    count[i] = n;
    let fixedSum = 0, largest = 0;
    for (let k = 0; k < n; k++) {
      const f = Math.round(weights[base + k]! * ONE);
      fixed[base + k] = f;
      fixedSum += f;
      if (Math.abs(f) > Math.abs(fixed[base + largest]!)) largest = k;
    }
    fixed[base + largest]! += ONE - fixedSum;
  }
  return { start, count, weights, fixed, maxTaps };
}

/**
 * Accepts RGB rows of the source in increasing order and produces a `dstWidth`x`dstHeight` RGB image
 * of the window. Rows outside the window's filter support are skipped cheaply (`wantsRow`). Each
 * source row is filtered horizontally once into a ring of `maxTaps` rows; a destination row is
 * written (as bytes) as soon as its last source row arrives, so the only large buffer is the output.
 */
export class StreamingResampler {
  private readonly horizontal: Taps;
  private readonly vertical: Taps;
  private readonly wanted: Uint8Array;
  /** Horizontally filtered rows, in 1/16384 units. */
  private readonly ring: Int32Array[];
  private readonly out: Uint8Array;
  private readonly sum: Float32Array;
  /** Next destination row to write. */
  private nextY = 0;

  constructor(
    readonly srcWidth: number,
    readonly srcHeight: number,
    window: SourceWindow,
    readonly dstWidth: number,
    readonly dstHeight: number,
  ) {
    this.horizontal = computeTaps(srcWidth, window.x, window.width, dstWidth);
    this.vertical = computeTaps(srcHeight, window.y, window.height, dstHeight);
    this.wanted = new Uint8Array(srcHeight);
    for (let y = 0; y < dstHeight; y++) {
      const first = this.vertical.start[y]!;
      this.wanted.fill(1, first, first + this.vertical.count[y]!);
    }
    this.ring = Array.from({ length: this.vertical.maxTaps }, () => new Int32Array(dstWidth * 3));
    this.out = new Uint8Array(dstWidth * dstHeight * 3);
    this.sum = new Float32Array(dstWidth * 3);
  }

  wantsRow(row: number): boolean {
    return row >= 0 && row < this.srcHeight && this.wanted[row] === 1;
  }

  /** `rgb` holds the source row at `offset` (3 bytes per pixel, `srcWidth` pixels). */
  pushRow(row: number, rgb: Uint8Array, offset = 0): void {
    if (!this.wantsRow(row)) return;
    const { start, count, fixed, maxTaps } = this.horizontal;
    const line = this.ring[row % this.ring.length]!;
    const dstWidth = this.dstWidth;
    for (let x = 0; x < dstWidth; x++) {
      let r = 0, g = 0, b = 0;
      let p = offset + start[x]! * 3;
      let w = x * maxTaps;
      const end = w + count[x]!;
      for (; w < end; w++, p += 3) {
        const k = fixed[w]!;
        r += rgb[p]! * k;
        g += rgb[p + 1]! * k;
        b += rgb[p + 2]! * k;
      }
      line[x * 3] = r;
      line[x * 3 + 1] = g;
      line[x * 3 + 2] = b;
    }
    this.emitThrough(row);
  }

  /** Writes every destination row whose source rows all arrived (the last one being `row`). */
  private emitThrough(row: number): void {
    const v = this.vertical;
    const rowLen = this.dstWidth * 3;
    const sum = this.sum;
    const out = this.out;
    while (this.nextY < this.dstHeight) {
      const y = this.nextY;
      const first = v.start[y]!;
      const n = v.count[y]!;
      if (first + n - 1 > row) return;
      sum.fill(0);
      for (let t = 0; t < n; t++) {
        const w = v.weights[y * v.maxTaps + t]! / ONE;
        if (w === 0) continue;
        const src = this.ring[(first + t) % this.ring.length]!;
        for (let i = 0; i < rowLen; i++) sum[i]! += src[i]! * w;
      }
      let o = y * rowLen;
      for (let i = 0; i < rowLen; i++) {
        const value = sum[i]! + 0.5;
        out[o++] = value <= 0 ? 0 : value >= 255 ? 255 : value;
      }
      this.nextY++;
    }
  }

  /** The finished image. */
  finish(): Uint8Array {
    if (this.nextY < this.dstHeight) throw new Error(`resampler finished at row ${this.nextY} of ${this.dstHeight}: source rows missing`);
    return this.out;
  }
}

/** Resizes an in-memory RGB image (the already-fitted image, when the budget forces a smaller one). */
export function resizeRgb(rgb: Uint8Array, width: number, height: number, dstWidth: number, dstHeight: number): Uint8Array {
  const resampler = new StreamingResampler(width, height, { x: 0, y: 0, width, height }, dstWidth, dstHeight);
  const stride = width * 3;
  for (let row = 0; row < height; row++) resampler.pushRow(row, rgb, row * stride);
  return resampler.finish();
}
