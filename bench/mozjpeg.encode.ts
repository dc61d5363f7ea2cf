/**
 * JPEG encoding with MozJPEG (4:2:0 chroma, optimized Huffman tables), for the bench's comparison
 * with our baseline encoder and for the tests' JPEG fixtures; the service never bundles it. One
 * emscripten instance per fit: the quality search reuses it across attempts, and it is dropped with
 * the fit so its memory high-water mark does not outlive the image.
 */
import mozjpegFactory from "@jsquash/jpeg/codec/enc/mozjpeg_enc.js";

import type { FitSettings, JpegEncoder } from "../shared/imaging/jpeg.settings";
import type { VisionWasm } from "../shared/ports";

/** The production codecs plus MozJPEG's compiled module (`@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm`). */
export type WithMozJpeg = VisionWasm & { jpegEncoder?: WebAssembly.Module };

/** MozJPEG's knobs the bench compared; the defaults are what every comparison and fixture uses. */
export interface MozJpegSettings {
  progressive: boolean;
  /** MozJPEG trellis extras (multipass, EOB and table optimisation); its basic trellis is always on in this build. */
  trellis: boolean;
}

const DEFAULT_MOZJPEG_SETTINGS: MozJpegSettings = { progressive: false, trellis: false };

interface MozJpegModule {
  encode(data: Uint8Array, width: number, height: number, options: Record<string, unknown>): Uint8Array;
}

type Factory = (overrides: Record<string, unknown>) => Promise<MozJpegModule>;

export async function createJpegEncoder(
  module: WebAssembly.Module,
  settings: MozJpegSettings = DEFAULT_MOZJPEG_SETTINGS,
): Promise<JpegEncoder> {
  let memory: WebAssembly.Memory | undefined;
  const factory = mozjpegFactory as unknown as Factory;
  const codec = await factory({
    noInitialRun: true,
    // Hand emscripten the precompiled module: no fetch, no filesystem, works the same on every runtime.
    instantiateWasm(imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance) => unknown) {
      const instance = new WebAssembly.Instance(module, imports);
      memory = Object.values(instance.exports).find((e): e is WebAssembly.Memory => e instanceof WebAssembly.Memory);
      return receive(instance);
    },
  });
  const options = {
    quality: 75,
    baseline: false,
    arithmetic: false,
    progressive: settings.progressive,
    optimize_coding: true,
    smoothing: 0,
    color_space: 3, // YCbCr
    quant_table: 3, // ImageMagick's tables, MozJPEG's default
    trellis_multipass: settings.trellis,
    trellis_opt_zero: settings.trellis,
    trellis_opt_table: settings.trellis,
    trellis_loops: 1,
    auto_subsample: false,
    chroma_subsample: 2, // 4:2:0
    separate_chroma_quality: false,
    chroma_quality: 75,
  };
  return {
    encode(rgba, width, height, quality) {
      const out = codec.encode(rgba, width, height, { ...options, quality, chroma_quality: quality });
      return new Uint8Array(out);
    },
    wasmBytes: () => memory?.buffer.byteLength ?? 0,
  };
}

/** Fit settings that make `fitImage` search with MozJPEG in place of our baseline encoder. */
export function mozJpegFit(module: WebAssembly.Module): FitSettings {
  return { jpegEncoder: () => createJpegEncoder(module) };
}
