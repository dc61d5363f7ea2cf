/**
 * Streaming Lanczos-3 resampler: source rows arrive one at a time (from a row-by-row PNG decode or
 * straight out of a decoder's WASM memory) and only the destination-sized accumulator is ever
 * held, so a 5K screenshot never exists as a full RGB buffer in the JS heap.
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
  maxTaps: number;
}

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
  }
  return { start, count, weights, maxTaps };
}

/**
 * Accepts RGB rows of the source in increasing order and produces a `dstWidth`x`dstHeight` RGB image
 * of the window. Rows outside the window's filter support are skipped cheaply (`wantsRow`).
 */
export class StreamingResampler {
  private readonly horizontal: Taps;
  private readonly vertical: Taps;
  /** For each source row, the first and last destination rows it contributes to. */
  private readonly rowFirst: Int32Array;
  private readonly rowLast: Int32Array;
  private readonly acc: Float32Array;
  private readonly line: Float32Array;

  constructor(
    readonly srcWidth: number,
    readonly srcHeight: number,
    window: SourceWindow,
    readonly dstWidth: number,
    readonly dstHeight: number,
  ) {
    this.horizontal = computeTaps(srcWidth, window.x, window.width, dstWidth);
    this.vertical = computeTaps(srcHeight, window.y, window.height, dstHeight);
    this.rowFirst = new Int32Array(srcHeight).fill(-1);
    this.rowLast = new Int32Array(srcHeight).fill(-2);
    for (let y = 0; y < dstHeight; y++) {
      const first = this.vertical.start[y]!;
      const end = first + this.vertical.count[y]!;
      for (let r = first; r < end; r++) {
        if (this.rowFirst[r] === -1) this.rowFirst[r] = y;
        this.rowLast[r] = y;
      }
    }
    this.acc = new Float32Array(dstWidth * dstHeight * 3);
    this.line = new Float32Array(dstWidth * 3);
  }

  wantsRow(row: number): boolean {
    return row >= 0 && row < this.srcHeight && this.rowFirst[row]! >= 0;
  }

  /** `rgb` holds the source row at `offset` (3 bytes per pixel, `srcWidth` pixels). */
  pushRow(row: number, rgb: Uint8Array, offset = 0): void {
    if (!this.wantsRow(row)) return;
    const { start, count, weights, maxTaps } = this.horizontal;
    const line = this.line;
    for (let x = 0; x < this.dstWidth; x++) {
      let r = 0, g = 0, b = 0;
      let p = offset + start[x]! * 3;
      const base = x * maxTaps;
      const n = count[x]!;
      for (let k = 0; k < n; k++) {
        const w = weights[base + k]!;
        r += rgb[p]! * w;
        g += rgb[p + 1]! * w;
        b += rgb[p + 2]! * w;
        p += 3;
      }
      line[x * 3] = r;
      line[x * 3 + 1] = g;
      line[x * 3 + 2] = b;
    }
    const v = this.vertical;
    const acc = this.acc;
    const rowLen = this.dstWidth * 3;
    for (let y = this.rowFirst[row]!; y <= this.rowLast[row]!; y++) {
      const w = v.weights[y * v.maxTaps + row - v.start[y]!]!;
      if (w === 0) continue;
      let o = y * rowLen;
      for (let i = 0; i < rowLen; i++) acc[o++]! += line[i]! * w;
    }
  }

  /** The finished image, rounded and clamped to bytes. */
  finish(): Uint8Array {
    const out = new Uint8Array(this.acc.length);
    const acc = this.acc;
    for (let i = 0; i < out.length; i++) {
      const value = acc[i]! + 0.5;
      out[i] = value <= 0 ? 0 : value >= 255 ? 255 : value;
    }
    return out;
  }
}

/** Resizes an in-memory RGB image (the already-fitted image, when the budget forces a smaller one). */
export function resizeRgb(rgb: Uint8Array, width: number, height: number, dstWidth: number, dstHeight: number): Uint8Array {
  const resampler = new StreamingResampler(width, height, { x: 0, y: 0, width, height }, dstWidth, dstHeight);
  const stride = width * 3;
  for (let row = 0; row < height; row++) resampler.pushRow(row, rgb, row * stride);
  return resampler.finish();
}
