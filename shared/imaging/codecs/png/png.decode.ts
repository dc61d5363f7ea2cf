/**
 * Row-by-row PNG decode: IDAT data is inflated by zlib-ng in WASM (png.inflate.ts), each
 * scanline is unfiltered against the previous one and handed to the resampler as RGB with
 * transparency flattened on white. Only two scanlines and the destination accumulator are held, so
 * a 5K screenshot costs a few MB instead of 59 MB of RGBA. With our SIMD module the two scanlines
 * live in its memory and are unfiltered (and RGBA flattened) there. Interlaced (Adam7) files take
 * png.adam7.ts, which holds the even rows.
 */
import type { AppError } from "../../../http/errors";
import { invalidImage } from "../../../media/image-header";
import type { VisionWasm } from "../../../ports";
import { type DecodedRows, flattenRgbaRow, type ResamplerFactory } from "../codec";
import type { SimdPool, SimdSource } from "../../wasm/simd.instances";
import { SimdPngKernels } from "../../wasm/vision.simd";
import { inflateBounded, ZlibInflater } from "./png.inflate";

/** A PNG's chunks, validated (order, sizes, CRCs) down to IEND: what its decode and its verification read. */
export interface PngInfo {
  width: number;
  height: number;
  bitDepth: number;
  colorType: number;
  interlaced: boolean;
  palette?: Uint8Array;
  /** Palette alphas, or the transparent gray/RGB sample (16-bit values). */
  transparency?: Uint8Array;
  /** The first iCCP chunk's data (profile name, compression method, zlib stream), not yet inflated. */
  iccp?: Uint8Array;
  idat: Uint8Array[];
  /**
   * Ancillary chunks dropped for a wrong CRC, in file order. The file then differs from what is
   * decoded, so it is never embedded unchanged.
   */
  droppedChunks: string[];
}

export const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
/** Adam7's seven passes: [x start, y start, x step, y step]. */
export const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;
/** Bit depths the PNG spec allows per colour type. */
const BIT_DEPTHS: Record<number, number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};
/** Ancillary chunks the spec places before PLTE and IDAT (colour space), and before IDAT only. */
const BEFORE_PLTE = new Set(["cHRM", "gAMA", "iCCP", "sBIT", "sRGB", "cICP", "mDCV", "cLLI"]);
const BEFORE_IDAT = new Set(["bKGD", "hIST", "tRNS", "pHYs", "sPLT", "acTL"]);
/** Chunks that must come after PLTE when there is one. */
const AFTER_PLTE = new Set(["bKGD", "hIST", "tRNS"]);

function corrupt(what: string): AppError {
  return invalidImage("PNG", `could not be decoded: ${what}`);
}

/** CRC-32 (ISO 3309, as PNG uses it) sliced by 8 bytes: a 25 MiB file checks in tens of ms. */
const CRC_TABLES = (() => {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let k = 1; k < 8; k++)
    for (let n = 0; n < 256; n++) t[k * 256 + n] = (t[(k - 1) * 256 + n]! >>> 8) ^ t[t[(k - 1) * 256 + n]! & 0xff]!;
  return t;
})();

export function crc32(bytes: Uint8Array, start: number, end: number): number {
  const t = CRC_TABLES;
  let c = 0xffffffff;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    const a = c ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    c =
      t[1792 + (a & 0xff)]! ^
      t[1536 + ((a >>> 8) & 0xff)]! ^
      t[1280 + ((a >>> 16) & 0xff)]! ^
      t[1024 + (a >>> 24)]! ^
      t[768 + bytes[i + 4]!]! ^
      t[512 + bytes[i + 5]!]! ^
      t[256 + bytes[i + 6]!]! ^
      t[bytes[i + 7]!]!;
  }
  for (; i < end; i++) c = t[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function checkHeader(data: Uint8Array): Omit<PngInfo, "idat" | "droppedChunks"> {
  if (data.length !== 13) throw corrupt(`its IHDR chunk is ${data.length} bytes, not 13`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const width = view.getUint32(0),
    height = view.getUint32(4);
  const bitDepth = data[8]!,
    colorType = data[9]!;
  if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff)
    throw corrupt(`its IHDR declares an impossible size ${width}x${height}`);
  if (!BIT_DEPTHS[colorType]) throw corrupt(`unknown color type ${colorType}`);
  if (!BIT_DEPTHS[colorType]!.includes(bitDepth))
    throw corrupt(`bit depth ${bitDepth} is not allowed for color type ${colorType}`);
  if (data[10] !== 0 || data[11] !== 0) throw corrupt("its IHDR names an unknown compression or filter method");
  if (data[12]! > 1) throw corrupt(`unknown interlace method ${data[12]}`);
  return { width, height, bitDepth, colorType, interlaced: data[12] === 1 };
}

/**
 * Walks every chunk to IEND: exactly one IHDR and first, PLTE (at most one) before the image data,
 * the IDAT chunks consecutive, the ancillary chunks in the places the PNG spec gives them, every
 * critical chunk's CRC right (an ancillary chunk with a wrong CRC is dropped, as libpng does).
 * The IHDR read here is the one the header check read, so the size limits hold for what is decoded.
 * @throws AppError 400 `invalid_image` naming the first rule the file breaks.
 */
export function parseChunks(bytes: Uint8Array): PngInfo {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 8;
  let info: PngInfo | undefined;
  let idatState: "before" | "in" | "after" = "before";
  const seen = new Set<string>();
  for (;;) {
    if (at + 12 > bytes.length)
      throw invalidImage("PNG", `is truncated: it ends at byte ${bytes.length}, before its IEND chunk`);
    const length = view.getUint32(at);
    const type = String.fromCharCode(bytes[at + 4]!, bytes[at + 5]!, bytes[at + 6]!, bytes[at + 7]!);
    if (!/^[A-Za-z]{4}$/.test(type)) throw corrupt(`byte ${at + 4} starts no valid chunk type`);
    if (length > 0x7fffffff || length > bytes.length - at - 12) {
      throw invalidImage(
        "PNG",
        `is truncated: its ${type} chunk declares ${length} bytes but only ${Math.max(0, bytes.length - at - 12)} follow`,
      );
    }
    const dataStart = at + 8,
      dataEnd = dataStart + length;
    const data = bytes.subarray(dataStart, dataEnd);
    const critical = (bytes[at + 4]! & 0x20) === 0; // upper-case first letter
    at = dataEnd + 4;
    if (crc32(bytes, dataStart - 4, dataEnd) !== view.getUint32(dataEnd)) {
      // As libpng: a damaged ancillary chunk (text, colour hints, even tRNS) is dropped and the
      // image decoded without it; a damaged critical chunk leaves nothing trustworthy to decode.
      if (critical || !info) throw corrupt(`its ${type} chunk has a wrong CRC (the data is damaged)`);
      info.droppedChunks.push(type);
      continue;
    }
    if (!info) {
      if (type !== "IHDR") throw corrupt("its first chunk is not IHDR");
      info = { ...checkHeader(data), idat: [], droppedChunks: [] };
      seen.add(type);
      continue;
    }
    if (idatState === "in" && type !== "IDAT") idatState = "after";
    const outOfPlace = () =>
      corrupt(
        `its ${type} chunk is out of place (${type === "IHDR" ? "a second IHDR" : idatState === "before" ? "after PLTE" : "after the image data"})`,
      );
    if (type === "IHDR") throw outOfPlace();
    if (type === "IEND") break;
    if (type === "IDAT") {
      if (idatState === "after") throw corrupt("its IDAT chunks are not consecutive");
      idatState = "in";
      info.idat.push(data);
      continue;
    }
    if (BEFORE_PLTE.has(type) && (seen.has("PLTE") || idatState !== "before")) throw outOfPlace();
    if (BEFORE_IDAT.has(type) && idatState !== "before") throw outOfPlace();
    if (type === "PLTE") {
      if (seen.has("PLTE")) throw corrupt("it has two PLTE chunks");
      if (idatState !== "before") throw outOfPlace();
      if ([...AFTER_PLTE].some((t) => seen.has(t)))
        throw corrupt("its PLTE chunk comes after a chunk that must follow it (bKGD, hIST or tRNS)");
      if (info.colorType === 0 || info.colorType === 4)
        throw corrupt("it has a palette (PLTE) but a grayscale color type");
      if (length === 0 || length % 3 !== 0 || length / 3 > 256)
        throw corrupt(`its PLTE chunk is ${length} bytes, not 3 per entry for 1..256 entries`);
      info.palette = data;
    } else if (type === "tRNS") {
      if (seen.has("tRNS")) throw corrupt("it has two tRNS chunks");
      if (info.colorType === 4 || info.colorType === 6)
        throw corrupt("it has a tRNS chunk but its color type already has alpha");
      if (info.colorType === 3 && (!info.palette || length > info.palette.length / 3))
        throw corrupt("its tRNS chunk does not follow a palette it fits");
      if ((info.colorType === 0 && length !== 2) || (info.colorType === 2 && length !== 6))
        throw corrupt(`its tRNS chunk is ${length} bytes, wrong for color type ${info.colorType}`);
      info.transparency = data;
    } else if (type === "iCCP") {
      info.iccp ??= data;
    } else if (critical) {
      throw corrupt(`it has an unknown critical chunk ${type}`);
    }
    seen.add(type);
  }
  if (!info) throw corrupt("it has no IHDR chunk");
  if (info.idat.length === 0) throw corrupt("it has no image data (no IDAT chunk)");
  if (info.colorType === 3 && !info.palette) throw corrupt("it has a palette color type but no palette");
  return info;
}

function unfilter(filter: number, cur: Uint8Array, prev: Uint8Array, bpp: number): void {
  const n = cur.length;
  switch (filter) {
    case 0:
      return;
    case 1:
      for (let i = bpp; i < n; i++) cur[i] = cur[i]! + cur[i - bpp]!;
      return;
    case 2:
      for (let i = 0; i < n; i++) cur[i] = cur[i]! + prev[i]!;
      return;
    case 3:
      for (let i = 0; i < bpp; i++) cur[i] = cur[i]! + (prev[i]! >> 1);
      for (let i = bpp; i < n; i++) cur[i] = cur[i]! + ((cur[i - bpp]! + prev[i]!) >> 1);
      return;
    case 4:
      for (let i = 0; i < bpp; i++) cur[i] = (cur[i]! + prev[i]!) & 0xff;
      // Paeth predictor inlined: it runs on most rows of a screenshot and dominated the decode.
      for (let i = bpp; i < n; i++) {
        const a = cur[i - bpp]!,
          b = prev[i]!,
          c = prev[i - bpp]!;
        const pa0 = b - c,
          pb0 = a - c;
        const pa = pa0 < 0 ? -pa0 : pa0,
          pb = pb0 < 0 ? -pb0 : pb0;
        const pc0 = pa0 + pb0,
          pc = pc0 < 0 ? -pc0 : pc0;
        cur[i] = cur[i]! + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
      }
      return;
    default:
      throw corrupt(`unknown row filter ${filter}`);
  }
}

export type RowConverter = (line: Uint8Array, out: Uint8Array) => void;

/** Converts one unfiltered scanline to RGB, flattening any transparency on white. */
export function makeRowConverter(info: PngInfo): RowConverter | undefined {
  const { width, bitDepth, colorType, palette, transparency } = info;
  const blend = (c: number, a: number) => ((c * a + 255 * (255 - a)) / 255 + 0.5) | 0;
  // 8-bit RGB without a transparent colour is already what the resampler takes: no conversion.
  if (colorType === 2 && bitDepth === 8 && !(transparency && transparency.length >= 6)) return undefined;
  if (colorType === 6 && bitDepth === 8) {
    return (line, out) => flattenRgbaRow(line, 0, width, out);
  }
  if (colorType === 0 || colorType === 3) {
    const max = (1 << bitDepth) - 1;
    const transparentGray =
      colorType === 0 && transparency && transparency.length >= 2 ? (transparency[0]! << 8) | transparency[1]! : -1;
    return (line, out) => {
      for (let x = 0; x < width; x++) {
        let sample: number;
        if (bitDepth === 16) sample = (line[x * 2]! << 8) | line[x * 2 + 1]!;
        else if (bitDepth === 8) sample = line[x]!;
        else {
          const bit = x * bitDepth;
          sample = (line[bit >> 3]! >> (8 - bitDepth - (bit & 7))) & max;
        }
        let r: number,
          g: number,
          b: number,
          a = 255;
        if (colorType === 3) {
          r = palette![sample * 3] ?? 0;
          g = palette![sample * 3 + 1] ?? 0;
          b = palette![sample * 3 + 2] ?? 0;
          if (transparency && sample < transparency.length) a = transparency[sample]!;
        } else {
          if (sample === transparentGray) a = 0;
          r = g = b = bitDepth === 16 ? sample >> 8 : Math.round((sample * 255) / max);
        }
        const o = x * 3;
        if (a === 255) {
          out[o] = r;
          out[o + 1] = g;
          out[o + 2] = b;
        } else {
          out[o] = blend(r, a);
          out[o + 1] = blend(g, a);
          out[o + 2] = blend(b, a);
        }
      }
    };
  }
  const channels = CHANNELS[colorType]!;
  const step = (bitDepth === 16 ? 2 : 1) * channels;
  const hi = bitDepth === 16 ? 2 : 1;
  const transparentRgb = colorType === 2 && transparency && transparency.length >= 6 ? transparency : undefined;
  return (line, out) => {
    for (let x = 0, p = 0, o = 0; x < width; x++, p += step, o += 3) {
      let r: number, g: number, b: number, a: number;
      if (colorType === 4) {
        r = g = b = line[p]!;
        a = line[p + hi]!;
      } else {
        r = line[p]!;
        g = line[p + hi]!;
        b = line[p + 2 * hi]!;
        a = colorType === 6 ? line[p + 3 * hi]! : 255;
        if (transparentRgb) {
          const same =
            bitDepth === 16
              ? line[p] === transparentRgb[0] &&
                line[p + 1] === transparentRgb[1] &&
                line[p + 2] === transparentRgb[2] &&
                line[p + 3] === transparentRgb[3] &&
                line[p + 4] === transparentRgb[4] &&
                line[p + 5] === transparentRgb[5]
              : r === transparentRgb[1] && g === transparentRgb[3] && b === transparentRgb[5];
          if (same) a = 0;
        }
      }
      if (a === 255) {
        out[o] = r;
        out[o + 1] = g;
        out[o + 2] = b;
      } else {
        out[o] = blend(r, a);
        out[o + 1] = blend(g, a);
        out[o + 2] = blend(b, a);
      }
    }
  };
}

/** Where scanlines are unfiltered: our SIMD kernels' memory, or two JS lines (the fallback). */
export interface LineStore {
  /** Bytes that hold the line being filled at `line`. */
  bytes: Uint8Array;
  line: number;
  unfilter(filter: number): void;
  /** The finished line as the resampler's RGB input: `bytes` at the returned offset. */
  rgbRow(): { bytes: Uint8Array; at: number };
  nextLine(): void;
  /** Bytes of WASM memory holding the lines (0 in JS). */
  wasmBytes: number;
}

function simdLines(
  source: SimdSource,
  info: PngInfo,
  stride: number,
  bpp: number,
  convert: RowConverter | undefined,
): LineStore {
  const k = new SimdPngKernels(source, stride, info.width);
  const rgba = info.colorType === 6 && info.bitDepth === 8;
  const rgb = new Uint8Array(convert && !rgba ? info.width * 3 : 0);
  return {
    bytes: k.bytes,
    get line() {
      return k.line;
    },
    unfilter: (filter) => {
      if (filter > 4) throw corrupt(`unknown row filter ${filter}`);
      k.unfilter(filter, bpp);
    },
    rgbRow: () => {
      if (rgba) {
        k.flattenRgba();
        return { bytes: k.bytes, at: k.rgb };
      }
      if (!convert) return { bytes: k.bytes, at: k.line };
      convert(k.bytes.subarray(k.line, k.line + stride), rgb);
      return { bytes: rgb, at: 0 };
    },
    nextLine: () => k.nextLine(),
    wasmBytes: k.wasmBytes,
  };
}

export function jsLines(info: PngInfo, stride: number, bpp: number, convert: RowConverter | undefined): LineStore {
  let cur = new Uint8Array(stride);
  let prev = new Uint8Array(stride);
  const rgb = new Uint8Array(convert ? info.width * 3 : 0);
  return {
    get bytes() {
      return cur;
    },
    line: 0,
    unfilter: (filter) => unfilter(filter, cur, prev, bpp),
    rgbRow: () => {
      if (!convert) return { bytes: cur, at: 0 };
      convert(cur, rgb);
      return { bytes: rgb, at: 0 };
    },
    nextLine: () => {
      [prev, cur] = [cur, prev];
    },
    wasmBytes: 0,
  };
}

/**
 * Streams the rows of a non-interlaced PNG, its chunks walked once by parseChunks, into the
 * resampler built for its full size. Given our SIMD module, unfiltering and the RGBA flatten run
 * there (same bytes as the JS loops), in an instance leased from the fit's `simd` pool when given.
 * @throws AppError 400 `invalid_image` for a corrupt or short zlib stream.
 * @example
 * const info = parseChunks(bytes); // once per fit: every later decode of the file reuses it
 * const { resampler } = decodePngRows(info, (w, h) => new StreamingResampler(w, h, { x: 0, y: 0, width: w, height: h }, 800, 600), wasm);
 */
export function decodePngRows(
  info: PngInfo,
  makeResampler: ResamplerFactory,
  wasm: Pick<VisionWasm, "zlib" | "simd">,
  simd?: SimdPool,
): DecodedRows {
  const { width, height, bitDepth, colorType } = info;
  const channels = CHANNELS[colorType]!;
  const bitsPerPixel = channels * bitDepth;
  const stride = Math.ceil((width * bitsPerPixel) / 8);
  const bpp = Math.max(1, bitsPerPixel >> 3);
  const resampler = makeResampler(width, height);
  const convert = makeRowConverter(info);
  const lines = wasm.simd
    ? simdLines(simd ?? wasm.simd, info, stride, bpp, convert)
    : jsLines(info, stride, bpp, convert);
  let lastWanted = height - 1;
  while (lastWanted > 0 && !resampler.wantsRow(lastWanted)) lastWanted--;

  const inflater = new ZlibInflater(wasm.zlib, info.idat);

  let row = 0;
  let filter = -1; // -1: next byte is the row's filter type
  let filled = 0;
  outer: while (row < height) {
    const data = inflater.next();
    if (!data) break;
    let at = 0;
    while (at < data.length) {
      if (filter < 0) {
        filter = data[at++]!;
        continue;
      }
      const take = Math.min(stride - filled, data.length - at);
      lines.bytes.set(data.subarray(at, at + take), lines.line + filled);
      filled += take;
      at += take;
      if (filled === stride) {
        lines.unfilter(filter);
        if (resampler.wantsRow(row)) {
          const out = lines.rgbRow();
          resampler.pushRow(row, out.bytes, out.at);
        }
        lines.nextLine();
        filled = 0;
        filter = -1;
        row++;
        if (row > lastWanted) break outer;
      }
    }
  }
  if (row <= lastWanted) {
    throw invalidImage("PNG", `is truncated: its compressed data holds ${row} of its ${height} rows`);
  }
  return { resampler, wasmBytes: inflater.wasmBytes + lines.wasmBytes };
}

/** Largest ICC profile we inflate; real matrix/TRC profiles are a few KB, LUT ones a few hundred. */
const MAX_ICC_BYTES = 1 << 22;

/**
 * The embedded ICC profile (the iCCP chunk parseChunks found before the image data), inflated with
 * a size bound; undefined when absent or unreadable (the pixels are then taken as sRGB).
 */
export function pngIccProfile(info: PngInfo, zlib: WebAssembly.Module): Uint8Array | undefined {
  const data = info.iccp;
  if (!data) return undefined;
  const nul = data.indexOf(0);
  if (nul < 1 || nul > 79 || data[nul + 1] !== 0) return undefined;
  // Over the limit or corrupt: no profile either way.
  return inflateBounded(zlib, data.subarray(nul + 2), MAX_ICC_BYTES);
}
