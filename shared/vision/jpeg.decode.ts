/**
 * JPEG decode through TurboJPEG in a WASM instance created for this one call. The decoder scales
 * in the DCT domain (n/8), so a 12 MP photo headed for 1568 px is decoded straight to 2016x1512
 * instead of 48 MB of full-size RGBA; the instance and its memory are garbage once this returns.
 */
import { AppError } from "../http/errors";
import { invalidImage } from "./format";
import type { DecodeStats, ResamplerFactory } from "./codecs";

const TJPF_RGB = 0;

class WasmAbort extends Error {}

interface TurboJpegExports {
  memory: WebAssembly.Memory;
  malloc(size: number): number;
  free(ptr: number): void;
  tjInitDecompress(): number;
  tjDestroy(handle: number): number;
  tjDecompress2(handle: number, src: number, srcSize: number, dst: number, width: number, pitch: number, height: number, pixelFormat: number, flags: number): number;
}

function instantiate(module: WebAssembly.Module): TurboJpegExports {
  let memory: WebAssembly.Memory | undefined;
  // libjpeg reports fatal errors by longjmp; without a real setjmp we unwind by throwing, which
  // leaves this instance unusable: fine, it is never reused.
  const env = {
    setjmp: () => 0,
    longjmp: () => {
      throw new WasmAbort("libjpeg error");
    },
  };
  const wasi = {
    proc_exit: () => {
      throw new WasmAbort("libjpeg exit");
    },
    environ_sizes_get: () => 0,
    environ_get: () => 0,
    fd_close: () => 0,
    fd_seek: () => 0,
    // libjpeg prints warnings (e.g. a truncated scan) to stderr; swallow them but report them written.
    fd_write: (_fd: number, iovs: number, iovsLen: number, written: number) => {
      if (!memory) return 0;
      const view = new DataView(memory.buffer);
      let total = 0;
      for (let i = 0; i < iovsLen; i++) total += view.getUint32(iovs + i * 8 + 4, true);
      view.setUint32(written, total, true);
      return 0;
    },
  };
  const instance = new WebAssembly.Instance(module, { env, wasi_snapshot_preview1: wasi });
  const exports = instance.exports as unknown as TurboJpegExports;
  memory = exports.memory;
  return exports;
}

/** The smallest n/8 scale (n = 1..8) that still delivers at least `minScale` of the original size. */
export function jpegDctEighths(minScale: number): number {
  for (let n = 1; n < 8; n++) if (n / 8 >= minScale - 1e-9) return n;
  return 8;
}

/**
 * Decodes `bytes` at the smallest DCT scale ≥ `minScale` and streams its RGB rows into the
 * resampler the factory builds for the decoded size.
 */
export function decodeJpegRows(
  bytes: Uint8Array,
  width: number,
  height: number,
  minScale: number,
  module: WebAssembly.Module,
  makeResampler: ResamplerFactory,
): { stats: DecodeStats; resampler: ReturnType<ResamplerFactory> } {
  const eighths = jpegDctEighths(minScale);
  const decodedWidth = Math.ceil((width * eighths) / 8);
  const decodedHeight = Math.ceil((height * eighths) / 8);
  const tj = instantiate(module);
  const src = tj.malloc(bytes.length);
  const pitch = decodedWidth * 3;
  const dst = tj.malloc(pitch * decodedHeight);
  if (src === 0 || dst === 0) throw new AppError(413, "image_too_large", `The ${width}x${height} JPEG needs more memory to decode than this service allows. Send a smaller image.`);
  new Uint8Array(tj.memory.buffer, src, bytes.length).set(bytes);
  const handle = tj.tjInitDecompress();
  let status: number;
  try {
    status = tj.tjDecompress2(handle, src, bytes.length, dst, decodedWidth, pitch, decodedHeight, TJPF_RGB, 0);
  } catch (error) {
    throw invalidImage("JPEG", "could not be decoded: its data is corrupt or uses an unsupported variant", error);
  }
  if (status !== 0) {
    throw invalidImage("JPEG", "could not be decoded: its data is corrupt or truncated before its end (EOI)");
  }
  const resampler = makeResampler(decodedWidth, decodedHeight);
  // The view is taken after decoding: memory.grow during the decode detaches earlier views.
  const pixels = new Uint8Array(tj.memory.buffer);
  for (let row = 0; row < decodedHeight; row++) {
    if (resampler.wantsRow(row)) resampler.pushRow(row, pixels, dst + row * pitch);
  }
  return { stats: { wasmBytes: tj.memory.buffer.byteLength, decodedWidth, decodedHeight }, resampler };
}
