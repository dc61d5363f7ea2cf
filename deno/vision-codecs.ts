/**
 * Deno adapter of the VisionWasm port: the same .wasm files the Workers bundle imports, read from
 * node_modules (ours from shared/vision/wasm) and compiled once per process; shared/vision
 * instantiates them per request.
 */
import type { VisionWasm } from "../shared/ports";

const compileFile = async (url: URL) => WebAssembly.compile(await Deno.readFile(url));
const compile = (path: string) => compileFile(new URL(`../node_modules/${path}`, import.meta.url));

export async function loadVisionWasm(): Promise<VisionWasm> {
  const [jpegDecoder, photon, simd] = await Promise.all([
    compileFile(new URL("../shared/vision/wasm/jpeg.decode.wasm", import.meta.url)),
    compile("@cf-wasm/photon/dist/lib/photon_rs_bg.wasm"),
    // Our own SIMD kernels, committed next to their WAT source; the JPEG decoder is our build (native/jpeg/).
    compileFile(new URL("../shared/vision/wasm/vision.simd.wasm", import.meta.url)),
  ]);
  return { jpegDecoder, photon, simd };
}
