/**
 * Baseline JPEG encoder (4:2:0 or 4:4:4, optimized Huffman tables) built for the quality search: colour
 * conversion, chroma subsampling and the DCT run once per image, and each quality only
 * re-quantises the stored coefficients and counts Huffman symbols, which gives the exact entropy
 * size without writing a bit. A search of several qualities then costs about one full encode.
 * With our SIMD module, colour conversion and DCT run in WASM (f32) instead of JS (f64).
 */
import type { SimdSource } from "./wasm/simd.instances";
import { type McuLayout, mcuRuns, SimdJpegKernels, YCC_420 } from "./wasm/jpeg.simd";

export { type McuLayout, YCC_420, YCC_444 } from "./wasm/jpeg.simd";

/** ITU-T T.81 Annex K tables (natural order): what libjpeg, and so sharp, scales by quality. */
const LUMA_BASE = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51,
  87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101,
  72, 92, 95, 98, 112, 100, 103, 99,
];
const CHROMA_BASE = [
  17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99,
  99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
  99, 99, 99, 99, 99, 99,
];

/**
 * Nicolas Robidoux's table (as ImageMagick ships it; MozJPEG's default, its `quant_table` 3), for
 * luma and chroma alike: flatter at high frequencies than Annex K, so fewer bytes go to detail the
 * eye barely sees and more stay with the edges and text strokes that PSNR (and a reader) weigh.
 */
const ROBIDOUX_BASE = [
  16, 16, 16, 18, 25, 37, 56, 85, 16, 17, 20, 27, 34, 40, 53, 75, 16, 20, 24, 31, 43, 62, 91, 135, 18, 27, 31, 40, 53,
  74, 106, 156, 25, 34, 43, 53, 69, 94, 131, 189, 37, 40, 62, 74, 94, 124, 169, 238, 56, 53, 91, 106, 131, 169, 226,
  311, 85, 75, 135, 156, 189, 238, 311, 418,
];

/** Base quantisation tables (natural order) a PreparedJpeg scales by quality. */
export interface QuantBases {
  luma: readonly number[];
  chroma: readonly number[];
  /**
   * Spread the rounding of the scaled steps over the frequencies instead of rounding each to the
   * nearest (IJG): the k-th in zigzag order is rounded up from (k + 0.5) / 64 of a step, so the low
   * frequencies round down first. A table whose entries are all equal otherwise changes all 64
   * steps at one quality (the flat table at 89 and 90: steps 4 and 3, a third apart in bytes, and a
   * fit stopped at 85 % of its budget); spread, each quality changes about a third of them.
   */
  spread?: boolean;
}
export const ANNEX_K_TABLES: QuantBases = { luma: LUMA_BASE, chroma: CHROMA_BASE };
export const ROBIDOUX_TABLES: QuantBases = { luma: ROBIDOUX_BASE, chroma: ROBIDOUX_BASE };
/**
 * One step for every frequency, luma and chroma alike: the table that minimises squared error for a
 * given step, which is what text and flat UI need (their energy sits in sharp edges, all
 * frequencies at once); a photo's noise makes it spend bytes on grain.
 */
export const FLAT_TABLES: QuantBases = {
  luma: new Array(64).fill(16),
  chroma: new Array(64).fill(16),
  spread: true,
};
/** The base tables by name (errorAt compares against any of them). */
export const TABLE_CANDIDATES: ReadonlyArray<[string, QuantBases]> = [
  ["annex-k", ANNEX_K_TABLES],
  ["robidoux", ROBIDOUX_TABLES],
  ["flat", FLAT_TABLES],
];
/**
 * What chooseTables picks from, by measured rate and distortion at the budget. Annex K is not among
 * them: Robidoux's tables needed fewer bytes for the same PSNR at every rate measured (photos and
 * screenshots, docs/benchmarks.md), so trying Annex K too would only cost time.
 */
const CHOICES = new Set(["robidoux", "flat"]);

/**
 * Squared error a unit of Y, Cb or Cr error adds to a pixel's R, G and B: Y moves all three alike
 * (3), Cb moves G by 0.344 and B by 1.772 (0.344² + 1.772² = 3.26), Cr moves R by 1.402 and G by
 * 0.714 (2.48).
 */
const Y_WEIGHT = 3;
export const CB_WEIGHT = 3.258;
export const CR_WEIGHT = 2.476;

/** JFIF's Cb and Cr of an RGB pixel (not level-shifted: 0 for grey). */
export const toCb = (r: number, g: number, b: number) => -0.168736 * r - 0.331264 * g + 0.5 * b;
export const toCr = (r: number, g: number, b: number) => 0.5 * r - 0.418688 * g - 0.081312 * b;

/** The component (0 Y, 1 Cb, 2 Cr) of block slot `b` of an MCU that starts with `luma` Y blocks. */
const componentOf = (b: number, luma: number) => (b < luma ? 0 : b - luma + 1);

/** A block's DC difference from the last DC of its component (`pred`, one per component), which it becomes. */
function dcDifference(pred: Int32Array, component: number, dc: number): number {
  const diff = dc - pred[component]!;
  pred[component] = dc;
  return diff;
}

/**
 * Squared error a coefficient's quantisation adds to the RGB pixels, per block slot of the MCU (the
 * Y blocks, Cb, Cr): the DCT is orthonormal, so coefficient error is sample error, and a chroma
 * sample covers `chromaPixels` pixels.
 */
const errorWeights = (layout: McuLayout) => [
  ...new Array<number>(layout.luma).fill(Y_WEIGHT),
  layout.chromaPixels * CB_WEIGHT,
  layout.chromaPixels * CR_WEIGHT,
];

/**
 * MCUs in a run of the sampled size estimate. Single MCUs 16 apart made every DC difference one
 * across 16 MCUs: a photo's estimate came out 28 % over its size at quality 30 and 14 % at 50,
 * and a fit's search took 4 encodes where the first guess was off; in runs, one DC difference in
 * ESTIMATE_RUN spans the gap (docs/vision-decisions.md, "The size estimate in runs").
 */
const ESTIMATE_RUN = 8;

/** ZIGZAG[k] = natural index of the k-th coefficient in zigzag order. */
const ZIGZAG = (() => {
  const order = new Int32Array(64);
  let i = 0;
  for (let s = 0; s < 15; s++) {
    const cells: number[] = [];
    for (let y = 0; y < 8; y++) {
      const x = s - y;
      if (x >= 0 && x < 8) cells.push(y * 8 + x);
    }
    if (s % 2 === 0) cells.reverse(); // even diagonals run bottom-left to top-right
    for (const c of cells) order[i++] = c;
  }
  return order;
})();

/**
 * Scale that turns the Arai-Agui-Nakajima DCT's output (zigzag index) into the JPEG (orthonormal)
 * coefficient: 1 / (8 · s(u) · s(v)), s(0) = 1, s(k) = √2·cos(kπ/16).
 */
const AAN_TO_JPEG = (() => {
  const s = [1, ...Array.from({ length: 7 }, (_, k) => Math.SQRT2 * Math.cos(((k + 1) * Math.PI) / 16))];
  const out = new Float64Array(64);
  for (let k = 0; k < 64; k++) {
    const n = ZIGZAG[k]!;
    out[k] = 1 / (8 * s[n >> 3]! * s[n & 7]!);
  }
  return out;
})();

/** In-place 8-point AAN forward DCT of `d[at], d[at+step], ...` (scaled output, see AAN_TO_JPEG). */
function aan8(d: Float64Array, at: number, step: number): void {
  const i0 = at,
    i1 = at + step,
    i2 = at + 2 * step,
    i3 = at + 3 * step;
  const i4 = at + 4 * step,
    i5 = at + 5 * step,
    i6 = at + 6 * step,
    i7 = at + 7 * step;
  const t0 = d[i0]! + d[i7]!,
    t7 = d[i0]! - d[i7]!;
  const t1 = d[i1]! + d[i6]!,
    t6 = d[i1]! - d[i6]!;
  const t2 = d[i2]! + d[i5]!,
    t5 = d[i2]! - d[i5]!;
  const t3 = d[i3]! + d[i4]!,
    t4 = d[i3]! - d[i4]!;
  const e10 = t0 + t3,
    e13 = t0 - t3,
    e11 = t1 + t2,
    e12 = t1 - t2;
  d[i0] = e10 + e11;
  d[i4] = e10 - e11;
  const z1 = (e12 + e13) * 0.7071067811865476;
  d[i2] = e13 + z1;
  d[i6] = e13 - z1;
  const o10 = t4 + t5,
    o11 = t5 + t6,
    o12 = t6 + t7;
  const z5 = (o10 - o12) * 0.3826834323650898;
  const z2 = 0.5411961001461969 * o10 + z5;
  const z4 = 1.3065629648763766 * o12 + z5;
  const z3 = o11 * 0.7071067811865476;
  const z11 = t7 + z3,
    z13 = t7 - z3;
  d[i5] = z13 + z2;
  d[i3] = z13 - z2;
  d[i1] = z11 + z4;
  d[i7] = z11 - z4;
}

/**
 * IJG quality scaling of a base table, clamped to 1..255 (baseline), in zigzag order; rounded to
 * the nearest step, or `spread` (QuantBases.spread).
 */
function quantTable(base: readonly number[], quality: number, spread = false): Uint16Array {
  const q = Math.max(1, Math.min(100, Math.round(quality)));
  const scale = q < 50 ? 5000 / q : 200 - 2 * q;
  const out = new Uint16Array(64);
  for (let k = 0; k < 64; k++) {
    const rounding = spread ? (100 * (k + 0.5)) / 64 : 50;
    out[k] = Math.max(1, Math.min(255, Math.floor((base[ZIGZAG[k]!]! * scale + rounding) / 100)));
  }
  return out;
}

interface HuffmanTable {
  /** BITS: how many codes of each length 1..16. */
  counts: Uint8Array;
  /** HUFFVAL: symbols ordered by code length. */
  symbols: Uint8Array;
  code: Uint16Array;
  length: Uint8Array;
}

/**
 * Optimal code lengths limited to 16 bits (T.81 K.2/K.3), with the all-ones code kept free. K.2
 * scans every symbol for the two least frequent, ties to the higher symbol; a heap ordered the same
 * way pops the same two, in O(log n) instead of 257 steps a merge (buildHuffman ran about 50 times a
 * fit: every estimate and count builds four tables).
 */
function buildHuffman(freq: Uint32Array): HuffmanTable {
  const f = new Float64Array(257);
  for (let i = 0; i < 256; i++) f[i] = freq[i]!;
  f[256] = 1; // reserved symbol: guarantees no real code is all ones
  const codesize = new Int32Array(257);
  const others = new Int32Array(257).fill(-1);
  const heap = new Int32Array(257);
  let size = 0;
  /** Whether symbol `a` is picked before `b`: less frequent, or as frequent and higher. */
  const before = (a: number, b: number) => f[a]! < f[b]! || (f[a] === f[b] && a > b);
  const siftDown = (at: number) => {
    const s = heap[at]!;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= size) break;
      if (child + 1 < size && before(heap[child + 1]!, heap[child]!)) child++;
      if (!before(heap[child]!, s)) break;
      heap[at] = heap[child]!;
      at = child;
    }
    heap[at] = s;
  };
  for (let i = 0; i < 257; i++) if (f[i] !== 0) heap[size++] = i;
  for (let at = (size >> 1) - 1; at >= 0; at--) siftDown(at);
  const pop = () => {
    const top = heap[0]!;
    heap[0] = heap[--size]!;
    siftDown(0);
    return top;
  };
  while (size >= 2) {
    let c1 = pop(),
      c2 = pop();
    f[c1]! += f[c2]!;
    f[c2] = 0;
    // c1 goes back with its new frequency: sift it up from the end.
    let at = size++;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!before(c1, heap[parent]!)) break;
      heap[at] = heap[parent]!;
      at = parent;
    }
    heap[at] = c1;
    for (;;) {
      codesize[c1]!++;
      if (others[c1]! < 0) break;
      c1 = others[c1]!;
    }
    others[c1] = c2;
    for (;;) {
      codesize[c2]!++;
      if (others[c2]! < 0) break;
      c2 = others[c2]!;
    }
  }
  const bits = new Int32Array(33);
  for (let i = 0; i < 257; i++) if (codesize[i]) bits[codesize[i]!]!++;
  for (let i = 32; i > 16; i--) {
    while (bits[i]! > 0) {
      let j = i - 2;
      while (bits[j] === 0) j--;
      bits[i]! -= 2;
      bits[i - 1]!++;
      bits[j + 1]! += 2;
      bits[j]!--;
    }
  }
  let i = 16;
  while (bits[i] === 0) i--;
  bits[i]!--; // drop the reserved symbol
  const counts = new Uint8Array(16);
  for (let l = 1; l <= 16; l++) counts[l - 1] = bits[l]!;
  // HUFFVAL: the symbols by code length before the limit, each length's in symbol order (a counting sort).
  const firstOf = new Int32Array(34);
  for (let s = 0; s < 256; s++) if (codesize[s]) firstOf[codesize[s]! + 1]!++;
  for (let l = 1; l < 34; l++) firstOf[l]! += firstOf[l - 1]!;
  const ordered = new Uint8Array(firstOf[33]!);
  for (let s = 0; s < 256; s++) if (codesize[s]) ordered[firstOf[codesize[s]!]!++] = s;
  const symbols = ordered.slice(
    0,
    counts.reduce((a, b) => a + b, 0),
  );
  const code = new Uint16Array(256);
  const length = new Uint8Array(256);
  let next = 0,
    at = 0;
  for (let l = 1; l <= 16; l++) {
    for (let n = 0; n < counts[l - 1]!; n++) {
      code[symbols[at]!] = next++;
      length[symbols[at]!] = l;
      at++;
    }
    next <<= 1;
  }
  return { counts, symbols, code, length };
}

/** Symbol statistics of one quantisation: four histograms and the raw magnitude bits. */
interface Statistics {
  dcLuma: Uint32Array;
  acLuma: Uint32Array;
  dcChroma: Uint32Array;
  acChroma: Uint32Array;
  extraBits: number;
}

class BitWriter {
  private buffer: Uint8Array;
  private at = 0;
  private acc = 0;
  private count = 0;
  constructor(capacity: number) {
    this.buffer = new Uint8Array(capacity);
  }
  private byte(b: number): void {
    if (this.at + 2 > this.buffer.length) {
      const grown = new Uint8Array(this.buffer.length * 2);
      grown.set(this.buffer);
      this.buffer = grown;
    }
    this.buffer[this.at++] = b;
  }
  raw(bytes: ArrayLike<number>): void {
    for (let i = 0; i < bytes.length; i++) this.byte(bytes[i]!);
  }
  /** Whole bytes already entropy-coded and stuffed elsewhere (the SIMD scan); the writer is byte-aligned. */
  block(bytes: Uint8Array): void {
    if (this.at + bytes.length + 2 > this.buffer.length) {
      const grown = new Uint8Array(this.at + bytes.length + 1024);
      grown.set(this.buffer.subarray(0, this.at));
      this.buffer = grown;
    }
    this.buffer.set(bytes, this.at);
    this.at += bytes.length;
  }
  /** Entropy-coded bits (≤ 16 at a time), with 0xFF stuffing. */
  bits(value: number, n: number): void {
    this.acc = (this.acc << n) | (value & ((1 << n) - 1));
    this.count += n;
    while (this.count >= 8) {
      this.count -= 8;
      const b = (this.acc >> this.count) & 0xff;
      this.byte(b);
      if (b === 0xff) this.byte(0);
    }
    this.acc &= (1 << this.count) - 1;
  }
  flush(): void {
    if (this.count > 0) this.bits(0x7f, 8 - this.count);
  }
  result(): Uint8Array {
    return this.buffer.slice(0, this.at);
  }
}

/**
 * An image prepared for encoding: its YCbCr DCT coefficients in one MCU layout (4:2:0: Y00 Y01 Y10
 * Y11 Cb Cr; 4:4:4: Y Cb Cr; zigzag order), held only for the duration of one fit.
 */
export interface PreparedJpeg {
  width: number;
  height: number;
  /** The chroma sampling every encode of it has. */
  layout: McuLayout;
  /** Size from a sample of the blocks: a first guess, not a promise. */
  estimateAt(quality: number): number;
  /** Size of the encode at `quality`: exact entropy size plus a safe allowance for 0xFF stuffing. */
  sizeAt(quality: number): number;
  encode(quality: number): Uint8Array;
  /**
   * Picks, from TABLE_CANDIDATES' choices (Robidoux, flat), the base tables that show the image with the least squared error
   * at the highest quality in [minQuality, maxQuality] that fits `maxBytes`, judged on a sample of
   * the blocks (rate from the symbols' entropy, distortion from the quantisation error); every later
   * estimate, size and encode uses them. When none fits at `minQuality`, the one smallest there.
   * Returns the chosen table's name.
   */
  chooseTables(maxBytes: number, minQuality: number, maxQuality: number): string;
  /**
   * Squared error (sampled, as chooseTables weighs it) the encode at `quality` adds, with the tables
   * in use or the candidate named `tables`: lets a caller compare qualities across tables.
   */
  errorAt(quality: number, tables?: string): number;
  /** Name of the base tables in use ("annex-k" until chooseTables picks). */
  tables: string;
  /**
   * Where chooseTables' sample put the chosen tables' size at its `maxBytes` (a fractional quality;
   * undefined before it chose, or where nothing fitted at `minQuality`): where a search may look first.
   */
  budgetQuality: number | undefined;
  /** WASM memory the SIMD colour conversion + DCT used (0 on the JS path). */
  wasmBytes: number;
}

const HEADER_BYTES = 2 + 18 + 2 * 69 + 19 + 14 + 2; // SOI, APP0, 2 DQT, SOF0, SOS, EOI (DHT added per table)

/**
 * Converts RGB to YCbCr in `layout` (4:2:0 unless told) and runs the DCT once; the returned object
 * quantises and codes it.
 * @example
 * const prepared = prepareJpeg(rgb, 1568, 1176);
 * const q = prepared.sizeAt(85) <= maxBytes ? 85 : 75;
 * const jpeg = prepared.encode(q);
 */
export function prepareJpeg(
  rgb: Uint8Array,
  width: number,
  height: number,
  simdModule?: SimdSource,
  bases: QuantBases = ANNEX_K_TABLES,
  layout: McuLayout = YCC_420,
): PreparedJpeg {
  if (!simdModule) return codeCoefficients(transformJs(rgb, width, height, layout), width, height, bases, layout);
  const kernels = new SimdJpegKernels(simdModule, width, height, ZIGZAG, AAN_TO_JPEG, layout);
  kernels.transform(rgb);
  // The coefficients stay in the kernels' store; the JS loops that would read them never run.
  return codeCoefficients(new Float32Array(0), width, height, bases, layout, kernels);
}

/** Colour conversion + DCT in JS (f64): MCU by MCU in the layout's block order, zigzag, JPEG scale. */
function transformJs(rgb: Uint8Array, width: number, height: number, layout: McuLayout): Float32Array {
  const { size, luma, blocks } = layout;
  const mcuX = Math.ceil(width / size),
    mcuY = Math.ceil(height / size);
  const coeffs = new Float32Array(mcuX * mcuY * blocks * 64);
  const block = new Float64Array(64);
  // One MCU row at a time: `size` rows of level-shifted Y and 8 rows of Cb/Cr (2x2-averaged at
  // 4:2:0), padded to whole MCUs by repeating the last column and row.
  const padded = mcuX * size;
  const yRows = new Float64Array(size * padded);
  const half = mcuX * 8; // chroma samples a row, in both layouts
  const cbRows = new Float64Array(8 * half);
  const crRows = new Float64Array(8 * half);
  const cbLine = new Float64Array(padded),
    crLine = new Float64Array(padded);

  const dctInto = (plane: Float64Array, stride: number, x0: number, out: number) => {
    for (let y = 0; y < 8; y++) for (let x = 0; x < 8; x++) block[y * 8 + x] = plane[y * stride + x0 + x]!;
    for (let y = 0; y < 8; y++) aan8(block, y * 8, 1);
    for (let x = 0; x < 8; x++) aan8(block, x, 8);
    for (let k = 0; k < 64; k++) coeffs[out + k] = block[ZIGZAG[k]!]! * AAN_TO_JPEG[k]!;
  };

  for (let my = 0; my < mcuY; my++) {
    for (let dy = 0; dy < size; dy++) {
      const sy = Math.min(height - 1, my * size + dy);
      const rowAt = sy * width * 3;
      const yAt = dy * padded;
      for (let x = 0; x < padded; x++) {
        const p = rowAt + (x < width ? x : width - 1) * 3;
        const r = rgb[p]!,
          g = rgb[p + 1]!,
          b = rgb[p + 2]!;
        yRows[yAt + x] = 0.299 * r + 0.587 * g + 0.114 * b - 128;
        cbLine[x] = toCb(r, g, b);
        crLine[x] = toCr(r, g, b);
      }
      if (luma === 1) {
        cbRows.set(cbLine, dy * half);
        crRows.set(crLine, dy * half);
        continue;
      }
      const cAt = (dy >> 1) * half;
      if ((dy & 1) === 0) {
        for (let x = 0; x < half; x++) {
          cbRows[cAt + x] = cbLine[2 * x]! + cbLine[2 * x + 1]!;
          crRows[cAt + x] = crLine[2 * x]! + crLine[2 * x + 1]!;
        }
      } else {
        for (let x = 0; x < half; x++) {
          cbRows[cAt + x] = (cbRows[cAt + x]! + cbLine[2 * x]! + cbLine[2 * x + 1]!) * 0.25;
          crRows[cAt + x] = (crRows[cAt + x]! + crLine[2 * x]! + crLine[2 * x + 1]!) * 0.25;
        }
      }
    }
    for (let mx = 0; mx < mcuX; mx++) {
      const base = (my * mcuX + mx) * blocks * 64;
      // The Y blocks left to right, top to bottom.
      for (let b = 0; b < luma; b++)
        dctInto(yRows.subarray((b >> 1) * 8 * padded), padded, mx * size + (b & 1) * 8, base + b * 64);
      dctInto(cbRows, half, mx * 8, base + luma * 64);
      dctInto(crRows, half, mx * 8, base + (luma + 1) * 64);
    }
  }
  return coeffs;
}

/**
 * The JS path's quantise-and-count (SimdJpegKernels.quantCount is the SIMD path's): quantises the
 * MCUs of the coefficients (MCU by MCU in `layout`'s block order, zigzag) with `recip`, all of them
 * or a sample (runs of `run` consecutive MCUs, one run in every `stride`), and counts their Huffman
 * symbols: histograms at 0 (DC luma), 256 (AC luma), 512 (DC chroma), 768 (AC chroma), plus the raw
 * magnitude bits. With `quant`, the quantised blocks are kept there; with `steps` (the quantiser
 * steps), the squared error the quantisation adds is summed too (errorWeights per slot).
 */
function quantiseAndCount(
  layout: McuLayout,
  coeffs: Float32Array,
  mcus: number,
  recip: Float64Array,
  steps: Float64Array | undefined,
  stride: number,
  quant: Int16Array | undefined,
  run = 1,
): { hist: Uint32Array; extra: number; error: number } {
  const hist = new Uint32Array(1024);
  const { luma, blocks } = layout;
  const weights = errorWeights(layout);
  const pred = new Int32Array(3);
  let extra = 0,
    error = 0;
  for (const [first, end] of mcuRuns(mcus, stride, run))
    for (let m = first; m < end; m++) {
      for (let b = 0; b < blocks; b++) {
        const at = (m * blocks + b) * 64;
        const r0 = b * 64;
        const dcBase = b < luma ? 0 : 512;
        const acBase = dcBase + 256;
        let blockError = 0;
        const v0 = coeffs[at]! * recip[r0]!;
        const dc = v0 < 0 ? -((0.5 - v0) | 0) : (v0 + 0.5) | 0;
        if (quant) quant[at] = dc;
        if (steps) {
          const e = coeffs[at]! - dc * steps[r0]!;
          blockError += e * e;
        }
        const diff = dcDifference(pred, componentOf(b, luma), dc);
        const dcCat = 32 - Math.clz32(diff < 0 ? -diff : diff);
        hist[dcBase + dcCat]!++;
        extra += dcCat;
        let run = 0;
        for (let k = 1; k < 64; k++) {
          const v = coeffs[at + k]! * recip[r0 + k]!;
          const r = v < 0 ? -((0.5 - v) | 0) : (v + 0.5) | 0;
          if (quant) quant[at + k] = r;
          if (steps) {
            const e = coeffs[at + k]! - r * steps[r0 + k]!;
            blockError += e * e;
          }
          if (r === 0) {
            run++;
            continue;
          }
          while (run > 15) {
            hist[acBase + 0xf0]!++;
            run -= 16;
          }
          const cat = 32 - Math.clz32(r < 0 ? -r : r);
          hist[acBase + ((run << 4) | cat)]!++;
          extra += cat;
          run = 0;
        }
        if (run > 0) hist[acBase]!++; // EOB
        error += blockError * weights[b]!;
      }
    }
  return { hist, extra, error };
}

/**
 * Quantises and codes prepared coefficients (see PreparedJpeg); with `simd`, whose memory holds
 * `coeffs`, the quantise-and-count passes run there (f32, so the final write quantises there too).
 */
/** The quantisation tables at `quality`, and per block slot of the MCU (the Y blocks, Cb, Cr) their steps and reciprocals, so the hot loop indexes. */
function quantTablesAt(bases: QuantBases, quality: number, layout: McuLayout) {
  const luma = quantTable(bases.luma, quality, bases.spread),
    chroma = quantTable(bases.chroma, quality, bases.spread);
  const recip = new Float64Array(layout.blocks * 64);
  const steps = new Float64Array(layout.blocks * 64);
  for (let b = 0; b < layout.blocks; b++)
    for (let k = 0; k < 64; k++) {
      steps[b * 64 + k] = (b < layout.luma ? luma : chroma)[k]!;
      recip[b * 64 + k] = 1 / steps[b * 64 + k]!;
    }
  return { luma, chroma, recip, steps };
}

/** The four histograms of a count (DC luma at 0, AC luma at 256, DC chroma at 512, AC chroma at 768) as `Statistics`. */
const statisticsOf = (hist: Uint32Array, extraBits: number): Statistics => ({
  dcLuma: hist.subarray(0, 256),
  acLuma: hist.subarray(256, 512),
  dcChroma: hist.subarray(512, 768),
  acChroma: hist.subarray(768, 1024),
  extraBits,
});

/** Bits of a count by the entropy of each of its 4 histograms (ranks tables as their Huffman codes would), plus `extra`. */
function entropyBits(hist: Uint32Array, extra: number): number {
  let bits = extra;
  for (let t = 0; t < 4; t++) {
    let total = 0;
    for (let i = t * 256; i < t * 256 + 256; i++) total += hist[i]!;
    for (let i = t * 256; i < t * 256 + 256; i++) if (hist[i]) bits -= hist[i]! * Math.log2(hist[i]! / total);
  }
  return bits;
}

/** Bits of one histogram coded with `table`. */
function huffmanBits(hist: Uint32Array, table: HuffmanTable): number {
  let bits = 0;
  for (let i = 0; i < 256; i++) if (hist[i]) bits += hist[i]! * table.length[i]!;
  return bits;
}

/** A table set's size and error at one quality, over a sample of the MCUs. */
type RateDistortion = (quality: number) => { bytes: number; error: number };

/**
 * The error at exactly `maxBytes` between `low` (within the budget) and `maxQuality`: ln(bytes) is
 * close to linear in quality away from 100, so secant steps (a bisection when a step leaves most of
 * the bracket) narrow it to a few qualities, then the error is interpolated (log-log) at the budget
 * between the bracketing qualities, and so is the quality. The error at `maxQuality` when that fits.
 */
function errorAtBudget(
  sample: RateDistortion,
  maxBytes: number,
  lowest: { q: number; bytes: number; error: number },
  maxQuality: number,
): { error: number; quality: number } {
  let low = lowest;
  let high = { q: maxQuality, ...sample(maxQuality) };
  if (high.bytes <= maxBytes) return { error: high.error, quality: maxQuality };
  for (let step = 0; step < 5 && high.q - low.q > 3; step++) {
    const t = (Math.log(maxBytes) - Math.log(low.bytes)) / (Math.log(high.bytes) - Math.log(low.bytes));
    let q = Math.min(high.q - 1, Math.max(low.q + 1, Math.round(low.q + t * (high.q - low.q))));
    if (step % 2 === 1) q = (low.q + high.q) >> 1;
    const at = { q, ...sample(q) };
    if (at.bytes <= maxBytes) low = at;
    else high = at;
  }
  const t = Math.min(
    1,
    Math.max(0, (Math.log(maxBytes) - Math.log(low.bytes)) / (Math.log(high.bytes) - Math.log(low.bytes))),
  );
  return {
    error: Math.exp(Math.log(low.error) + t * (Math.log(high.error) - Math.log(low.error))),
    quality: low.q + t * (high.q - low.q),
  };
}

/**
 * Entropy-codes every block into `w` with `tables` (DC/AC luma, DC/AC chroma) in JS: the
 * coefficients quantised with `recip`, or `quantised` already (the last full statistics pass).
 */
function writeScanJs(
  coeffs: Float32Array,
  quantised: Int16Array | null,
  recip: Float64Array,
  layout: McuLayout,
  mcus: number,
  tables: HuffmanTable[],
  w: BitWriter,
): void {
  const { luma, blocks } = layout;
  const [dcL, acL, dcC, acC] = tables as [HuffmanTable, HuffmanTable, HuffmanTable, HuffmanTable];
  const q = new Int32Array(64);
  const pred = new Int32Array(3);
  for (let m = 0; m < mcus; m++) {
    for (let b = 0; b < blocks; b++) {
      const at = (m * blocks + b) * 64;
      if (quantised) {
        for (let k = 0; k < 64; k++) q[k] = quantised[at + k]!;
      } else {
        for (let k = 0; k < 64; k++) {
          const v = coeffs[at + k]! * recip[b * 64 + k]!;
          q[k] = v < 0 ? -((0.5 - v) | 0) : (v + 0.5) | 0;
        }
      }
      const dcTable = b < luma ? dcL : dcC;
      const acTable = b < luma ? acL : acC;
      const dc = q[0]!;
      const d = dcDifference(pred, componentOf(b, luma), dc);
      const dcCat = 32 - Math.clz32(d < 0 ? -d : d);
      w.bits(dcTable.code[dcCat]!, dcTable.length[dcCat]!);
      if (dcCat) w.bits(d < 0 ? d + (1 << dcCat) - 1 : d, dcCat);
      const code = acTable.code,
        length = acTable.length;
      let run = 0;
      for (let k = 1; k < 64; k++) {
        const v = q[k]!;
        if (v === 0) {
          run++;
          continue;
        }
        while (run > 15) {
          w.bits(code[0xf0]!, length[0xf0]!);
          run -= 16;
        }
        const c = 32 - Math.clz32(v < 0 ? -v : v);
        const sym = (run << 4) | c;
        // Huffman code (≤ 16 bits) and magnitude (≤ 11 bits) go out in one call when they fit.
        const n = length[sym]!;
        if (n + c <= 24) w.bits((code[sym]! << c) | ((v < 0 ? v + (1 << c) - 1 : v) & ((1 << c) - 1)), n + c);
        else {
          w.bits(code[sym]!, n);
          w.bits(v < 0 ? v + (1 << c) - 1 : v, c);
        }
        run = 0;
      }
      if (run > 0) w.bits(code[0]!, length[0]!);
    }
  }
}

/** The JPEG's header up to its scan: SOI, JFIF APP0, the two DQT, SOF0 in `layout`, the four DHT, SOS. */
function writeHeaders(
  w: BitWriter,
  width: number,
  height: number,
  layout: McuLayout,
  quantTables: { luma: Uint16Array; chroma: Uint16Array },
  tables: HuffmanTable[],
): void {
  const [dcL, acL, dcC, acC] = tables as [HuffmanTable, HuffmanTable, HuffmanTable, HuffmanTable];
  const u16 = (v: number) => [v >> 8, v & 0xff];
  w.raw([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  for (const [id, table] of [
    [0, quantTables.luma],
    [1, quantTables.chroma],
  ] as const)
    w.raw([0xff, 0xdb, 0, 67, id, ...table]);
  // Y samples per MCU side: 2x2 at 4:2:0, 1x1 at 4:4:4; Cb and Cr one each.
  const ySampling = layout.luma === 4 ? 0x22 : 0x11;
  w.raw([0xff, 0xc0, 0, 17, 8, ...u16(height), ...u16(width), 3, 1, ySampling, 0, 2, 0x11, 1, 3, 0x11, 1]);
  for (const [klass, table] of [
    [0x00, dcL],
    [0x10, acL],
    [0x01, dcC],
    [0x11, acC],
  ] as const) {
    w.raw([0xff, 0xc4, ...u16(2 + 1 + 16 + table.symbols.length), klass, ...table.counts, ...table.symbols]);
  }
  w.raw([0xff, 0xda, 0, 12, 3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]);
}

/** Full measures: the Huffman tables of a quality, and the bytes its scan and header take. */
interface Measure {
  tables: HuffmanTable[];
  entropyBytes: number;
  headerBytes: number;
}

/** The Huffman tables a count's statistics call for, and the bytes they code it in (`stride`: one MCU run sampled in that many). */
function measureOf(s: Statistics, stride: number): Measure {
  const tables = [buildHuffman(s.dcLuma), buildHuffman(s.acLuma), buildHuffman(s.dcChroma), buildHuffman(s.acChroma)];
  const bits =
    stride * s.extraBits +
    stride *
      (huffmanBits(s.dcLuma, tables[0]!) +
        huffmanBits(s.acLuma, tables[1]!) +
        huffmanBits(s.dcChroma, tables[2]!) +
        huffmanBits(s.acChroma, tables[3]!));
  const dht = tables.reduce((n, t) => n + 4 + 1 + 16 + t.symbols.length, 0);
  return { tables, entropyBytes: Math.ceil(bits / 8), headerBytes: HEADER_BYTES + dht };
}

function codeCoefficients(
  coeffs: Float32Array,
  width: number,
  height: number,
  initialBases: QuantBases,
  layout: McuLayout,
  simd?: SimdJpegKernels,
): PreparedJpeg {
  let bases = initialBases;
  const { size, blocks } = layout;
  const mcus = Math.ceil(width / size) * Math.ceil(height / size);
  let tablesName = TABLE_CANDIDATES.find(([, b]) => b === initialBases)?.[0] ?? "custom";
  const tablesFor = (quality: number) => quantTablesAt(bases, quality, layout);

  /**
   * JS path: quantised coefficients of the last full statistics pass (`quantQuality`), so the write
   * of that quality does not quantise again. 2 bytes per coefficient. The SIMD path keeps none: its
   * write quantises each block again as it codes it.
   */
  const quant = new Int16Array(simd ? 0 : mcus * blocks * 64);
  let quantQuality = -1;

  /**
   * Quantises the MCUs (all, or a sample of runs of ESTIMATE_RUN, one run in every `stride`) and
   * counts their Huffman symbols, plus the raw magnitude bits.
   */
  const statistics = (quality: number, stride = 1): Statistics => {
    const { recip } = tablesFor(quality);
    const run = stride === 1 ? 1 : ESTIMATE_RUN;
    if (simd) {
      const { hist, extraBits } = simd.quantCount(recip, stride, run);
      return statisticsOf(hist, extraBits);
    }
    const keep = stride === 1;
    const { hist, extra } = quantiseAndCount(
      layout,
      coeffs,
      mcus,
      recip,
      undefined,
      stride,
      keep ? quant : undefined,
      run,
    );
    if (keep) quantQuality = quality;
    return statisticsOf(hist, extra);
  };

  /**
   * Rate (bytes, from the entropy of each histogram) and weighted squared error (errorWeights) of
   * every `stride`-th MCU at `quality`, scaled to the whole image: the SIMD kernels' count summing
   * the error too where there are kernels, the JS loops otherwise.
   */
  const sampleRateDistortion = (quality: number, stride: number): { bytes: number; error: number } => {
    const { recip, steps } = tablesFor(quality);
    let hist: Uint32Array, extra: number, error: number;
    if (simd) {
      const counted = simd.quantCount(recip, stride, 1, steps);
      hist = counted.hist;
      extra = counted.extraBits;
      error = 0;
      const weights = errorWeights(layout);
      for (let b = 0; b < blocks; b++) error += counted.errors[b]! * weights[b]!;
    } else ({ hist, extra, error } = quantiseAndCount(layout, coeffs, mcus, recip, steps, stride, undefined));
    const bits = entropyBits(hist, extra);
    const sampled = Math.ceil(mcus / stride);
    return { bytes: HEADER_BYTES + 400 + (bits / 8) * (mcus / sampled), error: error * (mcus / sampled) };
  };

  /** About 1/61 of the blocks for chooseTables and errorAt (odd, so the sample does not fall into columns). */
  const sampleStride = mcus >= 1024 ? 61 : mcus >= 256 ? 15 : 1;

  /** Full measures by quality: the write of a measured quality reuses its Huffman tables. */
  const measured = new Map<number, Measure>();
  const measure = (quality: number, stride = 1): Measure => {
    const known = stride === 1 ? measured.get(quality) : undefined;
    if (known) return known;
    const m = measureOf(statistics(quality, stride), stride);
    if (stride === 1) measured.set(quality, m);
    return m;
  };

  let budgetQuality: number | undefined;

  return {
    width,
    height,
    layout,
    wasmBytes: simd?.wasmBytes ?? 0,
    get tables() {
      return tablesName;
    },
    get budgetQuality() {
      return budgetQuality;
    },
    errorAt(quality, tables) {
      const inUse = bases;
      bases = TABLE_CANDIDATES.find(([name]) => name === tables)?.[1] ?? inUse;
      try {
        return sampleRateDistortion(quality, sampleStride).error;
      } finally {
        bases = inUse;
      }
    },
    chooseTables(maxBytes, minQuality, maxQuality) {
      const sample: RateDistortion = (quality) => sampleRateDistortion(quality, sampleStride);
      let best: { name: string; bases: QuantBases; error: number; quality: number } | undefined;
      let smallest: { name: string; bases: QuantBases; bytes: number } | undefined;
      for (const [name, candidate] of TABLE_CANDIDATES) {
        if (!CHOICES.has(name)) continue;
        bases = candidate;
        const low = { q: minQuality, ...sample(minQuality) };
        if (!smallest || low.bytes < smallest.bytes) smallest = { name, bases: candidate, bytes: low.bytes };
        if (low.bytes > maxBytes) continue;
        const { error, quality } = errorAtBudget(sample, maxBytes, low, maxQuality);
        if (!best || error < best.error) best = { name, bases: candidate, error, quality };
      }
      const chosen = best ?? smallest!;
      budgetQuality = best?.quality;
      bases = chosen.bases;
      tablesName = chosen.name;
      measured.clear();
      quantQuality = -1;
      return tablesName;
    },
    estimateAt(quality) {
      // Runs of ESTIMATE_RUN MCUs, one in 16: about 1/16 of a measure.
      const stride = mcus >= 256 ? 16 : 1;
      const m = measure(quality, stride);
      return m.headerBytes + Math.ceil(m.entropyBytes * (1 + 1 / 160));
    },
    sizeAt(quality) {
      const m = measure(quality);
      // 0xFF stuffing adds a byte per 0xFF in the entropy data: about 1/256 of it, budgeted at 1/160.
      return m.headerBytes + Math.ceil(m.entropyBytes * (1 + 1 / 160));
    },
    encode(quality) {
      const { tables, entropyBytes, headerBytes } = measure(quality);
      const quantTables = tablesFor(quality);
      const w = new BitWriter(headerBytes + entropyBytes + (entropyBytes >> 6) + 64);
      writeHeaders(w, width, height, layout, quantTables, tables);
      if (simd) {
        w.block(simd.writeScan(quantTables.recip, tables, entropyBytes));
      } else {
        writeScanJs(coeffs, quantQuality === quality ? quant : null, quantTables.recip, layout, mcus, tables, w);
        w.flush();
      }
      w.raw([0xff, 0xd9]);
      return w.result();
    },
  };
}
