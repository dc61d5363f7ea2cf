/**
 * JS side of our SIMD kernels (vision.simd.wat): lays out one instance's memory for one PNG decode,
 * one resampler or one JPEG prepare and grows it once to what the rows need. The instance comes
 * fresh from the module, or from one fit's SimdPool, which hands a fit's later resamplers and
 * encodes the instance its earlier ones used. Nothing outlives the fit, so a fit leaves no WASM
 * high-water mark behind.
 */
import {
  instantiate,
  newInstance,
  reserve,
  type Lease,
  type SimdExports,
  type SimdSource,
  spent,
} from "./simd.instances";

const align16 = (n: number) => (n + 15) & ~15;

/**
 * PNG scanline kernels: two lines (current and previous, swapped by address) and one RGB row live
 * in the instance's memory; the decoder writes inflated bytes straight into `line`, unfilters in
 * place and reads the row back as a view, so nothing is copied but the inflated bytes themselves.
 */
export class SimdPngKernels {
  private readonly k: SimdExports;
  private cur: number;
  private prev: number;
  private readonly rgbAt: number;
  /** The whole memory as bytes; rows are addressed by offset into it (no `memory.grow` after construction). */
  readonly bytes: Uint8Array;

  constructor(
    module: WebAssembly.Module,
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
    this.k = reserve(newInstance(module), at);
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

/** Horizontal filter taps as the resampler computes them (fixed point, `maxTaps` per output). */
export interface FixedTaps {
  start: Int32Array;
  count: Int32Array;
  fixed: Int32Array;
  maxTaps: number;
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
  private readonly src: number;
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
    this.quads = Math.ceil(horizontal.maxTaps / 4);
    let at = 0;
    const take = (n: number) => {
      const start = at;
      at = align16(at + n);
      return start;
    };
    this.weights = take(dstWidth * this.quads * 32);
    this.starts = take(dstWidth * 4);
    // Padded taps read up to a quad of pixels (plus the 16-byte load) past the row's end.
    this.src = take(srcWidth * 3 + this.quads * 12 + 16);
    this.ringStride = this.chunks * 64 + 16;
    this.ring = take(ringRows * this.ringStride);
    this.rowPtrs = take(ringRows * 4);
    this.rowTaps = take(ringRows * 4);
    this.outRow = take(this.chunks * 16);
    this.lease = instantiate(source, at, "resample");
    this.k = this.lease.k;
    this.bytes = new Uint8Array(this.k.memory.buffer);
    this.words = new Int32Array(this.k.memory.buffer);
    const weights = new Int16Array(this.k.memory.buffer, this.weights, dstWidth * this.quads * 16);
    const starts = this.words.subarray(this.starts >> 2, (this.starts >> 2) + dstWidth);
    const { start, count, fixed, maxTaps } = horizontal;
    for (let x = 0; x < dstWidth; x++) {
      starts[x] = start[x]! * 3;
      const n = count[x]!;
      // Per quad: [w0 w1 w0 w1 w0 w1 0 0] [w2 w3 w2 w3 w2 w3 0 0]; taps past `n` stay zero.
      for (let t = 0; t < n; t++) {
        const w = fixed[x * maxTaps + t]!;
        const base = (x * this.quads + (t >> 2)) * 16 + (t & 2 ? 8 : 0) + (t & 1);
        weights[base] = w;
        weights[base + 2] = w;
        weights[base + 4] = w;
      }
    }
  }

  /** Bytes of WASM memory this instance holds. */
  get wasmBytes(): number {
    return this.k.memory.buffer.byteLength;
  }

  /** The ring slot as i32 values (R G B per output pixel), for rows filtered in JS. */
  ringRow(slot: number): Int32Array {
    if (!this.lease.live()) throw spent();
    const at = (this.ring + slot * this.ringStride) >> 2;
    return this.words.subarray(at, at + this.rowLen);
  }

  /** Horizontal pass of the RGB byte row at `rgb[offset]` into ring `slot`, in 1/2^(14-shift) units. */
  filterBytes(rgb: Uint8Array, offset: number, slot: number, shift: number): void {
    if (!this.lease.live()) throw spent();
    this.bytes.set(rgb.subarray(offset, offset + this.srcWidth * 3), this.src);
    this.k.hfilter(
      this.src,
      this.ring + slot * this.ringStride,
      this.weights,
      this.starts,
      this.dstWidth,
      this.quads,
      shift,
    );
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
      this.words[ptrs + t] = this.ring + slots[t]! * this.ringStride;
      this.words[weights + t] = taps[first + t]!;
    }
    this.k.vfilter(this.rowPtrs, this.rowTaps, n, this.outRow, this.chunks, shift);
    out.set(this.bytes.subarray(this.outRow, this.outRow + this.rowLen), outAt);
  }
}

/**
 * The JPEG encoder's SIMD half: colour conversion (RGB to level-shifted Y and 2x2-averaged Cb/Cr)
 * and forward DCT (f32), one MCU row (16 pixel rows) at a time, into the coefficient array (i16
 * cells of 1/2^COEFFICIENT_BITS: a JPEG coefficient of 8-bit samples is within ±1024, so its cell
 * fits with room to spare; a coefficient is read back as its cell's middle, which is never exactly
 * on a rounding tie of a power-of-two quantiser step, so the cells add no bias); then each
 * quality's quantise-and-count over those coefficients, and the write, which quantises each block
 * again as it codes it, so no quantised copy of the image is kept.
 *
 * The coefficients (3 bytes a pixel) live in the JS heap, and each pass copies them through a
 * window of WINDOW_MCUS MCUs in the instance's memory. A WASM memory's pages are fresh on every
 * instance, and touching a fresh page costs a page fault: on the bench machine 14 µs a page, 21–27
 * ms a fit when the coefficients lived in the instance, against about 1 ms of copying a pass
 * (docs/benchmarks.md, "Coefficients in the JS heap"). The instance stays a few hundred KB.
 */
/** Fractional bits of the SIMD encoder's i16 coefficients. */
const COEFFICIENT_BITS = 4;
/** MCUs per window of an entropy pass (at least): 48 KB of coefficients, at most 168 KB of scan out of them. */
const WINDOW_MCUS = 64;
/** Coefficients (i16) per MCU: six blocks of 64. */
const MCU_COEFFS = 6 * 64;
/**
 * Most bytes one MCU can add to a scan: six blocks of 64 codes and magnitudes (at most 16 + 11
 * bits each) and an EOB, every byte then stuffed.
 */
const MCU_SCAN_BYTES = 2 * Math.ceil((6 * (64 * (16 + 11) + 16)) / 8);

export class SimdJpegKernels {
  /** (A stored coefficient + 0.5) times this is the JPEG coefficient (the middle of its cell). */
  readonly coefficientUnit = 1 / (1 << COEFFICIENT_BITS);
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
  private readonly hist: number;
  private readonly scratch: number;
  /** The window the passes copy MCUs' coefficients into: WINDOW_MCUS of them, or an MCU row if wider. */
  private readonly window: number;
  private readonly windowMcus: number;
  private readonly codes: number;
  /** Where a write's window puts its scan bytes (MCU_SCAN_BYTES per MCU of the window). */
  private readonly scanAt: number;
  /** All the coefficients, MCU order Y00 Y01 Y10 Y11 Cb Cr, 64 per block, zigzag order. */
  private readonly store: Int16Array;

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
  ) {
    this.mcuX = Math.ceil(width / 16);
    this.mcus = this.mcuX * Math.ceil(height / 16);
    const padded = this.mcuX * 16;
    this.stride = padded * 3;
    let at = 0;
    const take = (n: number) => {
      const start = at;
      at = align16(at + n);
      return start;
    };
    this.table = take(64 * 4);
    this.blk = take(256 + 128);
    this.recip = take(6 * 64 * 4);
    this.hist = take(1024 * 4);
    this.scratch = take(128);
    this.rgb = take(16 * this.stride + 16);
    this.y = take(16 * padded * 4);
    this.cb = take(8 * (padded >> 1) * 4);
    this.cr = take(8 * (padded >> 1) * 4);
    this.windowMcus = Math.max(WINDOW_MCUS, this.mcuX);
    this.window = take(this.windowMcus * MCU_COEFFS * 2);
    this.codes = take(4 * 256 * 4);
    this.scanAt = take(this.windowMcus * MCU_SCAN_BYTES);
    this.store = new Int16Array(this.mcus * MCU_COEFFS);
    this.lease = instantiate(source, at, "jpeg");
    this.k = this.lease.k;
    const view = new DataView(this.k.memory.buffer);
    for (let k = 0; k < 64; k++) {
      const n = zigzag[k]!;
      // After the two passes coefficient (u = n % 8, v = n / 8) sits at row u, lane v of the scratch block.
      view.setFloat32(this.table + ((n & 7) * 8 + (n >> 3)) * 4, scale[k]! * (1 << COEFFICIENT_BITS), true);
    }
  }

  /** All coefficients: MCU order Y00 Y01 Y10 Y11 Cb Cr, 64 per block, zigzag order, JPEG scale. */
  get coefficients(): Int16Array {
    return this.store;
  }

  get wasmBytes(): number {
    return this.k.memory.buffer.byteLength;
  }

  /** The reciprocals of a quantisation's steps, in the stored coefficients' unit. */
  private setRecip(recip: ArrayLike<number>): void {
    const into = new Float32Array(this.k.memory.buffer, this.recip, 6 * 64);
    for (let i = 0; i < 6 * 64; i++) into[i] = recip[i]! * this.coefficientUnit;
  }

  /** Colour conversion + DCT of the whole RGB image; edges repeat the last column and row, as the JS path pads. */
  transform(rgb: Uint8Array): void {
    if (!this.lease.live()) throw spent();
    const { width, height, stride } = this;
    const bytes = new Uint8Array(this.k.memory.buffer);
    const rowBytes = width * 3;
    for (let my = 0; my * 16 < height; my++) {
      for (let dy = 0; dy < 16; dy++) {
        const sy = Math.min(height - 1, my * 16 + dy);
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
      this.k.rgbToYcc(this.rgb, stride, this.mcuX * 2, 16, this.y, this.cb, this.cr);
      // An MCU row at a time through the window (which holds at least one).
      this.k.dctMcuRow(this.y, this.cb, this.cr, this.mcuX, this.blk, this.table, this.window);
      const row = this.mcuX * MCU_COEFFS;
      this.store.set(new Int16Array(this.k.memory.buffer, this.window, row), my * row);
    }
  }

  /**
   * Runs one entropy pass over every `stride`-th MCU, in order: `pass(count)` is called with each
   * window's MCUs copied into the window.
   */
  private eachWindow(stride: number, pass: (count: number) => void): void {
    const size = this.windowMcus;
    const into = new Int16Array(this.k.memory.buffer, this.window, size * MCU_COEFFS);
    this.k.scanStart();
    if (stride === 1) {
      // Consecutive MCUs: one copy a window.
      for (let m = 0; m < this.mcus; m += size) {
        const count = Math.min(size, this.mcus - m);
        into.set(this.store.subarray(m * MCU_COEFFS, (m + count) * MCU_COEFFS));
        pass(count);
      }
      return;
    }
    // A sample: every `stride`-th MCU, gathered side by side.
    let count = 0;
    for (let m = 0; m < this.mcus; m += stride) {
      into.set(this.store.subarray(m * MCU_COEFFS, (m + 1) * MCU_COEFFS), count * MCU_COEFFS);
      if (++count === size) {
        pass(count);
        count = 0;
      }
    }
    if (count) pass(count);
  }

  /**
   * Quantises every `stride`-th MCU with `recip` (6 x 64 reciprocals, one table per block slot)
   * and counts its symbols: histograms at 0 (DC luma), 256 (AC luma), 512 (DC chroma), 768
   * (AC chroma) and the magnitude bits.
   */
  quantCount(recip: ArrayLike<number>, stride: number): { hist: Uint32Array; extraBits: number } {
    if (!this.lease.live()) throw spent();
    this.setRecip(recip);
    const hist = new Uint32Array(this.k.memory.buffer, this.hist, 1024);
    hist.fill(0);
    let extraBits = 0;
    this.eachWindow(stride, (count) => {
      extraBits += this.k.quantCount(this.window, this.recip, this.hist, count, this.scratch);
    });
    return { hist: hist.slice(), extraBits };
  }

  /**
   * The entropy-coded scan quantised with `recip` (as `quantCount` takes it), with Huffman `tables`
   * (DC luma, AC luma, DC chroma, AC chroma: `code`/`length` per symbol) built from the full count
   * at that quantisation, whose entropy size was `entropyBytes`: 0xFF stuffing at most doubles it,
   * so the memory grows once to twice that, if it must. The view is valid until the next write.
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
    this.eachWindow(1, (count) =>
      take(this.k.writeScan(this.window, this.recip, this.scratch, count, this.codes, this.scanAt)),
    );
    take(this.k.scanFlush(this.scanAt));
    return scan.subarray(0, length);
  }
}
