/**
 * Node adapter of the VisionWasm port for the bench: compiles the same .wasm files workerd imports,
 * and MozJPEG's for the bench's comparison and the JPEG fixtures.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { WithMozJpeg } from "./mozjpeg.encode";

const require = createRequire(import.meta.url);
const compile = (specifier: string) => new WebAssembly.Module(readFileSync(require.resolve(specifier)));

export function loadVisionWasmNode(): WithMozJpeg & { jpegEncoder: WebAssembly.Module } {
  return {
    jpegDecoder: new WebAssembly.Module(
      readFileSync(new URL("../shared/imaging/wasm/jpeg.decode.wasm", import.meta.url)),
    ),
    jpegEncoder: compile("@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm"),
    webpDecoder: new WebAssembly.Module(
      readFileSync(new URL("../shared/imaging/wasm/webp.decode.wasm", import.meta.url)),
    ),
    zlib: new WebAssembly.Module(readFileSync(new URL("../shared/imaging/wasm/zlib.wasm", import.meta.url))),
    simd: new WebAssembly.Module(readFileSync(new URL("../shared/imaging/wasm/vision.simd.wasm", import.meta.url))),
  };
}
