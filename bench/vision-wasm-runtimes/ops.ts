/**
 * What bench/vision-wasm-runtimes.ts runs, the same code in workerd and in Node: our SIMD kernels
 * alone on a 1920x1080 frame (per-row calls, as the decoder and the resampler make them), the
 * in-memory resize, and whole fits of two screenshots. Each op runs `reps` times and returns a
 * number so nothing is dropped as dead code.
 */
import { parseChunks } from "../../shared/imaging/codecs/png/png.decode";
import { ZlibInflater } from "../../shared/imaging/codecs/png/png.inflate";
import { fitImage } from "../../shared/imaging/fit";
import { resizeRgb } from "../../shared/imaging/resample";
import type { SimdExports } from "../../shared/imaging/wasm/simd.instances";
import type { VisionWasm } from "../../shared/ports";

export const KERNEL_OPS = [
  "hfilter",
  "vfilter",
  "vfilter-10",
  "unfilter-sub-3",
  "unfilter-avg-3",
  "unfilter-paeth-3",
  "unfilter-sub-4",
  "unfilter-paeth-4",
  "flatten",
  "resize",
  "ycc",
  "dct",
  "quant",
];
export const FIT_OPS = ["inflate-light", "fit-session", "fit-light"];

let frame: Uint8Array | undefined;
/** A 1920x1080 RGB frame (the kernels' time does not depend on the pixels). */
function rgbFrame(): Uint8Array {
  if (frame) return frame;
  frame = new Uint8Array(1920 * 1080 * 3);
  let s = 12345;
  for (let i = 0; i < frame.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    frame[i] = (i % 5760) / 23 + (s >>> 28);
  }
  return frame;
}

const FILTERS: Record<string, number> = { sub: 1, avg: 3, paeth: 4 };

export async function runOp(
  wasm: VisionWasm,
  pngs: { session: Uint8Array; light: Uint8Array },
  op: string,
  reps: number,
): Promise<number> {
  let sum = 0;
  if (op === "inflate-light") {
    // The light screenshot's IDAT data inflated as the decoder does (zlib-ng, Adler-32 checked).
    for (let r = 0; r < reps; r++) {
      const inflater = new ZlibInflater(wasm.zlib, parseChunks(pngs.light).idat);
      for (let bytes = inflater.next(); bytes; bytes = inflater.next()) sum += bytes.length;
    }
    return sum;
  }
  if (op.startsWith("fit-")) {
    const png = op === "fit-session" ? pngs.session : pngs.light;
    for (let r = 0; r < reps; r++)
      sum += (await fitImage(png, { embedTargetBytes: 262144, maxLongEdge: 1568, maxInputPixels: 16_777_216 }, wasm))
        .data.length;
    return sum;
  }
  const module = wasm.simd!;
  if (op === "resize") {
    for (let r = 0; r < reps; r++) sum += resizeRgb(rgbFrame(), 1920, 1080, 1568, 882, module)[12345]!;
    return sum;
  }
  const k = new WebAssembly.Instance(module, {}).exports as unknown as SimdExports;
  k.memory.grow(40);
  const words = new Int32Array(k.memory.buffer);
  const bytes = new Uint8Array(k.memory.buffer);
  const at = (n: number) => n * 65536;
  if (op === "hfilter") {
    // 1920 -> 1568 px: 2 quads of taps per output; zero weights (the time does not depend on them).
    for (let x = 0; x < 1568; x++) words[(at(4) >> 2) + x] = Math.floor(x * 1.2245) * 3;
    for (let r = 0; r < reps; r++) for (let y = 0; y < 1080; y++) k.hfilter(at(6), at(8), at(1), at(4), 1568, 2, 6);
    return bytes[at(8)]!;
  }
  if (op === "vfilter" || op === "vfilter-10") {
    // 882 rows of 1568 px from ring rows 1568 x 3 i32 apart: 8 taps (1080 -> 882 rows), or 10 (1440 -> 882).
    const taps = op === "vfilter" ? 8 : 10;
    const stride = 294 * 64 + 16;
    for (let t = 0; t < taps; t++) {
      words[(at(1) >> 2) + t] = at(2) + t * stride;
      words[(at(1) >> 2) + 16 + t] = 500;
    }
    for (let r = 0; r < reps; r++)
      for (let y = 0; y < 882; y++) k.vfilter(at(1), at(1) + 64, taps, at(1) + 256, 294, 20);
    return bytes[at(1) + 256]!;
  }
  if (op.startsWith("unfilter-")) {
    const [, name, bpp] = op.split("-");
    for (let r = 0; r < reps; r++)
      for (let y = 0; y < 1080; y++) k.unfilter(FILTERS[name!]!, at(1), at(2), 1920 * Number(bpp), Number(bpp));
    return bytes[at(1)]!;
  }
  if (op === "flatten") {
    for (let r = 0; r < reps; r++) for (let y = 0; y < 1080; y++) k.flattenRgba(at(1), at(2), 1920);
    return bytes[at(2)]!;
  }
  // The encoder's kernels over 56 MCU rows of 1568 px (4:2:0): colour conversion, DCT, and a
  // quantise-and-count pass; pseudo-random samples (the time does not depend on them).
  if (op === "ycc") {
    for (let i = at(1); i < at(3); i++) bytes[i] = (i * 7919) >>> 3;
    for (let r = 0; r < reps; r++)
      for (let y = 0; y < 56; y++) k.rgbToYcc(at(1), 1568 * 3, 196, 16, at(4), at(7), at(8), 0);
    return bytes[at(4)]!;
  }
  if (op === "dct" || op === "quant") {
    const floats = new Float32Array(k.memory.buffer);
    let s = 7;
    for (let i = at(1) >> 2; i < at(8) >> 2; i++) {
      s = (s * 1103515245 + 12345) >>> 0;
      floats[i] = (s >>> 24) - 128;
    }
    for (let i = 0; i < 64; i++) floats[(at(7) >> 2) + i] = 0.125;
    for (let i = 0; i < 6 * 64; i++) floats[(at(9) >> 2) + i] = 1 / 12;
    for (let r = 0; r < reps; r++)
      for (let y = 0; y < 56; y++) {
        if (op === "dct") k.dctMcuRow(at(1), at(4), at(5), 98, at(6), at(7), at(8), 0);
        else {
          k.scanStart();
          k.quantCount(at(8), at(9), at(10), 98, at(11), 4, 0, 0);
        }
      }
    return bytes[at(8)]!;
  }
  throw new Error(`unknown op ${op}`);
}
