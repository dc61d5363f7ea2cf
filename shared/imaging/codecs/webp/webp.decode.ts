/**
 * WebP through libwebp (our WASM build, native/webp/) in an instance created for this one call.
 * libwebp scales while decoding (an area-averaging rescaler) to WEBP_MARGIN above the target, less
 * if that would pass the memory it may use, so the output it writes is bounded by the fit's size,
 * not the image's; a lossless frame holds its ARGB (4 bytes a pixel) on the way, as VP8L's
 * backward references need. An animation gives its first frame (through libwebp's demuxer),
 * placed on the canvas over white at the same scale.
 */
import type { AppError } from "../../../http/errors";
import { invalidImage } from "../../../media/image-header";
import type { StreamingResampler } from "../../resample";
import {
  decodeCallerBytes,
  decoderOutOfMemory,
  flattenRgbaRow,
  type DecodeStats,
  type ResamplerFactory,
} from "../codec";

/** The exports of shared/imaging/wasm/webp.decode.wasm (native/webp/decoder.c). */
interface WebpDecoderExports {
  memory: WebAssembly.Memory;
  malloc(size: number): number;
  wd_info(source: number, length: number, out: number): number;
  wd_decode(
    source: number,
    length: number,
    width: number,
    height: number,
    alpha: number,
    pixels: number,
    stride: number,
    size: number,
  ): number;
}

/**
 * libwebp's rescaler stops this factor above the target and our Lanczos does the rest. Measured on a
 * 4000x3000 screenshot fitted at 1 MiB, PSNR against Lanczos of the original: 35.7 dB at 1.5, 38.3
 * at 2, 39.5 at 2.5, 39.9 decoded at full size; sharp's own WebP shrink-on-load gives 33.9
 * (docs/vision-decisions.md, "Our libwebp build").
 */
const WEBP_MARGIN = 2.5;
/**
 * What the decode may hold in WASM memory (the file, a lossless frame's ARGB, the output): the
 * margin shrinks to stay within it, never below the target itself.
 */
const WEBP_MEMORY_BYTES = 80 * 2 ** 20;
/** Lossless (VP8L) in wd_info's format field. */
const FORMAT_LOSSLESS = 2;

/** libwebp's VP8StatusCode values the answer tells apart. */
const VP8_STATUS_OUT_OF_MEMORY = 1;
const VP8_STATUS_NOT_ENOUGH_DATA = 7;

const CORRUPT = "could not be decoded: its data is corrupt";

/** What libwebp's status says about the caller's bytes. */
function refusal(status: number, width: number, height: number): AppError {
  if (status === VP8_STATUS_OUT_OF_MEMORY) return decoderOutOfMemory("WEBP", { width, height });
  if (status === VP8_STATUS_NOT_ENOUGH_DATA) return invalidImage("WEBP", "is cut short: its frame data ends early");
  return invalidImage("WEBP", CORRUPT);
}

/**
 * Decodes the first frame of a WebP and streams its RGB rows (alpha flattened on white) into the
 * resampler the factory builds for the decoded size. `minScale`: the output's pixels per original
 * pixel; the frame is decoded scaled to WEBP_MARGIN times that (less where memory says so, never
 * below it), never above its own size, and a first frame smaller than its canvas is placed at the
 * same scale. With `fullDetail` (DecodeDetail "full") the margin is as large as memory allows:
 * the rescaler's area average from the full size to 2.5x a 1568-pixel target had cost a lossless
 * screenshot 6.7 dB at 1 MiB (docs/vision-decisions.md, "The DCT-scaled decode at generous budgets").
 */
export function decodeWebpRows(
  bytes: Uint8Array,
  width: number,
  height: number,
  minScale: number,
  module: WebAssembly.Module,
  makeResampler: ResamplerFactory,
  fullDetail = false,
): { stats: DecodeStats; resampler: StreamingResampler } {
  const wd = new WebAssembly.Instance(module, {}).exports as unknown as WebpDecoderExports;
  const call = <T>(run: () => T) => decodeCallerBytes("libwebp", "WEBP", CORRUPT, run);
  const src = wd.malloc(bytes.length);
  const info = wd.malloc(44);
  if (src === 0 || info === 0) throw decoderOutOfMemory("WEBP", { width, height });
  new Uint8Array(wd.memory.buffer, src, bytes.length).set(bytes);
  const status = call(() => wd.wd_info(src, bytes.length, info));
  if (status !== 0) throw refusal(status, width, height);
  const [canvasWidth, canvasHeight, alpha, , at, length, x0, y0, frameWidth, frameHeight, format] = Array.from(
    new Int32Array(wd.memory.buffer, info, 11),
  ) as [number, number, number, number, number, number, number, number, number, number, number];
  // The header sniff read the canvas and checked every frame against it; libwebp must agree.
  if (canvasWidth !== width || canvasHeight !== height)
    throw invalidImage("WEBP", `decodes to ${canvasWidth}x${canvasHeight}, not the ${width}x${height} it declares`);
  // The sniff checked every frame against the canvas; the demuxer's first frame must agree.
  if (x0 < 0 || y0 < 0 || frameWidth < 1 || frameHeight < 1 || x0 + frameWidth > width || y0 + frameHeight > height)
    throw invalidImage(
      "WEBP",
      `has a first frame (${frameWidth}x${frameHeight} at ${x0},${y0}) outside its ${width}x${height} canvas`,
    );
  const channels = alpha ? 4 : 3;
  const held = bytes.length + (format === FORMAT_LOSSLESS ? 4 * frameWidth * frameHeight : 0);
  const affordable = Math.sqrt(Math.max(0, WEBP_MEMORY_BYTES - held) / (channels * frameWidth * frameHeight));
  const scale = Math.min(1, Math.max(minScale, fullDetail ? affordable : Math.min(minScale * WEBP_MARGIN, affordable)));
  // The canvas at that scale, and the first frame placed on it (the whole canvas for a still).
  const outWidth = Math.max(1, Math.ceil(width * scale));
  const outHeight = Math.max(1, Math.ceil(height * scale));
  const left = Math.min(outWidth - 1, Math.floor(x0 * scale));
  const top = Math.min(outHeight - 1, Math.floor(y0 * scale));
  // A frame that reaches the canvas's edge reaches the scaled canvas's edge (a still: all of it).
  const right = x0 + frameWidth === width ? outWidth : Math.min(outWidth, Math.round((x0 + frameWidth) * scale));
  const bottom = y0 + frameHeight === height ? outHeight : Math.min(outHeight, Math.round((y0 + frameHeight) * scale));
  const frameOutWidth = Math.max(1, right - left);
  const frameOutHeight = Math.max(1, bottom - top);
  const stride = frameOutWidth * channels;
  const pixels = wd.malloc(stride * frameOutHeight);
  if (pixels === 0) throw decoderOutOfMemory("WEBP", { width, height });
  const decoded = call(() =>
    wd.wd_decode(src + at, length, frameOutWidth, frameOutHeight, alpha, pixels, stride, stride * frameOutHeight),
  );
  if (decoded !== 0) throw refusal(decoded, width, height);

  const resampler = makeResampler(outWidth, outHeight);
  const memory = new Uint8Array(wd.memory.buffer);
  const rgb = new Uint8Array(outWidth * 3);
  // Outside a first frame smaller than its canvas the canvas shows white (every image is flattened on white).
  const partial = frameOutWidth < outWidth || frameOutHeight < outHeight;
  const into = rgb.subarray(left * 3, (left + frameOutWidth) * 3);
  for (let row = 0; row < outHeight; row++) {
    if (!resampler.wantsRow(row)) continue;
    const frameRow = row - top;
    if (partial) rgb.fill(255);
    if (frameRow >= 0 && frameRow < frameOutHeight) {
      const line = pixels + frameRow * stride;
      if (alpha) flattenRgbaRow(memory, line, frameOutWidth, into);
      else into.set(memory.subarray(line, line + frameOutWidth * 3));
    }
    resampler.pushRow(row, rgb);
  }
  return {
    stats: { wasmBytes: wd.memory.buffer.byteLength, decodedWidth: outWidth, decodedHeight: outHeight },
    resampler,
  };
}

/** Takes no row: what a verification hands the decoder. */
const NO_ROWS = { wantsRow: () => false, pushRow: () => undefined, finish: () => new Uint8Array(0) };

/**
 * Decodes all of a WebP's first frame, scaled to an eighth and handing over no row: how a WebP
 * embedded unchanged is verified (every VP8/VP8L bit read, as a decode of any size reads them).
 * @throws AppError 400 `invalid_image` when libwebp cannot decode it.
 */
export function verifyWebp(bytes: Uint8Array, width: number, height: number, module: WebAssembly.Module): void {
  decodeWebpRows(bytes, width, height, 1 / 8 / WEBP_MARGIN, module, () => NO_ROWS as unknown as StreamingResampler);
}
