/**
 * JS side of the JPEG encoder's SIMD kernels (vision.simd.wat): lays out one instance's memory for
 * one prepared image. The instance comes fresh from the module, or from one fit's SimdPool
 * (simd.instances.ts), which hands a fit's later encodes the instance its earlier one used.
 */
import { align16, instantiate, type Lease, type SimdExports, SimdPool, type SimdSource, spent } from "./simd.instances";

/**
 * The JPEG encoder's SIMD half: colour conversion (RGB to level-shifted Y and Cb/Cr, 2x2-averaged
 * for 4:2:0) and forward DCT (f32), one MCU row at a time, into the coefficient array (i16
 * cells of 1/2^COEFFICIENT_BITS: a JPEG coefficient of 8-bit samples is within ±1024, so its cell
 * fits with room to spare; a coefficient is read back as its cell's middle, which is never exactly
 * on a rounding tie of a power-of-two quantiser step, so the cells add no bias); then each
 * quality's quantise-and-count over those coefficients, and the write, which quantises each block
 * again as it codes it, so no quantised copy of the image is kept.
 *
 * The coefficients (3 bytes a pixel) live in the JS heap, and each pass copies them through a
 * window of WINDOW_MCUS MCUs in the instance's memory. A WASM memory's pages are fresh on every
 * instance, and touching a fresh page costs a page fault: on the bench machine 14 µs a page, 21–27
 * ms a fit when the coefficients lived in the instance, against 0.2–0.3 ms of copying a pass at 2 MP
 * (docs/vision-decisions.md, "Coefficients in the JS heap"). The instance stays a few hundred KB.
 * A fresh JS array's pages are fresh too in workerd, so a fit's pool hands its encoders one array
 * and keeps it for the isolate's next fit (SimdPool.coefficientStore).
 */
/** Fractional bits of the SIMD encoder's i16 coefficients. */
const COEFFICIENT_BITS = 4;
/**
 * MCUs per window of an entropy pass (at least): at 4:2:0 48 KB of coefficients, at most 168 KB of
 * scan out of them (half of each at 4:4:4).
 */
const WINDOW_MCUS = 64;
/**
 * Most bytes one block can add to a scan: 64 codes and magnitudes (at most 16 + 11 bits each) and
 * an EOB, every byte then stuffed.
 */
const BLOCK_SCAN_BYTES = 2 * Math.ceil((64 * (16 + 11) + 16) / 8);

/**
 * How an MCU samples the colour planes: 4:2:0 (16x16 pixels: four Y blocks, then one Cb and one Cr
 * block of 2x2-averaged chroma) or 4:4:4 (8x8 pixels: one block of each).
 */
export interface McuLayout {
  name: "4:2:0" | "4:4:4";
  /** Pixels on a side of an MCU. */
  size: 8 | 16;
  /** Y blocks per MCU; the Cb and Cr blocks follow them. */
  luma: 1 | 4;
  /** Blocks per MCU. */
  blocks: 3 | 6;
  /** Pixels a chroma sample covers. */
  chromaPixels: 1 | 4;
}
export const YCC_420: McuLayout = { name: "4:2:0", size: 16, luma: 4, blocks: 6, chromaPixels: 4 };
export const YCC_444: McuLayout = { name: "4:4:4", size: 8, luma: 1, blocks: 3, chromaPixels: 1 };

/**
 * The MCUs an entropy pass reads, as [first, end) runs in order: all of them when `stride` is 1,
 * else runs of `run` consecutive MCUs, one run in every `stride` (the sampled size estimate). The
 * JS encoder's passes (jpeg.baseline.ts) and these kernels' windows read the same ones.
 */
export function* mcuRuns(mcus: number, stride: number, run: number): Generator<[number, number]> {
  if (stride === 1) {
    yield [0, mcus];
    return;
  }
  for (let m = 0; m < mcus; m += stride * run) yield [m, Math.min(m + run, mcus)];
}

export class SimdJpegKernels {
  /** (A stored coefficient + 0.5) times this is the JPEG coefficient (the middle of its cell). */
  private readonly coefficientUnit = 1 / (1 << COEFFICIENT_BITS);
  private readonly k: SimdExports;
  private readonly lease: Lease;
  private readonly mcuX: number;
  private readonly mcus: number;
  private readonly rgb: number;
  private readonly stride: number;
  private readonly y: number;
  private readonly cb: number;
  private readonly cr: number;
  private readonly blk: number;
  private readonly table: number;
  private readonly recip: number;
  /** The steps of a quantisation (the reciprocals' inverses), when a count also sums its error. */
  private readonly steps: number;
  /** One f64 sum of squared error per block slot of the MCU. */
  private readonly errors: number;
  private readonly hist: number;
  private readonly scratch: number;
  /** The window the passes copy MCUs' coefficients into: WINDOW_MCUS of them, or an MCU row if wider. */
  private readonly window: number;
  private readonly windowMcus: number;
  private readonly codes: number;
  /** Where a write's window puts its scan bytes (BLOCK_SCAN_BYTES per block of the window). */
  private readonly scanAt: number;
  /** All the coefficients, MCU by MCU in the layout's block order, 64 per block, zigzag order. */
  private readonly store: Int16Array;
  /** Coefficients (i16) per MCU: 64 a block. */
  private readonly mcuCoeffs: number;

  /**
   * `zigzag[k]` is the natural index of the k-th coefficient and `scale[k]` turns the AAN output
   * into the JPEG coefficient, as the JS encoder defines them. The module writes JPEG's zigzag
   * order from an unrolled copy of it (vision.simd.wat `$finishBlock`), so `zigzag` must be that order.
   */
  constructor(
    source: SimdSource,
    private readonly width: number,
    private readonly height: number,
    zigzag: Int32Array,
    scale: Float64Array,
    private readonly layout: McuLayout,
  ) {
    const { size, blocks } = layout;
    this.mcuX = Math.ceil(width / size);
    this.mcus = this.mcuX * Math.ceil(height / size);
    this.mcuCoeffs = blocks * 64;
    const padded = this.mcuX * size;
    this.stride = padded * 3;
    let at = 0;
    const take = (n: number) => {
      const start = at;
      at = align16(at + n);
      return start;
    };
    this.table = take(64 * 4);
    this.blk = take(256 + 128);
    this.recip = take(blocks * 64 * 4);
    this.steps = take(blocks * 64 * 4);
    this.errors = take(blocks * 8);
    this.hist = take(1024 * 4);
    this.scratch = take(128);
    this.rgb = take(size * this.stride + 16);
    this.y = take(size * padded * 4);
    // A chroma plane is 8 rows of 8 samples an MCU in both layouts.
    this.cb = take(8 * this.mcuX * 8 * 4);
    this.cr = take(8 * this.mcuX * 8 * 4);
    this.windowMcus = Math.max(WINDOW_MCUS, this.mcuX);
    this.window = take(this.windowMcus * this.mcuCoeffs * 2);
    this.codes = take(4 * 256 * 4);
    this.scanAt = take(this.windowMcus * blocks * BLOCK_SCAN_BYTES);
    this.lease = instantiate(source, at, "jpeg");
    // After the lease, which ends the role's earlier kernels: they shared the array handed on here.
    const cells = this.mcus * this.mcuCoeffs;
    this.store = source instanceof SimdPool ? source.coefficientStore(cells) : new Int16Array(cells);
    this.k = this.lease.k;
    const view = new DataView(this.k.memory.buffer);
    for (let k = 0; k < 64; k++) {
      const n = zigzag[k]!;
      // After the two passes coefficient (u = n % 8, v = n / 8) sits at row u, lane v of the scratch block.
      view.setFloat32(this.table + ((n & 7) * 8 + (n >> 3)) * 4, scale[k]! * (1 << COEFFICIENT_BITS), true);
    }
  }

  get wasmBytes(): number {
    return this.k.memory.buffer.byteLength;
  }

  /** The reciprocals of a quantisation's steps (64 per block slot of the MCU), in the stored coefficients' unit. */
  private setRecip(recip: ArrayLike<number>): void {
    const into = new Float32Array(this.k.memory.buffer, this.recip, this.mcuCoeffs);
    for (let i = 0; i < this.mcuCoeffs; i++) into[i] = recip[i]! * this.coefficientUnit;
  }

  /** Colour conversion + DCT of the whole RGB image; edges repeat the last column and row, as the JS path pads. */
  transform(rgb: Uint8Array): void {
    if (!this.lease.live()) throw spent();
    const { width, height, stride } = this;
    const { size, luma } = this.layout;
    const full = luma === 1 ? 1 : 0;
    const bytes = new Uint8Array(this.k.memory.buffer);
    const rowBytes = width * 3;
    for (let my = 0; my * size < height; my++) {
      for (let dy = 0; dy < size; dy++) {
        const sy = Math.min(height - 1, my * size + dy);
        const at = this.rgb + dy * stride;
        bytes.set(rgb.subarray(sy * rowBytes, sy * rowBytes + rowBytes), at);
        if (rowBytes < stride) {
          const r = bytes[at + rowBytes - 3]!,
            g = bytes[at + rowBytes - 2]!,
            b = bytes[at + rowBytes - 1]!;
          for (let p = at + rowBytes; p < at + stride; p += 3) {
            bytes[p] = r;
            bytes[p + 1] = g;
            bytes[p + 2] = b;
          }
        }
      }
      this.k.rgbToYcc(this.rgb, stride, (this.mcuX * size) / 8, size, this.y, this.cb, this.cr, full);
      // An MCU row at a time through the window (which holds at least one).
      this.k.dctMcuRow(this.y, this.cb, this.cr, this.mcuX, this.blk, this.table, this.window, full);
      const row = this.mcuX * this.mcuCoeffs;
      this.store.set(new Int16Array(this.k.memory.buffer, this.window, row), my * row);
    }
  }

  /**
   * Runs one entropy pass over the MCUs in order, all of them (`stride` 1) or a sample of runs of
   * `run` consecutive MCUs, one run in every `stride`: `pass(count)` is called with each window's
   * MCUs copied into the window.
   */
  private eachWindow(stride: number, run: number, pass: (count: number) => void): void {
    const size = this.windowMcus;
    const per = this.mcuCoeffs;
    const into = new Int16Array(this.k.memory.buffer, this.window, size * per);
    this.k.scanStart();
    let count = 0;
    for (const [first, end] of mcuRuns(this.mcus, stride, run)) {
      for (let m = first; m < end; ) {
        const length = Math.min(end - m, size - count);
        into.set(this.store.subarray(m * per, (m + length) * per), count * per);
        count += length;
        m += length;
        if (count === size) {
          pass(count);
          count = 0;
        }
      }
    }
    if (count) pass(count);
  }

  /**
   * Quantises the MCUs (all, or runs of `run` one in every `stride`, as `eachWindow`) with `recip`
   * (64 reciprocals per block slot of the MCU) and counts their symbols: histograms at 0 (DC
   * luma), 256 (AC luma), 512 (DC chroma), 768 (AC chroma) and the magnitude bits. With `steps`
   * (the quantiser steps, 64 per block slot), `errors` holds the squared error the quantisation
   * adds in each block slot, in JPEG coefficient units squared.
   */
  quantCount(
    recip: ArrayLike<number>,
    stride: number,
    run = 1,
    steps?: ArrayLike<number>,
  ): { hist: Uint32Array; extraBits: number; errors: Float64Array } {
    if (!this.lease.live()) throw spent();
    this.setRecip(recip);
    const hist = new Uint32Array(this.k.memory.buffer, this.hist, 1024);
    hist.fill(0);
    const errors = new Float64Array(this.k.memory.buffer, this.errors, this.layout.blocks);
    errors.fill(0);
    if (steps) {
      const into = new Float32Array(this.k.memory.buffer, this.steps, this.mcuCoeffs);
      for (let i = 0; i < this.mcuCoeffs; i++) into[i] = steps[i]! / this.coefficientUnit;
    }
    let extraBits = 0;
    this.eachWindow(stride, run, (count) => {
      extraBits += this.k.quantCount(
        this.window,
        this.recip,
        this.hist,
        count,
        this.scratch,
        this.layout.luma,
        steps ? this.steps : 0,
        this.errors,
      );
    });
    const unit2 = this.coefficientUnit * this.coefficientUnit;
    return { hist: hist.slice(), extraBits, errors: errors.map((e) => e * unit2) };
  }

  /**
   * The entropy-coded scan quantised with `recip` (as `quantCount` takes it), with Huffman `tables`
   * (DC luma, AC luma, DC chroma, AC chroma: `code`/`length` per symbol) built from the full count
   * at that quantisation, whose entropy size was `entropyBytes`: 0xFF stuffing at most doubles it,
   * so the scan is gathered window by window into a JS array of twice that.
   */
  writeScan(
    recip: ArrayLike<number>,
    tables: ReadonlyArray<{ code: Uint16Array; length: Uint8Array }>,
    entropyBytes: number,
  ): Uint8Array {
    if (!this.lease.live()) throw spent();
    const codes = new Int32Array(this.k.memory.buffer, this.codes, 1024);
    tables.forEach(({ code, length }, t) => {
      for (let s = 0; s < 256; s++) codes[t * 256 + s] = code[s]! | (length[s]! << 16);
    });
    this.setRecip(recip);
    const scan = new Uint8Array(2 * entropyBytes + 64);
    const bytes = new Uint8Array(this.k.memory.buffer);
    let length = 0;
    const take = (n: number) => {
      // The tables' own count bounds the whole scan; more means the kernels and the count disagree.
      if (length + n > scan.length) throw new Error("writeScan: the scan is longer than its measured size allows");
      scan.set(bytes.subarray(this.scanAt, this.scanAt + n), length);
      length += n;
    };
    this.eachWindow(1, 1, (count) =>
      take(this.k.writeScan(this.window, this.recip, this.scratch, count, this.codes, this.scanAt, this.layout.luma)),
    );
    take(this.k.scanFlush(this.scanAt));
    return scan.subarray(0, length);
  }
}
