/** Node adapter of the VisionWasm port for the bench: compiles the same .wasm files workerd imports. */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { VisionWasm } from "../shared/ports";

const require = createRequire(import.meta.url);
const compile = (specifier: string) => new WebAssembly.Module(readFileSync(require.resolve(specifier)));

export function loadVisionWasmNode(): VisionWasm {
  return {
    jpegDecoder: new WebAssembly.Module(
      readFileSync(new URL("../shared/vision/wasm/jpeg.decode.wasm", import.meta.url)),
    ),
    jpegEncoder: compile("@jsquash/jpeg/codec/enc/mozjpeg_enc.wasm"),
    webpDecoder: new WebAssembly.Module(
      readFileSync(new URL("../shared/vision/wasm/webp.decode.wasm", import.meta.url)),
    ),
    zlib: new WebAssembly.Module(readFileSync(new URL("../shared/vision/wasm/zlib.wasm", import.meta.url))),
    simd: new WebAssembly.Module(readFileSync(new URL("../shared/vision/wasm/vision.simd.wasm", import.meta.url))),
  };
}
