/**
 * Deno adapter of the VisionWasm port: the same .wasm files the Workers bundle imports, read from
 * shared/imaging/wasm and compiled once per process; shared/imaging instantiates them per request.
 */
import type { VisionWasm } from "../shared/ports";

const compileFile = async (url: URL) => WebAssembly.compile(await Deno.readFile(url));

export async function loadVisionWasm(): Promise<VisionWasm> {
  // All ours, committed: the SIMD kernels next to their WAT source, the JPEG and WebP decoders and
  // the PNG inflater built from libjpeg-turbo, libwebp and zlib-ng (native/).
  const [jpegDecoder, webpDecoder, zlib, simd] = await Promise.all(
    ["jpeg.decode.wasm", "webp.decode.wasm", "zlib.wasm", "vision.simd.wasm"].map((name) =>
      compileFile(new URL(`../shared/imaging/wasm/${name}`, import.meta.url)),
    ),
  );
  return { jpegDecoder: jpegDecoder!, webpDecoder: webpDecoder!, zlib: zlib!, simd };
}
